/**
 * The committed jq lab end to end against the real Docker engine:
 * jq is installed from Debian inside the sandbox, the scripted participant learns it from
 * `jq --help` and uses it; every hidden check passes, the bundle verifies, no container is left.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { verifyRun } from "../../../src/bundle/verify.ts";
import { runTerminalStudy } from "../../../src/routes/terminal/index.ts";
import { requireDocker } from "../../support/prereq.ts";
import { committedLab, containersOfRun, listFiles, removeContainers, studyContext, testRunId, tmpProject } from "./support.ts";

describe("jq-first-contact lab, live on Docker", () => {
  const project = tmpProject();
  const runId = testRunId("jq");
  let result: Awaited<ReturnType<typeof runTerminalStudy>>;
  let events: { phase: string }[] = [];

  beforeAll(async () => {
    await requireDocker();
    const lab = committedLab("jq-first-contact");
    const ctx = studyContext({ cwd: project.dir, lab: lab.config, text: lab.text, ref: lab.ref, runId, mode: "live" });
    events = ctx.events;
    result = await runTerminalStudy(ctx);
  }, 600_000);

  afterAll(async () => {
    await removeContainers(await containersOfRun(runId));
    project.cleanup();
  });

  test("every task passes and the reward is 1", () => {
    expect(result.error).toBeUndefined();
    expect(result.tasks.map((t) => `${t.id}:${t.status}`)).toEqual([
      "pretty-print:passed",
      "open-order-ids:passed",
      "open-total:passed",
      "orders-per-customer:passed",
    ]);
    expect(result.reward).toBe(1);
    expect(result.verdict).toBe("1/1 reached the goal; tasks: pretty-print 1/1 · open-order-ids 1/1 · open-total 1/1 · orders-per-customer 1/1");
    // Every hidden check passed: the seat reached the goal.
    expect(result.participants).toEqual([{ id: "p1", status: "passed", completionReason: "goal_satisfied", claimed: "none" }]);
    expect(result.ok).toBe(true);
  });

  test("the bundle verifies (independently of the route's own verify)", async () => {
    expect(result.verify.ok).toBe(true);
    const v = await verifyRun(result.runDir);
    expect(v.checks.filter((c) => !c.ok)).toEqual([]);
    expect(v.ok).toBe(true);
  });

  test("no container with the run label is left", async () => {
    expect(await containersOfRun(runId)).toEqual([]);
  });

  test("evidence: receipt, ledgers with command digests and env names, transcript, cleanup proof", () => {
    const files = listFiles(result.runDir);
    expect(files).toEqual(
      expect.arrayContaining([
        "run.json",
        "status.json",
        "actor.json",
        "terminal-ledgers.json",
        "terminal-events.ndjson",
        "terminal-transcript.txt",
        "sandbox-receipts.ndjson",
        "provision.log",
      ]),
    );
    const receipts = readFileSync(join(result.runDir, "sandbox-receipts.ndjson"), "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(receipts).toHaveLength(1);
    expect(receipts[0].id).toMatch(/^[0-9a-f]{64}$/);
    const ledgers = JSON.parse(readFileSync(join(result.runDir, "terminal-ledgers.json"), "utf8"));
    expect(ledgers.cleanup).toEqual([expect.objectContaining({ id: receipts[0].id, outcome: "released" })]);
    const labels = ledgers.commandLog.map((c: { label: string }) => c.label);
    expect(labels).toEqual(expect.arrayContaining(["install-1", "install-2", "participant-step-1", "participant-step-8", "task-check:pretty-print"]));
    for (const c of ledgers.commandLog) {
      expect(c.commandDigest).toMatch(/^[0-9a-f]{16}$/);
      expect(c).not.toHaveProperty("command");
    }
    expect(ledgers.interventions).toEqual([]);
    expect(ledgers.cost.lines.provider.usd).toBe(0);
    expect(ledgers.cost.lines.product.usd).toBeNull();
    expect(ledgers.noSpendProof.satisfied).toBe(true);
    // The order of lifecycle proves the id was recorded before any provisioning step.
    const ev = ledgers.lifecycle.map((l: { event: string }) => l.event);
    expect(ev.indexOf("terminal-lab.sandbox.created")).toBeLessThan(ev.indexOf("terminal-lab.product.prepared"));
    // The network was granted for install only: the scripted participant ran with none.
    expect(ev.indexOf("terminal-lab.network.detached")).toBeGreaterThan(ev.indexOf("terminal-lab.product.prepared"));
    const detached = ev.indexOf("terminal-lab.network.detached");
    const firstStep = ev.indexOf("terminal-lab.participant.step.started");
    expect(detached).toBeGreaterThan(-1);
    expect(firstStep).toBeGreaterThan(-1);
    expect(detached).toBeLessThan(firstStep);
    // And in the command log: every install command ran before the first participant command.
    const firstParticipant = labels.indexOf("participant-step-1");
    expect(labels.slice(firstParticipant).some((l: string) => l.startsWith("install-"))).toBe(false);
    const transcript = readFileSync(join(result.runDir, "terminal-transcript.txt"), "utf8");
    expect(transcript).toContain("Usage:"); // jq --help reached the participant
    expect(transcript).toContain("A-1001");
    const trace = JSON.parse(readFileSync(join(result.runDir, "actor.json"), "utf8"));
    expect(trace.items.filter((i: { kind: string }) => i.kind === "command")).toHaveLength(8);
    const run = JSON.parse(readFileSync(join(result.runDir, "run.json"), "utf8"));
    expect(run.review.verdict).toBe("pass");
    expect(run.outcome).toEqual({ state: "completed" });
  });

  test("hidden checks never reach the participant's brief or transcript", () => {
    const transcript = readFileSync(join(result.runDir, "terminal-transcript.txt"), "utf8");
    expect(transcript).not.toContain("jq -cS . per-customer.json");
    const events = readFileSync(join(result.runDir, "terminal-events.ndjson"), "utf8");
    expect(events).not.toContain("tr -d");
  });

  test("progress went through every phase", () => {
    const phases = [...new Set(events.map((e) => e.phase))];
    expect(phases).toEqual(["preflight", "allocate", "provision", "participate", "check", "teardown", "write", "verify", "done"]);
  });
});

/**
 * Bad input on a live terminal study: a hanging participant killed at its
 * maxMinutes deadline, a silent one killed at its first-output deadline, a failing install
 * command — each ends with a clear outcome, a partial bundle that says what happened, and no
 * container left.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { verifyRun } from "../../../src/bundle/verify.ts";
import { runTerminalStudy } from "../../../src/routes/terminal/index.ts";
import { requireDocker } from "../../support/prereq.ts";
import { containersOfRun, labFromText, listFiles, removeContainers, studyContext, testRunId, tmpProject } from "./support.ts";

const project = tmpProject();
const runIds: string[] = [];
afterAll(async () => {
  for (const id of runIds) await removeContainers(await containersOfRun(id));
  project.cleanup();
});

function lab(opts: { steps: string[]; install?: string[]; maxMinutes?: number; tasks?: boolean }): string {
  const steps = opts.steps.map((s) => `      - run: ${JSON.stringify(s)}`).join("\n");
  const install = opts.install ? `    install:\n${opts.install.map((c) => `      - ${JSON.stringify(c)}`).join("\n")}\n` : "";
  const tasks =
    opts.tasks === false ? "" : `    tasks:\n      - id: made-file\n        goal: Create done.txt.\n        check:\n          run: test -e done.txt\n`;
  return `schema: humanish.lab.v2
id: failure-probe
subject:
  source: terminal-product
  product:
    name: coreutils
    publicSurfaces: ["https://www.gnu.org/software/coreutils/"]
${install}actors:
  - type: scripted-terminal
${tasks}    steps:
${steps}
scenario:
  mode: live
  caps: {maxUsd: 0, maxMinutes: ${opts.maxMinutes ?? 2}}
`;
}

async function live(text: string, firstOutputMs?: number) {
  await requireDocker();
  const runId = testRunId("fail");
  runIds.push(runId);
  const r = await runTerminalStudy(
    studyContext({ cwd: project.dir, lab: labFromText(text), text, runId, mode: "live" }),
    firstOutputMs ? { firstOutputMs } : {},
  );
  return { r, runId, run: JSON.parse(readFileSync(join(r.runDir, "run.json"), "utf8")) };
}

describe("a hanging participant", () => {
  test("is killed at maxMinutes; the bundle says that deadline fired; checks still run; no container", async () => {
    // 0.1 minutes = 6 s. The step prints forever, so only the wall-clock deadline can stop it (or
    // the test times out); how soon after 6 s it stops depends on the machine's load, not on humanish.
    const { r, runId, run } = await live(lab({ steps: ["touch done.txt; while true; do echo still-here; sleep 1; done"], maxMinutes: 0.1 }), 60_000);
    expect(r.participants).toEqual([{ id: "p1", status: "timed_out", completionReason: "timed_out", claimed: "none" }]);
    expect(run.participants[0].deadlineFired).toBe("maxMinutes");
    expect(run.participants[0].durationMs).toBeGreaterThanOrEqual(6_000);
    const trace = JSON.parse(readFileSync(join(r.runDir, "actor.json"), "utf8"));
    expect(trace.stopCause).toBe("maxMinutes");
    const ledgers = JSON.parse(readFileSync(join(r.runDir, "terminal-ledgers.json"), "utf8"));
    expect(ledgers.lifecycle.map((l: { event: string }) => l.event)).toContain("terminal-lab.participant.deadline");
    expect(r.tasks).toEqual([expect.objectContaining({ id: "made-file", status: "passed" })]);
    expect(readFileSync(join(r.runDir, "terminal-transcript.txt"), "utf8")).toContain("still-here");
    // The bundle is sound and records a timed-out participant; the result says the study could not finish.
    expect(r.error).toMatchObject({ code: "HUMANISH_TERMINAL_LAB_PARTICIPANT_TIMED_OUT", message: expect.stringContaining("maxMinutes (0.1 min)") });
    expect(r.error?.next).toContain("scenario.caps.maxMinutes");
    expect(r.ok).toBe(false);
    expect(r.verify.ok).toBe(true);
    expect(run.outcome).toEqual({ state: "completed" });
    expect(r.verdict).toBe("0/1 reached the goal; tasks: made-file 1/1");
    expect(run.review.verdict).toBe("timed_out");
    expect(await containersOfRun(runId)).toEqual([]);
  }, 120_000);

  test("a silent participant is killed at the first-output deadline", async () => {
    const { r, runId, run } = await live(lab({ steps: ["sleep 44"] }), 2_000);
    expect(r.participants[0]!.status).toBe("timed_out");
    expect(run.participants[0].deadlineFired).toBe("first-output");
    expect(run.participants[0].reason).toContain("first-output deadline");
    expect(r.error).toMatchObject({ code: "HUMANISH_TERMINAL_LAB_PARTICIPANT_TIMED_OUT", message: expect.stringContaining("printed nothing for 2 s") });
    expect(r.tasks[0]!.status).toBe("failed");
    expect(await containersOfRun(runId)).toEqual([]);
  }, 120_000);

  test("participants run with stdin closed: a step that reads stdin ends at once", async () => {
    // A `cat` left waiting on stdin would print nothing until the first-output deadline killed it.
    const { r } = await live(lab({ steps: ["cat; read -r line || echo stdin-at-eof; touch done.txt"] }), 60_000);
    expect(r.participants[0]!.status).toBe("passed");
    expect(readFileSync(join(r.runDir, "terminal-transcript.txt"), "utf8")).toContain("stdin-at-eof");
  }, 120_000);
});

describe("a failing install command", () => {
  test("ends with INSTALL_FAILED, a partial bundle that verifies and says why, and no container", async () => {
    const { r, runId, run } = await live(
      lab({ steps: ["touch done.txt"], install: ["echo preparing", "echo 'no such package' >&2; exit 3", "echo never-runs"] }),
    );
    expect(r.ok).toBe(false);
    expect(r.error?.code).toBe("HUMANISH_TERMINAL_LAB_INSTALL_FAILED");
    expect(r.error?.message).toContain("install[1] (2 of 3) exited 3");
    expect(r.error?.message).toContain("no such package");
    expect(r.error?.next).toContain("provision.log");
    expect(run.outcome.state).toBe("failed");
    expect(run.outcome.error.code).toBe("HUMANISH_TERMINAL_LAB_INSTALL_FAILED");
    expect(run.participants[0]).toMatchObject({ status: "failed", completionReason: "harness_error", trace: null });
    expect(r.tasks).toEqual([expect.objectContaining({ id: "made-file", status: "not_run" })]);
    expect(run.cleanup).toEqual([expect.objectContaining({ outcome: "released" })]);
    const log = readFileSync(join(r.runDir, "provision.log"), "utf8");
    expect(log).toContain("$ echo preparing\npreparing\n[exit 0");
    expect(log).toContain("[exit 3");
    expect(log).not.toContain("never-runs\n[exit");
    expect(listFiles(r.runDir)).not.toContain("actor.json");
    const v = await verifyRun(r.runDir);
    expect(v.checks.filter((c) => !c.ok)).toEqual([]);
    expect(await containersOfRun(runId)).toEqual([]);
  }, 120_000);

  test("npm's SELF_SIGNED_CERT_IN_CHAIN: next names HUMANISH_SANDBOX_CA_CERTS; the host's NODE_EXTRA_CA_CERTS reaches the sandbox", async () => {
    const npmSaid =
      "npm error code SELF_SIGNED_CERT_IN_CHAIN; npm error request to https://registry.npmjs.org/jq failed, reason: self-signed certificate in certificate chain";
    const text = lab({ steps: ["touch done.txt"], install: [`echo ${JSON.stringify(npmSaid)} >&2; exit 1`] });
    const plain = await live(text);
    expect(plain.r.error?.code).toBe("HUMANISH_TERMINAL_LAB_INSTALL_FAILED");
    expect(plain.r.error?.next).toContain("Set HUMANISH_SANDBOX_CA_CERTS on the host");
    // With only NODE_EXTRA_CA_CERTS set on the host, its bundle is copied in and npm pointed at it.
    await requireDocker();
    const pem = join(project.dir, "proxy-ca.pem");
    writeFileSync(pem, "-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIUQ0FURVNU\n-----END CERTIFICATE-----\n");
    const runId = testRunId("fail-ca");
    runIds.push(runId);
    const probe = `test -s "$NODE_EXTRA_CA_CERTS" && echo "trusting $NODE_EXTRA_CA_CERTS"; echo ${JSON.stringify(npmSaid)} >&2; exit 1`;
    const caText = lab({ steps: ["touch done.txt"], install: [probe] });
    const r = await runTerminalStudy(
      studyContext({
        cwd: project.dir,
        lab: labFromText(caText),
        text: caText,
        runId,
        mode: "live",
        env: { PATH: process.env.PATH, NODE_EXTRA_CA_CERTS: pem },
      }),
    );
    expect(readFileSync(join(r.runDir, "provision.log"), "utf8")).toContain("trusting /opt/humanish-ca-bundle.pem");
    expect(r.error?.next).toContain("that bundle lacks the issuer");
    expect(await containersOfRun(runId)).toEqual([]);
  }, 180_000);
});

/**
 * Many terminal seats through the study runner against the real Docker engine: the committed jq
 * lab with 4 seats at concurrency 4 (each its own sandbox, brief and nonce; one bundle that
 * verifies each seat and the totals); SIGINT mid-study (every sandbox released by exact id, the
 * bundle names each seat's state); and a SIGKILLed CLI mid-study, whose seats' containers the
 * next creating command releases, every one by exact id.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { verifyRun } from "../../../src/bundle/verify.ts";
import { createDockerClient, isDockerApiError } from "../../../src/docker/index.ts";
import { parseLab } from "../../../src/lab/index.ts";
import { runTerminalStudy } from "../../../src/routes/terminal/index.ts";
import { cli } from "../../cli/support.ts";
import { dockerSocketPath, requireDocker } from "../../support/prereq.ts";
import { scriptedTerminalLab } from "../../support/terminal-study.ts";
import { committedLab, containersOfRun, labFromText, REPO, removeContainers, studyContext, testRunId, tmpProject } from "./support.ts";

const project = tmpProject();
const runIds: string[] = [];
afterAll(async () => {
  for (const id of runIds) await removeContainers(await containersOfRun(id));
  project.cleanup();
});

function sleepyLab(id: string, count: number, seconds: number): string {
  return scriptedTerminalLab({ id, count, steps: [`echo started; sleep ${seconds}; touch done.txt`] });
}

describe("terminal seats", () => {
  test("jq-first-contact with 4 seats at concurrency 4: every seat passes in its own sandbox; one bundle verifies each seat and the totals", async () => {
    await requireDocker();
    const base = committedLab("jq-first-contact");
    const text = base.text.replace("  - type: scripted-terminal\n", "  - type: scripted-terminal\n    count: 4\n");
    const lab = labFromText(text);
    const runId = testRunId("jq4");
    runIds.push(runId);
    const ctx = studyContext({ cwd: project.dir, lab, text, runId, mode: "live" });
    const r = await runTerminalStudy(ctx);
    expect(r.error).toBeUndefined();
    expect(r.ok).toBe(true);
    expect(r.verdict).toBe("4/4 reached the goal; tasks: pretty-print 4/4 · open-order-ids 4/4 · open-total 4/4 · orders-per-customer 4/4");
    expect(r.seats?.map((s) => [s.id, s.state, s.release])).toEqual([
      ["p1", "completed", "released"],
      ["p2", "completed", "released"],
      ["p3", "completed", "released"],
      ["p4", "completed", "released"],
    ]);
    expect(r.study).toMatchObject({ declaredSeats: 4, concurrency: 4, waves: 1 });
    const run = JSON.parse(readFileSync(join(r.runDir, "run.json"), "utf8"));
    const ids = new Set(run.cleanup.map((c: { id: string }) => c.id));
    expect(ids.size).toBe(4);
    for (const p of ["p1", "p2", "p3", "p4"]) {
      for (const f of ["actor.json", "terminal-ledgers.json", "terminal-events.ndjson", "terminal-transcript.txt", "provision.log"])
        expect(run.artifacts.some((a: { path: string }) => a.path === `seats/${p}/${f}`)).toBe(true);
    }
    // Each seat has its own nonce: the four briefs (digests in the traces) differ.
    const digests = new Set(
      ["p1", "p2", "p3", "p4"].map((p) => JSON.parse(readFileSync(join(r.runDir, "seats", p, "actor.json"), "utf8")).persona.promptDigest),
    );
    expect(digests.size).toBe(4);
    const v = await verifyRun(r.runDir);
    expect(v.checks.filter((c) => !c.ok)).toEqual([]);
    expect(v.checks.find((c) => c.name === "study seats")?.message).toMatch(/^4\/4 seat\(s\): 4 completed/);
    expect(await containersOfRun(runId)).toEqual([]);
  }, 600_000);

  test("a study that cannot fit one seat is refused before anything starts, with the numbers", async () => {
    await requireDocker();
    const text = sleepyLab("seats-nofit", 2, 1);
    const runId = testRunId("nofit");
    runIds.push(runId);
    const ctx = studyContext({ cwd: project.dir, lab: labFromText(text), text, runId, mode: "live" });
    let err: unknown;
    try {
      await runTerminalStudy(ctx, { availableMemoryBytes: 256 * 1024 * 1024 });
    } catch (e) {
      err = e;
    }
    expect(err).toMatchObject({ code: "HUMANISH_STUDY_CANNOT_FIT" });
    expect((err as Error).message).toMatch(/one seat needs 1024 MiB .* this machine has 256 MiB available; nothing was started/);
    expect(existsSync(join(project.dir, ".humanish", "runs", runId))).toBe(false);
    expect(await containersOfRun(runId)).toEqual([]);
    const bad = studyContext({
      cwd: project.dir,
      lab: labFromText(text),
      text,
      runId,
      mode: "live",
      env: { PATH: process.env.PATH, HUMANISH_MAX_CONCURRENCY: "0" },
    });
    await expect(runTerminalStudy(bad)).rejects.toMatchObject({ code: "HUMANISH_MAX_CONCURRENCY_INVALID" });
  }, 60_000);

  test("SIGINT mid-study: every running seat stops, every sandbox is released, 0 containers; the bundle says which seats were interrupted", async () => {
    await requireDocker();
    // Each seat's step sleeps far past the test's timeout: only the abort can end the study in time,
    // and a seat that ran its step out would say "completed", not "interrupted".
    const text = sleepyLab("seats-sigint", 5, 3600);
    const runId = testRunId("sigint5");
    runIds.push(runId);
    const ac = new AbortController();
    const ctx = studyContext({ cwd: project.dir, lab: labFromText(text), text, runId, mode: "live", signal: ac.signal });
    const participating = new Set<string>();
    ctx.progress = (e) => {
      ctx.events.push(e);
      if (e.phase === "participate") participating.add(e.participant);
      if (participating.size === 4 && !ac.signal.aborted) setTimeout(() => ac.abort("SIGINT"), 500);
    };
    const r = await runTerminalStudy(ctx);
    expect(r.interrupted).toBe("SIGINT");
    expect(r.verify.ok).toBe(true);
    expect(r.seats?.map((s) => s.state)).toEqual(["interrupted", "interrupted", "interrupted", "interrupted", "interrupted"]);
    // Four ran (the ledger's per-study limit), the fifth never started.
    expect(r.seats?.map((s) => s.release)).toEqual(["released", "released", "released", "released", "none"]);
    expect(r.seats?.[4]?.phase).toBe("not_started");
    const run = JSON.parse(readFileSync(join(r.runDir, "run.json"), "utf8"));
    expect(run.outcome).toEqual({ state: "interrupted", interrupted: "SIGINT" });
    expect(run.study.totals).toMatchObject({ seats: 5, interrupted: 5, heldSlots: 0 });
    expect(run.warnings.map((w: { code: string }) => w.code)).toContain("HUMANISH_STUDY_WAVES");
    expect(await containersOfRun(runId)).toEqual([]);
  }, 180_000);

  test("a SIGKILLed controller mid-study: the next creating command releases every seat's container by exact id", async () => {
    await requireDocker();
    const runId = testRunId("kill3");
    runIds.push(runId);
    const path = join(project.dir, "seats-kill.yaml");
    writeFileSync(path, sleepyLab("seats-kill", 3, 120));
    expect(parseLab(readFileSync(path, "utf8")).ok).toBe(true);
    const child = Bun.spawn([process.execPath, join(REPO, "src/cli/main.ts"), "lab", "run", path, "--json", "--cwd", project.dir, "--run-id", runId], {
      cwd: project.dir,
      env: {
        PATH: process.env.PATH ?? "/usr/bin:/bin",
        HOME: process.env.HOME ?? "/root",
        ...(process.env.DOCKER_HOST ? { DOCKER_HOST: process.env.DOCKER_HOST } : {}),
      },
      stdin: "ignore",
      stdout: "ignore",
      stderr: "ignore",
    });
    const docker = createDockerClient({ socketPath: dockerSocketPath() });
    const deadline = Date.now() + 90_000;
    let ids: string[] = [];
    while (Date.now() < deadline) {
      ids = await containersOfRun(runId);
      // A container listed a moment ago may be gone by its inspect (a seat's short-lived helper): not running.
      const running = await Promise.all(ids.map(async (id) => (await docker.containerInspect(id).catch(() => null))?.State.Running === true));
      if (ids.length === 3 && running.every(Boolean)) break;
      await Bun.sleep(250);
    }
    expect(ids).toHaveLength(3);
    child.kill("SIGKILL");
    await child.exited;
    const r = await cli(["runtime", "prune", "--dry-run"]);
    expect({ code: r.code, stderr: r.code === 0 ? "" : r.stderr }).toEqual({ code: 0, stderr: "" });
    for (const id of ids) {
      expect(r.stderr).toContain(`orphaned container ${id.slice(0, 12)} of run ${runId}`);
      let gone = false;
      try {
        await docker.containerInspect(id);
      } catch (e) {
        gone = isDockerApiError(e, 404);
      }
      expect(gone).toBe(true);
    }
    const file = join(project.dir, ".humanish", "runs", runId, "orphan-release.json");
    expect(existsSync(file)).toBe(true);
    const rec = JSON.parse(readFileSync(file, "utf8"));
    expect(rec.releases.map((x: { id: string }) => x.id).sort()).toEqual([...ids].sort());
    expect(rec.releases.every((x: { outcome: string }) => x.outcome === "released")).toBe(true);
  }, 180_000);
});

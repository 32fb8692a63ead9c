import { describe, expect, test } from "bun:test";
import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createRunWriter, listRuns, livenessOf, RunStatusSchema, resolveRunDir, summarizeCost, unmeasuredLine } from "../../src/bundle/index.ts";
import { cli } from "../cli/support.ts";
import { expectCode, projectPerTest, writeDryRunTerminal, writeLiveBrowser, writeLiveTerminal } from "./helpers.ts";

const project = projectPerTest();

async function deadPid(): Promise<number> {
  const p = Bun.spawn(["true"]);
  await p.exited;
  return p.pid;
}

function setStatus(dir: string, patch: Record<string, unknown>) {
  const s = JSON.parse(readFileSync(join(dir, "status.json"), "utf8"));
  writeFileSync(join(dir, "status.json"), JSON.stringify({ ...s, ...patch }));
}

describe("listRuns", () => {
  test("a project without runs lists nothing", async () => {
    expect(await listRuns(project())).toEqual([]);
  });

  test("newest first, with lab, route, mode, verdict, participants, tasks, cost and duration", async () => {
    const cwd = project();
    await writeLiveTerminal(cwd, "older"); // createdAt 02:00
    await writeLiveBrowser(cwd, "same-time-b"); // createdAt 02:00 too
    const running = createRunWriter({ cwd, runId: "newest", secrets: [], heartbeatMs: 0, route: "terminal", mode: "live", lab: "jq" });
    await running.writeStatus({ phase: "participate", detail: "p1 step 2" });
    const runs = await listRuns(cwd);
    running.close();
    expect(runs.map((r) => r.runId)).toEqual(["newest", "same-time-b", "older"]);
    const [n, b, t] = runs as [(typeof runs)[0], (typeof runs)[0], (typeof runs)[0]];
    expect(n).toMatchObject({
      liveness: "running",
      derivedFrom: "status",
      phase: "participate",
      lab: "jq",
      route: "terminal",
      mode: "live",
      verdict: null,
      costLabel: "unmeasured",
      pid: process.pid,
    });
    expect(t).toMatchObject({
      liveness: "finished",
      derivedFrom: "bundle",
      lab: "jq-first-contact",
      route: "terminal",
      mode: "live",
      verdict: "pass",
      participants: { total: 1, reachedGoal: 1, harnessFailed: 0 },
      tasks: [
        { id: "pretty-print", completed: 1, sessions: 1 },
        { id: "filter", completed: 0, sessions: 1 },
      ],
      costUsd: null,
      costLabel: "unmeasured",
      durationMs: 60_000,
      line: "1/1 reached the goal; tasks: pretty-print 1/1 · filter 0/1",
    });
    expect(b).toMatchObject({ route: "browser", verdict: "pass", liveness: "finished" });
  });

  test("a sealed run with an unmeasured cost line lists cost unmeasured (never $0), and unproven cleanup is counted until an orphan release proves it", async () => {
    const cwd = project();
    const { w, input } = await writeLiveTerminal(cwd, "killed");
    const at = "2026-11-01T02:01:00.000Z";
    const cleanup = (input.cleanup ?? []).map((c) => ({ ...c, outcome: "unconfirmed" as const, reason: "kill acknowledged, still alive" }));
    const zero = { kind: "model-tokens" as const, usd: 0, basis: "no-spend-signal" as const, ratesAsOf: "2026-11-01", source: "no model", reason: null };
    await w.finalize({ ...input, cleanup, cost: summarizeCost([zero, unmeasuredLine("sandbox-minutes", "kill_unconfirmed")]) });
    const [r] = await listRuns(cwd);
    expect(r).toMatchObject({ runId: "killed", liveness: "finished", costUsd: null, costLabel: "unmeasured", cleanupUnproven: 1 });
    const released = { ...cleanup[0]!, outcome: "released" as const, reason: "orphan reconciliation: inspect-404", at };
    writeFileSync(join(w.runDir, "orphan-release.json"), JSON.stringify({ schema: "humanish.orphan-release.v1", runId: "killed", releases: [released] }));
    expect((await listRuns(cwd))[0]?.cleanupUnproven).toBe(0);
    writeFileSync(join(w.runDir, "orphan-release.json"), "{}");
    const failed = await writeLiveTerminal(cwd, "failed-run");
    await failed.w.finalize({ ...failed.input, outcome: { state: "failed", error: { code: "HUMANISH_ADAPTER_SCORE_MALFORMED", message: "bad" } } });
    expect((await listRuns(cwd)).find((x) => x.runId === "failed-run")?.failure).toBe("HUMANISH_ADAPTER_SCORE_MALFORMED");
    const out = (await cli(["runs", "--cwd", cwd])).stdout;
    // The malformed orphan-release.json written above also makes the bundle fail verify.
    expect(out).toMatch(/killed .* · finished · NOT VERIFIED \(\d+ problems?\) · CLEANUP UNPROVEN \(1 resource retained or unconfirmed\) .* cost unmeasured/);
    expect(out).toMatch(/failed-run .* · finished · FAILED \(HUMANISH_ADAPTER_SCORE_MALFORMED\) /);
  });

  test("runs verifies each sealed bundle before its headline: an edited bundle is flagged NOT VERIFIED, in text and --json", async () => {
    const cwd = project();
    const { w } = await writeLiveTerminal(cwd, "edited");
    const before = (await cli(["runs", "--cwd", cwd, "--json"])).json<{ runs: { runId: string; verify: { state: string } | null }[] }>();
    expect(before.runs[0]?.verify?.state).not.toBe("not_verified");
    const runJson = join(w.runDir, "run.json");
    const bundle = JSON.parse(readFileSync(runJson, "utf8"));
    bundle.participants.reachedGoal = 99;
    writeFileSync(runJson, JSON.stringify(bundle));
    const after = await cli(["runs", "--cwd", cwd, "--json"]);
    const row = after.json<{ runs: { runId: string; verify: { state: string; label: string } | null }[] }>().runs[0];
    expect(row?.verify).toMatchObject({ state: "not_verified" });
    expect((await cli(["runs", "--cwd", cwd])).stdout).toMatch(/edited .* · finished · NOT VERIFIED \(\d+ problems?\)/);
  });

  test("a run whose process died before finalizing is interrupted", async () => {
    const cwd = project();
    const w = createRunWriter({ cwd, runId: "crashed", secrets: [], heartbeatMs: 0 });
    await w.writeStatus({ phase: "participate" });
    w.close();
    setStatus(w.runDir, { pid: await deadPid() });
    const [r] = await listRuns(cwd);
    expect(r).toMatchObject({ runId: "crashed", liveness: "interrupted", derivedFrom: "status" });
  });

  test("liveness rules", () => {
    const s = RunStatusSchema.parse({
      schema: "humanish.run-status.v1",
      runId: "x",
      state: "running",
      phase: "p",
      pid: 1234,
      startedAt: "2026-11-30T00:00:00.000Z",
      updatedAt: "2026-11-30T00:00:00.000Z",
    });
    expect(livenessOf(s, false, () => true)).toBe("running");
    expect(livenessOf(s, false, () => false)).toBe("interrupted");
    expect(livenessOf(s, true, () => false)).toBe("finished");
    expect(livenessOf({ ...s, state: "finished" }, false, () => true)).toBe("finished");
    expect(livenessOf(null, false)).toBe("interrupted");
    expect(livenessOf(null, true)).toBe("finished");
  });

  test("stray entries are skipped; a bare directory is listed from the directory", async () => {
    const cwd = project();
    await writeDryRunTerminal(cwd, "dry");
    mkdirSync(join(cwd, ".humanish/runs/bare"));
    writeFileSync(join(cwd, ".humanish/runs/notes.txt"), "x");
    symlinkSync(join(cwd, ".humanish/runs/dry"), join(cwd, ".humanish/runs/alias"));
    const runs = await listRuns(cwd);
    expect(runs.map((r) => r.runId).sort()).toEqual(["bare", "dry"]);
    expect(runs.find((r) => r.runId === "bare")).toMatchObject({ derivedFrom: "directory", liveness: "interrupted" });
    expect(runs.find((r) => r.runId === "dry")).toMatchObject({ verdict: "contract_proof_only", mode: "dry-run" });
  });
});

describe("resolveRunDir", () => {
  test("latest follows latest.json; an id resolves to its directory", async () => {
    const cwd = project();
    await writeLiveTerminal(cwd, "first");
    await writeDryRunTerminal(cwd, "second");
    expect(await resolveRunDir(cwd, "latest")).toBe(join(cwd, ".humanish/runs/second"));
    expect(await resolveRunDir(cwd)).toBe(join(cwd, ".humanish/runs/second"));
    expect(await resolveRunDir(cwd, "first")).toBe(join(cwd, ".humanish/runs/first"));
  });

  test("an invalid latest pointer is not followed; the newest run is used", async () => {
    const cwd = project();
    await writeLiveTerminal(cwd, "only");
    writeFileSync(
      join(cwd, ".humanish/runs/latest.json"),
      JSON.stringify({ schema: "humanish.latest-run.v1", runId: "only", path: "../../etc", updatedAt: new Date().toISOString() }),
    );
    expect(await resolveRunDir(cwd, "latest")).toBe(join(cwd, ".humanish/runs/only"));
  });

  test("unknown ids, traversal, no runs and symlinked runs are refused with a next step", async () => {
    const cwd = project();
    const e = await expectCode(resolveRunDir(cwd, "latest"), "HUMANISH_RUN_NOT_FOUND");
    expect(e.next).toContain("humanish lab run");
    await writeLiveTerminal(cwd, "real");
    const e2 = await expectCode(resolveRunDir(cwd, "missing"), "HUMANISH_RUN_NOT_FOUND");
    expect(e2.next).toContain("humanish runs");
    await expectCode(resolveRunDir(cwd, "../real"), "HUMANISH_RUN_NOT_FOUND");
    await expectCode(resolveRunDir(cwd, ".."), "HUMANISH_RUN_NOT_FOUND");
    symlinkSync(join(cwd, ".humanish/runs/real"), join(cwd, ".humanish/runs/alias"));
    await expectCode(resolveRunDir(cwd, "alias"), "HUMANISH_INVALID_RUN_BUNDLE");
  });
});

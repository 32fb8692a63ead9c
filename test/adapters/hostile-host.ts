/**
 * The humanish side of the hostile-scorer tests, as a process of its own so the provider-key
 * canaries sit in its environment from its start (`/proc/<pid>/environ` shows a process's initial
 * environment, not later changes). It loads and runs the scorer exactly as `lab run` does, on a
 * live bundle of the real writer, and prints one JSON line: what scoring returned and how long
 * it took. argv[2]: `{scorer, project, loadMs, hookMs, unconfined}`.
 */
import { loadScorerModule } from "../../src/adapters/load.ts";
import { applyScore, scoreStudy } from "../../src/adapters/seam.ts";
import { deriveReview } from "../../src/bundle/derive.ts";
import { verifyRun } from "../../src/bundle/verify.ts";
import { writeLiveTerminal } from "../bundle/helpers.ts";

const o = JSON.parse(process.argv[2]!) as { scorer: string; project: string; loadMs: number; hookMs: number; unconfined: boolean };
const started = performance.now();
const scorer = await loadScorerModule(o.scorer, "./hostile-scorer.mjs", "manifest", {
  loadMs: o.loadMs,
  // No engine (a socket that is not there) and the operator's opt-in.
  ...(o.unconfined ? { env: { ...process.env, DOCKER_HOST: "unix:///nonexistent/docker.sock", HUMANISH_ALLOW_UNCONFINED_SCORER: "1" } } : {}),
});
const loadedMs = performance.now() - started;
const { w, input } = await writeLiveTerminal(o.project, "scored-1");
const p = input.participants ?? [];
const tasks = input.tasks ?? [];
const live = { ...input, review: deriveReview({ mode: "live", outcome: { state: "completed" }, participants: p, tasks }) };
const scored = await scoreStudy({ scorer, writer: w, input: live, deadlineMs: o.hookMs });
const scoredMs = performance.now() - started;
const bundle = await w.finalize(applyScore(live, scored));
const verify = await verifyRun(w.runDir);
process.stdout.write(
  `${JSON.stringify({
    loadedMs,
    scoredMs,
    failure: scored.failure ?? null,
    data: scored.adapterScore?.data ?? null,
    provenance: bundle.scorerProvenance,
    warnings: scored.warnings.map((x) => x.code),
    verify: { ok: verify.ok, adapter: verify.checks.find((c) => c.name === "adapter output") ?? null },
  })}\n`,
);
process.exit(0);

/**
 * Sealing a run writer's bundle: `run.json` written from the route's input, `status.json` marked
 * finished and `.humanish/runs/latest.json` pointed here on the first finalize of a new run, then
 * everything signed into `signature.json`; and the preview of that run.json without writing.
 */
import { join } from "node:path";
import type { z } from "zod";
import { HumanishError } from "../errors.ts";
import { zodIssues } from "../text/zod-issues.ts";
import { artifactRootFor, RUN_FILE, runsDir } from "./paths.ts";
import { escapeDelInJson } from "./redact.ts";
import { LatestRunSchema, type RunBundle, type RunBundleInput, RunBundleInputSchema } from "./schemas.ts";
import { sealRunDir } from "./signing/seal.ts";
import { atomicWrite } from "./writer-atomic.ts";
import { buildBundle } from "./writer-bundle.ts";
import type { LiveWriterState, WriterState } from "./writer-state.ts";
import { stopHeartbeat, writeStatusNow } from "./writer-status.ts";

/**
 * `input` checked against the bundle input schema (defaults applied).
 * @throws HUMANISH_INVALID_RUN_BUNDLE naming the fields that do not match
 */
function parseBundleInput(st: WriterState, input: RunBundleInput): z.output<typeof RunBundleInputSchema> {
  const r = RunBundleInputSchema.safeParse(input);
  if (!r.success) {
    throw new HumanishError("HUMANISH_INVALID_RUN_BUNDLE", `run bundle input for ${st.runId} is invalid: ${zodIssues(r.error)}`, {
      next: "fix the named field (see RunBundleInputSchema in src/bundle/schemas.ts)",
    });
  }
  return r.data;
}

/**
 * The first finalize of a new run: the heartbeat stops for good, `status.json` says finished
 * with the bundle's outcome (keeping an `ok` the route set), and `latest.json` points here.
 * @throws HUMANISH_BUNDLE_WRITE_FAILED
 */
async function markFinished(w: LiveWriterState, data: RunBundle): Promise<void> {
  w.finalizedOnce = true;
  stopHeartbeat(w);
  const prevPhase = w.status;
  await writeStatusNow(w, {
    phase: "done",
    state: "finished",
    outcome: {
      state: data.outcome.state,
      verdict: data.review.verdict,
      participants: { total: data.review.participants.total, reachedGoal: data.review.participants.reachedGoal },
      estimatedCostUsd: data.cost.estimatedTotalUsd,
      durationMs: data.durationMs,
      ...(prevPhase?.outcome?.ok !== undefined ? { ok: prevPhase.outcome.ok } : {}),
    },
  });
  const latest = LatestRunSchema.parse({
    schema: "humanish.latest-run.v1",
    runId: w.runId,
    path: artifactRootFor(w.runId),
    updatedAt: w.now().toISOString(),
  });
  await atomicWrite(join(runsDir(w.cwd), "latest.json"), new TextEncoder().encode(`${JSON.stringify(latest, null, 2)}\n`), ".humanish/runs/latest.json");
}

/**
 * `RunWriter.finalize`: take `input` (when given) as the run's input, write `run.json` from it
 * (its `completedAt` fixed on the first finalize), mark a new run finished once, then sign what is
 * on disk. Returns the bundle written.
 * @throws HUMANISH_INVALID_RUN_BUNDLE (bad input, or none the first time), HUMANISH_REDACTION_FAILED,
 *   HUMANISH_BUNDLE_WRITE_FAILED; the signing key loader's codes
 */
export async function finalizeNow(w: LiveWriterState, input: RunBundleInput | undefined): Promise<RunBundle> {
  if (input !== undefined) w.input = parseBundleInput(w, input);
  const inp = w.input;
  if (!inp) {
    throw new HumanishError("HUMANISH_INVALID_RUN_BUNDLE", `finalize of ${w.runId} needs the run input the first time`, {
      next: "call finalize(input) with a RunBundleInput",
    });
  }
  const completedAt = inp.completedAt ?? w.now().toISOString();
  inp.completedAt = completedAt;
  const data = await buildBundle(w, inp, completedAt);
  const text = `${escapeDelInJson(JSON.stringify(data, null, 2))}\n`;
  await atomicWrite(join(w.runDir, RUN_FILE), new TextEncoder().encode(text), `${artifactRootFor(w.runId)}/run.json`);
  if (!w.reopened && !w.finalizedOnce) await markFinished(w, data);
  // Sign what is now on disk: every listed artifact, run.json and status.json.
  sealRunDir(w.runDir, w.runId);
  w.sealed = true;
  return data;
}

/**
 * `RunWriter.preview`: the run.json `finalize(input)` would write now, built without writing or
 * sealing anything (a missing `completedAt` is the current time).
 * @throws HUMANISH_INVALID_RUN_BUNDLE, HUMANISH_REDACTION_FAILED, HUMANISH_BUNDLE_WRITE_FAILED
 */
export async function previewNow(st: WriterState, input: RunBundleInput): Promise<RunBundle> {
  const inp = parseBundleInput(st, input);
  return buildBundle(st, inp, inp.completedAt ?? st.now().toISOString());
}

/** Checks of `run.json` itself: it exists and parses, its schema id, its shape and internal consistency. */

import { zodIssues } from "../../text/zod-issues.ts";
import { tallyParticipants, taskFunnel } from "../derive.ts";
import { artifactRootFor, DERIVED_FILES, RUN_FILE, safeRelPath } from "../paths.ts";
import { type RunBundle, RunBundleSchema } from "../schemas.ts";
import { SIGNATURE_FILE } from "../signing/manifest.ts";
import type { CheckOutcome, VerifyContext } from "./context.ts";

/** The `run.json exists` problem of a run directory with no run.json at all (still running, or never sealed). */
export const RUN_JSON_MISSING = "run.json is missing";

/** `run.json exists`: present and valid JSON (parsed into the context). */
export function runJsonExists(ctx: VerifyContext): CheckOutcome {
  const bytes = ctx.files.get(RUN_FILE);
  if (!bytes) {
    // Present but not read (a FIFO, a device, a link, over its bound) is not the same as absent.
    const refused = ctx.containment.find((c) => c.startsWith(`${RUN_FILE}:`));
    return { problems: [refused ? `run.json is refused (${refused.slice(RUN_FILE.length + 1).trim()})` : RUN_JSON_MISSING], ok: "" };
  }
  try {
    ctx.rawBundle = JSON.parse(new TextDecoder().decode(bytes));
    return { problems: [], ok: "run.json is readable JSON" };
  } catch {
    return { problems: ["run.json is not valid JSON"], ok: "" };
  }
}

/** `run schema`: the schema id is `humanish.run-bundle.v1`. */
export function runSchema(ctx: VerifyContext): CheckOutcome {
  const raw = ctx.rawBundle;
  const id = raw && typeof raw === "object" ? (raw as { schema?: unknown }).schema : undefined;
  return {
    problems: id === "humanish.run-bundle.v1" ? [] : [`schema is ${JSON.stringify(id ?? null)}, expected humanish.run-bundle.v1`],
    ok: "humanish.run-bundle.v1",
  };
}

function consistency(b: RunBundle, run: string): string[] {
  const problems: string[] = [];
  if (b.runId !== run) problems.push(`runId ${b.runId} does not match directory ${run}`);
  if (b.artifactRoot !== artifactRootFor(b.runId)) problems.push(`artifactRoot must be ${artifactRootFor(b.runId)}`);
  const dur = Date.parse(b.completedAt) - Date.parse(b.createdAt);
  if (dur < 0) problems.push("completedAt is before createdAt");
  else if (dur !== b.durationMs) problems.push(`durationMs ${b.durationMs} != completedAt - createdAt (${dur})`);
  const ref = b.lab.source.ref;
  if (ref.startsWith("/") || ref.split("/").includes(".."))
    problems.push(`lab.source.ref ${JSON.stringify(ref)} must be embedded:<id> or a project-relative path`);
  const ids = new Set<string>();
  for (const p of b.participants) {
    if (ids.has(p.id)) problems.push(`participant id ${p.id} is duplicated`);
    ids.add(p.id);
    if (b.mode === "dry-run" && p.status !== "contract_proof_only") problems.push(`dry run participant ${p.id} has status ${p.status}`);
    if (b.mode === "live" && p.status === "contract_proof_only") problems.push(`live participant ${p.id} claims contract_proof_only`);
  }
  for (const t of b.tasks) {
    if (t.passed !== (t.status === "passed")) problems.push(`task ${t.id}: passed=${t.passed} contradicts status ${t.status}`);
    if (t.participantId && !ids.has(t.participantId)) problems.push(`task ${t.id} names unknown participant ${t.participantId}`);
  }
  if (JSON.stringify(tallyParticipants(b.participants)) !== JSON.stringify(b.review.participants))
    problems.push("review.participants does not match the participants' statuses");
  if (JSON.stringify(taskFunnel(b.tasks, b.participants.length)) !== JSON.stringify(b.review.tasks))
    problems.push("review.tasks does not match the task results");
  if (b.mode === "dry-run" && b.review.verdict !== "contract_proof_only") problems.push(`dry run verdict must be contract_proof_only, got ${b.review.verdict}`);
  if (b.mode === "live" && b.review.verdict === "contract_proof_only") problems.push("live run claims verdict contract_proof_only");
  if (b.outcome.state === "completed" && b.outcome.error) problems.push("outcome completed but carries an error");
  if (b.outcome.state === "failed" && !b.outcome.error) problems.push("outcome failed without an error code");
  if (b.outcome.state !== "interrupted" && b.outcome.interrupted) problems.push("outcome names a signal but is not interrupted");
  const paths = new Set<string>();
  for (const a of b.artifacts) {
    if (paths.has(a.path)) problems.push(`artifact ${a.path} listed twice`);
    paths.add(a.path);
    if (safeRelPath(a.path) !== a.path) problems.push(`artifact path ${JSON.stringify(a.path)} is not a safe local relative path`);
    if (a.path === RUN_FILE || a.path === SIGNATURE_FILE || DERIVED_FILES.includes(a.path)) problems.push(`${a.path} must not be listed as an artifact`);
    if (a.kind === "screenshot" && !/^screenshots\/.+\.png$/.test(a.path)) problems.push(`screenshot ${a.path} must be screenshots/….png`);
    if (a.kind === "report" && a.path !== "report/index.html") problems.push(`report artifact must be report/index.html, got ${a.path}`);
  }
  for (const p of b.participants) {
    if (p.trace === null) continue;
    const a = b.artifacts.find((x) => x.path === p.trace);
    if (!a) problems.push(`participant ${p.id} trace ${p.trace} is not a listed artifact`);
    else if (a.kind !== "actor-trace") problems.push(`participant ${p.id} trace ${p.trace} is listed as ${a.kind}`);
  }
  return problems;
}

/** `run bundle shape`: matches `humanish.run-bundle.v1` and is internally consistent (sets `ctx.bundle`). */
export function runBundleShape(ctx: VerifyContext): CheckOutcome {
  const ok = "run.json matches humanish.run-bundle.v1 and is internally consistent";
  if (ctx.rawBundle === undefined) return { problems: ["no bundle to check"], ok };
  const r = RunBundleSchema.safeParse(ctx.rawBundle);
  if (!r.success) return { problems: [zodIssues(r.error)], ok };
  ctx.bundle = r.data;
  return { problems: consistency(r.data, ctx.run), ok };
}

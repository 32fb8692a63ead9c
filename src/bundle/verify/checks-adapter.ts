/**
 * `adapter output`: what the lab's scorer put in the bundle holds together. Each block is
 * re-checked against its own shape (named precisely, even when the whole bundle failed its
 * shape); then: adapter output only with the scorer's provenance; hooks ran only on a live run;
 * a declared `score` that ran on a completed run left a score; a `fail` score never sits under a
 * `pass` verdict; every feedback candidate names this run and lab, has a unique id, a known
 * participant and evidence that is a file of the bundle; every adapter file is listed, lives under
 * `adapter/<its namespace>/`, and nothing else lives under `adapter/`. Where the scorer ran is
 * reported: in containers (each proven removed on a run that did not fail), unconfined with the
 * operator's opt-in (said plainly), or not recorded (a bundle from before scorers were confined).
 * An unconfined scorer without the opt-in is a problem.
 */
import type { z } from "zod";
import { zodIssues } from "../../text/zod-issues.ts";
import {
  RunAdapterArtifactSchema,
  RunAdapterScoreSchema,
  RunFeedbackCandidateSchema,
  type ScorerProvenance,
  ScorerProvenanceSchema,
} from "../schemas-adapter.ts";
import type { CheckOutcome, VerifyContext } from "./context.ts";

/** Shape problems of the four blocks as written in `run.json`. */
function shapeProblems(raw: unknown): string[] {
  if (raw === null || typeof raw !== "object") return [];
  const b = raw as Record<string, unknown>;
  const problems: string[] = [];
  const one = (key: string, schema: z.ZodType) => {
    if (b[key] === undefined) return;
    const r = schema.safeParse(b[key]);
    if (!r.success) problems.push(`${key} ${zodIssues(r.error, 1)}`);
  };
  const list = (key: string, schema: z.ZodType) => {
    const v = b[key];
    if (v === undefined) return;
    if (!Array.isArray(v)) return problems.push(`${key} is not a list`);
    v.forEach((item, i) => {
      const r = schema.safeParse(item);
      if (!r.success) problems.push(`${key}[${i}] ${zodIssues(r.error, 1)}`);
    });
  };
  one("scorerProvenance", ScorerProvenanceSchema);
  one("adapterScore", RunAdapterScoreSchema);
  list("feedbackCandidates", RunFeedbackCandidateSchema);
  list("adapterArtifacts", RunAdapterArtifactSchema);
  return problems;
}

export function adapterOutput(ctx: VerifyContext): CheckOutcome {
  const problems = shapeProblems(ctx.rawBundle);
  const b = ctx.bundle;
  if (!b) return { problems: problems.length ? problems : ["no valid bundle"], ok: "" };
  const prov = b.scorerProvenance;
  const score = b.adapterScore;
  const candidates = b.feedbackCandidates ?? [];
  const files = b.adapterArtifacts ?? [];
  const listed = new Set(b.artifacts.map((a) => a.path));
  if (!prov) {
    if (score || candidates.length || files.length) problems.push("adapter output without scorerProvenance (no scorer is recorded as having run)");
    const stray = [...listed].filter((p) => p.startsWith("adapter/"));
    if (stray.length) problems.push(`files under adapter/ without a scorer: ${stray.slice(0, 5).join(", ")}`);
    return { problems, ok: "no scorer declared" };
  }
  if (prov.hooks === "ran" && b.mode !== "live") problems.push("scorerProvenance says the hooks ran, but this is a dry run");
  if (prov.hooks === "loaded-only" && (score || candidates.length || files.length)) problems.push("adapter output although scorerProvenance says no hook ran");
  if (score && !prov.exports.includes("score")) problems.push("adapterScore present but the scorer exports no score hook");
  if (candidates.length && !prov.exports.includes("deriveFeedback")) problems.push("feedback candidates present but the scorer exports no deriveFeedback hook");
  if (files.length && !prov.exports.includes("deriveArtifacts")) problems.push("adapter artifacts present but the scorer exports no deriveArtifacts hook");
  if (prov.hooks === "ran" && prov.exports.includes("score") && !score && b.outcome.state === "completed")
    problems.push("the scorer's score hook ran on a completed run but left no adapterScore (a missing score must fail the run)");
  if (score?.status === "fail" && b.review.verdict === "pass") problems.push(`adapterScore ${score.namespace} is fail but the verdict is pass`);

  const participants = new Set(b.participants.map((p) => p.id));
  const ids = new Set<string>();
  candidates.forEach((c, i) => {
    const at = `feedbackCandidates[${i}]`;
    if (c.run_id !== b.runId) problems.push(`${at} run_id ${c.run_id} is not this run (${b.runId})`);
    if (c.lab_id !== b.lab.id) problems.push(`${at} lab_id ${c.lab_id} is not this lab (${b.lab.id})`);
    if (ids.has(c.id)) problems.push(`${at} id ${c.id} repeats`);
    ids.add(c.id);
    if (c.participant_id !== undefined && !participants.has(c.participant_id)) problems.push(`${at} participant_id ${c.participant_id} is not a participant`);
    for (const e of c.evidence) if (e.path !== "run.json" && !listed.has(e.path)) problems.push(`${at} evidence ${e.path} is not a listed file`);
  });
  const declared = new Set<string>();
  files.forEach((a, i) => {
    const at = `adapterArtifacts[${i}]`;
    if (!a.path.startsWith(`adapter/${a.namespace}/`)) problems.push(`${at} path ${a.path} is not under adapter/${a.namespace}/`);
    if (!listed.has(a.path)) problems.push(`${at} path ${a.path} is not a listed artifact`);
    declared.add(a.path);
  });
  for (const p of listed) if (p.startsWith("adapter/") && !declared.has(p)) problems.push(`${p} is under adapter/ but no adapter artifact declares it`);
  const where = confinementProblems(prov, b.outcome.state, problems);
  return {
    problems,
    ok: `scorer ${prov.ref} (${prov.hooks === "ran" ? "hooks ran" : "loaded only"}; ${where}): ${score ? `score ${score.status} ${score.score}/100` : "no score"}, ${candidates.length} feedback candidate(s), ${files.length} adapter file(s)`,
  };
}

/** Where the scorer ran, in a few words; its problems pushed onto `problems`. */
function confinementProblems(prov: ScorerProvenance, state: string, problems: string[]): string {
  const c = prov.confinement;
  if (!c) return "confinement not recorded: written before scorers ran in containers";
  if (c.mode === "unconfined") {
    if (!c.optIn) problems.push("the scorer ran unconfined without the operator's opt-in (HUMANISH_ALLOW_UNCONFINED_SCORER=1)");
    return `ran UNCONFINED as a host process, opted in with ${c.optIn ?? "nothing"}: it could read the operator's files and keys`;
  }
  const containers = c.containers ?? [];
  const left = containers.filter((x) => x.outcome !== "released");
  if (left.length && state !== "failed")
    problems.push(
      `the scorer's container ${left.map((x) => `${x.id.slice(0, 12)} (${x.outcome})`).join(", ")} is not proven removed, yet the run did not fail`,
    );
  return `confined in ${containers.length} container(s) of ${c.image ?? "an unrecorded image"} with no network, ${containers.length - left.length} proven removed`;
}

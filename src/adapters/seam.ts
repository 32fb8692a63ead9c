/**
 * The scorer seam, one study-level step between evidence collection and the seal: every route
 * and lane that ends its study through `finishStudy` (src/study) gets it. Given the loaded scorer
 * and the bundle about to be sealed, {@link scoreStudy} builds the frozen scoring context, runs
 * each exported hook under a deadline, scrubs each payload with the bundle's own redactor,
 * shape-checks it, writes the adapter's files under `adapter/<namespace>/`, and says what the
 * run's outcome must carry; {@link applyScore} folds that into the bundle input (pure).
 *
 * A declared scorer is part of the study: when a hook throws or misses its deadline, or `score`
 * returns something malformed, the run fails as a harness failure (outcome `failed`, its code
 * and reason in the result). A well-formed score of `fail` is a finding: the outcome stays
 * `completed`, the verdict turns to `fail`, a gap says why, and the run result fails. Malformed
 * feedback candidates and artifacts are dropped, each with a warning, and never fail the run.
 *
 * A dry run has nothing to score, and an interrupted run only partial evidence: the module is
 * loaded (proving the reference) and recorded as `loaded-only`, and no hook runs.
 */
import { deriveReview } from "../bundle/derive.ts";
import type { RunBundle, RunBundleInput } from "../bundle/schemas.ts";
import type { RunWriter } from "../bundle/writer.ts";
import { isHumanishError } from "../errors.ts";
import { buildScoringContext } from "./context.ts";
import type { LoadedScorer } from "./load.ts";
import {
  ArtifactResultSchema,
  FeedbackResultSchema,
  MAX_ADAPTER_ARTIFACT_BYTES,
  MAX_ADAPTER_ARTIFACTS,
  MAX_FEEDBACK_CANDIDATES,
  type RunAdapterArtifact,
  type RunAdapterScore,
  RunAdapterScoreSchema,
  type RunFeedbackCandidate,
  RunFeedbackCandidateSchema,
  ScoreResultSchema,
  type ScorerProvenance,
} from "./shapes.ts";

/** Deadline of each hook, ms. A hook stuck in a synchronous loop cannot be pre-empted in-process; one awaiting past this is abandoned. */
export const SCORER_HOOK_TIMEOUT_MS = 30_000;

/** A failure of the scorer, with its stable code. */
export interface ScoreFailure {
  code: string;
  message: string;
  next?: string;
  /** `harness`: the scorer itself failed (outcome failed); `finding`: it scored the run `fail`. */
  kind: "harness" | "finding";
}

/** What scoring a study produced, for {@link applyScore}. */
export interface ScoreOutcome {
  provenance: ScorerProvenance;
  adapterScore?: RunAdapterScore;
  feedbackCandidates: RunFeedbackCandidate[];
  adapterArtifacts: RunAdapterArtifact[];
  warnings: { code: string; message: string }[];
  failure?: ScoreFailure;
}

/** Options of {@link scoreStudy}. */
export interface ScoreStudyInput {
  scorer: LoadedScorer;
  writer: RunWriter;
  /** The bundle input `finishStudy` is about to seal. */
  input: RunBundleInput;
  /** Deadline of each hook, ms (default {@link SCORER_HOOK_TIMEOUT_MS}). */
  deadlineMs?: number;
}

class HookTimeout extends Error {}

/** Run `hook(ctx)` and await its result for at most `ms`. */
async function callHook(hook: (ctx: unknown) => unknown, ctx: unknown, ms: number): Promise<unknown> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new HookTimeout()), ms);
  });
  try {
    return await Promise.race([Promise.resolve().then(() => hook(ctx)), deadline]);
  } finally {
    clearTimeout(timer);
  }
}

/** The zod issues of a payload in one short line. */
function issues(err: { issues: { path: PropertyKey[]; message: string }[] }): string {
  return err.issues
    .slice(0, 4)
    .map((i) => `${i.path.length ? i.path.map(String).join(".") : "(root)"}: ${i.message}`)
    .join("; ");
}

/**
 * Score the study: build the context, run the hooks, check and scrub their payloads, write the
 * adapter's files. Never throws for anything the scorer does; a write the bundle refuses is a
 * dropped artifact with a warning.
 */
export async function scoreStudy(o: ScoreStudyInput): Promise<ScoreOutcome> {
  const { scorer, writer } = o;
  const ms = o.deadlineMs ?? SCORER_HOOK_TIMEOUT_MS;
  const redactor = writer.redactor;
  const out: ScoreOutcome = {
    provenance: { ...scorer.provenance, hooks: o.input.mode === "live" ? "ran" : "loaded-only" },
    feedbackCandidates: [],
    adapterArtifacts: [],
    warnings: [],
  };
  const warn = (message: string) => out.warnings.push({ code: "HUMANISH_ADAPTER_PAYLOAD_DROPPED", message: redactor.text(message) });
  const interrupted = o.input.outcome?.state === "interrupted";
  if (o.input.mode !== "live" || interrupted) {
    out.provenance.hooks = "loaded-only";
    out.warnings.push({
      code: "HUMANISH_ADAPTER_NOT_RUN",
      message: `the scorer ${scorer.provenance.ref} loaded (exports ${scorer.provenance.exports.join(", ")}); ${interrupted ? "the run was interrupted, so its evidence is partial" : "a dry run has nothing to score"}, so no hook ran`,
    });
    return out;
  }
  const prepared = await prepareContext(writer, o.input, out);
  if (!prepared) return out;
  const { view, ctx } = prepared;

  // The first harness failure wins; it outranks a `fail` score (the run then failed as a harness).
  const fail = (code: string, message: string, next: string) => {
    if (out.failure?.kind !== "harness") out.failure = { code, message: redactor.text(message).slice(0, 1000), next, kind: "harness" };
  };
  const run = async (name: "score" | "deriveFeedback" | "deriveArtifacts"): Promise<unknown> => {
    const hook = scorer.hooks[name];
    if (!hook) return undefined;
    try {
      return await callHook(hook, ctx, ms);
    } catch (e) {
      if (e instanceof HookTimeout)
        fail(
          "HUMANISH_ADAPTER_HOOK_TIMEOUT",
          `${name}() of ${scorer.provenance.ref} did not finish within ${ms} ms`,
          "make the hook finish sooner (it reads a frozen context; it needs no network)",
        );
      else
        fail(
          "HUMANISH_ADAPTER_HOOK_FAILED",
          `${name}() of ${scorer.provenance.ref} threw: ${isHumanishError(e) ? `${e.code}: ` : ""}${e instanceof Error ? `${e.name}: ${e.message}` : String(e)}`,
          "fix the scorer; it is run again on the next run of the lab",
        );
      return undefined;
    }
  };

  const rawScore = await run("score");
  const namespace = scoreNamespace(rawScore);
  if (scorer.hooks.score && !out.failure) takeScore(out, rawScore, scorer.provenance.ref, redactor);

  const rawArtifacts = await run("deriveArtifacts");
  if (rawArtifacts !== undefined) out.adapterArtifacts = await writeArtifacts(rawArtifacts, writer, warn);

  const rawFeedback = await run("deriveFeedback");
  if (rawFeedback !== undefined) {
    const listed = new Set(["run.json", ...view.artifacts.map((a) => a.path), ...out.adapterArtifacts.map((a) => a.path)]);
    out.feedbackCandidates = checkFeedback(rawFeedback, { runId: view.runId, labId: view.lab.id, namespace, listed, redactor }, warn);
  }
  return out;
}

/** The bundle view and the frozen context, or null with the failure recorded in `out` (no hook then runs). */
async function prepareContext(
  writer: RunWriter,
  input: RunBundleInput,
  out: ScoreOutcome,
): Promise<{ view: RunBundle; ctx: ReturnType<typeof buildScoringContext> } | null> {
  try {
    const view = await writer.preview(input);
    const notes = { warnings: [] as string[] };
    const ctx = buildScoringContext(view, writer.runDir, notes);
    for (const w of notes.warnings) out.warnings.push({ code: "HUMANISH_ADAPTER_CONTEXT_PARTIAL", message: w });
    return { view, ctx };
  } catch (e) {
    // The bundle cannot be previewed: no hook runs, and the seal that follows reports the same problem.
    out.provenance.hooks = "loaded-only";
    out.failure = {
      code: "HUMANISH_ADAPTER_CONTEXT_FAILED",
      message: writer.redactor.text(`the scoring context could not be assembled: ${isHumanishError(e) ? `${e.code}: ${e.message}` : String(e)}`).slice(0, 1000),
      next: "report this as a bug",
      kind: "harness",
    };
    return null;
  }
}

/** Put the checked score into `out`, or its failure: a malformed score (harness) or a `fail` score (a finding). */
function takeScore(out: ScoreOutcome, raw: unknown, ref: string, redactor: RunWriter["redactor"]): void {
  const score = checkScore(raw, redactor);
  if (typeof score === "string") {
    out.failure = {
      code: "HUMANISH_ADAPTER_SCORE_MALFORMED",
      message: redactor.text(`score() of ${ref} returned a malformed score (${score})`).slice(0, 1000),
      next: "return {namespace, status: pass|partial|fail, score: 0–100, summary, data?}",
      kind: "harness",
    };
    return;
  }
  out.adapterScore = score;
  if (score.status === "fail")
    out.failure = {
      code: "HUMANISH_ADAPTER_SCORE_FAIL",
      message: redactor.text(`the scorer ${score.namespace} scored the run fail (${score.score}/100): ${score.summary}`).slice(0, 1000),
      next: "read the adapter score and feedback candidates in the report",
      kind: "finding",
    };
}

function scoreNamespace(raw: unknown): string | undefined {
  const ns = raw !== null && typeof raw === "object" ? (raw as { namespace?: unknown }).namespace : undefined;
  return typeof ns === "string" ? ns : undefined;
}

/** The scrubbed, checked score, or why it is malformed. */
function checkScore(raw: unknown, redactor: RunWriter["redactor"]): RunAdapterScore | string {
  const shaped = ScoreResultSchema.safeParse(raw);
  if (!shaped.success) return issues(shaped.error);
  const scrubbed = redactor.value({ ...shaped.data, schema: "humanish.adapter-score.v1" as const });
  if (redactor.containsSecretIn(scrubbed)) return "a key of data carries a secret value";
  const r = RunAdapterScoreSchema.safeParse(scrubbed);
  return r.success ? r.data : issues(r.error);
}

/** The well-formed, scrubbed candidates; each malformed one is dropped with a warning. */
function checkFeedback(raw: unknown, o: FeedbackRules, warn: (m: string) => void): RunFeedbackCandidate[] {
  if (!Array.isArray(raw)) {
    warn(`deriveFeedback() returned ${raw === null ? "null" : typeof raw}, not a list; no feedback candidate was kept`);
    return [];
  }
  if (raw.length > MAX_FEEDBACK_CANDIDATES) warn(`deriveFeedback() returned ${raw.length} candidates; only the first ${MAX_FEEDBACK_CANDIDATES} are kept`);
  const kept: RunFeedbackCandidate[] = [];
  const ids = new Set<string>();
  for (const [i, item] of raw.slice(0, MAX_FEEDBACK_CANDIDATES).entries()) {
    const c = candidateOf(item, o, ids);
    if (typeof c === "string") warn(`feedback candidate [${i}] dropped: ${c}`);
    else {
      ids.add(c.id);
      kept.push(c);
    }
  }
  return kept;
}

/** What a candidate is checked against: the run, the score's namespace, and the files of the bundle. */
interface FeedbackRules {
  runId: string;
  labId: string;
  namespace: string | undefined;
  listed: ReadonlySet<string>;
  redactor: RunWriter["redactor"];
}

/** One candidate completed, scrubbed and checked, or why it is dropped. */
function candidateOf(item: unknown, o: FeedbackRules, ids: ReadonlySet<string>): RunFeedbackCandidate | string {
  const shaped = FeedbackResultSchema.safeParse(item);
  if (!shaped.success) return issues(shaped.error);
  const adapterId = shaped.data.adapter_id ?? o.namespace;
  if (adapterId === undefined) return "no adapter_id and no score namespace to take it from";
  const missing = shaped.data.evidence.find((e) => !o.listed.has(e.path));
  if (missing) return `evidence path ${JSON.stringify(missing.path)} is not a file of the bundle`;
  if (ids.has(shaped.data.id)) return `id ${JSON.stringify(shaped.data.id)} repeats an earlier candidate`;
  const scrubbed = o.redactor.value({
    schema: "humanish.feedback-candidate.v1" as const,
    ...shaped.data,
    run_id: o.runId,
    lab_id: o.labId,
    adapter_id: adapterId,
    acceptance_proof: shaped.data.acceptance_proof ?? [],
    redaction: { status: "passed" as const, notes: "scrubbed with the bundle's redaction (secret values, secret shapes, local paths)" },
  });
  if (o.redactor.containsSecretIn(scrubbed)) return "a key of adapter.data carries a secret value";
  const r = RunFeedbackCandidateSchema.safeParse(scrubbed);
  return r.success ? r.data : `after scrubbing: ${issues(r.error)}`;
}

/** Write each well-formed artifact under `adapter/<namespace>/` (redacted by the writer); drop the rest with a warning. */
async function writeArtifacts(raw: unknown, writer: RunWriter, warn: (m: string) => void): Promise<RunAdapterArtifact[]> {
  if (!Array.isArray(raw)) {
    warn(`deriveArtifacts() returned ${raw === null ? "null" : typeof raw}, not a list; no artifact was written`);
    return [];
  }
  const written: RunAdapterArtifact[] = [];
  for (const [i, item] of raw.entries()) {
    if (written.length >= MAX_ADAPTER_ARTIFACTS) {
      warn(`deriveArtifacts() returned ${raw.length} artifacts; only the first ${MAX_ADAPTER_ARTIFACTS} are written`);
      break;
    }
    const shaped = ArtifactResultSchema.safeParse(item);
    if (!shaped.success) {
      warn(`adapter artifact [${i}] dropped: ${issues(shaped.error)}`);
      continue;
    }
    const a = shaped.data;
    const path = `adapter/${a.namespace}/${a.path}`;
    if (written.some((w) => w.path === path)) {
      warn(`adapter artifact [${i}] dropped: ${path} was already written`);
      continue;
    }
    const text = typeof a.content === "string" ? a.content : `${JSON.stringify(a.content, null, 2)}\n`;
    if (Buffer.byteLength(text, "utf8") > MAX_ADAPTER_ARTIFACT_BYTES) {
      warn(`adapter artifact [${i}] dropped: ${path} is over ${MAX_ADAPTER_ARTIFACT_BYTES} bytes`);
      continue;
    }
    try {
      if (typeof a.content === "string") await writer.writeArtifact(path, text, { kind: "data" });
      else await writer.writeJson(path, a.content, { kind: "data" });
    } catch (e) {
      warn(`adapter artifact [${i}] dropped: ${isHumanishError(e) ? `${e.code}: ${e.message}` : String(e)}`);
      continue;
    }
    const entry = writer.redactor.value({
      schema: "humanish.adapter-artifact.v1" as const,
      namespace: a.namespace,
      label: a.label,
      path,
      kind: a.kind,
      note: a.note ?? "",
    });
    written.push(entry);
  }
  return written;
}

/**
 * The bundle input with the scorer's blocks, warnings and consequences folded in (pure): a
 * harness failure turns a completed outcome `failed`; a `fail` score turns a passing verdict
 * `fail`; either adds a gap naming the code and the reason.
 */
export function applyScore(input: RunBundleInput, s: ScoreOutcome): RunBundleInput {
  const next: RunBundleInput = {
    ...input,
    scorerProvenance: s.provenance,
    ...(s.adapterScore ? { adapterScore: s.adapterScore } : {}),
    ...(s.feedbackCandidates.length ? { feedbackCandidates: s.feedbackCandidates } : {}),
    ...(s.adapterArtifacts.length ? { adapterArtifacts: s.adapterArtifacts } : {}),
    warnings: [...(input.warnings ?? []), ...s.warnings],
  };
  const f = s.failure;
  if (!f || !input.review) return next;
  const gap = `adapter: ${f.code}: ${f.message}`;
  if (f.kind === "harness" && (input.outcome?.state ?? "completed") === "completed") {
    const outcome = { state: "failed" as const, error: { code: f.code, message: f.message, ...(f.next ? { next: f.next } : {}) } };
    const review = deriveReview({
      mode: input.mode,
      outcome,
      participants: input.participants ?? [],
      tasks: input.tasks ?? [],
      gaps: [...input.review.gaps, gap],
    });
    return { ...next, outcome, review };
  }
  const verdict = input.review.verdict === "pass" ? "fail" : input.review.verdict;
  return { ...next, review: { ...input.review, verdict, gaps: [...input.review.gaps, gap] } };
}

/**
 * The scorer seam, one study-level step between evidence collection and the seal: every route
 * and lane that ends its study through `finishStudy` (src/study) gets it. Given the loaded scorer
 * and the bundle about to be sealed, {@link scoreStudy} builds the frozen scoring context, runs
 * each exported hook under a deadline in the scorer's own child process (./runner.ts: in a
 * sandbox container of its own, or unconfined only when the operator opted in; everything it
 * started is killed on the deadline), scrubs each payload with the bundle's own redactor,
 * shape-checks it, writes the adapter's files under `adapter/<namespace>/`, and says what the
 * run's outcome must carry; {@link applyScore} folds that into the bundle input (pure).
 *
 * A declared scorer is part of the study: when a hook throws or misses its deadline, or `score`
 * returns something malformed, the run fails as a harness failure (outcome `failed`, its code
 * and reason in the result). A well-formed score of `fail` is a finding: the outcome stays
 * `completed`, the verdict turns to `fail`, a gap says why, and the run result fails. Malformed
 * feedback candidates and artifacts are dropped, each with a warning, and never fail the run.
 * The evidence files the bundle lists are digested before the hooks and again after: an
 * unconfined scorer that changed one (a confined one cannot reach them) fails the run (`HUMANISH_ADAPTER_EVIDENCE_CHANGED`), so it cannot forge what
 * the bundle then signs.
 *
 * A dry run has nothing to score, and an interrupted run only partial evidence: the module was
 * loaded by `lab run` (imported in the scorer's process, proving the reference) and is recorded
 * as `loaded-only`, and no hook runs.
 */

import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { deriveReview } from "../bundle/derive.ts";
import type { RunBundle, RunBundleInput } from "../bundle/schemas.ts";
import type { RunWriter } from "../bundle/writer.ts";
import { sha256Hex } from "../bytes/sha256.ts";
import { errorMessage, isHumanishError } from "../errors.ts";
import { zodIssues } from "../text/zod-issues.ts";
import type { HookReply } from "./child.ts";
import { UNCONFINED_OPT_IN_ENV, UNCONFINED_POWERS } from "./confine.ts";
import { buildScoringContext } from "./context.ts";
import { confinementEvidence, type LoadedScorer } from "./load.ts";
import { type ChildResult, runChild, SCORER_LOAD_TIMEOUT_MS } from "./runner.ts";
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

/** Deadline of each hook, ms; the scorer's process is killed when it passes (a synchronous loop included). */
export const SCORER_HOOK_TIMEOUT_MS = 30_000;

/** The order the hooks run in, so feedback may cite the files the adapter added. */
const HOOK_ORDER = ["score", "deriveArtifacts", "deriveFeedback"] as const;
type HookName = (typeof HOOK_ORDER)[number];

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
  if (scorer.confinement.mode === "unconfined")
    out.warnings.push({
      code: "HUMANISH_ADAPTER_UNCONFINED",
      message: `the scorer ${scorer.provenance.ref} ran unconfined (${UNCONFINED_OPT_IN_ENV}=1): ${scorer.confinement.reason}; ${UNCONFINED_POWERS}`,
    });
  const interrupted = o.input.outcome?.state === "interrupted";
  if (o.input.mode !== "live" || interrupted) {
    const unproven = unreleased(out.provenance);
    if (unproven) out.warnings.push({ code: "HUMANISH_ADAPTER_CLEANUP_UNPROVEN", message: unproven });
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
  const ref = scorer.provenance.ref;
  const took = (child: ChildResult) => {
    out.provenance.confinement = confinementEvidence(scorer.confinement, child, out.provenance.confinement);
  };
  const replies = await runHooks(scorer, ctx, ms, fail, took).catch((e: unknown) => {
    // Spawning the scorer's process itself failed (e.g. out of memory): a harness failure, never a throw past the seal.
    fail("HUMANISH_ADAPTER_HOOK_FAILED", `the scorer's process for ${ref} could not run: ${errorMessage(e)}`, "retry the run");
    return new Map<HookName, HookReply>();
  });
  const value = (name: HookName): unknown => {
    const r = replies.get(name);
    if (!r) return undefined;
    if (!r.ok) {
      if (r.kind === "unserializable" && name === "score") return { __unserializable: r.message };
      fail(
        "HUMANISH_ADAPTER_HOOK_FAILED",
        r.kind === "threw" ? `${name}() of ${ref} threw: ${r.message}` : `${name}() of ${ref} returned a value that is not JSON: ${r.message}`,
        "fix the scorer; it is run again on the next run of the lab",
      );
      return undefined;
    }
    if ("items" in r) return r.items.map((it) => (it.ok ? it.value : { __unserializable: it.message }));
    return r.value;
  };

  const rawScore = value("score");
  const namespace = scoreNamespace(rawScore);
  // A score that came back is kept even when a later hook failed; a missing one is already a failure.
  if (replies.has("score") && rawScore !== undefined) takeScore(out, rawScore, ref, redactor);

  const rawArtifacts = value("deriveArtifacts");
  if (rawArtifacts !== undefined) out.adapterArtifacts = await writeArtifacts(rawArtifacts, writer, warn);

  const rawFeedback = value("deriveFeedback");
  if (rawFeedback !== undefined) {
    const listed = new Set(["run.json", ...view.artifacts.map((a) => a.path), ...out.adapterArtifacts.map((a) => a.path)]);
    const participants = new Set(view.participants.map((p) => p.id));
    out.feedbackCandidates = checkFeedback(rawFeedback, { runId: view.runId, labId: view.lab.id, namespace, listed, participants, redactor }, warn);
  }
  const changed = (await digestEvidence(writer.runDir, view)).filter((b) => b.sha256 !== b.now);
  if (changed.length)
    fail(
      "HUMANISH_ADAPTER_EVIDENCE_CHANGED",
      `the evidence changed while ${ref} ran: ${changed
        .slice(0, 5)
        .map((c) => c.path)
        .join(", ")} no longer match their digests`,
      "a scorer reads the context it is given; it must not write into the run directory",
    );
  const unproven = unreleased(out.provenance);
  if (unproven)
    fail("HUMANISH_ADAPTER_CLEANUP_UNPROVEN", unproven, "check `docker ps -a --filter label=humanish.role=scorer` and remove the container by its id");
  return out;
}

/** Why a container the scorer ran in is not proven removed, or undefined when each is. */
function unreleased(p: ScorerProvenance): string | undefined {
  const left = (p.confinement?.containers ?? []).filter((c) => c.outcome !== "released");
  return left.length
    ? `the scorer's container ${left.map((c) => `${c.id.slice(0, 12)} (${c.outcome}: ${c.reason})`).join(", ")} was not proven removed`
    : undefined;
}

/** Each listed evidence file: its digest in the bundle view (taken before the hooks) and on disk now (after them). */
async function digestEvidence(runDir: string, view: RunBundle): Promise<{ path: string; sha256: string; now: string }[]> {
  return Promise.all(
    view.artifacts.map(async (a) => ({
      path: a.path,
      sha256: a.sha256,
      now: await readFile(join(runDir, a.path)).then(
        (b) => sha256Hex(new Uint8Array(b)),
        () => "missing",
      ),
    })),
  );
}

/**
 * Run the module's hooks in the scorer's process; each hook's reply by name. A hook with no
 * reply (the process died, was killed on the deadline or overflowed) is a harness failure
 * recorded through `fail`; so is a module that changed since it was loaded.
 */
async function runHooks(
  scorer: LoadedScorer,
  ctx: unknown,
  ms: number,
  fail: (code: string, message: string, next: string) => void,
  onRelease: (child: ChildResult) => void,
): Promise<Map<HookName, HookReply>> {
  const ref = scorer.provenance.ref;
  const replies = new Map<HookName, HookReply>();
  const now = await readFile(scorer.path).then(
    (b) => sha256Hex(new Uint8Array(b)),
    () => "missing",
  );
  if (now !== scorer.provenance.digest) {
    fail(
      "HUMANISH_ADAPTER_HOOK_FAILED",
      `${ref} changed on disk after it was loaded (its digest no longer matches), so no hook ran`,
      "leave the scorer alone while a run is in progress",
    );
    return replies;
  }
  const hooks = HOOK_ORDER.filter((h) => scorer.provenance.exports.includes(h));
  const child = await runChild(
    { op: "run", path: scorer.path, hooks: [...hooks], ctx },
    { loadMs: SCORER_LOAD_TIMEOUT_MS, hookMs: ms, confinement: scorer.confinement, digest: scorer.provenance.digest },
  );
  onRelease(child);
  for (const r of child.hooks) if ((HOOK_ORDER as readonly string[]).includes(r.name)) replies.set(r.name as HookName, r);
  const missing = hooks.find((h) => !replies.has(h));
  if (missing) {
    const timeout = child.stopped?.kind === "timeout";
    const loadFailed = child.load?.t === "load-failed" ? `the module did not load: ${child.load.message}` : undefined;
    fail(
      timeout ? "HUMANISH_ADAPTER_HOOK_TIMEOUT" : "HUMANISH_ADAPTER_HOOK_FAILED",
      timeout && child.load
        ? `${missing}() of ${ref} did not finish within ${ms} ms (its process was killed)`
        : `${missing}() of ${ref} gave no result: ${loadFailed ?? child.stopped?.detail ?? "no reply"}`,
      timeout ? "make the hook finish sooner (it reads a frozen context; it needs no network)" : "fix the scorer; it is run again on the next run of the lab",
    );
  }
  return replies;
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

/** Put the checked score into `out`, or its failure: a malformed score (harness) or a `fail` score (a finding); an earlier harness failure stays first. */
function takeScore(out: ScoreOutcome, raw: unknown, ref: string, redactor: RunWriter["redactor"]): void {
  const score = checkScore(raw, redactor);
  const harnessFirst = out.failure?.kind === "harness";
  if (typeof score === "string") {
    if (harnessFirst) return;
    out.failure = {
      code: "HUMANISH_ADAPTER_SCORE_MALFORMED",
      message: redactor.text(`score() of ${ref} returned a malformed score (${score})`).slice(0, 1000),
      next: "return {namespace, status: pass|partial|fail, score: 0–100, summary, data?}",
      kind: "harness",
    };
    return;
  }
  out.adapterScore = score;
  if (score.status === "fail" && !harnessFirst)
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

/** Why a payload the scorer's process could not serialise is unusable, or undefined for any other value. */
function unserializable(raw: unknown): string | undefined {
  if (raw === null || typeof raw !== "object" || !("__unserializable" in raw)) return undefined;
  return `it is not JSON (${String((raw as { __unserializable: unknown }).__unserializable)})`;
}

/**
 * `check(raw)`, or its error as a string: the payloads are plain JSON from the scorer's process,
 * so this only guards against a check of ours tripping over an unexpected value.
 */
function guarded<T>(check: () => T | string): T | string {
  try {
    return check();
  } catch (e) {
    return `it could not be checked (${errorMessage(e)})`;
  }
}

/** The scrubbed, checked score, or why it is malformed. */
function checkScore(raw: unknown, redactor: RunWriter["redactor"]): RunAdapterScore | string {
  return unserializable(raw) ?? guarded(() => checkScoreShape(raw, redactor));
}

function checkScoreShape(raw: unknown, redactor: RunWriter["redactor"]): RunAdapterScore | string {
  const shaped = ScoreResultSchema.safeParse(raw);
  if (!shaped.success) return zodIssues(shaped.error, 4);
  const scrubbed = redactor.value({ ...shaped.data, schema: "humanish.adapter-score.v1" as const });
  if (redactor.containsSecretIn(scrubbed)) return "a key of data carries a secret value";
  const r = RunAdapterScoreSchema.safeParse(scrubbed);
  return r.success ? r.data : zodIssues(r.error, 4);
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
    const c = unserializable(item) ?? guarded(() => candidateOf(item, o, ids));
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
  /** Ids of the run's participants (a candidate naming another is dropped, as verify would refuse it). */
  participants: ReadonlySet<string>;
  redactor: RunWriter["redactor"];
}

/** One candidate completed, scrubbed and checked, or why it is dropped. */
function candidateOf(item: unknown, o: FeedbackRules, ids: ReadonlySet<string>): RunFeedbackCandidate | string {
  const shaped = FeedbackResultSchema.safeParse(item);
  if (!shaped.success) return zodIssues(shaped.error, 4);
  const adapterId = shaped.data.adapter_id ?? o.namespace;
  if (adapterId === undefined) return "no adapter_id and no score namespace to take it from";
  const who = shaped.data.participant_id;
  if (who !== undefined && !o.participants.has(who))
    return `participant_id ${JSON.stringify(who)} is not a participant of this run (${[...o.participants].join(", ")})`;
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
  return r.success ? r.data : `after scrubbing: ${zodIssues(r.error, 4)}`;
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
    const shaped =
      unserializable(item) ??
      guarded(() => {
        const r = ArtifactResultSchema.safeParse(item);
        return r.success ? r.data : zodIssues(r.error, 4);
      });
    if (typeof shaped === "string") {
      warn(`adapter artifact [${i}] dropped: ${shaped}`);
      continue;
    }
    const a = shaped;
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

/**
 * The once-per-study tail every route shares: from the assembled seats to the run's outcome,
 * `run.json`, verification and the result the CLI prints. (The HTML report is added after this,
 * by `runStudy` in src/routes.)
 */
import { applyScore, scoreStudy } from "../adapters/seam.ts";
import { deriveReview, stakeholderLine, summarizeCost } from "../bundle/derive.ts";
import { claimContradicted } from "../bundle/goal.ts";
import type { CostLine, LifecycleEvent, RunBundleInput, RunOutcome } from "../bundle/schemas.ts";
import { verifyRun } from "../bundle/verify.ts";
import type { RunWriter } from "../bundle/writer.ts";
import type { StudyContext, StudyResult } from "./context.ts";
import type { AssembledStudy, StudyError } from "./evidence.ts";

export interface FinishInput {
  ctx: StudyContext<{ id: string; title?: string }>;
  writer: RunWriter;
  route: "terminal" | "browser";
  target: RunBundleInput["target"];
  createdAt: string;
  subject: RunBundleInput["subject"];
  caps: NonNullable<RunBundleInput["caps"]>;
  assembled: AssembledStudy;
  /** Study-level lifecycle (before and after the seats), merged with the seats' in time order. */
  lifecycle: LifecycleEvent[];
  /** Study-level cost lines (beside the seats' own). */
  costLines: CostLine[];
  gaps: string[];
  /** A study-level failure (e.g. the app could not be served), beside the seats'. */
  failure?: StudyError;
  /** Warnings of the plan (e.g. seats run in waves), carried beside the lab's. */
  warnings: { code: string; message: string; path?: string }[];
  redactionNotes: string;
}

/**
 * A seat's spend as the result prints it, USD: its known spend, or null (unmeasured) when any
 * of its cost lines is unmeasured, so the known part never reads as the whole. A line without
 * a participant belongs to the seat of a one-seat study.
 */
export function seatUsd(lines: readonly CostLine[], seatId: string, knownUsd: number, seats: number): number | null {
  const mine = lines.filter((l) => l.participantId === seatId || (l.participantId === undefined && seats === 1));
  return mine.some((l) => l.usd === null) ? null : knownUsd;
}

function signalName(signal: AbortSignal): "SIGINT" | "SIGTERM" {
  return signal.reason === "SIGTERM" ? "SIGTERM" : "SIGINT";
}

/**
 * Decide the outcome, write `run.json`, verify, and build the result. The run fails when the
 * study itself failed, a release was not confirmed, or every seat failed (a one-seat study: its
 * seat failed); a few failed seats among many are seat results, named beside the denominator.
 */
export async function finishStudy(f: FinishInput): Promise<StudyResult> {
  const { ctx, writer, assembled: a } = f;
  const redact = (s: string) => writer.redactor.text(s);
  const { interrupted, failure, warnings, outcome } = studyOutcome(f);
  const lifecycle = [...f.lifecycle, ...a.lifecycle].sort((x, y) => (x.at < y.at ? -1 : x.at > y.at ? 1 : 0));
  const review = deriveReview({ mode: ctx.mode, outcome, participants: a.participants, tasks: a.tasks, gaps: f.gaps });
  const say = oneSeatProgress(f);
  say("write");
  await writer.writeStatus({ phase: "write" }).catch(() => undefined);
  let input: RunBundleInput = {
    route: f.route,
    mode: ctx.mode,
    target: f.target,
    createdAt: f.createdAt,
    lab: { id: ctx.lab.id, ...(ctx.lab.title ? { title: ctx.lab.title } : {}), source: ctx.labSource },
    subject: f.subject,
    outcome,
    lifecycle,
    participants: a.participants,
    tasks: a.tasks,
    review,
    caps: f.caps,
    ...(ctx.mode === "live" ? { cost: summarizeCost([...a.costLines, ...f.costLines]) } : {}),
    cleanup: a.cleanup,
    warnings,
    redactionNotes: f.redactionNotes,
    study: a.study,
    ...(ctx.continues ? { continues: ctx.continues } : {}),
  };
  // The scorer seam: after every seat's hidden checks and evidence, before the seal.
  const scored = ctx.scorer
    ? await scoreStudy({ scorer: ctx.scorer, writer, input, ...(ctx.scorerDeadlineMs ? { deadlineMs: ctx.scorerDeadlineMs } : {}) })
    : undefined;
  if (scored) {
    input = applyScore(input, scored);
    warnings.push(...scored.warnings);
  }
  const bundle = await writer.finalize(input);
  say("verify");
  await writer.writeStatus({ phase: "verify" }).catch(() => undefined);
  const verify = await verifyRun(writer.runDir);
  const passed = a.tasks.filter((t) => t.passed).length;
  const p0 = a.participants[0];
  say("done", {
    detail: verify.ok ? "verified" : "verify failed",
    tasksPassed: passed,
    tasksTotal: a.tasks.length,
    ...(p0 ? { status: p0.status, ...(p0.completionReason ? { completionReason: p0.completionReason } : {}) } : {}),
  });
  const error = resultError(f, { failure, interrupted, scored, verify }, redact);
  return studyResult(f, { bundle, verify, warnings, passed, error, interrupted }, redact);
}

/**
 * The study's outcome before anything is written: interrupted (by which signal), else failed —
 * an unproven cleanup first, then the study's own failure, then (one seat, or all failed) the
 * first seat's — else completed. `warnings` are the lab's and the plan's, plus failed seats
 * among many and seats the budget kept from starting.
 */
function studyOutcome(f: FinishInput) {
  const { ctx, assembled: a } = f;
  const redact = (s: string) => f.writer.redactor.text(s);
  const interrupted = ctx.signal.aborted ? signalName(ctx.signal) : undefined;
  const cleanupFailure = a.failures.find((e) => e.code.endsWith("CLEANUP_UNPROVEN"));
  const seats = a.study.seats;
  const allFailed = seats.length > 0 && seats.every((s) => a.seatFailures.has(s.id));
  const firstSeatFailure = seats.map((s) => a.seatFailures.get(s.id)).find((e) => e !== undefined);
  const failure: StudyError | undefined = cleanupFailure ?? f.failure ?? (seats.length === 1 || allFailed ? firstSeatFailure : undefined);
  const warnings = [...ctx.labWarnings, ...f.warnings];
  const failedSeats = seats.filter((s) => a.seatFailures.has(s.id));
  if (!failure && failedSeats.length > 0) {
    warnings.push({
      code: "HUMANISH_STUDY_SEAT_FAILED",
      message: `${failedSeats.length} of ${seats.length} seat(s) failed as a harness (not a finding): ${failedSeats.map((s) => `${s.id} ${a.seatFailures.get(s.id)?.code}`).join(", ")}`,
    });
  }
  if (a.study.totals.budgetReached > 0) {
    warnings.push({ code: "HUMANISH_STUDY_BUDGET_REACHED", message: `${a.study.totals.budgetReached} seat(s) did not start: the study budget was spent` });
  }
  const outcome: RunOutcome = interrupted
    ? { state: "interrupted", interrupted }
    : failure
      ? { state: "failed", error: { code: failure.code, message: redact(failure.message), ...(failure.next ? { next: failure.next } : {}) } }
      : { state: "completed" };
  return { interrupted, failure, warnings, outcome };
}

/** A one-seat study keeps its single progress line through the study's own phases; a many-seat study's says nothing here. */
function oneSeatProgress(f: FinishInput) {
  const seats = f.assembled.study.seats;
  const only = seats.length === 1 ? seats[0]!.id : undefined;
  return (phase: string, e: { detail?: string; tasksPassed?: number; tasksTotal?: number; status?: string; completionReason?: string } = {}) => {
    if (!only) return;
    try {
      f.ctx.progress({ participant: only, phase, ...e });
    } catch {
      // a broken progress sink never stops a study
    }
  };
}

/**
 * The result's error, first that applies: the study's failure; a one-seat study's result error
 * (not when interrupted); the scorer's failure; `HUMANISH_VERIFY_FAILED` with the failed checks.
 */
function resultError(
  f: FinishInput,
  o: {
    failure: StudyError | undefined;
    interrupted: string | undefined;
    scored: Awaited<ReturnType<typeof scoreStudy>> | undefined;
    verify: Awaited<ReturnType<typeof verifyRun>>;
  },
  redact: (s: string) => string,
): StudyError | undefined {
  const { failure, scored, verify } = o;
  const a = f.assembled;
  let error = failure ? { code: failure.code, message: redact(failure.message), ...(failure.next ? { next: failure.next } : {}) } : undefined;
  const first = a.resultErrors[0];
  if (!error && !o.interrupted && first && a.study.seats.length === 1) error = { ...first, message: redact(first.message) };
  if (!error && scored?.failure)
    error = { code: scored.failure.code, message: scored.failure.message, ...(scored.failure.next ? { next: scored.failure.next } : {}) };
  if (!error && !verify.ok) {
    error = {
      code: "HUMANISH_VERIFY_FAILED",
      message: redact(
        verify.checks
          .filter((c) => !c.ok)
          .map((c) => `${c.name}: ${c.message}`)
          .join("; "),
      ),
      next: `humanish verify --run ${f.ctx.runId}`,
    };
  }
  return error;
}

/** The result the CLI prints, from the sealed bundle and its verification (`passed`: tasks whose check passed). */
function studyResult(
  f: FinishInput,
  o: {
    bundle: Awaited<ReturnType<RunWriter["finalize"]>>;
    verify: Awaited<ReturnType<typeof verifyRun>>;
    warnings: { code: string; message: string }[];
    passed: number;
    error: StudyError | undefined;
    interrupted: "SIGINT" | "SIGTERM" | undefined;
  },
  redact: (s: string) => string,
): StudyResult {
  const { ctx, writer, assembled: a } = f;
  const { bundle, verify, error, interrupted } = o;
  const seats = a.study.seats;
  return {
    ok: !error && !interrupted && verify.ok,
    runId: ctx.runId,
    runDir: writer.runDir,
    route: f.route,
    mode: ctx.mode,
    verdict: ctx.mode === "live" ? stakeholderLine(bundle.review) : bundle.review.summary,
    participants: a.participants.map((p) => ({
      id: p.id,
      status: p.status,
      completionReason: p.completionReason ?? "none",
      ...(ctx.mode === "live" && p.claimed ? { claimed: p.claimed } : {}),
      ...(claimContradicted(p) ? { contradicted: true } : {}),
    })),
    tasks: a.tasks.map((t) => ({
      id: t.id,
      goal: t.goal,
      passed: t.passed,
      status: t.status,
      ...(t.participantId ? { participantId: t.participantId } : {}),
      ...(t.detail ? { detail: t.detail } : {}),
    })),
    reward: ctx.mode === "live" && a.tasks.length > 0 ? o.passed / a.tasks.length : null,
    verify: { ok: verify.ok, shareSafety: verify.shareSafety.status },
    verification: verify,
    warnings: o.warnings.map((w) => ({ code: w.code, message: w.message })),
    seats: seats.map((s) => ({
      id: s.id,
      state: s.state,
      phase: s.phase,
      release: s.release,
      durationMs: s.durationMs,
      usd: seatUsd(a.costLines, s.id, s.usd, seats.length),
      // Scrubbed like the top-level error: run.json's copy is redacted on write, stdout's is not.
      ...(s.error ? { error: { ...s.error, message: redact(s.error.message) } } : {}),
    })),
    study: { declaredSeats: a.study.declaredSeats, concurrency: a.study.concurrency, waves: a.study.waves, totals: a.study.totals },
    ...(bundle.scorerProvenance ? { adapter: adapterSummary(bundle, bundle.scorerProvenance) } : {}),
    ...(error ? { error } : {}),
    ...(interrupted ? { interrupted } : {}),
  };
}

/** The scorer's part of the result: its ref and hooks, its score (null when it gave none), feedback candidates and artifacts. */
function adapterSummary(
  bundle: Awaited<ReturnType<RunWriter["finalize"]>>,
  provenance: NonNullable<Awaited<ReturnType<RunWriter["finalize"]>>["scorerProvenance"]>,
) {
  return {
    ref: provenance.ref,
    hooks: provenance.hooks,
    score: bundle.adapterScore
      ? {
          namespace: bundle.adapterScore.namespace,
          status: bundle.adapterScore.status,
          score: bundle.adapterScore.score,
          summary: bundle.adapterScore.summary,
        }
      : null,
    feedbackCandidates: bundle.feedbackCandidates?.length ?? 0,
    artifacts: (bundle.adapterArtifacts ?? []).map((x) => x.path),
  };
}

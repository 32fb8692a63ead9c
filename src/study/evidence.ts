/**
 * What a lane hands back for one seat, and how the seats of a study become one bundle's
 * participants, tasks, cleanup, cost lines, lifecycle and study section — pure, no I/O.
 */
import { round6, studyTotals } from "../bundle/derive.ts";
import { GOAL_RULE, goalCheckOf } from "../bundle/goal.ts";
import type { CleanupProof, CostLine, LifecycleEvent, RunParticipant, Study, TaskResult } from "../bundle/schemas.ts";
import type { SeatsRun } from "./runner.ts";
import type { SeatResult, SeatSpec } from "./types.ts";

/** A failure with its stable code, message and next step. */
export interface StudyError {
  code: string;
  message: string;
  next?: string;
}

/** One seat's evidence, as its lane's `snapshot` reports it. `L` is the lane's own extra facts. */
export interface SeatEvidence<L = unknown> {
  participant: RunParticipant;
  tasks: TaskResult[];
  cleanup: CleanupProof[];
  costLines: CostLine[];
  lifecycle: LifecycleEvent[];
  /** A failure the lane found while finalizing (cleanup unproven, a cap exceeded, evidence not written). */
  failure?: StudyError;
  /** A finding that does not invalidate the run but ends the study unsuccessfully (e.g. a participant timed out). */
  resultError?: StudyError;
  /** The seat's folder in the bundle, or null for the root layout of a one-seat study. */
  folder: string | null;
  usd: number;
  jobs: number;
  lane: L;
}

/** The bundle's seat folder for seat `id` of a `seats`-seat study (null: one seat keeps the root layout). */
export function seatFolder(seats: number, id: string): string | null {
  return seats > 1 ? `seats/${id}/` : null;
}

/** What the route adds for seats that never started: their participant's actor type and label. */
export interface NotStartedShape {
  actorType: string;
  label?: (seat: SeatSpec) => string | undefined;
  /** Task ids and goals every seat owes a result for. */
  tasks: readonly { id: string; goal: string }[];
}

/** The seats of a study assembled into bundle pieces. */
export interface AssembledStudy {
  participants: RunParticipant[];
  tasks: TaskResult[];
  cleanup: CleanupProof[];
  costLines: CostLine[];
  lifecycle: LifecycleEvent[];
  study: Study;
  /** The lanes' failures (cleanup unproven first), for the run's outcome. */
  failures: StudyError[];
  /** Each seat's failure (the runner's harness failure, else its lane's), by seat id. */
  seatFailures: Map<string, StudyError>;
  resultErrors: StudyError[];
}

function notStartedParticipant<L>(r: SeatResult<SeatEvidence<L>>, shape: NotStartedShape): RunParticipant {
  const label = shape.label?.(r.seat);
  const budget = r.state === "budget_reached";
  const check = goalCheckOf(shape.tasks.map(() => ({ passed: false })));
  return {
    id: r.seat.id,
    actorType: shape.actorType,
    ...(label ? { label } : {}),
    status: budget ? "incomplete" : "failed",
    completionReason: budget ? "budget_reached" : r.state === "interrupted" ? "interrupted" : "harness_error",
    reason: r.error ? `${r.error.code}: ${r.error.message}` : r.release.reason,
    trace: null,
    ...(r.seat.persona ? { persona: r.seat.persona } : {}),
    ...(r.seat.device ? { device: r.seat.device } : {}),
    claimed: "none",
    goalCheck: { ...check, detail: `not started; ${check.detail}` },
  };
}

/**
 * Assemble the study from the runner's seat results (in seat order). A seat that never started
 * gets a participant (`budget_reached`, `interrupted` or a harness failure) and a `not_run`
 * result for every task, so every seat counts in the denominator.
 */
export function assembleStudy<L>(
  run: SeatsRun<SeatEvidence<L>>,
  o: { lane: string; concurrency: number; maxTotalUsd: number | null; shape: NotStartedShape },
): AssembledStudy {
  const participants: RunParticipant[] = [];
  const tasks: TaskResult[] = [];
  const cleanup: CleanupProof[] = [];
  const costLines: CostLine[] = [];
  const lifecycle: LifecycleEvent[] = [];
  const failures: StudyError[] = [];
  const resultErrors: StudyError[] = [];
  const seats: Study["seats"] = [];
  const seatFailures = new Map<string, StudyError>();
  for (const r of run.seats) {
    const e = r.facts;
    if (e) {
      participants.push(e.participant);
      tasks.push(...e.tasks);
      cleanup.push(...e.cleanup);
      costLines.push(...e.costLines);
      lifecycle.push(...e.lifecycle);
      if (e.failure) failures.push(e.failure);
      if (e.resultError) resultErrors.push(e.resultError);
    } else {
      participants.push(notStartedParticipant(r, o.shape));
      const why =
        r.state === "budget_reached" ? "not run: the study budget was spent" : r.state === "interrupted" ? "not run: the study was interrupted" : "not run";
      tasks.push(...o.shape.tasks.map((t) => ({ id: t.id, goal: t.goal, participantId: r.seat.id, status: "not_run" as const, passed: false, detail: why })));
    }
    const error = r.error ?? e?.failure;
    if (error && r.state !== "budget_reached" && r.state !== "interrupted") seatFailures.set(r.seat.id, error);
    seats.push({
      id: r.seat.id,
      index: r.seat.index,
      state: r.state,
      phase: r.phase,
      folder: e?.folder ?? null,
      release: r.release.outcome,
      ...(r.release.id ? { containerId: r.release.id } : {}),
      reason: r.error ? r.error.message : e ? e.participant.reason : r.release.reason,
      ...(error && r.state === "failed" ? { error } : {}),
      ...(r.startedAt ? { startedAt: r.startedAt } : {}),
      durationMs: r.durationMs,
      usd: round6(e?.usd ?? 0),
      jobs: e?.jobs ?? 0,
    });
  }
  lifecycle.sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : 0));
  const declared = run.seats.length;
  const concurrency = Math.max(1, Math.min(o.concurrency, declared));
  const study: Study = {
    schema: "humanish.study.v1",
    lane: o.lane,
    declaredSeats: declared,
    concurrency,
    waves: Math.ceil(declared / concurrency),
    maxTotalUsd: o.maxTotalUsd,
    goalRule: GOAL_RULE,
    seats,
    totals: studyTotals(seats),
  };
  failures.sort((a, b) => Number(b.code.endsWith("CLEANUP_UNPROVEN")) - Number(a.code.endsWith("CLEANUP_UNPROVEN")));
  return { participants, tasks, cleanup, costLines, lifecycle, study, failures, seatFailures, resultErrors };
}

/**
 * The run of a study whose seats never started (the study failed before its first seat, or was
 * interrupted): every seat `interrupted`, or `failed` with the study's failure.
 */
export function notStartedRun<L>(seats: readonly SeatSpec[], failure: StudyError | undefined, interrupted: boolean): SeatsRun<SeatEvidence<L>> {
  return {
    seats: seats.map((seat) => ({
      seat,
      state: interrupted || !failure ? ("interrupted" as const) : ("failed" as const),
      phase: "not_started",
      ...(failure && !interrupted ? { error: failure } : {}),
      release: {
        outcome: "none" as const,
        reason: interrupted ? "not started: the study was interrupted" : failure ? `not started: ${failure.code}` : "not started",
      },
      slotFreed: true,
      durationMs: 0,
    })),
    heldSlots: [],
    knownUsd: 0,
    knownJobs: 0,
  };
}

/** The `done` summary of a seat from its evidence (every lane's `summary`). */
export function evidenceSummary(e: SeatEvidence<unknown>): { status: string; completionReason?: string; tasksPassed: number; tasksTotal: number } {
  return {
    status: e.participant.status,
    ...(e.participant.completionReason ? { completionReason: e.participant.completionReason } : {}),
    tasksPassed: e.tasks.filter((t) => t.passed).length,
    tasksTotal: e.tasks.length,
  };
}

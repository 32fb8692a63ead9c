/**
 * The combined result of a continued study — pure. A run made by `lab run --rerun-failed-from`
 * names the run it continues (`continues` in run.json); following that link back gives a chain of
 * runs, oldest first. Every seat is counted once, by its last attempt in the chain; its earlier
 * attempts are listed beside it, never counted.
 *
 * How an attempt counts is the rule of the run it ran in, the same the comparison applies to one
 * run: a seat the study runner ended as `failed`, or any seat of a run that failed as a whole,
 * is a harness failure; otherwise the participant's own category (goal, finding, harness).
 */
import { type ParticipantCategory, participantCategory, round6, summarizeCost, taskFunnel } from "./derive.ts";
import type { Continues, RunBundle, RunParticipant, StudySeat, TaskResult } from "./schemas.ts";

/** One attempt of a seat: the run it ran in, its record there, and how it counts. */
export interface SeatAttempt {
  runId: string;
  participant: RunParticipant;
  tasks: TaskResult[];
  /** The study runner's seat entry (absent in bundles written before seats existed). */
  seat?: StudySeat;
  counted: ParticipantCategory;
}

/** A seat of the combined result: its last attempt (the one counted) and the earlier ones. */
export interface CombinedSeat {
  id: string;
  last: SeatAttempt;
  /** Earlier attempts, oldest first (empty for a seat that ran once). */
  earlier: SeatAttempt[];
}

/** `humanish.combined-result.v1`: a chain of runs read as one study. */
export interface CombinedResult {
  schema: "humanish.combined-result.v1";
  /** The chain's run ids, oldest first; the last is the run the result is of. */
  runIds: string[];
  /** Why each later run reran its seats, in chain order (one entry per link). */
  links: Pick<Continues, "runId" | "which" | "seats">[];
  seats: CombinedSeat[];
  /** Seats counted (each once). */
  total: number;
  reachedGoal: number;
  /** Seats whose last attempt failed as a harness (in the denominator's total, never a finding). */
  harnessFailed: number;
  /** Per task id, how many seats' last attempt passed its check, of the seats. */
  tasks: { id: string; completed: number; sessions: number }[];
  /** `7/8 reached the goal (…); tasks: … — combined over 2 runs, each seat its last attempt (2 rerun)`. */
  line: string;
}

/** How one seat's attempt counts in the run it ran in (see the module comment). */
export function attemptCategory(b: Pick<RunBundle, "outcome" | "study">, p: RunParticipant): ParticipantCategory {
  if (b.outcome.state === "failed") return "harness";
  if (b.study?.seats.some((s) => s.id === p.id && s.state === "failed")) return "harness";
  return participantCategory(p);
}

function attemptsOf(b: RunBundle): SeatAttempt[] {
  return b.participants.map((p) => {
    const seat = b.study?.seats.find((s) => s.id === p.id);
    return {
      runId: b.runId,
      participant: p,
      tasks: b.tasks.filter((t) => t.participantId === p.id || (t.participantId === undefined && b.participants.length === 1)),
      ...(seat ? { seat } : {}),
      counted: attemptCategory(b, p),
    };
  });
}

/**
 * The combined result of `chain` (oldest first; each run after the first continues the one before
 * it, which the caller has checked). Seat order is the order the seats first appear in.
 */
export function combineChain(chain: readonly RunBundle[]): CombinedResult {
  const bySeat = new Map<string, SeatAttempt[]>();
  for (const b of chain) {
    for (const a of attemptsOf(b)) bySeat.set(a.participant.id, [...(bySeat.get(a.participant.id) ?? []), a]);
  }
  const seats: CombinedSeat[] = [...bySeat].map(([id, attempts]) => ({ id, last: attempts[attempts.length - 1]!, earlier: attempts.slice(0, -1) }));
  const reachedGoal = seats.filter((s) => s.last.counted === "goal").length;
  const harnessFailed = seats.filter((s) => s.last.counted === "harness").length;
  const tasks = taskFunnel(
    seats.flatMap((s) => s.last.tasks),
    seats.length,
  ).tasks.map(({ id, completed, sessions }) => ({ id, completed, sessions }));
  const rerun = seats.filter((s) => s.earlier.length > 0).length;
  const harness = harnessFailed > 0 ? ` (${harnessFailed} harness failure${harnessFailed === 1 ? "" : "s"}: not a finding)` : "";
  const taskPart = tasks.length ? `; tasks: ${tasks.map((t) => `${t.id} ${t.completed}/${t.sessions}`).join(" · ")}` : "";
  return {
    schema: "humanish.combined-result.v1",
    runIds: chain.map((b) => b.runId),
    links: chain.flatMap((b) => (b.continues ? [{ runId: b.continues.runId, which: b.continues.which, seats: b.continues.seats }] : [])),
    seats,
    total: seats.length,
    reachedGoal,
    harnessFailed,
    tasks,
    line: `${reachedGoal}/${seats.length} reached the goal${harness}${taskPart} — combined over ${chain.length} run${chain.length === 1 ? "" : "s"}, each seat its last attempt (${rerun} rerun)`,
  };
}

/**
 * The combined result as one bundle-shaped view, for code that reads a run (the comparison):
 * the last run's facts, with every seat's last attempt as its participants, tasks and study
 * seats; cost lines and wall time of every run in the chain (all of it was spent). A seat whose
 * last attempt counts as a harness failure because its run failed as a whole is marked a failed
 * seat, so the view counts it as its own run did. Never written: it is no evidence of its own.
 */
export function combinedView(chain: readonly RunBundle[]): RunBundle {
  const last = chain[chain.length - 1]!;
  const c = combineChain(chain);
  const seats: StudySeat[] = c.seats.map((s, index) => {
    const base: StudySeat = s.last.seat ?? {
      id: s.id,
      index,
      state: "completed",
      phase: "done",
      folder: null,
      release: "none",
      reason: s.last.participant.reason,
      durationMs: 0,
      usd: 0,
      jobs: 0,
    };
    const runFailed = chain.find((b) => b.runId === s.last.runId)?.outcome.state === "failed";
    return runFailed && base.state !== "failed"
      ? { ...base, index, state: "failed", error: { code: "HUMANISH_RUN_FAILED", message: `its run ${s.last.runId} failed as a whole` } }
      : { ...base, index };
  });
  const participants = c.seats.map((s) => s.last.participant);
  const lines = chain.flatMap((b) => b.cost.lines);
  return {
    ...last,
    // The view's own outcome: each seat already counts by the run it ran in.
    outcome: last.outcome.state === "interrupted" ? last.outcome : { state: "completed" },
    participants,
    tasks: c.seats.flatMap((s) => s.last.tasks),
    durationMs: chain.reduce((a, b) => a + b.durationMs, 0),
    cost: summarizeCost(lines, `${lines.length} cost line(s) of ${chain.length} runs`),
    ...(last.study
      ? {
          study: {
            ...last.study,
            declaredSeats: seats.length,
            concurrency: Math.min(last.study.concurrency, seats.length),
            waves: Math.ceil(seats.length / Math.min(last.study.concurrency, seats.length)),
            seats,
            totals: {
              ...last.study.totals,
              seats: seats.length,
              knownUsd: round6(seats.reduce((a, s) => a + s.usd, 0)),
              knownJobs: seats.reduce((a, s) => a + s.jobs, 0),
            },
          },
        }
      : {}),
  };
}

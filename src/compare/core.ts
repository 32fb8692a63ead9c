/**
 * Comparing two verified runs of one lab (before and after a product change): per task the
 * reach rate in each run with its denominator, the difference, and whether the difference is
 * distinguishable from noise at these sample sizes (two-sided Fisher exact test, p < 0.05);
 * the overall goal rate the same way; cost and wall time side by side. Pure: it takes parsed,
 * already verified bundles.
 *
 * Denominators count only what was observed. A task's denominator is the sessions whose hidden
 * check ran (`passed` or `failed`); `not_run` results are reported beside it, never counted as
 * failures. The goal denominator leaves out participants whose harness failed: a harness
 * failure says nothing about the product. So does a seat the study runner ended as failed, and
 * every participant of a run that failed as a whole (its outcome is `failed`, e.g. the scorer's
 * output was malformed): what such a run says about the goal is not evidence, and the notes say so.
 */
import { participantCategory } from "../bundle/derive.ts";
import type { RunBundle } from "../bundle/schemas.ts";
import { fisherExactTwoSided } from "./fisher.ts";

/** p-values below this mark a difference as distinguishable from noise. */
export const SIGNIFICANCE_THRESHOLD = 0.05;

/** Name of the test in the result. */
export const TEST_NAME = "fisher-exact-two-sided";

/** One side of a rate: `reached` of `observed`, plus what was left out of the denominator. */
export interface RateSide {
  reached: number;
  /** The denominator. */
  observed: number;
  /** Sessions left out of the denominator (tasks: check not run; goal: harness failures). */
  excluded: number;
  /** `reached / observed`, or null when nothing was observed. */
  rate: number | null;
}

/** How a row's difference reads. */
export type RowVerdict = "distinguishable" | "not_distinguishable" | "no_observations" | "only_in_a" | "only_in_b";

/** One compared rate (a task, or the overall goal). */
export interface CompareRow {
  id: string;
  /** Null when this task is not in that run. */
  a: RateSide | null;
  b: RateSide | null;
  /** `rate(B) − rate(A)` in percentage points, or null when either rate is unknown. */
  differencePoints: number | null;
  /** Two-sided Fisher exact p-value, or null when there is nothing to test. */
  pValue: number | null;
  verdict: RowVerdict;
}

/** The facts of one run the comparison shows. */
export interface CompareRunFacts {
  runId: string;
  lab: string;
  /** SHA-256 of the lab text the run used. */
  labSha256: string;
  route: RunBundle["route"];
  target: RunBundle["target"];
  createdAt: string;
  /** Wall time of the run, ms. */
  durationMs: number;
  participants: number;
  /** Participants left out of the goal rate (harness failures, failed seats, or all of a failed run). */
  harnessFailed: number;
  /** How the run ended as a whole, and its error code when it failed. */
  outcome: RunBundle["outcome"]["state"];
  errorCode: string | null;
  /** The run's review verdict. */
  verdict: RunBundle["review"]["verdict"];
  cost: {
    /** Known USD total, or null = unmeasured (never 0 for unknown). */
    usd: number | null;
    lines: number;
    unmeasuredLines: number;
  };
}

/** `humanish.runs-compare.v1`: the comparison of run A (before) with run B (after). */
export interface Comparison {
  schema: "humanish.runs-compare.v1";
  a: CompareRunFacts;
  b: CompareRunFacts;
  test: typeof TEST_NAME;
  threshold: number;
  goal: CompareRow;
  tasks: CompareRow[];
  /** Sentences a reader must see (the lab text changed, different routes, a run failed, tasks in one run only). */
  notes: string[];
}

function side(reached: number, observed: number, excluded: number): RateSide {
  return { reached, observed, excluded, rate: observed === 0 ? null : reached / observed };
}

/** A row from two sides: the difference and the test, when both sides observed something. */
export function compareRates(id: string, a: RateSide | null, b: RateSide | null, threshold = SIGNIFICANCE_THRESHOLD): CompareRow {
  if (!a || !b) return { id, a, b, differencePoints: null, pValue: null, verdict: a ? "only_in_a" : "only_in_b" };
  if (a.rate === null || b.rate === null) return { id, a, b, differencePoints: null, pValue: null, verdict: "no_observations" };
  const p = fisherExactTwoSided(a.reached, a.observed - a.reached, b.reached, b.observed - b.reached);
  return {
    id,
    a,
    b,
    differencePoints: Math.round((b.rate - a.rate) * 1000) / 10,
    pValue: p,
    verdict: p < threshold ? "distinguishable" : "not_distinguishable",
  };
}

/** Per task id (first-seen order), passed of checked, and how many results were `not_run`. */
export function taskSides(b: Pick<RunBundle, "tasks">): Map<string, RateSide> {
  const counts = new Map<string, { passed: number; checked: number; notRun: number }>();
  for (const t of b.tasks) {
    const c = counts.get(t.id) ?? { passed: 0, checked: 0, notRun: 0 };
    if (t.status === "not_run") c.notRun++;
    else {
      c.checked++;
      if (t.passed) c.passed++;
    }
    counts.set(t.id, c);
  }
  return new Map([...counts].map(([id, c]) => [id, side(c.passed, c.checked, c.notRun)]));
}

/** The pieces of a run the goal rate reads. */
export type GoalInput = Pick<RunBundle, "participants"> & Partial<Pick<RunBundle, "outcome" | "study">>;

/**
 * Participants who reached the goal, of those whose harness did not fail. Left out as harness
 * failures: a harness-category participant, a participant whose study seat ended `failed`, and
 * every participant when the run's outcome is `failed`.
 */
export function goalSide(b: GoalInput): RateSide {
  if (b.outcome?.state === "failed") return side(0, 0, b.participants.length);
  const failedSeats = new Set((b.study?.seats ?? []).filter((s) => s.state === "failed").map((s) => s.id));
  let reached = 0;
  let harness = 0;
  for (const p of b.participants) {
    const c = failedSeats.has(p.id) ? "harness" : participantCategory(p);
    if (c === "goal") reached++;
    else if (c === "harness") harness++;
  }
  return side(reached, b.participants.length - harness, harness);
}

/** Sentences about one run's outcome a reader of the comparison must see (failed, interrupted, failed seats, goal vs checks). */
export function outcomeNotes(label: "A" | "B", b: GoalInput & Pick<RunBundle, "runId" | "tasks">): string[] {
  const notes: string[] = [];
  const n = b.participants.length;
  if (b.outcome?.state === "failed") {
    const code = b.outcome.error?.code ?? "no error code recorded";
    notes.push(`run ${label} (${b.runId}) failed (${code}): its ${n} participant(s) are left out of the goal rate, since a failed run's goal is no evidence`);
  } else {
    if (b.outcome?.state === "interrupted")
      notes.push(`run ${label} (${b.runId}) was interrupted${b.outcome.interrupted ? ` by ${b.outcome.interrupted}` : ""}: its rates cover only what ran`);
    const failed = (b.study?.seats ?? []).filter((s) => s.state === "failed");
    if (failed.length) {
      notes.push(
        `run ${label}: ${failed.length} seat(s) failed in the harness (${failed.map((s) => `${s.id}${s.error ? ` ${s.error.code}` : ""}`).join(", ")}) and are left out of the goal rate`,
      );
    }
  }
  // Under the checks-only rule the goal follows the hidden checks; a bundle written under the
  // older claim-counting rule may count a participant's own account. When they disagree
  // completely the goal row alone would mislead.
  const goal = goalSide(b);
  const checked = b.tasks.filter((t) => t.status !== "not_run");
  if (goal.reached > 0 && checked.length > 0 && checked.every((t) => !t.passed)) {
    notes.push(`run ${label}: ${goal.reached} participant(s) reached the goal by their own account, but no hidden check passed; read the task rows`);
  }
  return notes;
}

/** The facts of one run shown beside the rates. */
export function runFacts(b: RunBundle): CompareRunFacts {
  const goal = goalSide(b);
  return {
    runId: b.runId,
    lab: b.lab.id,
    labSha256: b.lab.source.sha256,
    route: b.route,
    target: b.target,
    createdAt: b.createdAt,
    durationMs: b.durationMs,
    participants: b.participants.length,
    harnessFailed: goal.excluded,
    outcome: b.outcome.state,
    errorCode: b.outcome.error?.code ?? null,
    verdict: b.review.verdict,
    cost: {
      usd: b.cost.estimatedTotalUsd,
      lines: b.cost.lines.length,
      unmeasuredLines: b.cost.lines.filter((l) => l.usd === null).length,
    },
  };
}

/**
 * Compare run A (before) with run B (after). The caller has already refused unverified bundles,
 * dry runs and different labs; what differs but may be compared (the lab text, the route's
 * target, a task in one run only) is said in `notes`.
 */
export function compareRuns(a: RunBundle, b: RunBundle, threshold = SIGNIFICANCE_THRESHOLD): Comparison {
  const ta = taskSides(a);
  const tb = taskSides(b);
  const ids = [...ta.keys(), ...[...tb.keys()].filter((id) => !ta.has(id))];
  const tasks = ids.map((id) => compareRates(id, ta.get(id) ?? null, tb.get(id) ?? null, threshold));
  const notes: string[] = [];
  if (a.lab.id !== b.lab.id) notes.push(`the runs are of different labs (${a.lab.id} and ${b.lab.id}); compared because it was asked for`);
  if (a.lab.source.sha256 !== b.lab.source.sha256) notes.push("the lab text differs between the runs (its SHA-256 changed)");
  if (a.route !== b.route || a.target !== b.target)
    notes.push(`the runs ran on different routes or targets (${a.route}/${a.target} and ${b.route}/${b.target})`);
  notes.push(...outcomeNotes("A", a), ...outcomeNotes("B", b));
  for (const t of tasks) {
    if (t.verdict === "only_in_a") notes.push(`task ${t.id} is only in run A`);
    if (t.verdict === "only_in_b") notes.push(`task ${t.id} is only in run B`);
  }
  if (tasks.filter((t) => t.pValue !== null).length > 1) {
    notes.push(`each task is tested on its own at p < ${threshold}, with no correction for testing several tasks`);
  }
  return {
    schema: "humanish.runs-compare.v1",
    a: runFacts(a),
    b: runFacts(b),
    test: TEST_NAME,
    threshold,
    goal: compareRates("goal", goalSide(a), goalSide(b), threshold),
    tasks,
    notes,
  };
}

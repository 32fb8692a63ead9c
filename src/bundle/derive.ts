/**
 * Pure derivations over bundle data: review (verdict, participant tallies, task funnel), the
 * study's seat totals, the stakeholder line, cost summaries and the terminal cost ledger / no-spend proof. Routes use
 * these so the numbers they write are the numbers `verifyRun` recomputes.
 */
import type {
  CompletionReason,
  CostLine,
  Mode,
  NoSpendProof,
  ParticipantOutcomes,
  Review,
  RunBundle,
  RunCostSummary,
  RunOutcome,
  RunParticipant,
  Study,
  StudySeat,
  TaskResult,
  TerminalCostLedger,
  Verdict,
} from "./schemas.ts";
import { TERMINAL_COST_CATEGORIES } from "./schemas.ts";

/** Round to 6 decimal places (USD ledgers). */
export function round6(n: number): number {
  return Math.round(n * 1e6) / 1e6;
}

/**
 * What a participant's ending says. `goal`: it reached the goal. `finding`: something about the
 * product — giving up, being blocked, running out of time or budget, a scripted step the product
 * did not satisfy. `harness`: humanish or the participant's runtime failed, or the run was
 * interrupted — never a finding about the product. A participant giving up is a finding, never a
 * harness failure; a harness failure is never reported as a finding.
 */
export type ParticipantCategory = "goal" | "finding" | "harness";

/** The category of every completion reason. */
export const COMPLETION_CATEGORY: Readonly<Record<CompletionReason, ParticipantCategory>> = {
  goal_satisfied: "goal",
  turn_completed: "finding",
  gave_up: "finding",
  blocked_approval: "finding",
  timed_out: "finding",
  budget_reached: "finding",
  step_failed: "finding",
  actor_error: "harness",
  harness_error: "harness",
  interrupted: "harness",
};

/**
 * A participant's category: `goal` when it passed; otherwise its completion reason's category;
 * a `failed` participant without a reason is a harness failure (nothing says the product did it).
 */
export function participantCategory(p: Pick<RunParticipant, "status" | "completionReason">): ParticipantCategory {
  if (p.status === "passed") return "goal";
  if (p.completionReason) {
    const c = COMPLETION_CATEGORY[p.completionReason];
    return c === "goal" ? "finding" : c;
  }
  return p.status === "failed" ? "harness" : "finding";
}

/**
 * Tally participants: passed→reachedGoal; a harness category (see {@link participantCategory})
 * →harnessFailed whatever the status; findings by status: abandoned; incomplete|timed_out→ranOut;
 * blocked; a finding with status `failed` (e.g. `step_failed`) counts only in `total` — it did not
 * reach the goal and is no harness failure. `reportedFriction` overlaps the others.
 */
export function tallyParticipants(participants: readonly RunParticipant[]): ParticipantOutcomes {
  const t: ParticipantOutcomes = { total: participants.length, reachedGoal: 0, abandoned: 0, ranOut: 0, blocked: 0, harnessFailed: 0, reportedFriction: 0 };
  for (const p of participants) {
    const c = participantCategory(p);
    if (c === "goal") t.reachedGoal++;
    else if (c === "harness") t.harnessFailed++;
    else if (p.status === "abandoned") t.abandoned++;
    else if (p.status === "incomplete" || p.status === "timed_out") t.ranOut++;
    else if (p.status === "blocked") t.blocked++;
    if (p.reportedFriction) t.reportedFriction++;
  }
  return t;
}

/** Task funnel: per task id (first-seen order), how many sessions completed it out of how many. */
export function taskFunnel(tasks: readonly TaskResult[], sessions: number): Review["tasks"] {
  const order: string[] = [];
  const by = new Map<string, { completed: number; sessions: number; observable: boolean }>();
  for (const t of tasks) {
    let e = by.get(t.id);
    if (!e) {
      e = { completed: 0, sessions: 0, observable: false };
      by.set(t.id, e);
      order.push(t.id);
    }
    e.sessions++;
    if (t.passed) e.completed++;
    if (t.status !== "not_run") e.observable = true;
  }
  return { sessions, tasks: order.map((id) => ({ id, ...by.get(id)! })) };
}

/**
 * A study's totals from its seats: counts by state, the known spend (USD, rounded to 6 dp) and
 * billable jobs summed, and the seats whose capacity slot stayed held (release `retained` or
 * `unconfirmed`). The study writer and `verifyRun` both call it, so they agree by construction.
 */
export function studyTotals(seats: readonly StudySeat[]): Study["totals"] {
  const count = (state: StudySeat["state"]) => seats.filter((s) => s.state === state).length;
  return {
    seats: seats.length,
    completed: count("completed"),
    failed: count("failed"),
    interrupted: count("interrupted"),
    budgetReached: count("budget_reached"),
    knownUsd: round6(seats.reduce((a, s) => a + s.usd, 0)),
    knownJobs: seats.reduce((a, s) => a + s.jobs, 0),
    heldSlots: seats.filter((s) => s.release === "retained" || s.release === "unconfirmed").length,
  };
}

/**
 * Verdict: dry-run → `contract_proof_only`; a failed/interrupted run or no participants → `fail`;
 * all passed → `pass`; else harness failure → `fail`, any timed_out → `timed_out`, any blocked →
 * `blocked`, otherwise (abandoned/incomplete) → `fail`.
 */
export function deriveVerdict(mode: Mode, outcome: RunOutcome, participants: readonly RunParticipant[]): Verdict {
  if (mode === "dry-run") return "contract_proof_only";
  if (outcome.state !== "completed" || participants.length === 0) return "fail";
  const s = participants.map((p) => p.status);
  if (s.every((x) => x === "passed")) return "pass";
  if (participants.some((p) => participantCategory(p) === "harness")) return "fail";
  if (s.includes("failed")) return "fail";
  if (s.includes("timed_out")) return "timed_out";
  if (s.includes("blocked")) return "blocked";
  return "fail";
}

/** `2/3 reached the goal; tasks: add-todo 3/3 · clear-completed 2/3` (tasks part omitted when none). */
export function stakeholderLine(review: Pick<Review, "participants" | "tasks">): string {
  const p = review.participants;
  // A harness failure is never a finding about the product: say so beside the denominator.
  const harness = p.harnessFailed > 0 ? ` (${p.harnessFailed} harness failure${p.harnessFailed === 1 ? "" : "s"}: not a finding)` : "";
  const head = `${p.reachedGoal}/${p.total} reached the goal${harness}`;
  if (review.tasks.tasks.length === 0) return head;
  return `${head}; tasks: ${review.tasks.tasks.map((t) => `${t.id} ${t.completed}/${t.sessions}`).join(" · ")}`;
}

/** A full `humanish.review.v1` derived from the run's participants, tasks and outcome. */
export function deriveReview(args: {
  mode: Mode;
  outcome: RunOutcome;
  participants: readonly RunParticipant[];
  tasks: readonly TaskResult[];
  gaps?: string[];
}): Review {
  const participants = tallyParticipants(args.participants);
  const tasks = taskFunnel(args.tasks, args.participants.length);
  const verdict = deriveVerdict(args.mode, args.outcome, args.participants);
  const gaps = [...(args.gaps ?? [])];
  if (args.mode === "dry-run") {
    gaps.push("live route not executed (dry run: contract only)", "no live artifacts (no sandbox, key or spend)");
  }
  if (args.outcome.state === "failed") gaps.push(`run failed: ${args.outcome.error?.code ?? "unknown error"}`);
  if (args.outcome.state === "interrupted") gaps.push(`run interrupted${args.outcome.interrupted ? ` by ${args.outcome.interrupted}` : ""}`);
  const summary =
    args.mode === "dry-run"
      ? `contract only, nothing ran: ${participants.total} participant(s) planned${tasks.tasks.length ? `; tasks: ${tasks.tasks.map((t) => t.id).join(" · ")}` : ""}`
      : stakeholderLine({ participants, tasks });
  return { schema: "humanish.review.v1", verdict, summary, gaps, participants, tasks };
}

/**
 * A run cost summary from lines: total = round6(sum of the lines) when every line is measured,
 * else null (unmeasured). One unmeasured line makes the total unknown, because a sum of the
 * known lines would read as the whole spend (a killed sandbox whose minutes are unknown would
 * show a run as free). No lines is also null. `ratesAsOf` = oldest date of the measured lines.
 */
export function summarizeCost(lines: readonly CostLine[], note = ""): RunCostSummary {
  const known = lines.filter((l) => l.usd !== null);
  const total = known.length === 0 || known.length < lines.length ? null : round6(known.reduce((a, l) => a + (l.usd ?? 0), 0));
  const dates = known
    .map((l) => l.ratesAsOf)
    .filter((d): d is string => typeof d === "string")
    .sort();
  const unmeasured = lines.length - known.length;
  return {
    schema: "humanish.run-cost-summary.v1",
    currency: "usd",
    estimatedTotalUsd: total,
    ratesAsOf: dates[0] ?? null,
    lines: [...lines],
    note:
      note ||
      (lines.length === 0 ? "no cost lines recorded" : unmeasured > 0 ? `${unmeasured} of ${lines.length} cost lines unmeasured` : "all cost lines measured"),
  };
}

/** A cost line that is unmeasured: `usd: null` with a reason, no rates date. */
export function unmeasuredLine(kind: CostLine["kind"], reason: string, extra: Partial<CostLine> = {}): CostLine {
  return { ...extra, kind, usd: null, basis: extra.basis ?? "unmeasured", ratesAsOf: null, source: extra.source ?? null, reason };
}

/** Build `humanish.terminal-cost-ledger.v1` from the four category lines. */
export function buildTerminalCostLedger(lines: TerminalCostLedger["lines"]): TerminalCostLedger {
  const vals = TERMINAL_COST_CATEGORIES.map((c) => lines[c].usd);
  return {
    schema: "humanish.terminal-cost-ledger.v1",
    currency: "usd",
    lines,
    knownTotalUsd: round6(vals.reduce<number>((a, v) => a + (v ?? 0), 0)),
    fullyMeasured: vals.every((v) => v !== null),
  };
}

/**
 * Derive `humanish.terminal-no-spend-proof.v1`: a null line is unmeasured (never zero);
 * `satisfied` = no known non-zero line and known total ≤ (maxUsd ?? 0).
 */
export function buildNoSpendProof(ledger: TerminalCostLedger, maxUsd: number | null): NoSpendProof {
  const knownZeroLines = TERMINAL_COST_CATEGORIES.filter((c) => ledger.lines[c].usd === 0);
  const knownNonZeroLines = TERMINAL_COST_CATEGORIES.filter((c) => (ledger.lines[c].usd ?? 0) > 0);
  const unmeasuredLines = TERMINAL_COST_CATEGORIES.filter((c) => ledger.lines[c].usd === null);
  const satisfied = knownNonZeroLines.length === 0 && ledger.knownTotalUsd <= (maxUsd ?? 0);
  const statement = satisfied
    ? `no known spend; ${unmeasuredLines.length ? `unmeasured: ${unmeasuredLines.join(", ")}` : "every line measured"}`
    : `known spend ${ledger.knownTotalUsd} USD on ${knownNonZeroLines.join(", ") || "no line"}${unmeasuredLines.length ? `; unmeasured: ${unmeasuredLines.join(", ")}` : ""}`;
  return {
    schema: "humanish.terminal-no-spend-proof.v1",
    maxUsd,
    satisfied,
    knownZeroLines,
    knownNonZeroLines,
    unmeasuredLines,
    knownTotalUsd: ledger.knownTotalUsd,
    statement,
  };
}

/** Compact summary of a bundle for listings and reports. */
export interface RunSummaryFacts {
  verdict: Verdict;
  line: string;
  participants: { reached: number; total: number };
  tasks: { id: string; completed: number; sessions: number }[];
  costUsd: number | null;
  durationMs: number;
}

/** Facts a listing or report shows for one finished bundle. */
export function summarizeBundle(b: RunBundle): RunSummaryFacts {
  return {
    verdict: b.review.verdict,
    line: stakeholderLine(b.review),
    participants: { reached: b.review.participants.reachedGoal, total: b.review.participants.total },
    tasks: b.review.tasks.tasks.map((t) => ({ id: t.id, completed: t.completed, sessions: t.sessions })),
    costUsd: b.cost.estimatedTotalUsd,
    durationMs: b.durationMs,
  };
}

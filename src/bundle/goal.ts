/**
 * The one rule for "reached the goal", for every lane and participant — pure.
 *
 * A seat reaches the goal only when the lab's hidden checks say so (and it was not stopped by a
 * limit or a failed step, which is a finding of its own): with tasks, every task's
 * check passed; without tasks, a `stopWhen` rule that matched an observation of the app is the
 * check; with neither, no seat can reach the goal. What the participant said about its own
 * result (a verdict marker, a final answer, "I reached the goal") is kept as its `claimed`
 * value and never decides: a claim of success the checks contradict is a finding of its own,
 * and a `blocked` claim counts as blocked. A harness failure stays a harness failure whatever
 * the checks say (it is never a finding, in either direction).
 *
 * The study writes seats by {@link seatGoalVerdict}; `verify` re-derives the headline with
 * {@link goalCheckOf} and {@link claimContradicted}, so the two cannot drift apart.
 */
import { participantCategory } from "./derive.ts";
import type { ActorStatus, CompletionReason, RunParticipant, TaskResult } from "./schemas.ts";

/** The rule a bundle's headline was written under (`study.goalRule`); absent = the older claim-counting rule. */
export const GOAL_RULE = "checks-only" as const;

/** What the participant said about its own result: success, blocked, could not finish, or nothing. */
export type Claim = "passed" | "blocked" | "failed" | "none";

/** The sentence a contradicted claim of success is reported with. */
export const CONTRADICTION_FINDING = "participant believed it succeeded; the checks say it did not";

/** What decided the goal: the seat's task checks, a `stopWhen` observation (labs without tasks), or nothing. */
export interface GoalCheck {
  by: "tasks" | "stop_when" | "none";
  reached: boolean;
  /** One sentence: how many checks passed, which rule matched, or why there is no check. */
  detail: string;
}

/** A `stopWhen` rule evaluated on the seat's observations of the app (labs without tasks only). */
export interface StopWhenObservation {
  matched: boolean;
  detail: string;
}

/**
 * What the hidden checks say: with tasks, reached iff every task's check passed (`not_run`
 * counts as not passed); without tasks, the `stopWhen` observation when the lab has one; else
 * no check and not reached.
 */
export function goalCheckOf(tasks: readonly Pick<TaskResult, "passed">[], stopWhen?: StopWhenObservation): GoalCheck {
  if (tasks.length > 0) {
    const passed = tasks.filter((t) => t.passed).length;
    return { by: "tasks", reached: passed === tasks.length, detail: `${passed} of ${tasks.length} hidden check(s) passed` };
  }
  if (stopWhen) return { by: "stop_when", reached: stopWhen.matched, detail: stopWhen.detail };
  return { by: "none", reached: false, detail: "the lab declares no hidden check, so no seat can reach the goal" };
}

/** How the participant ended, before the checks are folded in. */
export interface SeatEnding {
  status: ActorStatus;
  completionReason: CompletionReason;
  reason: string;
}

/** A seat's record fields after the rule: its status, reason, claim and the check that decided. */
export interface GoalVerdict extends SeatEnding {
  claimed: Claim;
  goalCheck: GoalCheck;
}

/** Endings where the participant stopped on its own account (a claim may say how); others are stops of a limit or a step. */
export const OWN_ENDINGS: ReadonlySet<CompletionReason> = new Set(["goal_satisfied", "turn_completed", "gave_up", "blocked_approval"]);

/**
 * The rule (see the module comment). `ending` is how the participant stopped; `claim` its own
 * word; `check` what the hidden checks say (from {@link goalCheckOf}); `checkFailed` the
 * sentence for a participant that finished while a check failed (default: its own reason and
 * the check's detail).
 *
 * - harness ending → unchanged (a harness failure, never a finding);
 * - a limit (time, budget) or a failed step → unchanged: that stop is the finding, the seat does
 *   not count as reaching the goal even when its checks passed;
 * - a participant that ended on its own: checks reached → `passed` / `goal_satisfied`, whatever
 *   it said; else claim `blocked` → `blocked`; claim `failed` → `abandoned` / `gave_up`; otherwise
 *   `incomplete` / `turn_completed` (a claim of success is then named as a contradiction).
 */
export function seatGoalVerdict(ending: SeatEnding, claim: Claim, check: GoalCheck, checkFailed?: string): GoalVerdict {
  const base = { claimed: claim, goalCheck: check };
  if (participantCategory(ending) === "harness") return { ...ending, ...base };
  const own = OWN_ENDINGS.has(ending.completionReason);
  // A limit (time, budget) or a failed step stopped the participant: that stop is the finding,
  // whatever the checks saw; only a participant that ended on its own can reach the goal.
  if (!own) return { ...ending, ...base };
  if (check.reached) {
    const said = ending.status === "passed" ? "" : `; the participant's own ending: ${ending.completionReason}: ${ending.reason}`;
    return { status: "passed", completionReason: "goal_satisfied", reason: `${check.detail}${said}`, ...base };
  }
  const unmet = check.by === "none" ? check.detail : `the hidden checks say the goal was not reached: ${check.detail}`;
  if (claim === "blocked") {
    const said = ending.status === "blocked" ? ending.reason : `the participant said it was blocked (${ending.reason})`;
    return {
      status: "blocked",
      completionReason: ending.status === "blocked" ? ending.completionReason : "blocked_approval",
      reason: `${said}; ${unmet}`,
      ...base,
    };
  }
  if (claim === "failed") {
    const said = ending.status === "abandoned" ? ending.reason : `the participant said it could not finish (${ending.reason})`;
    return { status: "abandoned", completionReason: "gave_up", reason: `${said}; ${unmet}`, ...base };
  }
  if (ending.status === "passed" || ending.status === "incomplete") {
    const reason = check.by === "none" ? `${ending.reason}; ${unmet}` : (checkFailed ?? `${ending.reason}; ${unmet}`);
    return { status: "incomplete", completionReason: "turn_completed", reason: claim === "passed" ? `${reason} (${CONTRADICTION_FINDING})` : reason, ...base };
  }
  return { ...ending, ...base };
}

/**
 * Whether a participant record is a contradicted claim: it claimed success and did not reach
 * the goal, outside a harness failure. Records without `claimed` (older bundles) never are.
 */
export function claimContradicted(p: Pick<RunParticipant, "status" | "completionReason" | "claimed">): boolean {
  if (p.claimed !== "passed" || p.status === "passed" || p.status === "contract_proof_only") return false;
  return participantCategory(p) !== "harness";
}

/** The participants whose claim of success the checks contradict, in order. */
export function contradictedClaims(participants: readonly RunParticipant[]): RunParticipant[] {
  return participants.filter(claimContradicted);
}

/** `1 participant believed it succeeded; the checks say it did not: p1` — or undefined when none did. */
export function contradictionLine(participants: readonly RunParticipant[]): string | undefined {
  const c = contradictedClaims(participants);
  if (c.length === 0) return undefined;
  const who = c.map((p) => p.id).join(", ");
  return c.length === 1
    ? `1 participant believed it succeeded; the checks say it did not: ${who}`
    : `${c.length} participants believed they succeeded; the checks say they did not: ${who}`;
}

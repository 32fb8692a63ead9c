/**
 * `headline from checks`: "k/N reached the goal" is what the hidden checks say, never what the
 * participants said. A seat counts only when its checks reached the goal — every task's check
 * passed, or (a lab without tasks) a `stopWhen` rule observed on the app matched — and its
 * ending is no harness failure and no stop of a limit or a failed step.
 *
 * A bundle written under the checks-only rule (`study.goalRule`) fails when a seat's status,
 * its recorded `goalCheck` or the headline disagree with its task results, or when a seat
 * records no claim. A bundle without `goalRule` was written under the older claim-counting rule
 * (a participant's own verdict could count): it keeps verifying, and the check says which rule
 * it was written under and what the checks give; when that differs from its headline it also
 * warns, naming the seats counted without their checks.
 */
import { participantCategory } from "../derive.ts";
import { contradictionLine, GOAL_RULE, OWN_ENDINGS } from "../goal.ts";
import type { ActorTrace, RunBundle, RunParticipant, TaskResult } from "../schemas.ts";
import type { CheckOutcome, VerifyContext } from "./context.ts";

/** The task results of `p` (a one-participant bundle's results may name no participant). */
function tasksOf(b: RunBundle, p: RunParticipant): TaskResult[] {
  return b.tasks.filter((t) => t.participantId === p.id || (t.participantId === undefined && b.participants.length === 1));
}

/** Whether `p`'s trace recorded a `stopWhen` rule matching during the run (how older bundles show that check). */
function traceSawStopWhen(trace: ActorTrace | undefined): boolean {
  return trace?.items.some((i) => i.kind === "notice" && i.status === "matched" && /^stopWhen rule .+ matched$/.test(i.title)) ?? false;
}

/** What the checks say for `p` in an older bundle: its tasks, else a stopWhen match in its trace. */
function reachedUnderOldBundle(b: RunBundle, p: RunParticipant, traces: ReadonlyMap<string, ActorTrace>): boolean {
  if (p.status === "contract_proof_only" || participantCategory(p) === "harness") return false;
  if (p.status !== "passed" && !(p.completionReason !== null && OWN_ENDINGS.has(p.completionReason))) return false;
  const tasks = tasksOf(b, p);
  if (tasks.length > 0) return tasks.every((t) => t.passed);
  return traceSawStopWhen(p.trace ? traces.get(p.trace) : undefined);
}

/** Problems of one participant of a checks-only bundle, and whether its checks reached the goal. */
function checkSeat(b: RunBundle, p: RunParticipant, problems: string[]): boolean {
  const tasks = tasksOf(b, p);
  const g = p.goalCheck;
  if (p.claimed === undefined) problems.push(`participant ${p.id} records no claim (the checks-only rule keeps every participant's claim)`);
  if (!g) {
    problems.push(`participant ${p.id} records no goalCheck`);
    return false;
  }
  const byTasks = tasks.length > 0 && tasks.every((t) => t.passed);
  if (tasks.length > 0 && g.by !== "tasks") problems.push(`participant ${p.id}: goalCheck by ${g.by}, but it has ${tasks.length} task result(s), which decide`);
  if (tasks.length === 0 && g.by === "tasks") problems.push(`participant ${p.id}: goalCheck by tasks, but it has no task result`);
  if (g.by === "tasks" && g.reached !== byTasks)
    problems.push(`participant ${p.id}: goalCheck says ${g.reached ? "reached" : "not reached"}, its task results say ${byTasks ? "reached" : "not reached"}`);
  if (g.by === "none" && g.reached) problems.push(`participant ${p.id}: goalCheck reached with no check`);
  const reached = g.by === "tasks" ? byTasks : g.by === "stop_when" && g.reached;
  // A harness failure never counts; a limit or a failed step is a finding of its own and keeps its label.
  const own = p.completionReason !== null && OWN_ENDINGS.has(p.completionReason);
  const counted = reached && participantCategory(p) !== "harness" && own;
  if ((p.status === "passed") !== counted)
    problems.push(`participant ${p.id} is ${p.status}, but its checks say the goal was ${reached ? "reached" : "not reached"}`);
  return counted;
}

export function headlineFromChecks(ctx: VerifyContext): CheckOutcome {
  const b = ctx.bundle;
  if (!b) return { problems: ["no valid bundle"], ok: "" };
  if (b.mode === "dry-run") return { problems: [], ok: "dry run: no headline" };
  const n = b.participants.length;
  const recorded = b.review.participants.reachedGoal;
  if (b.study?.goalRule !== GOAL_RULE) {
    const reached = b.participants.filter((p) => reachedUnderOldBundle(b, p, ctx.traces));
    const line = `${reached.length}/${n} reached the goal`;
    const unchecked = b.participants.filter((p) => p.status === "passed" && !reached.includes(p)).map((p) => p.id);
    if (reached.length === recorded && unchecked.length === 0)
      return { problems: [], ok: `written under the claim-counting rule; headline re-derived from checks: ${line}, as recorded` };
    const says = `written under the claim-counting rule; headline re-derived from checks: ${line} (the bundle says ${recorded}/${n}${unchecked.length ? `; counted without their checks: ${unchecked.join(", ")}` : ""})`;
    ctx.warnings.push(says);
    return { problems: [], ok: says };
  }
  const problems: string[] = [];
  let counted = 0;
  for (const p of b.participants) if (checkSeat(b, p, problems)) counted++;
  if (counted !== recorded) problems.push(`the headline says ${recorded}/${n} reached the goal, the checks say ${counted}/${n}`);
  const contradicted = contradictionLine(b.participants);
  return { problems, ok: `${counted}/${n} reached the goal by the hidden checks (rule ${GOAL_RULE})${contradicted ? `; ${contradicted}` : ""}` };
}

/**
 * The one goal rule (src/bundle/goal.ts) and the verify check built on it
 * (`headline from checks`): the hidden checks decide "reached the goal"; a participant's claim
 * is kept and never counted; a contradicted claim of success is named; a bundle written under
 * the older claim-counting rule keeps verifying and says what its checks give.
 */
import { describe, expect, test } from "bun:test";
import { claimContradicted, contradictionLine, GOAL_RULE, goalCheckOf, seatGoalVerdict } from "../../src/bundle/goal.ts";
import { tallyParticipants, verifyRun } from "../../src/bundle/index.ts";
import type { RunBundle, RunParticipant, TaskResult } from "../../src/bundle/schemas.ts";
import { headlineFromChecks } from "../../src/bundle/verify/checks-headline.ts";
import type { VerifyContext } from "../../src/bundle/verify/context.ts";
import { projectPerTest, writeLiveTerminal } from "./helpers.ts";

const project = projectPerTest();
const task = (passed: boolean, id = "t", participantId = "p1"): TaskResult => ({
  id,
  goal: "g",
  participantId,
  status: passed ? "passed" : "failed",
  passed,
});
const finished = { status: "passed" as const, completionReason: "turn_completed" as const, reason: "all steps ran" };
const claimedDone = { status: "incomplete" as const, completionReason: "turn_completed" as const, reason: "the participant claimed success" };

describe("the goal rule", () => {
  test("the checks: every task passed; not_run is not passed; without tasks a stopWhen observation, else no check", () => {
    expect(goalCheckOf([task(true), task(true)])).toEqual({ by: "tasks", reached: true, detail: "2 of 2 hidden check(s) passed" });
    const notRun: TaskResult = { ...task(false), status: "not_run" };
    expect(goalCheckOf([task(true), notRun]).reached).toBe(false);
    expect(goalCheckOf([], { matched: true, detail: "rule done matched" })).toEqual({ by: "stop_when", reached: true, detail: "rule done matched" });
    expect(goalCheckOf([task(false)], { matched: true, detail: "x" }).by).toBe("tasks");
    expect(goalCheckOf([])).toMatchObject({ by: "none", reached: false });
  });

  test("a claim never decides: success claimed while every check fails is not reached, and is a contradiction", () => {
    const v = seatGoalVerdict(claimedDone, "passed", goalCheckOf([task(false), task(false)]));
    expect(v).toMatchObject({ status: "incomplete", completionReason: "turn_completed", claimed: "passed", goalCheck: { by: "tasks", reached: false } });
    expect(v.reason).toBe(
      "the participant claimed success; the hidden checks say the goal was not reached: 0 of 2 hidden check(s) passed (participant believed it succeeded; the checks say it did not)",
    );
    expect(claimContradicted({ ...v })).toBe(true);
    // The same claim with every check passed reaches the goal — because of the checks.
    expect(seatGoalVerdict(claimedDone, "passed", goalCheckOf([task(true)]))).toMatchObject({ status: "passed", completionReason: "goal_satisfied" });
    // No claim, every check passed: reached all the same (a participant that forgot its marker did the work).
    expect(seatGoalVerdict(claimedDone, "none", goalCheckOf([task(true)])).status).toBe("passed");
  });

  test("blocked and failed claims are tallied as blocked and abandoned when the checks did not reach the goal", () => {
    const blocked = seatGoalVerdict(
      { status: "passed", completionReason: "goal_satisfied", reason: "declaring blocked" },
      "blocked",
      goalCheckOf([task(false)]),
    );
    expect(blocked).toMatchObject({ status: "blocked", completionReason: "blocked_approval", claimed: "blocked" });
    const gaveUp = seatGoalVerdict(claimedDone, "failed", goalCheckOf([]));
    expect(gaveUp).toMatchObject({ status: "abandoned", completionReason: "gave_up", claimed: "failed" });
    const t = tallyParticipants([
      { id: "a", actorType: "x", trace: null, ...blocked },
      { id: "b", actorType: "x", trace: null, ...gaveUp },
    ]);
    expect([t.reachedGoal, t.blocked, t.abandoned]).toEqual([0, 1, 1]);
  });

  test("without any check no seat reaches the goal; a limit or a failed step keeps its own label; a harness failure stays one", () => {
    expect(seatGoalVerdict(finished, "none", goalCheckOf([]))).toMatchObject({ status: "incomplete", completionReason: "turn_completed" });
    const timedOut = { status: "timed_out" as const, completionReason: "timed_out" as const, reason: "maxMinutes" };
    expect(seatGoalVerdict(timedOut, "none", goalCheckOf([task(false)]))).toMatchObject(timedOut);
    // A stop of a limit is the finding even when the checks passed: it never counts as reaching the goal.
    expect(seatGoalVerdict(timedOut, "none", goalCheckOf([task(true)]))).toMatchObject(timedOut);
    // A participant that said it gave up while its checks passed did reach the goal: its claim never decides.
    expect(seatGoalVerdict({ status: "abandoned", completionReason: "gave_up", reason: "said no" }, "failed", goalCheckOf([task(true)])).status).toBe("passed");
    const stepFailed = { status: "failed" as const, completionReason: "step_failed" as const, reason: "step 2 exited 1" };
    expect(seatGoalVerdict(stepFailed, "none", goalCheckOf([task(false)]))).toMatchObject(stepFailed);
    const harness = { status: "failed" as const, completionReason: "actor_error" as const, reason: "codex exited 1" };
    expect(seatGoalVerdict(harness, "passed", goalCheckOf([task(true)]))).toMatchObject(harness);
    expect(claimContradicted({ ...harness, claimed: "passed" })).toBe(false);
  });

  test("the contradiction line names the seats; records without a claim (older bundles) are never contradictions", () => {
    const p = (id: string, claimed?: RunParticipant["claimed"]): RunParticipant => ({
      id,
      actorType: "codex-exec",
      status: "incomplete",
      completionReason: "turn_completed",
      reason: "r",
      trace: null,
      ...(claimed ? { claimed } : {}),
    });
    expect(contradictionLine([p("p1", "passed"), p("p2", "none"), p("p3")])).toBe("1 participant believed it succeeded; the checks say it did not: p1");
    expect(contradictionLine([p("p1", "passed"), p("p2", "passed")])).toBe("2 participants believed they succeeded; the checks say they did not: p1, p2");
    expect(contradictionLine([p("p3")])).toBeUndefined();
  });
});

/** A live one-seat bundle as `headline from checks` reads it. */
function bundleOf(participants: RunParticipant[], tasks: TaskResult[], goalRule?: "checks-only"): RunBundle {
  return {
    mode: "live",
    participants,
    tasks,
    review: { participants: tallyParticipants(participants) },
    study: { ...(goalRule ? { goalRule } : {}) },
  } as unknown as RunBundle;
}

function check(b: RunBundle): { problems: string[]; ok: string; warnings: string[] } {
  const ctx = { bundle: b, traces: new Map(), warnings: [] as string[] } as unknown as VerifyContext;
  const r = headlineFromChecks(ctx);
  return { ...r, warnings: ctx.warnings };
}

describe("verify: headline from checks", () => {
  const contradicted: RunParticipant = {
    id: "p1",
    actorType: "codex-exec",
    status: "incomplete",
    completionReason: "turn_completed",
    reason: "claimed success",
    trace: null,
    claimed: "passed",
    goalCheck: { by: "tasks", reached: false, detail: "0 of 2 hidden check(s) passed" },
  };

  test("checks-only: a headline that agrees with the checks passes and names the contradiction", () => {
    const r = check(bundleOf([contradicted], [task(false, "a"), task(false, "b")], GOAL_RULE));
    expect(r.problems).toEqual([]);
    expect(r.ok).toBe("0/1 reached the goal by the hidden checks (rule checks-only); 1 participant believed it succeeded; the checks say it did not: p1");
  });

  test("checks-only: a seat counted against its checks, a lying goalCheck or a missing claim fails", () => {
    const counted = { ...contradicted, status: "passed" as const, completionReason: "goal_satisfied" as const };
    const r = check(bundleOf([counted], [task(false, "a")], GOAL_RULE));
    expect(r.problems).toContain("participant p1 is passed, but its checks say the goal was not reached");
    const lying = { ...counted, goalCheck: { by: "tasks" as const, reached: true, detail: "x" } };
    expect(check(bundleOf([lying], [task(false, "a")], GOAL_RULE)).problems).toContain(
      "participant p1: goalCheck says reached, its task results say not reached",
    );
    const stopWhenOverTasks = { ...contradicted, goalCheck: { by: "stop_when" as const, reached: true, detail: "x" } };
    expect(check(bundleOf([stopWhenOverTasks], [task(false, "a")], GOAL_RULE)).problems[0]).toContain("goalCheck by stop_when, but it has 1 task result(s)");
    const { claimed: _c, ...unclaimed } = contradicted;
    expect(check(bundleOf([unclaimed], [task(false, "a")], GOAL_RULE)).problems[0]).toContain("records no claim");
    // A seat whose checks passed but which is not counted (outside a harness failure) fails too.
    const uncounted = { ...contradicted, goalCheck: { by: "tasks" as const, reached: true, detail: "1 of 1" } };
    expect(check(bundleOf([uncounted], [task(true, "a")], GOAL_RULE)).problems).toContain(
      "participant p1 is incomplete, but its checks say the goal was reached",
    );
  });

  test("an older bundle (no goalRule) verifies, says which rule it was written under and warns when its headline counted a claim", () => {
    const old: RunParticipant = {
      id: "p1",
      actorType: "codex-exec",
      status: "passed",
      completionReason: "goal_satisfied",
      reason: "verdict marker",
      trace: null,
    };
    const r = check(bundleOf([old], [task(false, "a")]));
    expect(r.problems).toEqual([]);
    const says =
      "written under the claim-counting rule; headline re-derived from checks: 0/1 reached the goal (the bundle says 1/1; counted without their checks: p1)";
    expect(r.ok).toBe(says);
    expect(r.warnings).toEqual([says]);
    const agrees = check(bundleOf([old], [task(true, "a")]));
    expect(agrees.ok).toBe("written under the claim-counting rule; headline re-derived from checks: 1/1 reached the goal, as recorded");
    expect(agrees.warnings).toEqual([]);
  });

  test("a real older bundle on disk (passed while one of its two checks failed) keeps verifying, with the re-derived headline in its check and warnings", async () => {
    const { w } = await writeLiveTerminal(project(), "old-rule-1");
    const v = await verifyRun(w.runDir);
    expect(v.ok).toBe(true);
    const c = v.checks.find((x) => x.name === "headline from checks");
    expect(c).toMatchObject({ ok: true, message: expect.stringContaining("written under the claim-counting rule; headline re-derived from checks: 0/1") });
    expect(v.warnings.some((x) => x.includes("counted without their checks: p1"))).toBe(true);
  });
});

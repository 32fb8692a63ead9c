/**
 * Continuing a study, pure: which seats a rerun picks under each rule, its refusals, the combined
 * result of a chain (each seat once, its last attempt, earlier attempts listed), the comparison's
 * view of it, and picking seats out of a lab's seat list.
 */
import { describe, expect, test } from "bun:test";
import { combineChain, combinedView } from "../../src/bundle/combined.ts";
import type { RunBundle, RunParticipant, StudySeat } from "../../src/bundle/schemas.ts";
import { compareRuns } from "../../src/compare/core.ts";
import { HumanishError } from "../../src/errors.ts";
import { parseRerunWhich, pickSeatSpecs, planRerun } from "../../src/study/rerun.ts";

const SHA = "a".repeat(64);

type SeatRow = [id: string, status: RunParticipant["status"], reason: RunParticipant["completionReason"], state?: StudySeat["state"]];

/** A live bundle of lab `lab` with one task `t` per seat (passed iff the seat passed). */
function bundle(
  runId: string,
  rows: SeatRow[],
  o: { continues?: RunBundle["continues"]; outcome?: RunBundle["outcome"]; mode?: RunBundle["mode"]; lab?: string; sha?: string } = {},
): RunBundle {
  return {
    runId,
    mode: o.mode ?? "live",
    lab: { id: o.lab ?? "lab", source: { ref: "lab.yaml", sha256: o.sha ?? SHA } },
    route: "terminal",
    target: "docker",
    createdAt: "2026-01-01T00:00:00.000Z",
    durationMs: 1000,
    outcome: o.outcome ?? { state: "completed" },
    participants: rows.map(([id, status, completionReason]) => ({ id, actorType: "scripted-terminal", status, completionReason, reason: "r", trace: null })),
    tasks: rows.map(([id, status]) => ({
      id: "t",
      goal: "g",
      participantId: id,
      status: "passed" === status ? "passed" : "failed",
      passed: status === "passed",
    })),
    study: {
      schema: "humanish.study.v1",
      lane: "docker-terminal",
      declaredSeats: rows.length,
      concurrency: 1,
      waves: rows.length,
      maxTotalUsd: null,
      seats: rows.map(([id, , , state], index) => ({
        id,
        index,
        state: state ?? "completed",
        phase: "done",
        folder: null,
        release: "released",
        reason: "r",
        ...(state === "failed" ? { error: { code: "HUMANISH_SEAT_FAILED", message: "engine" } } : {}),
        durationMs: 1,
        usd: 0,
        jobs: 0,
      })),
      totals: { seats: rows.length, completed: 0, failed: 0, interrupted: 0, budgetReached: 0, knownUsd: 0, knownJobs: 0, heldSlots: 0 },
    },
    cost: { schema: "humanish.run-cost-summary.v1", currency: "usd", estimatedTotalUsd: 0, ratesAsOf: null, lines: [], note: "" },
    review: { verdict: "fail" },
    ...(o.continues ? { continues: o.continues } : {}),
  } as unknown as RunBundle;
}

const first = bundle("run-a", [
  ["p1", "passed", "goal_satisfied"],
  ["p2", "failed", "harness_error", "failed"],
  ["p3", "incomplete", "turn_completed"],
  ["p4", "failed", "interrupted", "interrupted"],
]);

function refusal(f: () => unknown): HumanishError {
  try {
    f();
  } catch (e) {
    if (e instanceof HumanishError) return e;
    throw e;
  }
  throw new Error("no refusal");
}

describe("planRerun", () => {
  test("harness (the default) picks the seats that failed as a harness: a failed seat and an interrupted participant; never a finding or a pass", () => {
    const plan = planRerun({ chain: [first], runJsonSha256: SHA, lab: { id: "lab", sha256: SHA }, which: parseRerunWhich(undefined) });
    expect(plan.seats).toEqual(["p2", "p4"]);
    expect(plan.continues).toEqual({ runId: "run-a", runJsonSha256: SHA, which: "harness", seats: ["p2", "p4"] });
    expect(plan.before.line).toBe(
      "1/4 reached the goal (2 harness failures: not a finding); tasks: t 1/4 — combined over 1 run, each seat its last attempt (0 rerun)",
    );
  });

  test("not-reached picks every seat that did not reach the goal, findings too", () => {
    expect(planRerun({ chain: [first], runJsonSha256: SHA, lab: { id: "lab", sha256: SHA }, which: "not-reached" }).seats).toEqual(["p2", "p3", "p4"]);
  });

  test("every seat of a run that failed as a whole failed as a harness", () => {
    const failed = bundle("run-f", [["p1", "passed", "goal_satisfied"]], { outcome: { state: "failed", error: { code: "HUMANISH_X", message: "m" } } });
    expect(planRerun({ chain: [failed], runJsonSha256: SHA, lab: { id: "lab", sha256: SHA }, which: "harness" }).seats).toEqual(["p1"]);
  });

  test("a chain is planned from each seat's last attempt", () => {
    const second = bundle(
      "run-b",
      [
        ["p2", "passed", "goal_satisfied"],
        ["p4", "failed", "harness_error", "failed"],
      ],
      {
        continues: { runId: "run-a", runJsonSha256: SHA, which: "harness", seats: ["p2", "p4"] },
      },
    );
    expect(planRerun({ chain: [first, second], runJsonSha256: SHA, lab: { id: "lab", sha256: SHA }, which: "harness" }).seats).toEqual(["p4"]);
    expect(planRerun({ chain: [first, second], runJsonSha256: SHA, lab: { id: "lab", sha256: SHA }, which: "not-reached" }).seats).toEqual(["p3", "p4"]);
  });

  test("refusals: a dry run, another lab, a changed lab text, nothing to rerun, a bad --rerun-which — each with its code and a next step", () => {
    const dry = bundle("run-d", [["p1", "passed", "goal_satisfied"]], { mode: "dry-run" });
    const cases: [() => unknown, string][] = [
      [() => planRerun({ chain: [dry], runJsonSha256: SHA, lab: { id: "lab", sha256: SHA }, which: "harness" }), "HUMANISH_RERUN_DRY_RUN"],
      [() => planRerun({ chain: [first], runJsonSha256: SHA, lab: { id: "other", sha256: SHA }, which: "harness" }), "HUMANISH_RERUN_LAB_MISMATCH"],
      [() => planRerun({ chain: [first], runJsonSha256: SHA, lab: { id: "lab", sha256: "b".repeat(64) }, which: "harness" }), "HUMANISH_RERUN_LAB_CHANGED"],
      [() => parseRerunWhich("all"), "HUMANISH_RERUN_WHICH_INVALID"],
    ];
    for (const [f, code] of cases) {
      const e = refusal(f);
      expect(e.code).toBe(code);
      expect(e.next).toBeTruthy();
    }
    const clean = bundle("run-c", [
      ["p1", "passed", "goal_satisfied"],
      ["p2", "abandoned", "gave_up"],
    ]);
    const nothing = refusal(() => planRerun({ chain: [clean], runJsonSha256: SHA, lab: { id: "lab", sha256: SHA }, which: "harness" }));
    expect(nothing.code).toBe("HUMANISH_RERUN_NOTHING");
    expect(nothing.next).toBe("--rerun-which not-reached reruns the 1 seat(s) that did not reach the goal");
    const done = bundle("run-e", [["p1", "passed", "goal_satisfied"]]);
    expect(refusal(() => planRerun({ chain: [done], runJsonSha256: SHA, lab: { id: "lab", sha256: SHA }, which: "not-reached" })).code).toBe(
      "HUMANISH_RERUN_NOTHING",
    );
  });
});

describe("combined result", () => {
  const second = bundle(
    "run-b",
    [
      ["p2", "passed", "goal_satisfied"],
      ["p4", "passed", "goal_satisfied"],
    ],
    {
      continues: { runId: "run-a", runJsonSha256: SHA, which: "harness", seats: ["p2", "p4"] },
    },
  );

  test("each seat once, its last attempt; earlier attempts listed; the denominator is the study's seats", () => {
    const c = combineChain([first, second]);
    expect(c.runIds).toEqual(["run-a", "run-b"]);
    expect(c.seats.map((s) => [s.id, s.last.runId, s.last.counted, s.earlier.map((a) => `${a.runId}:${a.counted}`)])).toEqual([
      ["p1", "run-a", "goal", []],
      ["p2", "run-b", "goal", ["run-a:harness"]],
      ["p3", "run-a", "finding", []],
      ["p4", "run-b", "goal", ["run-a:harness"]],
    ]);
    expect(c.line).toBe("3/4 reached the goal; tasks: t 3/4 — combined over 2 runs, each seat its last attempt (2 rerun)");
  });

  test("the comparison reads the combined view: 4 seats, each counted once, wall time of both runs", () => {
    const view = combinedView([first, second]);
    expect(view.participants.map((p) => p.id)).toEqual(["p1", "p2", "p3", "p4"]);
    expect(view.durationMs).toBe(2000);
    const cmp = compareRuns(first, view);
    expect(cmp.goal.a).toEqual({ reached: 1, observed: 2, excluded: 2, rate: 0.5 });
    expect(cmp.goal.b).toEqual({ reached: 3, observed: 4, excluded: 0, rate: 0.75 });
  });

  test("a seat whose last attempt ran in a run that failed as a whole stays out of the view's goal rate", () => {
    const failed = bundle(
      "run-b",
      [
        ["p2", "passed", "goal_satisfied"],
        ["p4", "passed", "goal_satisfied"],
      ],
      {
        continues: { runId: "run-a", runJsonSha256: SHA, which: "harness", seats: ["p2", "p4"] },
        outcome: { state: "failed", error: { code: "HUMANISH_TERMINAL_LAB_CLEANUP_UNPROVEN", message: "m" } },
      },
    );
    const cmp = compareRuns(first, combinedView([first, failed]));
    expect(cmp.goal.b).toEqual({ reached: 1, observed: 2, excluded: 2, rate: 0.5 });
  });
});

describe("pickSeatSpecs", () => {
  test("keeps the named seats in study order, indexed afresh; absent ids keep every seat", () => {
    const seats = [
      { id: "p1", index: 0 },
      { id: "p2", index: 1, persona: "x" },
      { id: "p3", index: 2 },
    ];
    expect(pickSeatSpecs(seats, ["p3", "p2"])).toEqual([
      { id: "p2", index: 0, persona: "x" },
      { id: "p3", index: 1 },
    ]);
    expect(pickSeatSpecs(seats, undefined)).toEqual(seats);
  });
});

/**
 * The comparison core on bundle pieces: denominators count only what was observed (a check
 * that did not run, a harness failure), the verdict words follow the threshold, tasks in one
 * run only are said, and the text and HTML say "not distinguishable at these sample sizes".
 */
import { describe, expect, test } from "bun:test";
import type { RunParticipant, TaskResult } from "../../src/bundle/schemas.ts";
import { compareRates, goalSide, SIGNIFICANCE_THRESHOLD, taskSides } from "../../src/compare/core.ts";
import { differenceLabel, pLabel, sideLabel, verdictWords } from "../../src/report/compare.ts";

const task = (id: string, status: TaskResult["status"], participantId: string): TaskResult => ({
  id,
  goal: `goal of ${id}`,
  participantId,
  status,
  passed: status === "passed",
});
const person = (id: string, status: RunParticipant["status"], completionReason: RunParticipant["completionReason"]): RunParticipant => ({
  id,
  actorType: "scripted-terminal",
  status,
  completionReason,
  reason: "",
  trace: null,
});

describe("denominators", () => {
  test("a task's denominator is the sessions whose check ran; not_run is reported beside it", () => {
    const sides = taskSides({
      tasks: [task("a", "passed", "p1"), task("a", "failed", "p2"), task("a", "not_run", "p3"), task("b", "passed", "p1")],
    });
    expect(sides.get("a")).toEqual({ reached: 1, observed: 2, excluded: 1, rate: 0.5 });
    expect(sides.get("b")).toEqual({ reached: 1, observed: 1, excluded: 0, rate: 1 });
    expect(sideLabel(sides.get("a")!, "not run")).toBe("1/2 (1 not run left out)");
  });
  test("the goal denominator leaves out harness failures, never a participant who gave up", () => {
    const g = goalSide({
      participants: [
        person("p1", "passed", "goal_satisfied"),
        person("p2", "abandoned", "gave_up"),
        person("p3", "failed", "harness_error"),
        person("p4", "failed", "step_failed"),
      ],
    });
    expect(g).toEqual({ reached: 1, observed: 3, excluded: 1, rate: 1 / 3 });
    expect(sideLabel(g, "harness failure")).toBe("1/3 (1 harness failure left out)");
  });
});

describe("rows", () => {
  test("5/8 → 8/8: +37.5 pts, p = 0.200, not distinguishable at these sample sizes", () => {
    const row = compareRates("t", { reached: 5, observed: 8, excluded: 0, rate: 5 / 8 }, { reached: 8, observed: 8, excluded: 0, rate: 1 });
    expect(row.differencePoints).toBe(37.5);
    expect(row.pValue).toBeCloseTo(0.2, 12);
    expect(row.verdict).toBe("not_distinguishable");
    expect(verdictWords(row, SIGNIFICANCE_THRESHOLD)).toBe("not distinguishable at these sample sizes");
    expect(`${sideLabel(row.a, "not run")} → ${sideLabel(row.b, "not run")} ${differenceLabel(row.differencePoints)} ${pLabel(row.pValue)}`).toBe(
      "5/8 → 8/8 +37.5 pts p = 0.200",
    );
  });
  test("0/10 → 10/10 is distinguishable (p < 0.05)", () => {
    const row = compareRates("t", { reached: 0, observed: 10, excluded: 0, rate: 0 }, { reached: 10, observed: 10, excluded: 0, rate: 1 });
    expect(row.verdict).toBe("distinguishable");
    expect(pLabel(row.pValue)).toBe("p < 0.001");
    expect(verdictWords(row, 0.05)).toBe("distinguishable (p < 0.05)");
  });
  test("a side with nothing observed, or a task in one run only, gets no test", () => {
    expect(compareRates("t", { reached: 0, observed: 0, excluded: 2, rate: null }, { reached: 1, observed: 1, excluded: 0, rate: 1 }).verdict).toBe(
      "no_observations",
    );
    const only = compareRates("t", { reached: 1, observed: 1, excluded: 0, rate: 1 }, null);
    expect([only.verdict, only.pValue, only.differencePoints]).toEqual(["only_in_a", null, null]);
    expect(differenceLabel(-12.5)).toBe("−12.5 pts");
    expect(differenceLabel(0)).toBe("±0 pts");
  });
});

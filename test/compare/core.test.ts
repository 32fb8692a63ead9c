/**
 * The comparison core on bundle pieces: denominators count only what was observed (a check
 * that did not run, a harness failure), the verdict words follow the threshold, tasks in one
 * run only are said, and the text and HTML say "not distinguishable at these sample sizes".
 */
import { describe, expect, test } from "bun:test";
import type { RunParticipant, TaskResult } from "../../src/bundle/schemas.ts";
import { type Comparison, compareRates, goalSide, outcomeNotes, SIGNIFICANCE_THRESHOLD, taskSides } from "../../src/compare/core.ts";
import { labRunArg } from "../../src/export/verified.ts";
import { compareText, differenceLabel, pLabel, sideLabel, verdictWords } from "../../src/report/compare.ts";

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
    expect(verdictWords(compareRates("t", { reached: 0, observed: 0, excluded: 2, rate: null }, { reached: 1, observed: 1, excluded: 0, rate: 1 }), 0.05)).toBe(
      "nothing observed in run A: no test",
    );
    const none = { reached: 0, observed: 0, excluded: 1, rate: null };
    expect(verdictWords(compareRates("t", none, none), 0.05)).toBe("nothing observed in either run: no test");
    expect(differenceLabel(-12.5)).toBe("−12.5 pts");
    expect(differenceLabel(0)).toBe("±0 pts");
  });
});

describe("a run's outcome", () => {
  const seat = (id: string, state: "completed" | "failed", code?: string) =>
    ({
      id,
      index: 0,
      state,
      phase: "done",
      folder: null,
      release: "released",
      reason: "",
      durationMs: 1,
      usd: 0,
      jobs: 0,
      ...(code ? { error: { code, message: "m" } } : {}),
    }) as const;
  const study = (seats: ReturnType<typeof seat>[]) => ({ seats }) as never;
  const passed = [person("p1", "passed", "goal_satisfied"), person("p2", "passed", "goal_satisfied")];

  test("a failed run reaches no goal: all its participants are left out, and a note says why", () => {
    const failed = { state: "failed" as const, error: { code: "HUMANISH_ADAPTER_SCORE_MALFORMED", message: "bad" } };
    expect(goalSide({ participants: passed, outcome: failed })).toEqual({ reached: 0, observed: 0, excluded: 2, rate: null });
    const notes = outcomeNotes("A", { runId: "r1", participants: passed, outcome: failed, tasks: [] });
    expect(notes).toEqual([
      "run A (r1) failed (HUMANISH_ADAPTER_SCORE_MALFORMED): its 2 participant(s) are left out of the goal rate, since a failed run's goal is no evidence",
    ]);
  });

  test("a seat the study ended as failed is a harness failure even when its participant says passed", () => {
    const b = {
      runId: "r2",
      participants: passed,
      outcome: { state: "completed" as const },
      study: study([seat("p1", "completed"), seat("p2", "failed", "HUMANISH_TERMINAL_LAB_CAPS_EXCEEDED")]),
      tasks: [],
    };
    expect(goalSide(b)).toEqual({ reached: 1, observed: 1, excluded: 1, rate: 1 });
    expect(outcomeNotes("B", b)).toEqual(["run B: 1 seat(s) failed in the harness (p2 HUMANISH_TERMINAL_LAB_CAPS_EXCEEDED) and are left out of the goal rate"]);
  });

  test("participants who reached the goal while every hidden check failed get a note; a completed clean run gets none", () => {
    const tasks = [task("t", "failed", "p1"), task("t", "failed", "p2")];
    expect(outcomeNotes("A", { runId: "r3", participants: passed, outcome: { state: "completed" }, tasks })).toEqual([
      "run A: 2 participant(s) reached the goal by their own account, but no hidden check passed; read the task rows",
    ]);
    expect(outcomeNotes("A", { runId: "r4", participants: passed, outcome: { state: "completed" }, tasks: [task("t", "passed", "p1")] })).toEqual([]);
  });

  test("the lab-run hint names a file-path lab by its path, an embedded lab by its id", () => {
    const lab = (ref: string) => ({ lab: { id: "example-adapter", source: { ref, sha256: "0".repeat(64) } } }) as never;
    expect(labRunArg(lab("labs/example-adapter/lab.yaml"))).toBe("labs/example-adapter/lab.yaml");
    expect(labRunArg(lab("embedded:default"))).toBe("default");
    expect(labRunArg(lab("[external]/lab.yaml"))).toBe("<path to lab.yaml>");
  });
});

describe("the text table", () => {
  test("every line keeps the same columns when a side says what it left out", () => {
    const facts = (runId: string) =>
      ({ runId, lab: "l", createdAt: "t", durationMs: 1000, cost: { usd: 0.5, lines: 1, unmeasuredLines: 0 } }) as Comparison["a"];
    const c = {
      a: facts("A"),
      b: facts("B"),
      threshold: 0.05,
      goal: compareRates("goal", { reached: 1, observed: 1, excluded: 1, rate: 1 }, { reached: 2, observed: 2, excluded: 0, rate: 1 }),
      tasks: [compareRates("check", { reached: 0, observed: 2, excluded: 0, rate: 0 }, { reached: 2, observed: 2, excluded: 0, rate: 1 })],
      notes: [],
    } as unknown as Comparison;
    const lines = compareText(c).split("\n").slice(1, 6);
    expect(lines[1]).toContain("1/1 (1 harness failure left out) →");
    // The arrow, and the B column after it, sit at one position on every line.
    const arrows = lines.map((l) => l.indexOf("→"));
    expect(new Set(arrows.slice(1)).size).toBe(1);
    expect(lines[0]!.indexOf("B (after)")).toBe(arrows[1]! + 2);
    expect(lines.map((l) => l.slice(0, 12).trim())).toEqual(["rate", "goal", "task check", "cost", "time"]);
  });
});

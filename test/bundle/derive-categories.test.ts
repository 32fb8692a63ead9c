/**
 * Honest labels: every completion reason has a category, and the tallies, verdict and
 * stakeholder line follow it. A participant giving up (or failing a scripted step) is a finding
 * about the product, never a harness failure; a harness failure is never reported as a finding.
 */
import { describe, expect, test } from "bun:test";
import { COMPLETION_CATEGORY, deriveVerdict, participantCategory, stakeholderLine, tallyParticipants } from "../../src/bundle/derive.ts";
import { CompletionReasonSchema, type RunParticipant } from "../../src/bundle/schemas.ts";

const p = (status: RunParticipant["status"], completionReason: RunParticipant["completionReason"]): RunParticipant =>
  ({ id: "p1", actorType: "scripted-terminal", label: "scripted-terminal", status, completionReason, reason: "r", trace: null }) as RunParticipant;

/** The status each reason ends with in practice, and what it must be counted as. */
const TABLE: [
  RunParticipant["completionReason"] & string,
  RunParticipant["status"],
  "goal" | "finding" | "harness",
  keyof ReturnType<typeof tallyParticipants> | null,
][] = [
  ["goal_satisfied", "passed", "goal", "reachedGoal"],
  ["turn_completed", "passed", "goal", "reachedGoal"],
  ["turn_completed", "incomplete", "finding", "ranOut"],
  ["gave_up", "abandoned", "finding", "abandoned"],
  ["blocked_approval", "blocked", "finding", "blocked"],
  ["timed_out", "timed_out", "finding", "ranOut"],
  ["budget_reached", "incomplete", "finding", "ranOut"],
  ["step_failed", "failed", "finding", null],
  ["actor_error", "failed", "harness", "harnessFailed"],
  ["harness_error", "failed", "harness", "harnessFailed"],
  ["interrupted", "incomplete", "harness", "harnessFailed"],
];

describe("completion reason categories", () => {
  test("every completion reason of the schema has a category", () => {
    expect(Object.keys(COMPLETION_CATEGORY).sort()).toEqual([...CompletionReasonSchema.options].sort());
  });

  for (const [reason, status, category, bucket] of TABLE) {
    test(`${status}/${reason} is a ${category}${bucket ? `, counted as ${bucket}` : ", counted only in total"}`, () => {
      const part = p(status, reason);
      expect(participantCategory(part)).toBe(category);
      const t = tallyParticipants([part]);
      expect(t.total).toBe(1);
      const buckets = { reachedGoal: t.reachedGoal, abandoned: t.abandoned, ranOut: t.ranOut, blocked: t.blocked, harnessFailed: t.harnessFailed };
      const expected = { reachedGoal: 0, abandoned: 0, ranOut: 0, blocked: 0, harnessFailed: 0, ...(bucket ? { [bucket]: 1 } : {}) };
      expect(buckets).toEqual(expected);
      const line = stakeholderLine({ participants: t, tasks: { sessions: 1, tasks: [] } });
      if (category === "harness") expect(line).toContain("1 harness failure: not a finding");
      else expect(line).not.toContain("harness");
      const verdict = deriveVerdict("live", { state: "completed" }, [part]);
      if (category === "harness") expect(verdict).toBe("fail");
      if (category === "goal") expect(verdict).toBe("pass");
    });
  }

  test("the breaker's case: a failed step is a finding about the product, not a harness failure", () => {
    const line = stakeholderLine({ participants: tallyParticipants([p("failed", "step_failed")]), tasks: { sessions: 1, tasks: [] } });
    expect(line).toBe("0/1 reached the goal");
  });

  test("a failed participant without a reason is a harness failure (nothing says the product did it)", () => {
    expect(participantCategory(p("failed", null))).toBe("harness");
    expect(participantCategory(p("abandoned", null))).toBe("finding");
  });
});

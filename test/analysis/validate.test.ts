/** Output validation (pure): every rejected-output branch, and each rule a finding must meet. */
import { describe, expect, test } from "bun:test";
import { findingProblems, type ReferenceScope, validateOutput } from "../../src/analysis/validate.ts";
import type { EvidenceRef, Finding } from "../../src/bundle/index.ts";

const ref = (id: string, basis: EvidenceRef["basis"]): EvidenceRef => ({
  id,
  kind: "trace",
  basis,
  participantId: "p1",
  source: { path: "actor.json" },
  bytes: 1,
  sha256: "a".repeat(64),
});
const scope: ReferenceScope = {
  evidence: new Map(
    [ref("p1/trace/command-001", "observed"), ref("p1/trace/message-001", "participant"), ref("run/lifecycle", "harness")].map((r) => [r.id, r]),
  ),
  participants: new Set(["p1"]),
  tasks: new Set(["add-todo"]),
};
const finding = (over: Partial<Finding> = {}): Finding => ({
  id: "f1",
  title: "t",
  severity: "major",
  kind: "observed",
  participants: ["p1"],
  tasks: ["add-todo"],
  evidence: ["p1/trace/command-001"],
  recommendation: "r",
  ...over,
});
const answer = (findings: unknown[]) => JSON.stringify({ summary: "s", findings, limitations: [] });

describe("validateOutput", () => {
  test("a valid answer is complete; bad findings are rejected one by one into diagnostics", () => {
    expect(validateOutput({ status: "completed", outputText: answer([finding()]) }, scope)).toMatchObject({
      status: "complete",
      rejectedFindings: [],
      error: null,
    });
    const v = validateOutput({ status: "completed", outputText: answer([finding(), finding({ id: "f2", evidence: ["p9/x"] }), finding()]) }, scope);
    expect(v.status).toBe("partial");
    expect(v.result?.findings.map((f) => f.id)).toEqual(["f1"]);
    expect(v.rejectedFindings.map((r) => [r.findingId, r.problems])).toEqual([
      ["f2", ["cites evidence p9/x, which was not in the packet"]],
      ["f1", ["repeats finding id f1"]],
    ]);
  });

  test("every finding rejected: a rejected output with each finding in diagnostics, never partial", () => {
    const v = validateOutput(
      { status: "completed", outputText: answer([finding({ evidence: ["p9/x"] }), finding({ id: "f2", participants: ["p7"] })]) },
      scope,
    );
    expect([v.status, v.result, v.rejectedOutput?.reason, v.error?.code]).toEqual(["rejected", null, "all_findings_rejected", "all_findings_rejected"]);
    expect(v.rejectedFindings.map((r) => r.findingId)).toEqual(["f1", "f2"]);
    expect(v.error?.message).toContain("cites evidence p9/x");
  });

  test("narration is not observation: each kind needs evidence of its own basis", () => {
    expect(findingProblems(finding({ evidence: ["p1/trace/message-001"] }), scope)).toEqual([
      "is marked observed but cites no observed evidence (a participant's or the harness's account alone is not an observation)",
    ]);
    expect(findingProblems(finding({ kind: "participant_reported", evidence: ["p1/trace/message-001"] }), scope)).toEqual([]);
    expect(findingProblems(finding({ kind: "participant_reported" }), scope)).toEqual([
      "is marked participant_reported but cites nothing the participant said",
    ]);
    expect(findingProblems(finding({ kind: "harness" }), scope)).toEqual(["is marked harness but cites no record of a harness failure"]);
    expect(findingProblems(finding({ kind: "harness", evidence: ["run/lifecycle"] }), scope)).toEqual([]);
    expect(findingProblems(finding({ evidence: [], participants: ["p2"], tasks: ["x"] }), scope)).toEqual([
      "cites no evidence",
      "names participant p2, who is not in the bundle",
      "names task x, which is not in the bundle",
    ]);
  });

  test("refusal, incomplete, invalid JSON, schema violation and a failed request are rejected outputs, never success", () => {
    const cases = [
      [{ status: "refused", refusal: "no" }, "rejected", "refusal"],
      [{ status: "incomplete", reason: "max_output_tokens", outputText: "{" }, "rejected", "incomplete"],
      [{ status: "completed", outputText: "not json" }, "rejected", "invalid_json"],
      [{ status: "completed", outputText: answer([finding({ severity: "catastrophic" as never })]) }, "rejected", "schema_violation"],
      [{ status: "completed", outputText: JSON.stringify({ summary: "s", findings: [] }) }, "rejected", "schema_violation"],
      [{ status: "failed", code: "rate_limit_exceeded", message: "429", httpStatus: 429 }, "failed", "request_failed"],
    ] as const;
    for (const [outcome, status, reason] of cases) {
      const v = validateOutput(outcome, scope);
      expect([v.status, v.rejectedOutput?.reason, v.result]).toEqual([status, reason, null]);
      expect(v.error).not.toBeNull();
    }
    expect(validateOutput(cases[3][0], scope).rejectedOutput?.detail).toContain("findings[0]");
  });
});

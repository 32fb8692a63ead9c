/**
 * Our ATIF validator: a well-formed trajectory passes; hand-broken ones are rejected with EVERY
 * error listed (path, rule, message), not just the first.
 */
import { describe, expect, test } from "bun:test";
import { validateAtif } from "../../src/export/atif/validate.ts";

/** A small valid ATIF v1.4 trajectory (user → agent with one tool call and its result → agent). */
function good(): Record<string, unknown> {
  return {
    schema_version: "ATIF-v1.4",
    session_id: "run-1/p1",
    agent: { name: "codex", version: "0.171.0", model_name: "gpt-5.1-codex-mini" },
    steps: [
      { step_id: 1, timestamp: "2026-12-01T12:00:00Z", source: "user", message: "Pretty-print orders.json." },
      {
        step_id: 2,
        timestamp: "2026-12-01T12:00:02.500Z",
        source: "agent",
        message: "",
        reasoning_content: "jq . should do it",
        tool_calls: [{ tool_call_id: "command-001", function_name: "shell", arguments: { command: "jq . orders.json" } }],
        observation: { results: [{ source_call_id: "command-001", content: "exit 0\n{}" }] },
        metrics: { prompt_tokens: 1200, completion_tokens: 80, cached_tokens: 1000, cost_usd: 0.0004 },
      },
      { step_id: 3, timestamp: "2026-12-01T12:00:04+00:00", source: "agent", message: "Done." },
      { step_id: 4, source: "system", message: "participant passed", observation: { results: [{ content: "screenshot: screenshots/001.png" }] } },
    ],
    final_metrics: { total_prompt_tokens: 1200, total_completion_tokens: 80, total_steps: 4 },
  };
}

describe("validateAtif", () => {
  test("a well-formed trajectory passes", () => {
    const v = validateAtif(good());
    expect(v.errors).toEqual([]);
    expect(v.ok).toBe(true);
  });

  test("a hand-broken trajectory: every error is listed with its path and rule", () => {
    const t = good();
    const steps = t.steps as Record<string, unknown>[];
    steps[1]!.step_id = 3; // out of sequence
    steps[2]!.step_id = 2; // out of sequence
    steps[0]!.timestamp = "yesterday at noon"; // not ISO 8601
    steps[0]!.reasoning_content = "users do not reason here"; // agent-only field on a user step
    steps[3]!.tool_calls = [{ tool_call_id: "command-001", function_name: "shell", arguments: {} }]; // agent-only + duplicate id
    steps[2]!.observation = { results: [{ source_call_id: "command-404", content: "?" }] }; // names no call of its step
    const v = validateAtif(t);
    expect(v.ok).toBe(false);
    expect(v.errors.map((e) => `${e.code} ${e.path}`).sort()).toEqual(
      [
        "timestamp steps[0].timestamp",
        "step_id_sequence steps[1].step_id",
        "step_id_sequence steps[2].step_id",
        "agent_only_field steps[0].reasoning_content",
        "agent_only_field steps[3].tool_calls",
        "duplicate_tool_call_id steps[3].tool_calls[0].tool_call_id",
        "unresolved_source_call_id steps[2].observation.results[0].source_call_id",
      ].sort(),
    );
    expect(v.errors.find((e) => e.code === "step_id_sequence")?.message).toBe("step_id is 3, expected 2 (ids run 1, 2, 3… in order)");
    expect(v.errors.find((e) => e.code === "unresolved_source_call_id")?.message).toBe('source_call_id "command-404" names no tool call of this step');
  });

  test("shape errors are collected together with the rules: missing fields, wrong types, unknown keys, a bad version", () => {
    const t = good();
    t.schema_version = "ATIF-v9";
    delete (t.agent as Record<string, unknown>).version;
    const steps = t.steps as Record<string, unknown>[];
    steps[1]!.source = "robot";
    steps[1]!.metrics = { prompt_tokens: -5, cost_usd: "cheap" };
    steps[2]!.colour = "blue";
    delete steps[3]!.message;
    steps[3]!.step_id = 7;
    const v = validateAtif(t);
    expect(v.ok).toBe(false);
    const paths = v.errors.map((e) => `${e.code} ${e.path}`);
    expect(paths).toEqual(
      expect.arrayContaining([
        "shape schema_version",
        "shape agent.version",
        "shape steps[1].source",
        "shape steps[1].metrics.prompt_tokens",
        "shape steps[1].metrics.cost_usd",
        "shape steps[2]",
        "shape steps[3].message",
        "step_id_sequence steps[3].step_id",
        // source "robot" is not an agent: its agent-only fields are flagged too
        "agent_only_field steps[1].reasoning_content",
      ]),
    );
    expect(v.errors.length).toBeGreaterThanOrEqual(9);
  });

  test("not an object, or no steps: the shape says so", () => {
    expect(validateAtif(null).ok).toBe(false);
    const empty = validateAtif({ ...good(), steps: [] });
    expect(empty.ok).toBe(false);
    expect(empty.errors.map((e) => e.path)).toEqual(["steps"]);
  });
});

/** The tool's text results (what a model reads and what OpenEnv clients return). */
import { describe, expect, test } from "bun:test";
import { commandOutputText, commandResultText, finalAnswerText, toolErrorText } from "../../src/env/text.ts";

describe("terminal text", () => {
  test("output then stderr, trailing blanks trimmed; nothing → (no output)", () => {
    expect(commandOutputText({ stdout: "a\n\n", stderr: "b\n" })).toBe("a\nb");
    expect(commandOutputText({ stdout: "", stderr: "" })).toBe("(no output)");
  });

  test("a result names its exit code, truncation and timeout", () => {
    expect(commandResultText({ stdout: "hi\n", stderr: "", exit_code: 0, timed_out: false }, 1000)).toBe("hi\n[exit code 0]");
    const t = commandResultText({ stdout: "x", stderr: "", exit_code: 124, timed_out: true, stdout_truncated_bytes: 7 }, 1500);
    expect(t).toBe(
      "x\n[stdout truncated: the first 7 bytes were dropped]\n[timed out: the command ran past its 1500 ms deadline and was killed]\n[exit code 124]",
    );
  });

  test("a final answer reads like upstream's", () => {
    expect(finalAnswerText("42", { passed: 0, total: 0, reward: 0, source: "pass_rate" })).toBe("Answer submitted: 42");
    expect(finalAnswerText("42", { passed: 2, total: 3, reward: 2 / 3, source: "pass_rate" })).toBe(
      `Answer submitted: 42\nVerification: 2/3 passed; reward=${2 / 3}`,
    );
    expect(finalAnswerText("x", { passed: 0, total: 0, reward: 0.5, source: "override" })).toContain("reward=0.5");
    expect(toolErrorText({ error_type: "invalid_args", message: "m" })).toBe("Error (invalid_args): m");
  });
});

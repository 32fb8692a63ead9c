/**
 * The terminal tool's results as text a model reads (MCP `content`, the `data` OpenEnv clients
 * return): output first, then the exit code and, when it happened, the timeout. Pure.
 */

/** The fields of one command's result that the text needs. Units: ms, bytes. */
export interface CommandTextInput {
  stdout: string;
  stderr: string;
  exit_code: number;
  timed_out: boolean;
  stdout_truncated_bytes?: number;
  stderr_truncated_bytes?: number;
}

/** stdout then stderr, each without trailing blank lines, or `(no output)` (what upstream prints). */
export function commandOutputText(r: Pick<CommandTextInput, "stdout" | "stderr">): string {
  const parts = [r.stdout.replace(/\s+$/, ""), r.stderr.replace(/\s+$/, "")].filter((p) => p !== "");
  return parts.length ? parts.join("\n") : "(no output)";
}

/**
 * The whole result of one command: output, truncation notes, `[exit code N]`, and a timeout line
 * naming the deadline (ms) when the command was killed.
 */
export function commandResultText(r: CommandTextInput, deadlineMs: number): string {
  const lines = [commandOutputText(r)];
  for (const [stream, dropped] of [
    ["stdout", r.stdout_truncated_bytes],
    ["stderr", r.stderr_truncated_bytes],
  ] as const) {
    if (dropped) lines.push(`[${stream} truncated: the first ${dropped} bytes were dropped]`);
  }
  if (r.timed_out) lines.push(`[timed out: the command ran past its ${deadlineMs} ms deadline and was killed]`);
  lines.push(`[exit code ${r.exit_code}]`);
  return lines.join("\n");
}

/** `Answer submitted: …` plus the verification line when verify commands (or an override) scored it. */
export function finalAnswerText(answer: string, score: { passed: number; total: number; reward: number; source: "override" | "pass_rate" }): string {
  const head = `Answer submitted: ${answer}`;
  if (score.total === 0 && score.source !== "override") return head;
  return `${head}\nVerification: ${score.passed}/${score.total} passed; reward=${score.reward}`;
}

/** A framework failure (never a non-zero exit code) as one line. */
export function toolErrorText(error: { error_type: string; message: string }): string {
  return `Error (${error.error_type}): ${error.message}`;
}

/**
 * Printing results: one JSON document on stdout in `--json` mode, a readable summary otherwise.
 * Every printed byte passes the bundle layer's redaction with the invocation's secret values
 * (ARCHITECTURE.md invariant 1) — the CLI only prints, it never holds study logic.
 */
import { redact } from "../bundle/index.ts";
import { HumanishError } from "../errors.ts";

/** A command's result: the envelope printed in `--json` mode (reference contracts.md §4.1). */
export interface CommandResult {
  /** `humanish.<command>-result.v1` (or a route's own result schema). */
  schema: string;
  ok: boolean;
  error?: { code: string; message: string; next?: string; details?: Record<string, unknown> };
  [key: string]: unknown;
}

/** What a command handler returns: the envelope plus its human rendering. */
export interface CommandOutcome {
  result: CommandResult;
  /** Human-mode text for stdout (without trailing newline); omitted → a generic line. */
  human?: string;
  /** Exit code override (e.g. 130 after SIGINT); default 0 when ok, else 2. */
  exitCode?: number;
  /** A long-running server already printed its one JSON document at start: print nothing more. */
  printed?: boolean;
}

/** Where output goes; tests pass their own sinks. */
export interface CliIO {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  /** Whether stderr is a terminal (live progress is drawn only then). */
  stderrIsTTY: boolean;
  /** Whether stdin is a terminal (interactive wizard). */
  stdinIsTTY: boolean;
  env: Record<string, string | undefined>;
}

/** The process's real streams. */
export function processIO(): CliIO {
  return {
    stdout: (t) => process.stdout.write(t),
    stderr: (t) => process.stderr.write(t),
    stderrIsTTY: Boolean(process.stderr.isTTY),
    stdinIsTTY: Boolean(process.stdin.isTTY),
    env: process.env,
  };
}

/** Builds a failure envelope from an error. Unknown throws become `HUMANISH_UNEXPECTED`. */
export function failure(schema: string, e: unknown, extra: Record<string, unknown> = {}): CommandOutcome {
  const err =
    e instanceof HumanishError
      ? e.toJSON()
      : {
          code: "HUMANISH_UNEXPECTED",
          message: e instanceof Error ? e.message : String(e),
          next: "re-run with the same arguments; if it repeats, report it with the run directory",
        };
  return { result: { schema, ok: false, ...extra, error: err } };
}

/**
 * Prints an outcome and returns the exit code. `--json`: exactly one pretty JSON document.
 * Human: the summary on stdout; on failure the three lines `humanish <cmd> failed: …`,
 * `code: …`, `next: …` on stderr.
 */
export function emit(io: CliIO, command: string, outcome: CommandOutcome, json: boolean, secrets: string[]): number {
  const { result } = outcome;
  if (outcome.printed) return outcome.exitCode ?? (result.ok ? 0 : 2);
  if (json) {
    io.stdout(`${redact(JSON.stringify(result, null, 2), secrets)}\n`);
  } else {
    if (outcome.human) io.stdout(`${redact(outcome.human, secrets)}\n`);
    if (!result.ok && result.error) {
      const lines = [`humanish ${command} failed: ${result.error.message}`, `code: ${result.error.code}`];
      if (result.error.next) lines.push(`next: ${result.error.next}`);
      io.stderr(`${redact(lines.join("\n"), secrets)}\n`);
    }
  }
  return outcome.exitCode ?? (result.ok ? 0 : 2);
}

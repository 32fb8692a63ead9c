/**
 * Printing results: one JSON document on stdout in `--json` mode, a readable summary otherwise.
 * Every printed byte passes the invocation's secret scrub (secret values and secret shapes never
 * reach stdout or stderr) — the CLI only prints, it never holds study logic. The user's own
 * terminal shows the user's own paths and lab text as written: local-path redaction is for
 * evidence that can be shared (bundle, report, serve), not for what a person reads about their
 * own machine. Human output is made inert by {@link inertText}, so no lab text, path or
 * participant output can retitle, clear or recolour the terminal.
 */
import { createRedactor, redact } from "../bundle/index.ts";
import { errorMessage, HumanishError } from "../errors.ts";

/** A command's result: the envelope printed in `--json` mode (`schema`, `ok`, `error` on failure). */
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

/**
 * Characters that act on a terminal or reorder what a reader sees: C0 controls except newline
 * and tab, DEL, C1 controls, the Unicode line/paragraph separators and the bidirectional
 * overrides and isolates.
 */
const ACTIVE_CHARS = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

/** The visible escape of one active character: `\xHH` below U+0100, `\u{HHHH}` above. */
function visibleEscape(c: string): string {
  const cp = c.codePointAt(0) ?? 0;
  return cp < 0x100 ? `\\x${cp.toString(16).padStart(2, "0")}` : `\\u{${cp.toString(16)}}`;
}

/**
 * Human text made inert: every active character (a lone ESC or BEL, a whole ANSI or OSC
 * sequence's introducer, CR, backspace, C1 such as U+009B, bidi overrides) is replaced by a
 * visible escape such as `\x1b`, so `\e]0;pwned\a` prints as the text `\x1b]0;pwned\x07`.
 * Newlines and tabs stay. The one function every human printer uses. Pure.
 */
export function inertText(text: string): string {
  return text.replace(ACTIVE_CHARS, visibleEscape);
}

/**
 * JSON text whose string contents cannot act on a terminal either: `JSON.stringify` already
 * escapes C0 controls; DEL, C1 and the separators/bidi controls are written as `\u` + four hex digits too
 * (the parsed value is unchanged).
 */
export function inertJson(json: string): string {
  return json.replace(/[\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g, (c) => `\\u${(c.codePointAt(0) ?? 0).toString(16).padStart(4, "0")}`);
}

/** Scrub secret values and secret shapes for the user's own terminal (local paths are kept). */
export function scrubForTerminal(text: string, secrets: readonly string[]): string {
  return redact(text, secrets, { paths: false });
}

/**
 * A result envelope scrubbed for the user's terminal, string by string (keys too) before it is
 * serialised, so a secret that happens to be `true` or a number can never break the JSON document.
 */
export function scrubJsonForTerminal(value: unknown, secrets: readonly string[]): string {
  const r = createRedactor(secrets, { paths: false });
  const deep = (v: unknown): unknown => {
    if (typeof v === "string") return r.text(v);
    if (Array.isArray(v)) return v.map(deep);
    if (v && typeof v === "object") return Object.fromEntries(Object.entries(v as Record<string, unknown>).map(([k, x]) => [r.text(k), deep(x)]));
    return v;
  };
  return inertJson(JSON.stringify(deep(value), null, 2));
}

/** Builds a failure envelope from an error. Unknown throws become `HUMANISH_UNEXPECTED`. */
export function failure(schema: string, e: unknown, extra: Record<string, unknown> = {}): CommandOutcome {
  const err =
    e instanceof HumanishError
      ? e.toJSON()
      : {
          code: "HUMANISH_UNEXPECTED",
          message: errorMessage(e),
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
    io.stdout(`${scrubJsonForTerminal(result, secrets)}\n`);
  } else {
    if (outcome.human) io.stdout(`${inertText(scrubForTerminal(outcome.human, secrets))}\n`);
    if (!result.ok && result.error) {
      const lines = [`humanish ${command} failed: ${result.error.message}`, `code: ${result.error.code}`];
      if (result.error.next) lines.push(`next: ${result.error.next}`);
      io.stderr(`${inertText(scrubForTerminal(lines.join("\n"), secrets))}\n`);
    }
  }
  return outcome.exitCode ?? (result.ok ? 0 : 2);
}

/**
 * The one error type every layer throws for a known failure.
 *
 * Each failure has a stable `HUMANISH_*` code, a message that
 * names the field, file or resource involved, and a `next` step a person can take. The CLI
 * turns it into `error: {code, message, next}` in `--json` envelopes, or the three human lines
 * `humanish <cmd> failed: …` / `code: …` / `next: …` on stderr.
 */
export class HumanishError extends Error {
  /** Stable machine code, e.g. `HUMANISH_LAB_INVALID`. */
  readonly code: string;
  /** What a person should do next (a command or an edit), or undefined when nothing helps. */
  readonly next: string | undefined;
  /** Extra structured facts for `--json` consumers (never secret values). */
  readonly details: Record<string, unknown> | undefined;

  constructor(code: string, message: string, opts: { next?: string; details?: Record<string, unknown>; cause?: unknown } = {}) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.name = "HumanishError";
    this.code = code;
    this.next = opts.next;
    this.details = opts.details;
  }

  /** The `error` object of a result envelope. */
  toJSON(): { code: string; message: string; next?: string; details?: Record<string, unknown> } {
    return {
      code: this.code,
      message: this.message,
      ...(this.next ? { next: this.next } : {}),
      ...(this.details ? { details: this.details } : {}),
    };
  }
}

/** True when `e` is a HumanishError (optionally with the given code). */
export function isHumanishError(e: unknown, code?: string): e is HumanishError {
  return e instanceof HumanishError && (code === undefined || e.code === code);
}

/** The message of a thrown value: an Error's `message`, anything else as `String(e)`. */
export function errorMessage(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

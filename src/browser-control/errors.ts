/**
 * The closed executor error vocabulary of browser control.
 *
 * Every failure of an executor — host client, guest dispatcher or the guest desktop driver —
 * is a {@link BrowserControlError} carrying one of twelve {@link BrowserControlErrorCode}s and one of
 * two {@link ActionDisposition}s. Only these two strings ever cross the wire; messages stay local
 * and never contain participant text, URLs or browser error strings.
 */
import { HumanishError } from "../errors.ts";

/** The twelve executor error codes, in reference order. */
export const BROWSER_CONTROL_ERROR_CODES = [
  "executor_closed",
  "executor_not_ready",
  "executor_busy",
  "cancelled",
  "invalid_request",
  "invalid_response",
  "protocol_mismatch",
  "session_revoked",
  "transport_failed",
  "deadline_exceeded",
  "action_rejected",
  "execution_failed",
] as const;

/** One executor error code. */
export type BrowserControlErrorCode = (typeof BROWSER_CONTROL_ERROR_CODES)[number];

/**
 * The two dispositions.
 * - `not_dispatched`: positive evidence that no input could have reached the desktop; the
 *   caller may decide what to do next (the channel may stay usable for `action_rejected`).
 * - `outcome_uncertain`: input may have been dispatched, a write may have happened or an
 *   acknowledgement was lost. Terminal: nothing is retried or replayed.
 */
export const ACTION_DISPOSITIONS = ["not_dispatched", "outcome_uncertain"] as const;

/** One disposition. */
export type ActionDisposition = (typeof ACTION_DISPOSITIONS)[number];

const CODE_SET: ReadonlySet<string> = new Set(BROWSER_CONTROL_ERROR_CODES);
const DISPOSITION_SET: ReadonlySet<string> = new Set(ACTION_DISPOSITIONS);
const genuine = new WeakSet<object>();

/** True when `value` is one of the twelve executor error codes. */
export function isBrowserControlErrorCode(value: unknown): value is BrowserControlErrorCode {
  return typeof value === "string" && CODE_SET.has(value);
}

/** True when `value` is one of the two dispositions. */
export function isActionDisposition(value: unknown): value is ActionDisposition {
  return typeof value === "string" && DISPOSITION_SET.has(value);
}

/** The `HUMANISH_*` code a {@link BrowserControlError} carries for a given executor code. */
export function humanishCodeFor(code: BrowserControlErrorCode): string {
  return `HUMANISH_BROWSER_CONTROL_${code.toUpperCase()}`;
}

const NEXT: Record<BrowserControlErrorCode, string> = {
  executor_closed: "start a new desktop session; a closed browser-control channel never reopens",
  executor_not_ready: "wait for ready() before observing or executing",
  executor_busy: "await the request in flight before sending another; requests are never queued",
  cancelled: "nothing to do unless the abort was unexpected; check the caller's AbortSignal",
  invalid_request: "fix the action or request so it matches the browser-control request and action schemas",
  invalid_response: "the peer sent a malformed frame, reply or PNG; inspect the guest build and restart the desktop",
  protocol_mismatch: "host and guest disagree on identity or sequence; restart the desktop with a fresh identity",
  session_revoked: "the desktop owner withdrew authority; start a new desktop session",
  transport_failed: "the byte channel to the guest failed; check the guest process and restart the desktop",
  deadline_exceeded: "the request or frame took too long; check guest load and restart the desktop",
  action_rejected: "the executor refused the action before dispatch; choose a different action",
  execution_failed: "the executor could not complete; inspect the guest driver and restart the desktop",
};

/**
 * A typed executor failure: `errorCode` + `disposition`, plus a local message.
 *
 * Extends {@link HumanishError}; its `code` is `HUMANISH_BROWSER_CONTROL_<ERROR_CODE>`.
 * Constructed instances are tracked in a WeakSet, so {@link isBrowserControlError} does not accept
 * look-alike objects. Throws `TypeError` if `errorCode` or `disposition` is outside the closed lists.
 */
export class BrowserControlError extends HumanishError {
  /** One of the twelve wire codes. */
  readonly errorCode: BrowserControlErrorCode;
  /** `not_dispatched` or `outcome_uncertain`. */
  readonly disposition: ActionDisposition;

  constructor(errorCode: BrowserControlErrorCode, disposition: ActionDisposition, message?: string, opts: { cause?: unknown } = {}) {
    if (!isBrowserControlErrorCode(errorCode)) throw new TypeError("BrowserControlError: errorCode is not one of the twelve executor error codes");
    if (!isActionDisposition(disposition)) throw new TypeError("BrowserControlError: disposition must be not_dispatched or outcome_uncertain");
    super(humanishCodeFor(errorCode), message ?? `browser control: ${errorCode} (${disposition})`, {
      next: NEXT[errorCode],
      details: { errorCode, disposition },
      ...(opts.cause === undefined ? {} : { cause: opts.cause }),
    });
    this.name = "BrowserControlError";
    this.errorCode = errorCode;
    this.disposition = disposition;
    genuine.add(this);
  }
}

/** True only for instances created by the {@link BrowserControlError} constructor (not look-alikes). */
export function isBrowserControlError(e: unknown): e is BrowserControlError {
  return typeof e === "object" && e !== null && genuine.has(e);
}

/** Shorthand constructor: `browserControlError("executor_busy", "not_dispatched", "…")`. */
export function browserControlError(code: BrowserControlErrorCode, disposition: ActionDisposition, message?: string, cause?: unknown): BrowserControlError {
  return new BrowserControlError(code, disposition, message, cause === undefined ? {} : { cause });
}

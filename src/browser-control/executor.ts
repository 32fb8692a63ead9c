/**
 * The executor seam shared by both ends of browser control.
 */
import { type BrowserControlError, type BrowserControlErrorCode, browserControlError, isBrowserControlError } from "./errors.ts";
import type { BrowserAction, BrowserObservation } from "./schemas.ts";

/**
 * Something that can look at and act on one browser desktop.
 *
 * Implemented by the guest desktop driver (src/guest/) and handed to
 * `attachBrowserControlDispatcher`; the host-side `createBrowserControlClient` returns an object
 * of the same shape that forwards over the channel.
 *
 * Contract for implementers:
 * - Exactly one call at a time. The dispatcher never overlaps calls; an implementation may
 *   refuse an overlapping call with `BrowserControlError("executor_busy", "not_dispatched")`.
 * - `observe(signal)`: capture the current frame. Resolve with PNG bytes (must pass `admitPng`
 *   from src/png: ≤ 8 MiB, 8-bit, non-interlaced, ≤ 4096 px a side), a `stateSignature`
 *   (≤ 64 KiB) and optional `url`/`title`/`text` (≤ 64 KiB each) and `scrollY`. Observing
 *   dispatches no input. A result that arrives after `signal` aborted is dropped.
 * - `execute(action, signal)`: validate the whole action first, then dispatch native input.
 *   Resolve (with nothing) only after the input was sent. Check `signal.aborted` synchronously
 *   immediately before every native input step; once it is aborted send nothing more.
 *   `signal` aborts on owner revocation, channel loss or the 35 s request deadline.
 * - Failures: throw `BrowserControlError(code, disposition)` from ./errors.ts with a code from the
 *   closed list of twelve.
 *     · `not_dispatched` ONLY with positive evidence that no input reached the desktop, e.g.
 *       `action_rejected`/`not_dispatched` when the action was refused before the first input
 *       (off-screen point, unknown key, empty text) — the channel stays open for that one;
 *       `session_revoked`/`not_dispatched` when the signal aborted before any input.
 *     · `outcome_uncertain` after any input may have been sent (partial drag, text half typed,
 *       a helper that was killed): e.g. `execution_failed`/`outcome_uncertain`. Terminal.
 *   Any other thrown value (not created by the BrowserControlError constructor) is treated as
 *   `action_rejected`/`outcome_uncertain` once the executor was invoked, and closes the channel.
 *   Error messages stay on the guest: only `{code, disposition}` crosses the wire.
 * - Nothing is retried or replayed by anyone; after an `outcome_uncertain` failure the desktop
 *   session is over.
 */
export interface BrowserExecutor {
  /** Capture one observation. No input is dispatched. */
  observe(signal: AbortSignal): Promise<BrowserObservation>;
  /** Dispatch one action; resolves once the input was sent. */
  execute(action: BrowserAction, signal: AbortSignal): Promise<void>;
}

/**
 * The host-side executor returned by `createBrowserControlClient`: a {@link BrowserExecutor}
 * whose `signal` is optional and which declares `stallRecovery: "fail_closed"` — a stalled or
 * uncertain request is never retried; the loop must end the session.
 */
export interface BrowserControlExecutor {
  readonly stallRecovery: "fail_closed";
  observe(signal?: AbortSignal): Promise<BrowserObservation>;
  execute(action: BrowserAction, signal?: AbortSignal): Promise<void>;
}

/**
 * An executor's `wait` step: resolves after `ms`, or rejects as soon as `signal` aborts, so a
 * revoked session never sits out a wait.
 * @throws BrowserControlError `session_revoked`/`not_dispatched` when `signal` is (or becomes) aborted.
 */
export function abortableSleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(browserControlError("session_revoked", "not_dispatched", "aborted"));
    const t = setTimeout(() => {
      signal.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(t);
      reject(browserControlError("session_revoked", "not_dispatched", "aborted during wait"));
    };
    signal.addEventListener("abort", onAbort, { once: true });
  });
}

/**
 * The session flags every desktop executor keeps (the local guest's and the E2B desktop's): one
 * call at a time, and terminal once a failure ended the session.
 */
export class ExecutorSession {
  /** A call is in flight. */
  busy = false;
  /** An outcome-uncertain (or unrecoverable) failure ended the session. */
  terminal = false;

  /** @param onTerminal called once, when the session becomes terminal. */
  constructor(private readonly onTerminal?: () => void) {}

  /**
   * Start a call.
   * @throws BrowserControlError `executor_closed`/`not_dispatched` once terminal,
   *   `executor_busy`/`not_dispatched` while another call is in flight.
   */
  enter(): void {
    if (this.terminal) throw browserControlError("executor_closed", "not_dispatched", "session ended");
    if (this.busy) throw browserControlError("executor_busy", "not_dispatched", "another call is in flight");
    this.busy = true;
  }

  /** End the session (idempotent; `onTerminal` runs the first time only). */
  end(): void {
    if (this.terminal) return;
    this.terminal = true;
    this.onTerminal?.();
  }
}

/**
 * The error an executor's `observe` throws for a failed capture `e`: a browser-control error as
 * it is, anything else `execution_failed`/`not_dispatched` (observing sends no input). The
 * session ends either way.
 */
export function captureFailure(e: unknown): BrowserControlError {
  return isBrowserControlError(e) ? e : browserControlError("execution_failed", "not_dispatched", "capture failed", e);
}

/** Where an `execute` call stood when it failed. */
export interface ExecuteProgress {
  /** Some native input was sent. */
  dispatched: boolean;
  /** A mouse button is (or may be) held down. */
  heldMouse: boolean;
  signal: AbortSignal;
}

/**
 * Settle a failed `execute`: release a held mouse button with `mouseUp` (never after revocation,
 * where a release can click or drop; a failed release is ignored), then name the error to throw
 * and whether it ends the session. Before any input: a browser-control error as it is (only a
 * refusal, `action_rejected`/`not_dispatched`, leaves the session usable), else
 * `session_revoked`/`not_dispatched` when the signal aborted, else
 * `execution_failed`/`not_dispatched`. After input: the same code (`execution_failed` for an
 * untyped error) as `outcome_uncertain`, which ends the session.
 */
export async function settleFailedExecute(
  e: unknown,
  at: ExecuteProgress,
  mouseUp: () => Promise<unknown>,
): Promise<{ error: BrowserControlError; endsSession: boolean }> {
  if (at.heldMouse && !at.signal.aborted) {
    try {
      await mouseUp();
    } catch {
      /* the session ends either way */
    }
  }
  if (!at.dispatched) {
    if (isBrowserControlError(e)) return { error: e, endsSession: !(e.errorCode === "action_rejected" && e.disposition === "not_dispatched") };
    if (at.signal.aborted) return { error: browserControlError("session_revoked", "not_dispatched", "aborted", e), endsSession: true };
    return { error: browserControlError("execution_failed", "not_dispatched", "could not prepare the action", e), endsSession: true };
  }
  const code: BrowserControlErrorCode = isBrowserControlError(e) ? e.errorCode : "execution_failed";
  return { error: browserControlError(code, "outcome_uncertain", "failed after input was dispatched", e), endsSession: true };
}

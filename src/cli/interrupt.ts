/**
 * SIGINT/SIGTERM for commands that have something to finish before they exit (a study's
 * teardown, an analysis attempt's diagnostics, an export between two files).
 *
 * A trap turns the first signal into an aborted `AbortSignal` the command observes; the command
 * cleans up and returns, and the CLI then exits 130 (SIGINT) or 143 (SIGTERM) — the shell's own
 * numbers for a process ended by that signal — with `ok: false` and `HUMANISH_INTERRUPTED`.
 * Later signals never cut the cleanup short (each cleanup step has its own deadline); they are
 * only reported. Commands with nothing to clean up keep the default action: the signal ends
 * them at once, which a shell reports as the same 130/143.
 */
import type { CommandOutcome } from "./output.ts";

/** The signals a trap catches. */
export type TrappedSignal = "SIGINT" | "SIGTERM";

/** Exit code after each signal, once cleanup has run. */
export const SIGNAL_EXIT_CODE: Record<TrappedSignal, number> = { SIGINT: 130, SIGTERM: 143 };

/** A set trap: `signal` aborts (reason: the signal's name) on the first SIGINT/SIGTERM. */
export interface InterruptTrap {
  readonly signal: AbortSignal;
  /** The first signal received, if any. */
  readonly received: TrappedSignal | undefined;
  /** Removes the handlers (idempotent); the default action applies again. */
  release(): void;
}

/** Callbacks of {@link trapInterrupts}: `first` on the signal that decides, `repeat` on each later one. */
export interface TrapHooks {
  first?: (sig: TrappedSignal) => void;
  repeat?: (sig: TrappedSignal, count: number) => void;
}

/** Catch SIGINT and SIGTERM until {@link InterruptTrap.release}. */
export function trapInterrupts(hooks: TrapHooks = {}): InterruptTrap {
  const controller = new AbortController();
  let received: TrappedSignal | undefined;
  let repeats = 0;
  const on = (sig: TrappedSignal) => () => {
    if (received === undefined) {
      received = sig;
      hooks.first?.(sig);
      controller.abort(sig);
    } else {
      repeats += 1;
      hooks.repeat?.(sig, repeats);
    }
  };
  const sigint = on("SIGINT");
  const sigterm = on("SIGTERM");
  process.on("SIGINT", sigint);
  process.on("SIGTERM", sigterm);
  let released = false;
  return {
    signal: controller.signal,
    get received() {
      return received;
    },
    release() {
      if (released) return;
      released = true;
      process.off("SIGINT", sigint);
      process.off("SIGTERM", sigterm);
    },
  };
}

/**
 * `outcome` as an interrupted command's: exit 130/143, `ok: false`, `interrupted`, and the error
 * `HUMANISH_INTERRUPTED` (an error the command reported on its way out, usually the abort
 * itself, is kept under `details.error`). What the command did write, and says in its result,
 * is kept.
 */
export function interruptedOutcome(outcome: CommandOutcome, sig: TrappedSignal, command: string): CommandOutcome {
  const prior = outcome.result.error;
  const error = {
    code: "HUMANISH_INTERRUPTED",
    message: `humanish ${command} was interrupted by ${sig}; it stopped after the step under way, and what it had finished is kept`,
    next: `run \`humanish ${command}\` again when you are ready`,
    ...(prior ? { details: { error: prior } } : {}),
  };
  return { ...outcome, result: { ...outcome.result, ok: false, interrupted: sig, error }, exitCode: SIGNAL_EXIT_CODE[sig] };
}

/** The error a cooperative command throws when it sees the trap's signal between two steps. */
export function interruptedReason(signal: AbortSignal): TrappedSignal {
  return signal.reason === "SIGTERM" ? "SIGTERM" : "SIGINT";
}

/**
 * Polling a condition until a deadline: the one loop behind every "wait until the page shows
 * it" of the desktops (the guest's page loads, focus moves and navigations, the E2B desktop's
 * page probes). A leaf: it imports nothing, so the guest and the host may both use it.
 */

/** Options of {@link pollUntil}. */
export interface PollOptions {
  /** How long to keep asking, ms from the call; the first check always runs. */
  timeoutMs: number;
  /** Pause between two checks, ms. */
  intervalMs: number;
  /** Stop asking (resolve `false`) once it is aborted; the pause itself is not cut short. */
  signal?: AbortSignal;
}

/**
 * Run `check` until it returns `true`, then resolve `true`; after a check that did not hold,
 * resolve `false` once `timeoutMs` have passed or `signal` aborted, else pause `intervalMs` and
 * ask again. `check` is given the time left before the deadline (ms, at least 1), for a bound
 * of its own. A throw from `check` is not caught: it rejects the poll.
 */
export async function pollUntil(check: (remainingMs: number) => Promise<boolean>, opts: PollOptions): Promise<boolean> {
  const deadline = Date.now() + opts.timeoutMs;
  for (;;) {
    if (await check(Math.max(1, deadline - Date.now()))) return true;
    if (Date.now() >= deadline || opts.signal?.aborted) return false;
    await Bun.sleep(opts.intervalMs);
  }
}

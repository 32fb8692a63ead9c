/**
 * Waiting on a condition instead of sleeping a guessed time: a test that needs "the ledger line
 * is written" or "the request reached the server" polls for exactly that, so it passes as soon
 * as it is true on a fast machine and still passes on a slow one.
 */

/**
 * Resolves once `cond()` is true (checked now, then every `everyMs`, default 10). Throws naming
 * `what` when it is still false after `failAfterMs` (default 30000) — a bound that only turns a
 * hang into a readable failure, never one the passing case gets near.
 */
export async function waitUntil(cond: () => boolean | Promise<boolean>, what: string, opts: { everyMs?: number; failAfterMs?: number } = {}): Promise<void> {
  const end = Date.now() + (opts.failAfterMs ?? 30_000);
  while (!(await cond())) {
    if (Date.now() > end) throw new Error(`still waiting for ${what} after ${opts.failAfterMs ?? 30_000} ms`);
    await Bun.sleep(opts.everyMs ?? 10);
  }
}

/** A promise the test resolves when it chooses (`open()`), to hold a fake at a point of its script. */
export function gate(): { promise: Promise<void>; open: () => void } {
  let open!: () => void;
  const promise = new Promise<void>((r) => {
    open = r;
  });
  return { promise, open };
}

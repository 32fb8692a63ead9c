/**
 * The capacity pool (pure logic): slots up to the limit, waiting for releases in flight instead
 * of refusing, and refusing at once when nothing is being released.
 */
import { describe, expect, test } from "bun:test";
import { SlotPool } from "../../src/env/sessions.ts";

/** `p` with a flag that turns true once it settles. */
function settledFlag<T>(p: Promise<T>): { promise: Promise<T>; settled: boolean } {
  const out = { promise: p, settled: false };
  p.then(
    () => {
      out.settled = true;
    },
    () => {
      out.settled = true;
    },
  );
  return out;
}

/** A few event-loop turns: long enough for anything not waiting on an event to have settled. */
async function turns(): Promise<void> {
  for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
}

describe("SlotPool", () => {
  test("takes up to max, then refuses with HUMANISH_ENV_CAPACITY naming the limit and the counts", async () => {
    const pool = new SlotPool(2, 1000);
    const a = await pool.acquire();
    await pool.acquire();
    const refused = await pool.acquire().catch((e) => e);
    expect(refused).toMatchObject({ code: "HUMANISH_ENV_CAPACITY", details: { active_sessions: 2, max_sessions: 2 } });
    expect(refused.message).toContain("2 of 2");
    a.free();
    a.free();
    expect(pool.inUse).toBe(1);
    await pool.acquire();
    expect(pool.inUse).toBe(2);
  });

  test("a newcomer at the limit waits for a slot whose release is in flight, then gets it", async () => {
    // waitMs far beyond the test's own timeout: the newcomer must be parked, not timed out.
    const pool = new SlotPool(1, 600_000);
    const a = pool.tryAcquire()!;
    a.releasing();
    const waiting = settledFlag(pool.acquire());
    await turns();
    expect(waiting.settled).toBe(false);
    a.free();
    const b = await waiting.promise;
    expect(b.status).toBe("held");
    expect(pool.inUse).toBe(1);
  });

  test("a release that comes back unconfirmed (slot held again) turns the wait into a refusal", async () => {
    const pool = new SlotPool(1, 600_000);
    const a = pool.tryAcquire()!;
    a.releasing();
    const waiting = settledFlag(pool.acquire().catch((e) => e));
    await turns();
    expect(waiting.settled).toBe(false);
    a.hold();
    expect(await waiting.promise).toMatchObject({ code: "HUMANISH_ENV_CAPACITY" });
    expect(pool.inUse).toBe(1);
  });

  test("the wait is bounded by waitMs", async () => {
    // Nothing ever frees the slot: only the bound can end the wait (else the test times out).
    const pool = new SlotPool(1, 100);
    pool.tryAcquire()!.releasing();
    expect(await pool.acquire().catch((e) => e)).toMatchObject({ code: "HUMANISH_ENV_CAPACITY" });
  });

  test("simultaneous acquirers at the limit: exactly the free count get in", async () => {
    const pool = new SlotPool(2, 0);
    const results = await Promise.allSettled([pool.acquire(), pool.acquire(), pool.acquire(), pool.acquire()]);
    expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(2);
    expect(pool.inUse).toBe(2);
  });
});

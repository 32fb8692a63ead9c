/**
 * The capacity pool (pure logic): slots up to the limit, waiting for releases in flight instead
 * of refusing, and refusing at once when nothing is being released.
 */
import { describe, expect, test } from "bun:test";
import { SlotPool } from "../../src/env/sessions.ts";

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
    const pool = new SlotPool(1, 5000);
    const a = pool.tryAcquire()!;
    a.releasing();
    const started = Date.now();
    const waiting = pool.acquire();
    setTimeout(() => a.free(), 150);
    const b = await waiting;
    expect(Date.now() - started).toBeGreaterThanOrEqual(100);
    expect(b.status).toBe("held");
    expect(pool.inUse).toBe(1);
  });

  test("a release that comes back unconfirmed (slot held again) turns the wait into a refusal", async () => {
    const pool = new SlotPool(1, 5000);
    const a = pool.tryAcquire()!;
    a.releasing();
    const waiting = pool.acquire().catch((e) => e);
    setTimeout(() => a.hold(), 50);
    expect(await waiting).toMatchObject({ code: "HUMANISH_ENV_CAPACITY" });
    expect(pool.inUse).toBe(1);
  });

  test("the wait is bounded by waitMs", async () => {
    const pool = new SlotPool(1, 100);
    pool.tryAcquire()!.releasing();
    const started = Date.now();
    expect(await pool.acquire().catch((e) => e)).toMatchObject({ code: "HUMANISH_ENV_CAPACITY" });
    expect(Date.now() - started).toBeLessThan(2000);
  });

  test("simultaneous acquirers at the limit: exactly the free count get in", async () => {
    const pool = new SlotPool(2, 0);
    const results = await Promise.allSettled([pool.acquire(), pool.acquire(), pool.acquire(), pool.acquire()]);
    expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(2);
    expect(pool.inUse).toBe(2);
  });
});

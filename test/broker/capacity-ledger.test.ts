import { describe, expect, test } from "bun:test";
import { BrokerCore, type BrokerError, createCapacityLedger, isBrokerError } from "../../src/broker/index.ts";
import { rng } from "../support/rng.ts";
import { at, OTHER_BOOT, seededEntropy } from "./support.ts";

function ledger(policy = {}) {
  return createCapacityLedger({ perStudy: 2, globalSlots: 2, ...policy }, { entropy: seededEntropy(3), clock: at(1000) });
}

function code(fn: () => unknown): string {
  try {
    fn();
  } catch (e) {
    if (isBrokerError(e)) return e.brokerCode;
    throw e;
  }
  return "ok";
}

describe("createCapacityLedger: the runner's seat slots", () => {
  test("a seat's slot is reserved before create and freed only by a confirmed absence", () => {
    const l = ledger();
    expect(l.mode).toBe("accepting");
    const r = l.reserve("seat-1");
    if (!r.ok) throw new Error(r.code);
    expect(r.slot.state).toBe("reserved");
    expect(r.slot.identity).toEqual({
      installation: l.core.installation,
      boot: "b".repeat(32),
      study: l.study,
      allocation: expect.stringMatching(/^[0-9a-f]{32}$/),
    });
    expect(l.beginCreate("seat-1").state).toBe("creating");
    expect(l.recordOutcome("seat-1", "present").state).toBe("present");
    expect(l.usage()).toEqual({ used: 1, perStudy: 2, globalSlots: 2 });
    expect(l.confirmAbsent("seat-1").state).toBe("absent");
    expect(l.usage().used).toBe(0);
  });

  test("reserve is idempotent per seat and reports capacity_exhausted instead of throwing", () => {
    const l = ledger();
    const a = l.reserve("a");
    expect(l.reserve("a")).toEqual(a);
    expect(l.reserve("b").ok).toBe(true);
    expect(l.reserve("c")).toEqual({ ok: false, code: "capacity_exhausted" });
    l.beginCreate("a");
    l.recordOutcome("a", "unknown");
    expect(l.slot("a")?.state).toBe("unresolved");
    expect(l.reserve("c")).toEqual({ ok: false, code: "capacity_exhausted" }); // an unresolved create keeps its slot
    l.confirmAbsent("a");
    expect(l.reserve("c").ok).toBe(true);
    expect(l.slot("never")).toBeUndefined();
    expect(code(() => l.beginCreate("never"))).toBe("invalid_owner_fact");
    expect(code(() => l.reserve(""))).toBe("invalid_request");
  });

  test("release ends the study: held slots become releasing and stay pending until confirmed absent", () => {
    const l = ledger();
    l.reserve("a");
    l.reserve("b");
    l.beginCreate("a");
    l.recordOutcome("a", "present");
    l.confirmAbsent("b");
    const items = l.release();
    expect(items).toEqual([{ seatId: "a", identity: l.slot("a")!.identity }]);
    expect(l.pendingCleanup()).toEqual(items);
    expect(l.slot("a")?.state).toBe("releasing");
    expect(l.reserve("c")).toEqual({ ok: false, code: "lease_inactive" });
    expect(code(() => l.renew())).toBe("lease_inactive");
    l.confirmAbsent("a");
    expect(l.pendingCleanup()).toEqual([]);
  });

  test("renew keeps the study alive past the ttl; without it the study expires at the lease", () => {
    const l = ledger({ ttlMs: 10_000 });
    l.activate();
    for (let ms = 5000; ms <= 60_000; ms += 5000) {
      l.advance(at(ms));
      expect(l.renew().state).toBe("active");
    }
    l.reserve("a");
    const items = l.advance(at(70_000));
    expect(items.map((i) => i.seatId)).toEqual(["a"]);
    expect(code(() => l.renew())).toBe("lease_inactive");
    expect(l.mode).toBe("accepting");
  });

  test("a clock discontinuity sends every held slot to cleanup and the ledger to reconciliation for good", () => {
    const l = ledger();
    l.reserve("a");
    l.beginCreate("a");
    expect(l.advance(at(2000, OTHER_BOOT)).map((i) => i.seatId)).toEqual(["a"]);
    expect(l.mode).toBe("reconciliation");
    expect(code(() => l.renew())).toBe("reconciliation_required");
    expect(l.reserve("b")).toEqual({ ok: false, code: "reconciliation_required" });
    const stop = [{ seatId: "a", identity: l.slot("a")!.identity }];
    expect(l.release()).toEqual(stop);
    expect(l.pendingCleanup()).toEqual(stop);
    expect(l.recordOutcome("a", "present").state).toBe("releasing");
    expect(l.confirmAbsent("a").state).toBe("absent");
    expect(l.release()).toEqual([]);
  });

  test("a sleep flag counts once, when first seen: requests re-send the latest sample without it", () => {
    // A sleep reported with the creation sample happened before the ledger existed.
    const l = createCapacityLedger({}, { entropy: seededEntropy(3), clock: at(1000, "b".repeat(32), true) });
    expect(l.reserve("a").ok).toBe(true);
    expect(l.mode).toBe("accepting");
    l.advance(at(1600, "b".repeat(32), true));
    expect(l.mode).toBe("reconciliation");
    expect(l.slot("a")?.state).toBe("releasing");
  });

  test("the ledger dump restores into a reconciliation core that still knows every seat's identity", () => {
    const l = ledger();
    l.reserve("a");
    const id = l.slot("a")!.identity;
    const restored = BrokerCore.restore(l.core.dumpLedger(), {}, { entropy: seededEntropy(4), clock: at(5000, OTHER_BOOT) });
    expect(restored.pendingCleanup().map((e) => e.identity)).toEqual([id]);
  });

  test("bad ports are refused with broker codes", () => {
    const err = (() => {
      try {
        createCapacityLedger({}, { entropy: seededEntropy(1), clock: at(0), peerUid: -5 });
      } catch (e) {
        return e as BrokerError;
      }
    })();
    expect(err?.brokerCode).toBe("invalid_request");
    expect(code(() => createCapacityLedger({ perStudy: 9 }, { entropy: seededEntropy(1), clock: at(0) }))).toBe("invalid_policy");
    expect(code(() => createCapacityLedger({}, { entropy: () => new Uint8Array(0), clock: at(0) }))).toBe("entropy_failed");
    expect(code(() => createCapacityLedger({}, { entropy: seededEntropy(1), clock: { bootId: "x" } as never }))).toBe("invalid_clock");
  });
});

describe("capacity ledger under random seat schedules (seeded)", () => {
  test("300 schedules × 100 steps: slots held = seats not absent ≤ perStudy; refusals only at the limit; cleanup = releasing seats", () => {
    let steps = 0;
    for (let seed = 1; seed <= 300; seed++) {
      const r = rng(seed);
      const perStudy = 1 + Math.floor(r() * 4);
      const l = createCapacityLedger({ perStudy, maxAttemptsPerStudy: 32, ttlMs: 5000 }, { entropy: seededEntropy(seed), clock: at(0) });
      const seats = Array.from({ length: 8 }, (_, i) => `seat-${i}`);
      let ms = 0;
      for (let i = 0; i < 100; i++, steps++) {
        const seat = seats[Math.floor(r() * seats.length)]!;
        const k = r();
        const held = () => seats.filter((s) => (l.slot(s)?.state ?? "absent") !== "absent").length;
        if (k < 0.3) {
          const before = held();
          const res = l.reserve(seat);
          if (!res.ok && res.code === "capacity_exhausted") expect(before).toBeGreaterThanOrEqual(perStudy);
        } else if (k < 0.45) code(() => l.beginCreate(seat));
        else if (k < 0.6) code(() => l.recordOutcome(seat, r() < 0.7 ? "present" : "unknown"));
        else if (k < 0.8) code(() => l.confirmAbsent(seat));
        else if (k < 0.95) {
          ms += Math.floor(r() * 2000);
          l.advance(at(ms));
          code(() => l.renew());
        } else l.release();
        expect(l.usage().used).toBe(held());
        expect(l.usage().used).toBeLessThanOrEqual(perStudy);
        const releasing = seats.filter((s) => l.slot(s)?.state === "releasing").sort();
        expect(
          l
            .pendingCleanup()
            .map((c) => c.seatId)
            .sort(),
        ).toEqual(releasing);
      }
    }
    expect(steps).toBe(30_000);
  }, 30_000);
});

import { describe, expect, test } from "bun:test";
import { BrokerCore, BrokerError, DEFAULT_POLICY, isBrokerError, POLICY_BOUNDS, resolvePolicy } from "../../src/broker/index.ts";
import { at, seededEntropy } from "./support.ts";

function invalid(input: unknown): void {
  let err: unknown;
  try {
    resolvePolicy(input as never);
  } catch (e) {
    err = e;
  }
  expect(isBrokerError(err, "invalid_policy")).toBe(true);
}

describe("resolvePolicy", () => {
  test("defaults are the upstream ones and frozen", () => {
    const p = resolvePolicy();
    expect(p).toEqual({
      perStudy: 4,
      globalSlots: 8,
      maxStudies: 32,
      maxAttemptsPerStudy: 16,
      ttlMs: 20_000,
      startupCapMs: 60_000,
      studyCapMs: 1_800_000,
      authorizedUids: [],
    });
    expect(Object.isFrozen(p)).toBe(true);
    expect(Object.isFrozen(p.authorizedUids)).toBe(true);
    expect(DEFAULT_POLICY.perStudy).toBe(4);
  });

  test("every bound is inclusive at both ends and refused just outside", () => {
    for (const [key, [lo, hi]] of Object.entries(POLICY_BOUNDS)) {
      // Keep the cross-field rules satisfiable while probing one field.
      const base =
        key === "perStudy"
          ? { globalSlots: 8 }
          : key === "globalSlots"
            ? { perStudy: 1 }
            : key === "startupCapMs"
              ? { studyCapMs: 86_400_000 }
              : key === "studyCapMs"
                ? { startupCapMs: 1 }
                : {};
      expect(resolvePolicy({ ...base, [key]: lo })[key as keyof typeof POLICY_BOUNDS]).toBe(lo);
      expect(resolvePolicy({ ...base, [key]: hi })[key as keyof typeof POLICY_BOUNDS]).toBe(hi);
      invalid({ ...base, [key]: lo - 1 });
      invalid({ ...base, [key]: hi + 1 });
      invalid({ ...base, [key]: lo + 0.5 });
      invalid({ ...base, [key]: String(lo) });
      invalid({ ...base, [key]: Number.NaN });
    }
  });

  test("cross-field rules: perStudy ≤ globalSlots, startupCapMs ≤ studyCapMs", () => {
    invalid({ perStudy: 4, globalSlots: 3 });
    expect(resolvePolicy({ perStudy: 3, globalSlots: 3 }).perStudy).toBe(3);
    invalid({ startupCapMs: 60_001, studyCapMs: 60_000 });
    expect(resolvePolicy({ startupCapMs: 60_000, studyCapMs: 60_000 }).startupCapMs).toBe(60_000);
  });

  test("unknown keys, bad uids and non-objects are refused; undefined fields take defaults; uids are de-duplicated", () => {
    invalid({ perstudy: 2 });
    invalid({ slots: 2 });
    invalid({ authorizedUids: [-1] });
    invalid({ authorizedUids: [2 ** 32] });
    invalid({ authorizedUids: ["1000"] });
    invalid({ authorizedUids: 1000 });
    invalid(null);
    expect(resolvePolicy({ perStudy: undefined }).perStudy).toBe(4);
    expect(resolvePolicy({ authorizedUids: [5, 5, 0] }).authorizedUids).toEqual([5, 0]);
  });

  test("the core refuses an invalid policy at create and restore", () => {
    expect(() => BrokerCore.create({ globalSlots: 9 }, { entropy: seededEntropy(1), clock: at(0) })).toThrow(BrokerError);
    expect(() => BrokerCore.restore(new Uint8Array(), { ttlMs: 0 }, { entropy: seededEntropy(1), clock: at(0) })).toThrow(BrokerError);
  });

  test("an unknown code cannot be constructed", () => {
    expect(() => new BrokerError("oops" as never)).toThrow(TypeError);
  });
});

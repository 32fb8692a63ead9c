/**
 * Broker policy: the slot limits and time caps every decision is measured against.
 */
import { brokerError } from "./errors.ts";

/** Limits of one broker core. All times in ms of the owner's boot clock. */
export interface Policy {
  /** Slots one study may hold at once (non-absent allocations), 1–4 and at most `globalSlots`. Default 4. */
  perStudy: number;
  /** Slots all studies may hold at once, 1–8. Default 8. */
  globalSlots: number;
  /** Studies the ledger may ever hold, terminal ones included (tombstones are never evicted), 1–64. Default 32. */
  maxStudies: number;
  /** Allocation attempts one study may ever make, absent ones included, 1–32. Default 16. */
  maxAttemptsPerStudy: number;
  /** Lease length granted by acquire and renew, 1–60,000 ms. Default 20,000. */
  ttlMs: number;
  /** Time a study may stay in `startup` before it expires, 1–600,000 ms and at most `studyCapMs`. Default 60,000. */
  startupCapMs: number;
  /** Total lifetime of a study, 1–86,400,000 ms. Default 1,800,000. */
  studyCapMs: number;
  /** Peer uids allowed to send requests (integers 0…2^32−1). Default empty: nobody. */
  authorizedUids: readonly number[];
}

/** The upstream defaults. */
export const DEFAULT_POLICY: Readonly<Policy> = Object.freeze({
  perStudy: 4,
  globalSlots: 8,
  maxStudies: 32,
  maxAttemptsPerStudy: 16,
  ttlMs: 20_000,
  startupCapMs: 60_000,
  studyCapMs: 1_800_000,
  authorizedUids: Object.freeze([]) as readonly number[],
});

/** Inclusive bounds of each numeric field. */
export const POLICY_BOUNDS: Readonly<Record<Exclude<keyof Policy, "authorizedUids">, readonly [number, number]>> = {
  perStudy: [1, 4],
  globalSlots: [1, 8],
  maxStudies: [1, 64],
  maxAttemptsPerStudy: [1, 32],
  ttlMs: [1, 60_000],
  startupCapMs: [1, 600_000],
  studyCapMs: [1, 86_400_000],
};

const MAX_UID = 0xffff_ffff;

/**
 * Fill defaults into `input` and check every bound; returns a frozen copy.
 * Throws `BrokerError("invalid_policy", "policy")` for an unknown key, a non-integer, a value out
 * of bounds, `perStudy > globalSlots`, `startupCapMs > studyCapMs`, or a bad uid.
 */
export function resolvePolicy(input: Partial<Policy> = {}): Readonly<Policy> {
  if (typeof input !== "object" || input === null) throw brokerError("invalid_policy", "policy");
  for (const k of Object.keys(input)) if (!(k in DEFAULT_POLICY)) throw brokerError("invalid_policy", "policy");
  const p: Policy = { ...DEFAULT_POLICY, ...stripUndefined(input) };
  for (const [k, [lo, hi]] of Object.entries(POLICY_BOUNDS)) {
    const v = p[k as keyof typeof POLICY_BOUNDS];
    if (!Number.isInteger(v) || v < lo || v > hi) throw brokerError("invalid_policy", "policy");
  }
  if (p.perStudy > p.globalSlots || p.startupCapMs > p.studyCapMs) throw brokerError("invalid_policy", "policy");
  if (!Array.isArray(p.authorizedUids) || p.authorizedUids.some((u) => !Number.isInteger(u) || u < 0 || u > MAX_UID))
    throw brokerError("invalid_policy", "policy");
  return Object.freeze({ ...p, authorizedUids: Object.freeze([...new Set(p.authorizedUids)]) });
}

function stripUndefined(input: Partial<Policy>): Partial<Policy> {
  return Object.fromEntries(Object.entries(input).filter(([, v]) => v !== undefined));
}

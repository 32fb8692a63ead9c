/**
 * Property test of the broker state machine: thousands of seeded random operation sequences
 * (peer requests with random clocks, owner advances with random jumps, rollbacks, reboots and
 * sleeps, creation facts, absences, revocations, hostile bytes, dump/restore), with the ledger's
 * invariants checked after every step. A failure prints its seed and step.
 */
import { describe, expect, test } from "bun:test";
import {
  ALLOCATION_STATES,
  type AllocationIdentity,
  type AllocationState,
  BROKER_ERROR_CODES,
  BrokerCore,
  type ClockSample,
  type Decision,
  encodeRequest,
  isBrokerError,
  isLive,
  type Policy,
  type StudyView,
} from "../../src/broker/index.ts";
import { rng } from "../support/rng.ts";
import { hex, seededEntropy } from "./support.ts";

type R = () => number;
const pick = <T>(r: R, xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
const int = (r: R, lo: number, hi: number) => lo + Math.floor(r() * (hi - lo + 1));

const UIDS = [1000, 1001];
const STRANGER = 4242;
const DISCONTINUITY = new Set(["sleep", "boot_mismatch", "clock_rollback"]);
const NEXT_ALLOWED: Record<AllocationState, readonly AllocationState[]> = {
  reserved: ["reserved", "creating", "releasing", "absent"],
  creating: ["creating", "present", "unresolved", "releasing", "absent"],
  present: ["present", "releasing", "absent"],
  unresolved: ["unresolved", "releasing", "absent"],
  releasing: ["releasing", "absent"],
  absent: ["absent"],
};

interface Known {
  study: string;
  uid: number;
  attempt: string;
  token: string;
  sequence: number;
  allocAttempts: string[];
}

/** Everything the checker remembers across steps of one sequence. */
class World {
  core: BrokerCore;
  readonly policy: Partial<Policy>;
  clock: { bootId: string; ms: number };
  known: Known[] = [];
  acquireAttempts: { uid: number; attempt: string }[] = [];
  identities: AllocationIdentity[] = [];
  tokens: string[] = [];
  terminal = new Map<string, string>();
  allocStates = new Map<string, AllocationState>();
  everReconciled = false;
  counter = 0;
  stats = {
    steps: 0,
    ok: 0,
    refused: 0,
    capacityExhausted: 0,
    restores: 0,
    discontinuities: 0,
    expiries: 0,
    confirmedAbsent: 0,
    hostile: 0,
    hostileDecoded: 0,
  };

  constructor(
    readonly r: R,
    seed: number,
  ) {
    const perStudy = int(r, 1, 4);
    this.policy = {
      perStudy,
      globalSlots: int(r, perStudy, Math.min(8, perStudy + 3)),
      maxStudies: int(r, 1, 6),
      maxAttemptsPerStudy: int(r, 1, 8),
      ttlMs: int(r, 300, 5000),
      authorizedUids: UIDS,
    };
    const studyCapMs = int(r, 2000, 60_000);
    this.policy.studyCapMs = studyCapMs;
    this.policy.startupCapMs = int(r, 1, studyCapMs);
    this.clock = { bootId: hex(seed % 3, 32), ms: int(r, 0, 1_000_000) };
    this.core = BrokerCore.create(this.policy, { entropy: seededEntropy(seed), clock: this.sample() });
  }

  sample(sleepDetected = false): ClockSample {
    return { bootId: this.clock.bootId, boottimeMs: this.clock.ms, sleepDetected };
  }

  fresh(): string {
    return hex(++this.counter);
  }
}

/** Pick the next clock: mostly forward jumps of varied size, rarely backwards, a reboot or a sleep. */
function nextClock(w: World): ClockSample {
  const r = w.r;
  const k = r();
  if (k < 0.005) return { bootId: hex(int(r, 100, 110)), boottimeMs: int(r, 0, 2000), sleepDetected: false };
  if (k < 0.01) return { bootId: w.clock.bootId, boottimeMs: Math.max(0, w.clock.ms - int(r, 1, 500)), sleepDetected: false };
  if (k < 0.015) return { bootId: w.clock.bootId, boottimeMs: w.clock.ms + int(r, 0, 100), sleepDetected: true };
  const jump = pick(r, [0, 0, 1, int(r, 0, 20), int(r, 0, 100), int(r, 0, 1000), int(r, 0, 5000)]);
  return { bootId: w.clock.bootId, boottimeMs: w.clock.ms + jump, sleepDetected: false };
}

function send(w: World, req: Parameters<typeof encodeRequest>[0], uid: number, clock: ClockSample): Decision {
  const d = w.core.handle(encodeRequest(req), { peerUid: uid, clock });
  if (UIDS.includes(uid)) w.clock = { bootId: clock.bootId, ms: clock.boottimeMs };
  if (d.reply.ok) w.stats.ok++;
  else {
    w.stats.refused++;
    expect(BROKER_ERROR_CODES).toContain(d.reply.error);
    expect(Object.keys(d.reply).sort()).toEqual(["error", "ok"]);
  }
  return d;
}

function studyOf(w: World, study: string): StudyView | undefined {
  return w.core.studies().find((s) => s.study === study);
}

function usedBy(w: World, studies = w.core.studies()): { global: number; byStudy: Map<string, number> } {
  const byStudy = new Map<string, number>();
  let global = 0;
  for (const s of studies) {
    const n = s.allocations.filter((a) => a.state !== "absent").length;
    byStudy.set(s.study, n);
    global += n;
  }
  return { global, byStudy };
}

function stepAcquire(w: World, uid: number, clock: ClockSample): void {
  const r = w.r;
  const replay = w.acquireAttempts.length > 0 && r() < 0.3 ? pick(r, w.acquireAttempts) : undefined;
  const attempt = replay?.attempt ?? w.fresh();
  const asUid = replay?.uid ?? uid;
  const before = w.core.studies().length;
  const d = send(w, { operation: "acquire", attempt }, asUid, clock);
  if (replay !== undefined) {
    const k = w.known.find((x) => x.attempt === attempt && x.uid === asUid);
    if (k !== undefined) {
      // A replay: same study, its current view, and never a new capability.
      expect(d.capability).toBeUndefined();
      expect(d.reply.ok).toBe(true);
      if (d.reply.ok && "study" in d.reply) expect(d.reply.study).toEqual(studyOf(w, k.study)!);
      expect(w.core.studies().length).toBe(before);
      return;
    }
  }
  if (!d.reply.ok) {
    expect(d.capability).toBeUndefined();
    expect(w.core.studies().length).toBe(before);
    if (d.reply.error === "ledger_full") expect(before).toBeGreaterThanOrEqual(w.policy.maxStudies!);
    if (d.reply.error === "reconciliation_required") expect(w.core.mode).toBe("reconciliation");
    return;
  }
  const cap = d.capability!;
  expect(w.known.some((k) => k.study === cap.study)).toBe(false);
  const token = cap.reveal();
  w.tokens.push(token);
  w.known.push({ study: cap.study, uid: asUid, attempt, token, sequence: 0, allocAttempts: [] });
  w.acquireAttempts.push({ uid: asUid, attempt });
}

function stepAllocate(w: World, k: Known, clock: ClockSample): void {
  const r = w.r;
  const attempt = k.allocAttempts.length > 0 && r() < 0.25 ? pick(r, k.allocAttempts) : w.fresh();
  const before = usedBy(w);
  const d = send(w, { operation: "allocate", study: k.study, capability: k.token, attempt }, k.uid, clock);
  if (d.reply.ok && d.reply.operation === "allocate") {
    if (!k.allocAttempts.includes(attempt)) k.allocAttempts.push(attempt);
    const fresh = d.effects.filter((e) => e.kind === "allocate_slot");
    if (fresh.length === 1) {
      expect(before.global).toBeLessThan(w.policy.globalSlots!);
      expect(before.byStudy.get(k.study) ?? 0).toBeLessThan(w.policy.perStudy!);
      w.identities.push(fresh[0]!.identity);
      expect(fresh[0]!.identity.allocation).toBe(d.reply.allocation.allocation);
    } else expect(fresh).toHaveLength(0);
  } else if (!d.reply.ok && d.reply.error === "capacity_exhausted") {
    // A refusal is never spurious: one of the limits really is reached.
    w.stats.capacityExhausted++;
    const now = usedBy(w);
    expect(now.global >= w.policy.globalSlots! || (now.byStudy.get(k.study) ?? 0) >= w.policy.perStudy!).toBe(true);
  }
}

function stepPeer(w: World): void {
  const r = w.r;
  const clock = r() < 0.5 ? w.sample() : nextClock(w);
  const uid = r() < 0.03 ? STRANGER : pick(r, UIDS);
  const states = new Map(w.core.studies().map((s) => [s.study, s.state]));
  const live = w.known.filter((x) => isLive(states.get(x.study) ?? "expired"));
  // Mostly address live studies, so sequences explore more than refusals of dead ones.
  const k = live.length > 0 && r() < 0.85 ? pick(r, live) : w.known.length > 0 ? pick(r, w.known) : undefined;
  const op = r();
  if (op < 0.15 || k === undefined) return stepAcquire(w, uid, clock);
  // Sometimes the wrong peer or a forged token: must never gain anything.
  const asUid = r() < 0.05 ? UIDS.find((u) => u !== k.uid)! : k.uid;
  const token = r() < 0.05 ? hex(int(r, 0, 1e9), 64) : k.token;
  const forged = asUid !== k.uid || token !== k.token;
  const kk = forged ? { ...k, uid: asUid, token } : k;
  let d: Decision;
  if (op < 0.5) return stepAllocate(w, kk, clock);
  if (op < 0.72) {
    const sequence = r() < 0.2 ? int(r, 0, k.sequence) || 1 : k.sequence + int(r, 1, 3);
    d = send(w, { operation: "renew", study: k.study, capability: token, sequence }, asUid, clock);
    if (d.reply.ok) {
      expect(sequence).toBeGreaterThan(k.sequence);
      k.sequence = sequence;
    }
  } else if (op < 0.77) d = send(w, { operation: "release", study: k.study, capability: token }, asUid, clock);
  else if (op < 0.9) d = send(w, { operation: "inspect", study: k.study, capability: token }, asUid, clock);
  else d = send(w, { operation: "hello" }, asUid, clock);
  if (forged && d.reply.ok) expect(d.reply.operation).toBe("hello");
}

function stepOwner(w: World): void {
  const r = w.r;
  const id = w.identities.length > 0 ? pick(r, w.identities) : undefined;
  const op = r();
  try {
    if (op < 0.35) {
      const c = nextClock(w);
      w.core.advance(c);
      w.clock = { bootId: c.bootId, ms: c.boottimeMs };
    } else if (op < 0.5 && id) w.core.beginAllocation(id);
    else if (op < 0.65 && id) w.core.recordOutcome(id, pick(r, ["present", "unknown"] as const));
    else if (op < 0.8 && id) {
      w.core.confirmAbsent({ identity: id, creationQuiescent: true });
      w.stats.confirmedAbsent++;
    } else if (op < 0.87 && w.known.length > 0) w.core.activate(pick(r, w.known).study);
    else if (op < 0.92 && w.known.length > 0) w.core.revoke(pick(r, w.known).study);
    else if (op < 0.96) {
      const releasing = w.core.studies().flatMap((s) => s.allocations.filter((a) => a.state === "releasing").map((a) => a.allocation));
      expect(
        w.core
          .pendingCleanup()
          .map((e) => e.identity.allocation)
          .sort(),
      ).toEqual(releasing.sort());
    } else w.core.advance({ bootId: "not-hex", boottimeMs: -1, sleepDetected: false } as ClockSample);
  } catch (e) {
    if (!isBrokerError(e)) throw e;
  }
}

function stepHostile(w: World): void {
  const r = w.r;
  const k = w.known.length > 0 ? pick(r, w.known) : undefined;
  const base = k
    ? `{"version":1,"operation":"allocate","study":"${k.study}","capability":"${k.token}","attempt":"${w.fresh()}"}`
    : `{"version":1,"operation":"acquire","attempt":"${w.fresh()}"}`;
  const b = [...new TextEncoder().encode(base)];
  for (let m = int(r, 1, 3); m > 0; m--) b[int(r, 0, b.length - 1)] = int(r, 0, 255);
  const before = JSON.stringify(w.core.studies());
  const d = w.core.handle(Uint8Array.from(b), { peerUid: pick(r, UIDS), clock: w.sample() });
  w.stats.hostile++;
  // A mangled body that still decodes is a legitimate request; otherwise nothing may change.
  if (!d.reply.ok) {
    expect(BROKER_ERROR_CODES).toContain(d.reply.error);
    if (d.reply.error === "invalid_request") expect(JSON.stringify(w.core.studies())).toBe(before);
    else w.stats.hostileDecoded++;
  } else w.stats.hostileDecoded++;
  if (d.capability !== undefined) {
    // A mutated acquire that still decodes is a real new study: track it like any other.
    const token = d.capability.reveal();
    w.tokens.push(token);
  }
}

function stepRestore(w: World): void {
  const dump = w.core.dumpLedger();
  const text = new TextDecoder().decode(dump);
  for (const t of w.tokens) expect(text.includes(t)).toBe(false);
  const before = w.core.studies();
  const c = nextClock(w);
  w.core = BrokerCore.restore(dump, w.policy, { entropy: seededEntropy(w.counter), clock: c });
  w.clock = { bootId: c.bootId, ms: c.boottimeMs };
  w.stats.restores++;
  expect(w.core.mode).toBe("reconciliation");
  const after = w.core.studies();
  expect(after.map((s) => s.study)).toEqual(before.map((s) => s.study));
  for (const s of after) {
    expect(isLive(s.state)).toBe(false);
    for (const a of s.allocations) expect(["releasing", "absent"]).toContain(a.state);
  }
}

function assert(cond: boolean, what: string): void {
  if (!cond) throw new Error(`invariant broken: ${what}`);
}

/** The invariants, after every step (plain asserts: this runs hundreds of thousands of times). */
function check(w: World): void {
  const studies = w.core.studies();
  const usage = w.core.usage();
  const counted = usedBy(w, studies);
  assert(usage.global === counted.global, "the global slot counter equals the non-absent allocations");
  assert(usage.global <= w.policy.globalSlots!, "global slots within the limit");
  assert(studies.length <= w.policy.maxStudies!, "studies within maxStudies");
  for (const s of studies) {
    assert(usage.byStudy[s.study] === counted.byStudy.get(s.study), "the per-study counter equals its non-absent allocations");
    assert(counted.byStudy.get(s.study)! <= w.policy.perStudy!, "per-study slots within the limit");
    assert(s.allocations.length <= w.policy.maxAttemptsPerStudy!, "attempts within maxAttemptsPerStudy");
    const seen = w.terminal.get(s.study);
    assert(seen === undefined || s.state === seen, "a terminal study keeps its terminal state (never live again)");
    if (!isLive(s.state)) {
      if (seen === undefined) {
        w.terminal.set(s.study, s.state);
        if (DISCONTINUITY.has(s.state)) w.stats.discontinuities++;
        if (s.state === "expired") w.stats.expiries++;
      }
      assert(
        s.allocations.every((a) => a.state === "releasing" || a.state === "absent"),
        "a terminal study holds only releasing or absent allocations",
      );
    } else {
      const expiry = Math.min(s.lease_deadline_ms, s.study_deadline_ms, s.state === "startup" ? s.startup_deadline_ms : Number.POSITIVE_INFINITY);
      assert(w.clock.ms < expiry, "a live study is before all of its deadlines");
      assert(s.lease_deadline_ms <= s.study_deadline_ms, "the lease never outlives the study cap");
      assert(s.state !== "startup" || s.lease_deadline_ms <= s.startup_deadline_ms, "in startup the lease never outlives the startup cap");
      assert(w.core.mode === "accepting", "no live study in reconciliation mode");
    }
    for (const a of s.allocations) {
      assert((ALLOCATION_STATES as readonly string[]).includes(a.state), "allocation state in the closed set");
      const prev = w.allocStates.get(a.allocation);
      assert(prev === undefined || NEXT_ALLOWED[prev].includes(a.state), `allocation transition ${prev} → ${a.state} allowed`);
      w.allocStates.set(a.allocation, a.state);
    }
  }
  assert(!w.everReconciled || w.core.mode === "reconciliation", "reconciliation mode is permanent");
  if (w.core.mode === "reconciliation") w.everReconciled = true;
}

function runSequence(seed: number, steps: number): World["stats"] {
  const r = rng(seed);
  const w = new World(r, seed);
  for (let i = 0; i < steps; i++) {
    const k = r();
    try {
      if (k < 0.55) stepPeer(w);
      else if (k < 0.93) stepOwner(w);
      else if (k < 0.995) stepHostile(w);
      else stepRestore(w);
      check(w);
    } catch (e) {
      throw new Error(`broker fuzz failed at seed ${seed} step ${i}: ${(e as Error).message}`);
    }
    w.stats.steps++;
  }
  return w.stats;
}

describe("broker state machine under random operation sequences", () => {
  const SEQUENCES = 1500;
  const STEPS = 80;
  test(`${SEQUENCES} sequences × ${STEPS} steps keep every invariant`, () => {
    const total = {
      steps: 0,
      ok: 0,
      refused: 0,
      capacityExhausted: 0,
      restores: 0,
      discontinuities: 0,
      expiries: 0,
      confirmedAbsent: 0,
      hostile: 0,
      hostileDecoded: 0,
    };
    for (let seed = 1; seed <= SEQUENCES; seed++) {
      const s = runSequence(seed, STEPS);
      for (const key of Object.keys(total) as (keyof typeof total)[]) total[key] += s[key];
    }
    console.log(`broker fuzz: ${SEQUENCES} sequences, ${JSON.stringify(total)}`);
    // The generator must actually reach the interesting corners, or the invariants prove little.
    expect(total.steps).toBe(SEQUENCES * STEPS);
    expect(total.capacityExhausted).toBeGreaterThan(500);
    expect(total.restores).toBeGreaterThan(500);
    expect(total.discontinuities).toBeGreaterThan(200);
    expect(total.expiries).toBeGreaterThan(500);
    expect(total.confirmedAbsent).toBeGreaterThan(500);
    expect(total.hostile).toBeGreaterThan(500);
  }, 120_000); // CPU-bound and seeded: only a starved machine makes it slow, never a bug
});

/**
 * The peer-facing operations: hello, acquire, allocate, renew, release, inspect.
 *
 * Each takes the core state, the peer's OS uid and a decoded request, and either returns an
 * outcome or throws a BrokerError before changing anything. "Now" is always the owner's last
 * accepted clock sample; a peer never supplies time.
 */
import { Capability, type CapabilityBinding, capabilityHash, randomHex, sameHash } from "./capability.ts";
import { brokerError } from "./errors.ts";
import type { AllocationRecord, AllocationView, BrokerMode, Effect, StudyRecord, StudyView } from "./model.ts";
import { allocationView, isLive, studyView } from "./model.ts";
import type { BrokerRequest } from "./request.ts";
import { attemptKey, type CoreState, identityOf, terminate } from "./state.ts";

/** A successful reply. Views use the upstream snake_case wire names. */
export type BrokerSuccess =
  | { ok: true; operation: "hello"; version: 1; mode: BrokerMode }
  | { ok: true; operation: "acquire" | "renew" | "release" | "inspect"; study: StudyView }
  | { ok: true; operation: "allocate"; study: StudyView; allocation: AllocationView };

/** What one operation produced (before the core wraps it into a Decision). */
export interface Outcome {
  reply: BrokerSuccess;
  effects: Effect[];
  capability?: Capability;
}

/** Apply request `req` from peer `uid`. Throws BrokerError with the request's error code. */
export function applyRequest(st: CoreState, uid: number, req: BrokerRequest): Outcome {
  switch (req.operation) {
    case "hello":
      return { reply: { ok: true, operation: "hello", version: 1, mode: st.mode }, effects: [] };
    case "acquire":
      return acquire(st, uid, req.attempt);
    case "allocate":
      return allocate(st, authenticate(st, uid, req.study, req.capability), req.attempt);
    case "renew":
      return renew(st, authenticate(st, uid, req.study, req.capability), req.sequence);
    case "release": {
      const s = authenticate(st, uid, req.study, req.capability);
      const effects = terminate(st, s, "revoked");
      return { reply: { ok: true, operation: "release", study: studyView(s) }, effects };
    }
    case "inspect":
      return { reply: { ok: true, operation: "inspect", study: studyView(authenticate(st, uid, req.study, req.capability)) }, effects: [] };
  }
}

/**
 * Find the study `study` owned by `uid` whose capability hash matches `capability`.
 * Throws `reconciliation_required` in reconciliation mode (a restored or clock-broken core grants
 * no authority, whatever token is shown) and `invalid_capability` otherwise.
 */
export function authenticate(st: CoreState, uid: number, study: string, capability: string): StudyRecord {
  if (st.mode === "reconciliation") throw brokerError("reconciliation_required");
  const s = st.studies.get(study);
  if (s === undefined || s.uid !== uid) throw brokerError("invalid_capability", "capability");
  const presented = capabilityHash(bindingOf(st, s), capability);
  if (!sameHash(presented, s.capabilityHash)) throw brokerError("invalid_capability", "capability");
  return s;
}

function bindingOf(st: CoreState, s: StudyRecord): CapabilityBinding {
  const { boot, study, uid, createdMs, startupDeadlineMs, studyDeadlineMs } = s;
  return { installation: st.installation, boot, study, uid, createdMs, startupDeadlineMs, studyDeadlineMs };
}

function acquire(st: CoreState, uid: number, attempt: string): Outcome {
  const known = st.attempts.get(attemptKey(uid, attempt));
  const replayed = known === undefined ? undefined : st.studies.get(known);
  // A replay returns the same study's current view and never a second capability.
  if (replayed !== undefined) return { reply: { ok: true, operation: "acquire", study: studyView(replayed) }, effects: [] };
  if (st.mode === "reconciliation") throw brokerError("reconciliation_required");
  if (st.studies.size >= st.policy.maxStudies) throw brokerError("ledger_full");
  const study = randomHex(st.entropy, 16);
  const token = randomHex(st.entropy, 32);
  if (st.studies.has(study)) throw brokerError("entropy_failed", "entropy");
  const now = st.clock.boottimeMs;
  const startupDeadlineMs = now + st.policy.startupCapMs;
  const bound = { boot: st.clock.bootId, study, uid, createdMs: now, startupDeadlineMs, studyDeadlineMs: now + st.policy.studyCapMs };
  const s: StudyRecord = {
    ...bound,
    attempt,
    leaseDeadlineMs: Math.min(now + st.policy.ttlMs, startupDeadlineMs),
    state: "startup",
    sequence: 0,
    capabilityHash: capabilityHash({ installation: st.installation, ...bound }, token),
    allocations: new Map(),
  };
  st.studies.set(study, s);
  st.attempts.set(attemptKey(uid, attempt), study);
  st.usedByStudy.set(study, 0);
  return { reply: { ok: true, operation: "acquire", study: studyView(s) }, effects: [], capability: new Capability(study, token) };
}

function renew(st: CoreState, s: StudyRecord, sequence: number): Outcome {
  if (!isLive(s.state)) throw brokerError("lease_inactive");
  if (sequence <= s.sequence) throw brokerError("sequence_replayed", "sequence");
  const now = st.clock.boottimeMs;
  let lease = Math.min(now + st.policy.ttlMs, s.studyDeadlineMs);
  if (s.state === "startup") lease = Math.min(lease, s.startupDeadlineMs);
  s.sequence = sequence;
  s.leaseDeadlineMs = lease;
  return { reply: { ok: true, operation: "renew", study: studyView(s) }, effects: [] };
}

function allocate(st: CoreState, s: StudyRecord, attempt: string): Outcome {
  if (!isLive(s.state)) throw brokerError("lease_inactive");
  for (const a of s.allocations.values()) {
    // A replayed attempt returns the existing allocation; its allocate_slot effect was already issued.
    if (a.attempt === attempt) return { reply: { ok: true, operation: "allocate", study: studyView(s), allocation: allocationView(a) }, effects: [] };
  }
  if (s.allocations.size >= st.policy.maxAttemptsPerStudy) throw brokerError("ledger_full");
  if ((st.usedByStudy.get(s.study) ?? 0) >= st.policy.perStudy || st.used >= st.policy.globalSlots) throw brokerError("capacity_exhausted");
  const id = randomHex(st.entropy, 16);
  if (s.allocations.has(id)) throw brokerError("entropy_failed", "entropy");
  const a: AllocationRecord = { allocation: id, attempt, state: "reserved", creationOpen: false };
  s.allocations.set(id, a);
  st.used++;
  st.usedByStudy.set(s.study, (st.usedByStudy.get(s.study) ?? 0) + 1);
  return {
    reply: { ok: true, operation: "allocate", study: studyView(s), allocation: allocationView(a) },
    effects: [{ kind: "allocate_slot", identity: identityOf(st, s, a), profile: "development" }],
  };
}

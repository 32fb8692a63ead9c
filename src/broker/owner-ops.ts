/**
 * The owner's events: clock advance, activation, the facts of one slot's creation and removal,
 * revocation, and the cleanup plan.
 *
 * The owner is trusted, but its facts must still fit the ledger: a fact about an allocation that
 * is not in the state the fact applies to is refused (`invalid_owner_fact`) rather than guessed
 * at, because a wrong guess either leaks a slot or frees one that still holds a container.
 */
import { type ClockSample, checkClock, discontinuity } from "./clock.ts";
import { brokerError } from "./errors.ts";
import {
  type AllocationIdentity,
  type AllocationRecord,
  type AllocationView,
  allocationView,
  type Effect,
  isLive,
  type StudyRecord,
  type StudyView,
  studyView,
} from "./model.ts";
import { isId } from "./request.ts";
import { type CoreState, expiryMs, setAllocationState, stopEffects, terminate } from "./state.ts";

/** What the owner learned from its single creation dispatch: the slot exists, or it cannot tell. */
export type CreationOutcome = "present" | "unknown";

/** The owner's attestation that a slot is gone and no creation for it is still in flight. */
export interface OwnerAbsence {
  identity: AllocationIdentity;
  /** Must be `true`: the owner asserts its creation dispatch (if any) can no longer produce the slot. */
  creationQuiescent: true;
}

/**
 * Accept clock sample `clock`. A boot id change, time going backwards or a reported sleep puts
 * the core in reconciliation mode for good and terminates every live study with that reason;
 * then every live study whose lease, study cap or (in startup) startup cap has been reached
 * expires. Returns the stop effects of the studies this sample terminated.
 * Throws `invalid_clock` for a malformed sample (state unchanged).
 */
export function advance(st: CoreState, clock: ClockSample): Effect[] {
  const c = checkClock(clock);
  const broken = discontinuity(st.clock, c);
  st.clock = { bootId: c.bootId, boottimeMs: c.boottimeMs };
  const effects: Effect[] = [];
  if (broken !== undefined) {
    st.mode = "reconciliation";
    for (const s of st.studies.values()) if (isLive(s.state)) effects.push(...terminate(st, s, broken));
  }
  for (const s of st.studies.values()) {
    if (isLive(s.state) && c.boottimeMs >= expiryMs(s)) effects.push(...terminate(st, s, "expired"));
  }
  return effects;
}

/** `startup` → `active` (the lease is not renewed); `active` stays. Throws `not_found` or, for a terminal study, `invalid_owner_fact`. */
export function activate(st: CoreState, study: string): StudyView {
  const s = findStudy(st, study);
  if (!isLive(s.state)) throw brokerError("invalid_owner_fact", "study");
  s.state = "active";
  return studyView(s);
}

/** Revoke study `study` (terminal states are kept) and return its repeatable stop effects. Throws `not_found`. */
export function revoke(st: CoreState, study: string): Effect[] {
  return terminate(st, findStudy(st, study), "revoked");
}

/** Immediately before the owner's single creation dispatch: live study and `reserved` → `creating`, else `invalid_owner_fact`. */
export function beginAllocation(st: CoreState, identity: AllocationIdentity): AllocationView {
  const { s, a } = resolve(st, identity);
  if (!isLive(s.state) || a.state !== "reserved") throw brokerError("invalid_owner_fact", "identity");
  a.state = "creating";
  a.creationOpen = true;
  return allocationView(a);
}

/**
 * The outcome of the creation dispatch begun by beginAllocation: in a live study `present` or
 * `unresolved`; in a study that died meanwhile the allocation stays `releasing`. Nothing is
 * retried and no slot is freed here. Throws `invalid_owner_fact` without an open creation.
 */
export function recordOutcome(st: CoreState, identity: AllocationIdentity, outcome: CreationOutcome): AllocationView {
  if (outcome !== "present" && outcome !== "unknown") throw brokerError("invalid_owner_fact", "identity");
  const { s, a } = resolve(st, identity);
  if (!a.creationOpen) throw brokerError("invalid_owner_fact", "identity");
  a.creationOpen = false;
  if (isLive(s.state)) a.state = outcome === "present" ? "present" : "unresolved";
  return allocationView(a);
}

/**
 * The only way a slot is freed: any state → `absent`. Confirming an already absent allocation
 * changes nothing. Throws `invalid_owner_fact` unless `creationQuiescent` is exactly `true` and
 * the identity names an allocation of this ledger.
 */
export function confirmAbsent(st: CoreState, absence: OwnerAbsence): AllocationView {
  if (typeof absence !== "object" || absence === null || absence.creationQuiescent !== true) throw brokerError("invalid_owner_fact", "identity");
  const { s, a } = resolve(st, absence.identity);
  setAllocationState(st, s, a, "absent");
  a.creationOpen = false;
  return allocationView(a);
}

/** Stop effects for every `releasing` allocation of every study; repeatable until each is confirmed absent. */
export function pendingCleanup(st: CoreState): Effect[] {
  return [...st.studies.values()].flatMap((s) => stopEffects(st, s));
}

/** The view of the allocation `identity` names, or undefined (never throws). */
export function findAllocation(st: CoreState, identity: AllocationIdentity): AllocationView | undefined {
  try {
    return allocationView(resolve(st, identity).a);
  } catch {
    return undefined;
  }
}

function findStudy(st: CoreState, study: string): StudyRecord {
  const s = isId(study) ? st.studies.get(study) : undefined;
  if (s === undefined) throw brokerError("not_found", "study");
  return s;
}

function resolve(st: CoreState, identity: AllocationIdentity): { s: StudyRecord; a: AllocationRecord } {
  if (typeof identity !== "object" || identity === null) throw brokerError("invalid_owner_fact", "identity");
  const { installation, boot, study, allocation } = identity;
  if (![installation, boot, study, allocation].every(isId) || installation !== st.installation) throw brokerError("invalid_owner_fact", "identity");
  const s = st.studies.get(study);
  const a = s?.allocations.get(allocation);
  if (s === undefined || a === undefined || s.boot !== boot) throw brokerError("invalid_owner_fact", "identity");
  return { s, a };
}

/**
 * The broker's records, views and effects (data only).
 */

/** Live study states. */
export const LIVE_STUDY_STATES = ["startup", "active"] as const;
/** Terminal study states: once entered, a study never leaves it. */
export const TERMINAL_STUDY_STATES = ["expired", "revoked", "sleep", "boot_mismatch", "clock_rollback", "recovery"] as const;
/** Every study state. */
export const STUDY_STATES = [...LIVE_STUDY_STATES, ...TERMINAL_STUDY_STATES] as const;
/** One study state. */
export type StudyState = (typeof STUDY_STATES)[number];
/** A terminal study state. */
export type TerminalStudyState = (typeof TERMINAL_STUDY_STATES)[number];

/** Allocation states. Every state but `absent` consumes a slot. */
export const ALLOCATION_STATES = ["reserved", "creating", "present", "unresolved", "releasing", "absent"] as const;
/** One allocation state. */
export type AllocationState = (typeof ALLOCATION_STATES)[number];

/** Core mode: `reconciliation` is permanent and allows only cleanup. */
export type BrokerMode = "accepting" | "reconciliation";

/** The only slot profile. */
export type SlotProfile = "development";

/** True for `startup` and `active`. */
export function isLive(state: StudyState): boolean {
  return state === "startup" || state === "active";
}

/** Names one allocation across installations and boots (all 32 lowercase hex). */
export interface AllocationIdentity {
  installation: string;
  boot: string;
  study: string;
  allocation: string;
}

/** Plan data for the owner — never argv: create or stop the slot named by `identity`. */
export interface Effect {
  kind: "allocate_slot" | "stop_slot";
  identity: AllocationIdentity;
  profile: SlotProfile;
}

/** One allocation as the ledger holds it. */
export interface AllocationRecord {
  allocation: string;
  attempt: string;
  state: AllocationState;
  /** True between beginAllocation and recordOutcome: the owner's single creation dispatch is unaccounted for. */
  creationOpen: boolean;
}

/** One study as the ledger holds it (ms are boot-clock times; only the capability's hash is kept). */
export interface StudyRecord {
  study: string;
  attempt: string;
  uid: number;
  boot: string;
  createdMs: number;
  startupDeadlineMs: number;
  studyDeadlineMs: number;
  leaseDeadlineMs: number;
  state: StudyState;
  sequence: number;
  capabilityHash: string;
  /** Allocations in creation order. */
  allocations: Map<string, AllocationRecord>;
}

/** Wire view of an allocation. */
export interface AllocationView {
  allocation: string;
  attempt: string;
  state: AllocationState;
  profile: SlotProfile;
}

/** Wire view of a study. */
export interface StudyView {
  study: string;
  state: StudyState;
  sequence: number;
  startup_deadline_ms: number;
  study_deadline_ms: number;
  lease_deadline_ms: number;
  allocations: AllocationView[];
}

/** The view of `a`. */
export function allocationView(a: AllocationRecord): AllocationView {
  return { allocation: a.allocation, attempt: a.attempt, state: a.state, profile: "development" };
}

/** The view of `s`, allocations in creation order. */
export function studyView(s: StudyRecord): StudyView {
  return {
    study: s.study,
    state: s.state,
    sequence: s.sequence,
    startup_deadline_ms: s.startupDeadlineMs,
    study_deadline_ms: s.studyDeadlineMs,
    lease_deadline_ms: s.leaseDeadlineMs,
    allocations: [...s.allocations.values()].map(allocationView),
  };
}

/**
 * The mutable state of one broker core and the few rules every operation shares: how a study
 * becomes terminal, how a slot is counted, and which effects name which allocation.
 */
import type { Entropy } from "./capability.ts";
import {
  type AllocationIdentity,
  type AllocationRecord,
  type AllocationState,
  type BrokerMode,
  type Effect,
  isLive,
  type StudyRecord,
  type TerminalStudyState,
} from "./model.ts";
import type { Policy } from "./policy.ts";

/** Everything one core holds. Mutated only by the operation modules. */
export interface CoreState {
  readonly policy: Readonly<Policy>;
  readonly installation: string;
  readonly entropy: Entropy;
  mode: BrokerMode;
  /** The last accepted clock sample (boot id and boot-clock ms). */
  clock: { bootId: string; boottimeMs: number };
  /** Every study ever acquired, in acquisition order; terminal ones are kept as tombstones. */
  studies: Map<string, StudyRecord>;
  /** `${uid}/${attempt}` → study id, so acquire is idempotent per peer and attempt. */
  attempts: Map<string, string>;
  /** Non-absent allocations across all studies (the global slot count). */
  used: number;
  /** Non-absent allocations per study id. */
  usedByStudy: Map<string, number>;
}

/** The key of an acquire attempt. */
export function attemptKey(uid: number, attempt: string): string {
  return `${uid}/${attempt}`;
}

/** The identity of allocation `a` of study `s`. */
export function identityOf(st: CoreState, s: StudyRecord, a: AllocationRecord): AllocationIdentity {
  return { installation: st.installation, boot: s.boot, study: s.study, allocation: a.allocation };
}

/** The repeatable stop effects of every `releasing` allocation of `s`. */
export function stopEffects(st: CoreState, s: StudyRecord): Effect[] {
  const out: Effect[] = [];
  for (const a of s.allocations.values()) if (a.state === "releasing") out.push({ kind: "stop_slot", identity: identityOf(st, s, a), profile: "development" });
  return out;
}

/**
 * Move allocation `a` of `s` to `next`, keeping the slot counters exact: only leaving for
 * `absent` frees a slot, and `absent` is final.
 */
export function setAllocationState(st: CoreState, s: StudyRecord, a: AllocationRecord, next: AllocationState): void {
  if (a.state === "absent") return;
  if (next === "absent") {
    st.used--;
    st.usedByStudy.set(s.study, (st.usedByStudy.get(s.study) ?? 1) - 1);
  }
  a.state = next;
}

/**
 * Make live study `s` terminal with `state` and mark every non-absent allocation `releasing`
 * (its slot stays consumed until the owner confirms absence). Returns the study's stop effects.
 * A study that is already terminal keeps its first terminal state.
 */
export function terminate(st: CoreState, s: StudyRecord, state: TerminalStudyState): Effect[] {
  if (isLive(s.state)) {
    s.state = state;
    for (const a of s.allocations.values()) if (a.state !== "absent") setAllocationState(st, s, a, "releasing");
  }
  return stopEffects(st, s);
}

/** The boot-clock ms at which live study `s` expires (inclusive): its lease, study cap, and startup cap while in startup. */
export function expiryMs(s: StudyRecord): number {
  const d = Math.min(s.leaseDeadlineMs, s.studyDeadlineMs);
  return s.state === "startup" ? Math.min(d, s.startupDeadlineMs) : d;
}

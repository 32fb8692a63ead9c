/**
 * The study runner's capacity ledger: a typed, in-process face of one BrokerCore.
 *
 * The runner holds one study for the whole run and reserves one slot per seat before the seat's
 * container is created; the slot is freed only when the runner attests the container is gone.
 * Every call goes through the same state machine a socket peer would reach (typed requests skip
 * only the byte decoding), so capacity, lease and clock rules cannot drift between the two.
 */
import { createHash } from "node:crypto";
import { type Entropy, randomHex } from "./capability.ts";
import type { ClockSample } from "./clock.ts";
import { BrokerCore, type Decision } from "./core.ts";
import { type BrokerErrorCode, brokerError } from "./errors.ts";
import type { AllocationIdentity, AllocationState, BrokerMode, Effect, StudyView } from "./model.ts";
import type { CreationOutcome } from "./owner-ops.ts";
import type { Policy } from "./policy.ts";
import type { BrokerRequest } from "./request.ts";

/** Ports of a capacity ledger. */
export interface CapacityLedgerPorts {
  entropy: Entropy;
  /** The owner's clock at creation; later samples come through `advance`. */
  clock: ClockSample;
  /** The uid the in-process runner is known by (it keys the capability hash); default 0. */
  peerUid?: number;
}

/** One seat's slot. */
export interface SeatSlot {
  seatId: string;
  identity: AllocationIdentity;
  state: AllocationState;
}

/** A slot the owner must stop, then attest absent with `confirmAbsent(seatId)`. */
export interface CleanupItem {
  seatId: string;
  identity: AllocationIdentity;
}

/** `reserve` either holds the seat's slot or says why not (typically `capacity_exhausted`: wait for a confirmed absence). */
export type ReserveResult = { ok: true; slot: SeatSlot } | { ok: false; code: BrokerErrorCode };

/** Slots in use by this ledger's study against its limits. */
export interface LedgerUsage {
  used: number;
  perStudy: number;
  globalSlots: number;
}

/** The runner's capacity ledger. Methods other than `reserve` throw BrokerError. */
export interface CapacityLedger {
  /** The study id this ledger holds. */
  readonly study: string;
  /** `reconciliation` after a clock discontinuity: only cleanup remains possible. */
  readonly mode: BrokerMode;
  /** Reserve `seatId`'s slot (idempotent per seat: a second call returns the same slot in its current state). */
  reserve(seatId: string): ReserveResult;
  /** `reserved` → `creating`, immediately before the seat's single container create. */
  beginCreate(seatId: string): SeatSlot;
  /** What the create did: `present`, or `unknown` when it cannot tell (the slot stays held as `unresolved`). */
  recordOutcome(seatId: string, outcome: CreationOutcome): SeatSlot;
  /** The seat's container is confirmed gone (release outcome `released`): frees the slot. */
  confirmAbsent(seatId: string): SeatSlot;
  /** The study leaves `startup` (call once the first seat is up, before the startup cap). */
  activate(): void;
  /** Extend the lease from the latest clock sample. Throws `lease_inactive` once the study is terminal. */
  renew(): StudyView;
  /** End the study (idempotent, also after expiry or a clock discontinuity): every held slot becomes `releasing`; returns what to stop. */
  release(): CleanupItem[];
  /** Repeatable: every `releasing` slot still awaiting its absence attestation. */
  pendingCleanup(): CleanupItem[];
  /** A new owner clock sample; returns slots a discontinuity or expiry sent to cleanup. Throws `invalid_clock`. */
  advance(clock: ClockSample): CleanupItem[];
  /** The seat's slot, if it was ever reserved. */
  slot(seatId: string): SeatSlot | undefined;
  /** Slots held now against the limits. */
  usage(): LedgerUsage;
  /** The underlying core, for dumpLedger() and owner inspection. */
  readonly core: BrokerCore;
}

const MAX_SEAT_ID_CHARS = 256;

/**
 * Create a capacity ledger: a fresh core under `policy` (its `authorizedUids` are the runner's
 * uid only) holding one newly acquired study. Throws `invalid_policy`, `invalid_clock`,
 * `entropy_failed`, or `invalid_request` for a bad `peerUid`.
 */
export function createCapacityLedger(policy: Partial<Omit<Policy, "authorizedUids">>, ports: CapacityLedgerPorts): CapacityLedger {
  const uid = ports.peerUid ?? 0;
  if (!Number.isInteger(uid) || uid < 0 || uid > 0xffff_ffff) throw brokerError("invalid_request", "body");
  const core = BrokerCore.create({ ...policy, authorizedUids: [uid] }, { entropy: ports.entropy, clock: ports.clock });
  return new SeatLedger(core, uid, ports);
}

class SeatLedger implements CapacityLedger {
  readonly study: string;
  readonly #capability: string;
  readonly #boot: string;
  // The clock is re-sent with every request; a sleep flag must only count once, when it is first seen.
  #clock: ClockSample;
  #sequence = 0;
  readonly #seats = new Map<string, AllocationIdentity>();
  readonly #seatOf = new Map<string, string>();

  constructor(
    readonly core: BrokerCore,
    readonly uid: number,
    ports: CapacityLedgerPorts,
  ) {
    this.#clock = { ...ports.clock, sleepDetected: false };
    this.#boot = ports.clock.bootId;
    const acquired = this.#send({ operation: "acquire", attempt: randomHex(ports.entropy, 16) });
    if (!acquired.reply.ok || acquired.capability === undefined) throw brokerError(acquired.reply.ok ? "entropy_failed" : acquired.reply.error);
    this.study = acquired.capability.study;
    this.#capability = acquired.capability.reveal();
  }

  get mode(): BrokerMode {
    return this.core.mode;
  }

  reserve(seatId: string): ReserveResult {
    checkSeatId(seatId);
    const attempt = seatAttempt(this.core.installation, this.study, seatId);
    const d = this.#send({ operation: "allocate", study: this.study, capability: this.#capability, attempt });
    if (!d.reply.ok) return { ok: false, code: d.reply.error };
    if (d.reply.operation !== "allocate") throw brokerError("invalid_request", "operation");
    const identity: AllocationIdentity = {
      installation: this.core.installation,
      boot: this.#boot,
      study: this.study,
      allocation: d.reply.allocation.allocation,
    };
    this.#seats.set(seatId, identity);
    this.#seatOf.set(identity.allocation, seatId);
    return { ok: true, slot: { seatId, identity, state: d.reply.allocation.state } };
  }

  beginCreate(seatId: string): SeatSlot {
    const identity = this.#identity(seatId);
    return { seatId, identity, state: this.core.beginAllocation(identity).state };
  }

  recordOutcome(seatId: string, outcome: CreationOutcome): SeatSlot {
    const identity = this.#identity(seatId);
    return { seatId, identity, state: this.core.recordOutcome(identity, outcome).state };
  }

  confirmAbsent(seatId: string): SeatSlot {
    const identity = this.#identity(seatId);
    return { seatId, identity, state: this.core.confirmAbsent({ identity, creationQuiescent: true }).state };
  }

  activate(): void {
    this.core.activate(this.study);
  }

  renew(): StudyView {
    const d = this.#ok(this.#send({ operation: "renew", study: this.study, capability: this.#capability, sequence: this.#sequence + 1 }));
    this.#sequence++;
    if (!d.reply.ok || d.reply.operation !== "renew") throw brokerError("invalid_request", "operation");
    return d.reply.study;
  }

  release(): CleanupItem[] {
    // In reconciliation no capability is honoured and the study is already terminal, so the
    // owner's revocation (which needs none) yields the same repeatable stop list.
    if (this.core.mode === "reconciliation") return this.#items(this.core.revoke(this.study));
    return this.#items(this.#ok(this.#send({ operation: "release", study: this.study, capability: this.#capability })).effects);
  }

  pendingCleanup(): CleanupItem[] {
    return this.#items(this.core.pendingCleanup());
  }

  advance(clock: ClockSample): CleanupItem[] {
    const effects = this.core.advance(clock);
    this.#clock = { ...clock, sleepDetected: false };
    return this.#items(effects);
  }

  slot(seatId: string): SeatSlot | undefined {
    const identity = this.#seats.get(seatId);
    const view = identity && this.core.allocation(identity);
    return identity && view ? { seatId, identity, state: view.state } : undefined;
  }

  usage(): LedgerUsage {
    return { used: this.core.usage().global, perStudy: this.core.policy.perStudy, globalSlots: this.core.policy.globalSlots };
  }

  #send(req: BrokerRequest): Decision {
    return this.core.request(req, { peerUid: this.uid, clock: this.#clock });
  }

  #ok(d: Decision): Decision {
    if (!d.reply.ok) throw brokerError(d.reply.error);
    return d;
  }

  #identity(seatId: string): AllocationIdentity {
    const identity = this.#seats.get(seatId);
    if (identity === undefined) throw brokerError("invalid_owner_fact", "identity");
    return identity;
  }

  /** Stop effects as seat items (every allocation of this core was made by `reserve`, so each has a seat). */
  #items(effects: Effect[]): CleanupItem[] {
    return effects
      .filter((e) => e.kind === "stop_slot")
      .map((e) => ({ seatId: this.#seatOf.get(e.identity.allocation) ?? e.identity.allocation, identity: e.identity }));
  }
}

function checkSeatId(seatId: string): void {
  if (typeof seatId !== "string" || seatId.length === 0 || seatId.length > MAX_SEAT_ID_CHARS) throw brokerError("invalid_request", "attempt");
}

/** The allocate attempt id of a seat: stable per (installation, study, seat), so a retried reserve is a replay. */
function seatAttempt(installation: string, study: string, seatId: string): string {
  return createHash("sha256")
    .update(JSON.stringify(["humanish-seat-attempt-v1", installation, study, seatId]), "utf8")
    .digest("hex")
    .slice(0, 32);
}

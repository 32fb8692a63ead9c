/**
 * `BrokerCore`: the runtime broker as one pure state machine.
 *
 * Peers talk to it with bytes (`handle`); the trusted owner drives it with events (clock
 * samples, creation facts, absence attestations). It performs no I/O: time and randomness come
 * in through ports, and what should happen to the outside world comes out as `Effect` plan data
 * the owner carries out.
 */
import type { Capability, Entropy } from "./capability.ts";
import { randomHex } from "./capability.ts";
import { applyRequest, type BrokerSuccess } from "./client-ops.ts";
import { type ClockSample, checkClock } from "./clock.ts";
import { type BrokerErrorCode, brokerError, isBrokerError } from "./errors.ts";
import { dumpLedger, restoreState } from "./ledger.ts";
import type { AllocationIdentity, AllocationView, BrokerMode, Effect, StudyView } from "./model.ts";
import { studyView } from "./model.ts";
import * as owner from "./owner-ops.ts";
import { type Policy, resolvePolicy } from "./policy.ts";
import { type BrokerRequest, decodeRequest, isId, validateRequest } from "./request.ts";
import type { CoreState } from "./state.ts";

/** A refused request: the code alone, never any other text. */
export interface BrokerFailure {
  ok: false;
  error: BrokerErrorCode;
}

/** The reply to a peer. */
export type BrokerReply = BrokerSuccess | BrokerFailure;

/** Result of one request: the reply, the owner's effects, and a new capability for acquire. */
export interface Decision {
  reply: BrokerReply;
  /** Stop effects of studies the request's clock sample terminated, then the operation's own effects. */
  effects: Effect[];
  /** Only on a new acquire; deliver with `reveal()` to the authenticated peer exactly once. */
  capability?: Capability;
}

/** Ports of a core: randomness, the owner's first clock sample, and optionally a fixed installation id. */
export interface BrokerPorts {
  entropy: Entropy;
  clock: ClockSample;
  /** 32 lowercase hex; minted from `entropy` when omitted. */
  installation?: string;
}

/** Context of one peer request: the uid the OS reported for the peer, and the owner's clock now. */
export interface RequestContext {
  peerUid: number;
  clock: ClockSample;
}

/** Slots in use: globally and per study id (non-absent allocations). */
export interface BrokerUsage {
  global: number;
  byStudy: Record<string, number>;
}

/** The broker state machine. See the module comment and each method for its rules. */
export class BrokerCore {
  readonly #st: CoreState;

  private constructor(st: CoreState) {
    this.#st = st;
  }

  /**
   * A new accepting core. Throws `invalid_policy`, `invalid_clock`, `entropy_failed` (minting the
   * installation id), or `invalid_owner_fact` for an installation that is not 32 lowercase hex.
   */
  static create(policy: Partial<Policy>, ports: BrokerPorts): BrokerCore {
    const p = resolvePolicy(policy);
    const c = checkClock(ports.clock);
    if (ports.installation !== undefined && !isId(ports.installation)) throw brokerError("invalid_owner_fact", "identity");
    const installation = ports.installation ?? randomHex(ports.entropy, 16);
    return new BrokerCore({
      policy: p,
      installation,
      entropy: ports.entropy,
      mode: "accepting",
      clock: { bootId: c.bootId, boottimeMs: c.boottimeMs },
      studies: new Map(),
      attempts: new Map(),
      used: 0,
      usedByStudy: new Map(),
    });
  }

  /** A reconciliation-only core from `dumpLedger()` bytes. Throws `invalid_policy`, `invalid_clock` or `invalid_ledger`. */
  static restore(bytes: Uint8Array, policy: Partial<Policy>, ports: Omit<BrokerPorts, "installation">): BrokerCore {
    return new BrokerCore(restoreState(bytes, resolvePolicy(policy), ports.entropy, ports.clock));
  }

  /**
   * One peer request. The uid is checked first (an unauthorized peer changes nothing), then the
   * clock sample is applied as by {@link advance}, then the bytes are decoded. Never throws a
   * BrokerError: every refusal is a `{ok:false, error}` reply.
   */
  handle(data: Uint8Array, ctx: RequestContext): Decision {
    return this.#run(ctx, () => decodeRequest(data));
  }

  /**
   * The same as {@link handle} for an already typed request: in-process callers skip only the
   * byte decoding; the request is still checked by the decoder's field rules.
   */
  request(req: BrokerRequest, ctx: RequestContext): Decision {
    return this.#run(ctx, () => validateRequest(req));
  }

  #run(ctx: RequestContext, decode: () => BrokerRequest): Decision {
    const effects: Effect[] = [];
    try {
      const uid = ctx?.peerUid;
      if (typeof uid !== "number" || !this.#st.policy.authorizedUids.includes(uid)) throw brokerError("unauthorized");
      effects.push(...owner.advance(this.#st, ctx.clock));
      const out = applyRequest(this.#st, uid, decode());
      effects.push(...out.effects);
      return out.capability === undefined ? { reply: out.reply, effects } : { reply: out.reply, effects, capability: out.capability };
    } catch (e) {
      if (isBrokerError(e)) return { reply: { ok: false, error: e.brokerCode }, effects };
      throw e;
    }
  }

  /** Owner clock sample, independent of traffic; returns stop effects of studies it terminated. Throws `invalid_clock`. */
  advance(clock: ClockSample): Effect[] {
    return owner.advance(this.#st, clock);
  }

  /** `startup` → `active`, without renewing the lease. Throws `not_found`, `invalid_owner_fact`. */
  activate(study: string): StudyView {
    return owner.activate(this.#st, study);
  }

  /** `reserved` → `creating` in a live study, immediately before the single creation dispatch. Throws `invalid_owner_fact`. */
  beginAllocation(identity: AllocationIdentity): AllocationView {
    return owner.beginAllocation(this.#st, identity);
  }

  /** The creation dispatch's outcome (`present` or `unknown`). Throws `invalid_owner_fact`. */
  recordOutcome(identity: AllocationIdentity, outcome: owner.CreationOutcome): AllocationView {
    return owner.recordOutcome(this.#st, identity, outcome);
  }

  /** The owner's attestation that the slot is gone: → `absent`, freeing its capacity. Throws `invalid_owner_fact`. */
  confirmAbsent(absence: owner.OwnerAbsence): AllocationView {
    return owner.confirmAbsent(this.#st, absence);
  }

  /** Owner revocation of a study; returns its stop effects. Throws `not_found`. */
  revoke(study: string): Effect[] {
    return owner.revoke(this.#st, study);
  }

  /** Repeatable stop effects for every `releasing` allocation. */
  pendingCleanup(): Effect[] {
    return owner.pendingCleanup(this.#st);
  }

  /** The ledger as ≤ 1 MiB of UTF-8 JSON: capability hashes only, tombstones kept. */
  dumpLedger(): Uint8Array {
    return dumpLedger(this.#st);
  }

  /** `accepting`, or `reconciliation` (permanent) after a clock discontinuity or a restore. */
  get mode(): BrokerMode {
    return this.#st.mode;
  }

  /** The resolved policy (frozen). */
  get policy(): Readonly<Policy> {
    return this.#st.policy;
  }

  /** This ledger's installation id (32 lowercase hex). */
  get installation(): string {
    return this.#st.installation;
  }

  /** Owner view of every study, tombstones included, in acquisition order. */
  studies(): StudyView[] {
    return [...this.#st.studies.values()].map(studyView);
  }

  /** Owner view of one allocation, or undefined when this ledger has no such identity. */
  allocation(identity: AllocationIdentity): AllocationView | undefined {
    return owner.findAllocation(this.#st, identity);
  }

  /** The slot counters the core enforces its limits with. */
  usage(): BrokerUsage {
    return { global: this.#st.used, byStudy: Object.fromEntries(this.#st.usedByStudy) };
  }
}

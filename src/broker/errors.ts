/**
 * The closed error vocabulary of the runtime broker core.
 *
 * A request that fails gets a reply carrying exactly one of these codes and nothing else: no
 * interpolated text, so a hostile peer learns nothing beyond the code and cannot smuggle input
 * back through an error message. Locally the failure is a {@link BrokerError} (a HumanishError
 * with code `HUMANISH_BROKER_<CODE>`, a fixed message and a `next` step).
 */
import { HumanishError } from "../errors.ts";

/** The fourteen broker error codes, in upstream order. */
export const BROKER_ERROR_CODES = [
  "invalid_request",
  "unauthorized",
  "invalid_capability",
  "not_found",
  "lease_inactive",
  "sequence_replayed",
  "capacity_exhausted",
  "ledger_full",
  "reconciliation_required",
  "invalid_clock",
  "invalid_policy",
  "invalid_ledger",
  "invalid_owner_fact",
  "entropy_failed",
] as const;

/** One broker error code. */
export type BrokerErrorCode = (typeof BROKER_ERROR_CODES)[number];

const CODE_SET: ReadonlySet<string> = new Set(BROKER_ERROR_CODES);

/** True when `value` is one of the fourteen broker error codes. */
export function isBrokerErrorCode(value: unknown): value is BrokerErrorCode {
  return typeof value === "string" && CODE_SET.has(value);
}

/** The fixed local message and next step of each code (never built from input). */
const TEXT: Record<BrokerErrorCode, { message: string; next: string }> = {
  invalid_request: {
    message: "broker request rejected: not a flat strict JSON object with exactly the keys and value shapes of its operation",
    next: "send one flat JSON object (at most 16 KiB, version 1) with exactly the fields the operation names",
  },
  unauthorized: {
    message: "broker request rejected: the peer uid is not in the policy's authorized uids",
    next: "add the peer's uid to the broker policy's authorizedUids, or connect as an authorized user",
  },
  invalid_capability: {
    message: "broker request rejected: unknown study, another uid's study, or a capability that does not match",
    next: "present the capability delivered by acquire for this study, from the same uid",
  },
  not_found: { message: "broker owner event names a study the ledger does not hold", next: "pass a study id the ledger returned" },
  lease_inactive: {
    message: "broker request rejected: the study is no longer live (expired, revoked or terminated by the clock)",
    next: "acquire a new study; a terminal study never becomes live again",
  },
  sequence_replayed: {
    message: "broker renew rejected: the sequence is not greater than the study's last accepted sequence",
    next: "renew with a strictly increasing sequence",
  },
  capacity_exhausted: {
    message: "broker allocate refused: the per-study or global slot limit is reached",
    next: "wait until a slot's absence is confirmed, then allocate again",
  },
  ledger_full: {
    message: "broker refused: the study count or the study's attempt count reached its policy maximum",
    next: "finish and release existing studies, or start a fresh broker core",
  },
  reconciliation_required: {
    message: "broker is in reconciliation mode: only cleanup of existing allocations is possible",
    next: "clean up pending allocations (pendingCleanup, confirmAbsent), then start a fresh broker core",
  },
  invalid_clock: {
    message: "broker clock sample rejected: bootId must be 32 lowercase hex, boottimeMs an integer 0-2^52, sleepDetected a boolean",
    next: "supply a ClockSample read from the trusted owner's boot clock",
  },
  invalid_policy: {
    message: "broker policy rejected: a field is outside its allowed bounds",
    next: "use perStudy 1-4 (at most globalSlots), globalSlots 1-8, maxStudies 1-64, maxAttemptsPerStudy 1-32, ttlMs 1-60000, startupCapMs 1-600000 (at most studyCapMs), studyCapMs 1-86400000",
  },
  invalid_ledger: {
    message: "broker ledger rejected: not a well-formed ledger dump of at most 1 MiB",
    next: "restore from bytes produced by dumpLedger(), unmodified",
  },
  invalid_owner_fact: {
    message: "broker owner event rejected: the allocation or study is not in a state this fact applies to",
    next: "report each allocation's facts once, in order: beginAllocation, recordOutcome, confirmAbsent",
  },
  entropy_failed: {
    message: "broker entropy port failed or returned the wrong number of bytes",
    next: "pass an entropy function that returns exactly n cryptographically random bytes",
  },
};

/** Fields a decoder failure may point at (a closed list, so no input text leaks into details). */
export type BrokerErrorField =
  | "body"
  | "version"
  | "operation"
  | "attempt"
  | "study"
  | "capability"
  | "sequence"
  | "policy"
  | "clock"
  | "identity"
  | "ledger"
  | "entropy";

/**
 * A broker failure. `code` is `HUMANISH_BROKER_<BROKER_CODE>`; `brokerCode` is the wire code;
 * `details.field`, when present, is one of {@link BrokerErrorField}.
 */
export class BrokerError extends HumanishError {
  /** The wire code, one of {@link BROKER_ERROR_CODES}. */
  readonly brokerCode: BrokerErrorCode;

  constructor(brokerCode: BrokerErrorCode, field?: BrokerErrorField) {
    if (!isBrokerErrorCode(brokerCode)) throw new TypeError("BrokerError: code is not one of the broker error codes");
    const text = TEXT[brokerCode];
    super(`HUMANISH_BROKER_${brokerCode.toUpperCase()}`, text.message, {
      next: text.next,
      details: field === undefined ? { brokerCode } : { brokerCode, field },
    });
    this.name = "BrokerError";
    this.brokerCode = brokerCode;
  }
}

/** True when `e` is a BrokerError (optionally with the given wire code). */
export function isBrokerError(e: unknown, code?: BrokerErrorCode): e is BrokerError {
  return e instanceof BrokerError && (code === undefined || e.brokerCode === code);
}

/** Shorthand: `throw brokerError("invalid_request", "sequence")`. */
export function brokerError(code: BrokerErrorCode, field?: BrokerErrorField): BrokerError {
  return new BrokerError(code, field);
}

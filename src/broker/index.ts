/**
 * The runtime broker core: a pure lease/reservation state machine (the study runner's capacity
 * ledger). `BrokerCore` is the full machine (peer bytes in, replies and effects out; owner
 * events); `createCapacityLedger` is the runner's typed face of it.
 */
export { CAPABILITY_DOMAIN, Capability, type CapabilityBinding, capabilityHash, type Entropy, sameHash } from "./capability.ts";
export {
  type CapacityLedger,
  type CapacityLedgerPorts,
  type CleanupItem,
  createCapacityLedger,
  type LedgerUsage,
  type ReserveResult,
  type SeatSlot,
} from "./capacity-ledger.ts";
export type { BrokerSuccess } from "./client-ops.ts";
export { type ClockSample, checkClock, type Discontinuity, MAX_BOOTTIME_MS } from "./clock.ts";
export { BrokerCore, type BrokerFailure, type BrokerPorts, type BrokerReply, type BrokerUsage, type Decision, type RequestContext } from "./core.ts";
export { BROKER_ERROR_CODES, BrokerError, type BrokerErrorCode, type BrokerErrorField, brokerError, isBrokerError, isBrokerErrorCode } from "./errors.ts";
export { LEDGER_SCHEMA, MAX_LEDGER_BYTES } from "./ledger.ts";
export {
  ALLOCATION_STATES,
  type AllocationIdentity,
  type AllocationState,
  type AllocationView,
  type BrokerMode,
  type Effect,
  isLive,
  LIVE_STUDY_STATES,
  STUDY_STATES,
  type StudyState,
  type StudyView,
  TERMINAL_STUDY_STATES,
  type TerminalStudyState,
} from "./model.ts";
export type { CreationOutcome, OwnerAbsence } from "./owner-ops.ts";
export { DEFAULT_POLICY, POLICY_BOUNDS, type Policy, resolvePolicy } from "./policy.ts";
export {
  BROKER_OPERATIONS,
  type BrokerOperation,
  type BrokerRequest,
  decodeRequest,
  encodeRequest,
  MAX_SEQUENCE,
  OPERATION_FIELDS,
  validateRequest,
} from "./request.ts";
export { decodeFlatObject, type FlatScalar, MAX_INTEGER_DIGITS, MAX_REQUEST_BYTES } from "./strict-json.ts";

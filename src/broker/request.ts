/**
 * Broker requests: the six operations a peer may send and their exact field sets.
 *
 * No field may name a uid, a path, a command, a limit or a cleanup result: the peer's uid comes
 * from the operating system, limits come from the policy and cleanup facts only from the owner.
 */
import { type BrokerErrorField, brokerError } from "./errors.ts";
import { decodeFlatObject, type FlatScalar } from "./strict-json.ts";

/** Largest renew sequence: 2^53 − 1. */
export const MAX_SEQUENCE = Number.MAX_SAFE_INTEGER;

/** The operations, in upstream order. */
export const BROKER_OPERATIONS = ["hello", "acquire", "allocate", "renew", "release", "inspect"] as const;

/** One operation name. */
export type BrokerOperation = (typeof BROKER_OPERATIONS)[number];

/** A decoded request (ids are 32 lowercase hex, capabilities 64 lowercase hex). */
export type BrokerRequest =
  | { operation: "hello" }
  | { operation: "acquire"; attempt: string }
  | { operation: "allocate"; study: string; capability: string; attempt: string }
  | { operation: "renew"; study: string; capability: string; sequence: number }
  | { operation: "release"; study: string; capability: string }
  | { operation: "inspect"; study: string; capability: string };

type Field = "attempt" | "study" | "capability" | "sequence";

/** The exact fields each operation carries besides `version` and `operation`. */
export const OPERATION_FIELDS: Readonly<Record<BrokerOperation, readonly Field[]>> = {
  hello: [],
  acquire: ["attempt"],
  allocate: ["study", "capability", "attempt"],
  renew: ["study", "capability", "sequence"],
  release: ["study", "capability"],
  inspect: ["study", "capability"],
};

const ID_RE = /^[0-9a-f]{32}$/;
const CAPABILITY_RE = /^[0-9a-f]{64}$/;

/** True for exactly 32 lowercase hex characters (study, attempt, allocation, boot, installation ids). */
export function isId(value: unknown): value is string {
  return typeof value === "string" && ID_RE.test(value);
}

/** True for exactly 64 lowercase hex characters (a capability token or a sha256 hex digest). */
export function isCapabilityHex(value: unknown): value is string {
  return typeof value === "string" && CAPABILITY_RE.test(value);
}

/**
 * Decode and validate one request body.
 *
 * Throws `BrokerError("invalid_request", field)` for any violation of the strict flat-JSON rules
 * (see decodeFlatObject), a `version` other than the integer 1, an unknown operation, a missing or
 * extra key, an id that is not 32 lowercase hex, a capability that is not 64 lowercase hex, or a
 * sequence that is not an integer in 1…2^53−1 (booleans are not integers).
 */
export function decodeRequest(bytes: Uint8Array): BrokerRequest {
  return requestFrom(decodeFlatObject(bytes));
}

/**
 * Check an in-process typed request by exactly the rules of {@link decodeRequest} (same exact
 * key sets, id shapes and sequence range), so a caller that skips the bytes cannot skip a rule.
 * Throws `BrokerError("invalid_request", field)`.
 */
export function validateRequest(req: unknown): BrokerRequest {
  if (typeof req !== "object" || req === null || Array.isArray(req)) throw brokerError("invalid_request", "body");
  const entries = new Map<string, FlatScalar>([["version", 1n]]);
  for (const [k, v] of Object.entries(req)) {
    if (k === "version") throw brokerError("invalid_request", "version");
    // Only what the wire could carry survives: an integer becomes a bigint; anything else non-scalar is refused by shape.
    entries.set(k, typeof v === "number" ? (Number.isSafeInteger(v) ? BigInt(v) : null) : typeof v === "string" || typeof v === "boolean" ? v : null);
  }
  return requestFrom(entries);
}

function requestFrom(obj: Map<string, FlatScalar>): BrokerRequest {
  if (obj.get("version") !== 1n) throw brokerError("invalid_request", "version");
  const operation = obj.get("operation");
  if (typeof operation !== "string" || !(BROKER_OPERATIONS as readonly string[]).includes(operation)) throw brokerError("invalid_request", "operation");
  const op = operation as BrokerOperation;
  const fields = OPERATION_FIELDS[op];
  if (obj.size !== fields.length + 2) throw brokerError("invalid_request", "body");
  for (const f of fields) if (!obj.has(f)) throw brokerError("invalid_request", f);
  const get = (f: Field) => obj.get(f);
  switch (op) {
    case "hello":
      return { operation: op };
    case "acquire":
      return { operation: op, attempt: id(get("attempt"), "attempt") };
    case "allocate":
      return { operation: op, study: id(get("study"), "study"), capability: capability(get("capability")), attempt: id(get("attempt"), "attempt") };
    case "renew":
      return { operation: op, study: id(get("study"), "study"), capability: capability(get("capability")), sequence: sequence(get("sequence")) };
    case "release":
    case "inspect":
      return { operation: op, study: id(get("study"), "study"), capability: capability(get("capability")) };
  }
}

function id(v: FlatScalar | undefined, field: BrokerErrorField): string {
  if (!isId(v)) throw brokerError("invalid_request", field);
  return v;
}

function capability(v: FlatScalar | undefined): string {
  if (!isCapabilityHex(v)) throw brokerError("invalid_request", "capability");
  return v;
}

function sequence(v: FlatScalar | undefined): number {
  if (typeof v !== "bigint" || v < 1n || v > BigInt(MAX_SEQUENCE)) throw brokerError("invalid_request", "sequence");
  return Number(v);
}

/**
 * Encode a request as the compact JSON bytes a peer would send (for in-process callers and
 * tests; the core decodes it with the same rules as any other peer's bytes).
 */
export function encodeRequest(request: BrokerRequest): Uint8Array {
  return new TextEncoder().encode(JSON.stringify({ version: 1, ...request }));
}

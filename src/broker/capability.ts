/**
 * Study capabilities: minting, hashing and the redacted handle that delivers one.
 *
 * The ledger stores only a hash of each capability, bound to everything that identifies the
 * study (installation, boot, study, uid, creation time and deadlines), so a dumped ledger grants
 * nothing and a token presented for another study, uid or boot never matches.
 */
import { createHash, timingSafeEqual } from "node:crypto";
import { brokerError } from "./errors.ts";

/** Source of random bytes: must return exactly `n` cryptographically random bytes. */
export type Entropy = (n: number) => Uint8Array;

/** Domain separator of the capability hash tuple. */
export const CAPABILITY_DOMAIN = "humanish-broker-capability-v1";

/** What a capability hash is bound to (ms are boot-clock times). */
export interface CapabilityBinding {
  installation: string;
  boot: string;
  study: string;
  uid: number;
  createdMs: number;
  startupDeadlineMs: number;
  studyDeadlineMs: number;
}

/** `n` random bytes from `entropy` as lowercase hex; `BrokerError("entropy_failed")` if the port throws or returns anything but `n` bytes. */
export function randomHex(entropy: Entropy, n: number): string {
  let bytes: unknown;
  try {
    bytes = entropy(n);
  } catch {
    throw brokerError("entropy_failed", "entropy");
  }
  if (!(bytes instanceof Uint8Array) || bytes.byteLength !== n) throw brokerError("entropy_failed", "entropy");
  return Buffer.from(bytes).toString("hex");
}

/** sha256 (lowercase hex) of the compact JSON tuple `[domain, installation, boot, study, uid, created, startup_deadline, study_deadline, token]`. */
export function capabilityHash(b: CapabilityBinding, token: string): string {
  const tuple = [CAPABILITY_DOMAIN, b.installation, b.boot, b.study, b.uid, b.createdMs, b.startupDeadlineMs, b.studyDeadlineMs, token];
  return createHash("sha256").update(JSON.stringify(tuple), "utf8").digest("hex");
}

/** Constant-time comparison of two sha256 hex digests (false for anything that is not 64 hex). */
export function sameHash(a: string, b: string): boolean {
  const x = Buffer.from(a, "hex");
  const y = Buffer.from(b, "hex");
  if (x.byteLength !== 32 || y.byteLength !== 32) return false;
  return timingSafeEqual(x, y);
}

const REDACTED = "Capability(<redacted>)";

/**
 * A freshly minted capability (64 lowercase hex). Printing, string conversion and JSON all show
 * `Capability(<redacted>)`; `reveal()` returns the token exactly once — for the single
 * authenticated delivery to the peer — and throws `BrokerError("invalid_capability")` after.
 */
export class Capability {
  #token: string | undefined;
  /** The study this capability authorizes. */
  readonly study: string;

  constructor(study: string, token: string) {
    this.study = study;
    this.#token = token;
  }

  /** The token, once. */
  reveal(): string {
    const t = this.#token;
    if (t === undefined) throw brokerError("invalid_capability", "capability");
    this.#token = undefined;
    return t;
  }

  /** False once revealed. */
  get revealable(): boolean {
    return this.#token !== undefined;
  }

  toString(): string {
    return REDACTED;
  }

  toJSON(): string {
    return REDACTED;
  }

  [Symbol.for("nodejs.util.inspect.custom")](): string {
    return REDACTED;
  }
}

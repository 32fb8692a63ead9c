/**
 * Shared helpers of the broker tests: deterministic ports, clock samples and request bytes.
 */
import { BrokerCore, type ClockSample, type Decision, encodeRequest, type Policy } from "../../src/broker/index.ts";
import { rng } from "../support/rng.ts";

export const BOOT = "b".repeat(32);
export const OTHER_BOOT = "c".repeat(32);
export const UID = 1000;
export const OTHER_UID = 1001;

/** Deterministic entropy from a seed (tests only: the core demands real randomness in production). */
export function seededEntropy(seed: number): (n: number) => Uint8Array {
  const r = rng(seed);
  return (n) => Uint8Array.from({ length: n }, () => Math.floor(r() * 256));
}

/** A clock sample on `bootId` at `ms`. */
export function at(ms: number, bootId = BOOT, sleepDetected = false): ClockSample {
  return { bootId, boottimeMs: ms, sleepDetected };
}

/** A hex id made of one repeated digit pattern, e.g. `hex(1)` = "000…01". */
export function hex(n: number, len = 32): string {
  return n.toString(16).padStart(len, "0");
}

/** An accepting core with `authorizedUids` [UID, OTHER_UID] and the given policy overrides, clock at 1000 ms. */
export function newCore(policy: Partial<Policy> = {}, seed = 1): BrokerCore {
  return BrokerCore.create({ authorizedUids: [UID, OTHER_UID], ...policy }, { entropy: seededEntropy(seed), clock: at(1000), installation: "a".repeat(32) });
}

/** UTF-8 bytes of `text`. */
export function utf8(text: string): Uint8Array {
  return new TextEncoder().encode(text);
}

/** The error code of a decision, or "ok". */
export function codeOf(d: Decision): string {
  return d.reply.ok ? "ok" : d.reply.error;
}

/** A study acquired by `uid` at `ms`: its id, capability token and the decision. */
export function acquire(core: BrokerCore, attempt = hex(1), ms = 1000, uid = UID): { study: string; token: string; decision: Decision } {
  const decision = core.handle(encodeRequest({ operation: "acquire", attempt }), { peerUid: uid, clock: at(ms) });
  if (!decision.reply.ok || decision.capability === undefined) throw new Error(`acquire failed: ${JSON.stringify(decision.reply)}`);
  return { study: decision.capability.study, token: decision.capability.reveal(), decision };
}

/** Send a typed request from `uid` at `ms` as bytes. */
export function send(core: BrokerCore, req: Parameters<typeof encodeRequest>[0], ms = 1000, uid = UID, bootId = BOOT): Decision {
  return core.handle(encodeRequest(req), { peerUid: uid, clock: at(ms, bootId) });
}

/**
 * The owner's clock as the broker sees it.
 *
 * Time is never read by the core and never taken from a peer: the trusted owner samples its
 * boot clock (CLOCK_BOOTTIME, which keeps counting through suspend) and the boot id, and says
 * whether it noticed a sleep. Any discontinuity means leases can no longer be trusted.
 */
import { brokerError } from "./errors.ts";
import { isId } from "./request.ts";

/** One sample of the owner's clock. */
export interface ClockSample {
  /** The kernel boot id, 32 lowercase hex (changes on every boot). */
  bootId: string;
  /** Milliseconds since boot on CLOCK_BOOTTIME: a non-negative safe integer. */
  boottimeMs: number;
  /** True when the owner observed the machine sleeping since its previous sample. */
  sleepDetected: boolean;
}

/** The terminal study states a clock discontinuity produces. */
export type Discontinuity = "boot_mismatch" | "clock_rollback" | "sleep";

/** Largest accepted boottimeMs: 2^52 ms (about 142,000 years), so every deadline stays a safe integer. */
export const MAX_BOOTTIME_MS = 2 ** 52;

/** Throws `BrokerError("invalid_clock", "clock")` unless `c` is a well-formed ClockSample (boottimeMs 0…2^52); returns a copy. */
export function checkClock(c: unknown): ClockSample {
  if (typeof c !== "object" || c === null) throw brokerError("invalid_clock", "clock");
  const { bootId, boottimeMs, sleepDetected } = c as Record<string, unknown>;
  if (
    !isId(bootId) ||
    !Number.isSafeInteger(boottimeMs) ||
    (boottimeMs as number) < 0 ||
    (boottimeMs as number) > MAX_BOOTTIME_MS ||
    typeof sleepDetected !== "boolean"
  )
    throw brokerError("invalid_clock", "clock");
  return { bootId, boottimeMs: boottimeMs as number, sleepDetected };
}

/**
 * Classify `next` against the last accepted sample: a boot id change wins over time going
 * backwards, which wins over a reported sleep; undefined when the clock is continuous.
 */
export function discontinuity(last: { bootId: string; boottimeMs: number }, next: ClockSample): Discontinuity | undefined {
  if (next.bootId !== last.bootId) return "boot_mismatch";
  if (next.boottimeMs < last.boottimeMs) return "clock_rollback";
  if (next.sleepDetected) return "sleep";
  return undefined;
}

/**
 * The host clock the capacity ledger is driven by: the kernel boot id and CLOCK_BOOTTIME (which
 * keeps counting through suspend), read from /proc. A sleep is detected when boot time moved
 * further than the process's monotonic clock (which stops in suspend) between two samples.
 */
import { readFileSync } from "node:fs";
import type { ClockSample } from "../broker/index.ts";
import { HumanishError } from "../errors.ts";

/** Boot-time gain over monotonic time that counts as a sleep, ms. */
const SLEEP_SLACK_MS = 2_000;

/** A sampler of the host clock: each call returns a new sample. */
export type HostClock = () => ClockSample;

/**
 * Open the host clock. Throws `HUMANISH_HOST_CLOCK_UNAVAILABLE` when /proc does not say the boot
 * id or the uptime (not Linux, or /proc not mounted).
 */
export function openHostClock(): HostClock {
  const bootId = readBootId();
  let lastBoot = readBoottimeMs();
  let lastMono = performance.now();
  return () => {
    const boottimeMs = readBoottimeMs();
    const mono = performance.now();
    const sleepDetected = boottimeMs - lastBoot - (mono - lastMono) > SLEEP_SLACK_MS;
    lastBoot = boottimeMs;
    lastMono = mono;
    return { bootId, boottimeMs, sleepDetected };
  };
}

function readBootId(): string {
  try {
    const id = readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim().replaceAll("-", "").toLowerCase();
    if (/^[0-9a-f]{32}$/.test(id)) return id;
  } catch {
    // reported below
  }
  throw new HumanishError("HUMANISH_HOST_CLOCK_UNAVAILABLE", "/proc/sys/kernel/random/boot_id is missing or malformed", {
    next: "Run studies on Linux with /proc mounted (the capacity ledger needs the boot id).",
  });
}

function readBoottimeMs(): number {
  try {
    const first = readFileSync("/proc/uptime", "utf8").split(" ")[0];
    const s = Number(first);
    if (Number.isFinite(s) && s >= 0) return Math.floor(s * 1000);
  } catch {
    // reported below
  }
  throw new HumanishError("HUMANISH_HOST_CLOCK_UNAVAILABLE", "/proc/uptime is missing or malformed", {
    next: "Run studies on Linux with /proc mounted (the capacity ledger needs the boot clock).",
  });
}

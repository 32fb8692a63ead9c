/**
 * Was the host starved while a step ran? A scripted step that waits for the page (a
 * `waitForText`, an `open` settling) and times out on a host whose CPUs are saturated says
 * nothing about the product: the browser, the guest and this process were all waiting for a
 * core. This module measures that, so a timeout under starvation is reported as a harness
 * condition (`HUMANISH_HOST_STARVED`) and never as a finding about the product.
 *
 * Two independent signals, both sampled across the step:
 * - this process's event-loop lag: a timer due every {@link LAG_TICK_MS} ms that fires late
 *   measures how long the process could not run (the host runner drives every seat from it);
 * - CPU pressure: `/proc/pressure/cpu` ("some" = share of wall time at least one runnable task
 *   waited for a CPU) when the kernel offers it, else the 1-minute load average per core.
 *
 * {@link classifyStarvation} is pure; {@link startPressureProbe} does the I/O.
 */
import { readFileSync } from "node:fs";
import { availableParallelism, loadavg } from "node:os";

/** Interval of the lag timer, ms. */
export const LAG_TICK_MS = 100;
/** Event-loop lag at or above which the host counts as starved, ms. */
export const STARVED_LAG_MS = 1_000;
/** Share of the step's wall time with some task waiting for a CPU at or above which the host counts as starved (0–1). */
export const STARVED_CPU_SOME = 0.5;
/** 1-minute load average per core at or above which the host counts as starved (used without PSI). */
export const STARVED_LOAD_PER_CORE = 1.5;

/** What a probe measured over one step. */
export interface StepPressure {
  /** Wall time of the step, ms. */
  durationMs: number;
  /** Largest lateness of the lag timer during the step, ms (0 when it never fired late). */
  maxLagMs: number;
  /** `psi` when /proc/pressure/cpu was readable at both ends of the step, else `loadavg`. */
  source: "psi" | "loadavg";
  /** PSI only: share of the step's wall time some task waited for a CPU (0–1); null without PSI. */
  cpuSomeShare: number | null;
  /** 1-minute load average divided by the usable cores, at the end of the step. */
  loadPerCore: number;
  /** Usable cores of this process. */
  cores: number;
}

/** The classifier's verdict. */
export interface StarvationVerdict {
  starved: boolean;
  /** Which signals crossed their thresholds (empty when not starved). */
  signals: string[];
  /** One human line with every measurement, for the trace and the error message. */
  summary: string;
}

/** Decide whether `p` shows a starved host (any one signal over its threshold suffices). */
export function classifyStarvation(p: StepPressure): StarvationVerdict {
  const signals: string[] = [];
  if (p.maxLagMs >= STARVED_LAG_MS) signals.push("event_loop_lag");
  if (p.source === "psi" && p.cpuSomeShare !== null && p.cpuSomeShare >= STARVED_CPU_SOME) signals.push("cpu_pressure");
  if (p.source === "loadavg" && p.loadPerCore >= STARVED_LOAD_PER_CORE) signals.push("load_average");
  const psi = p.cpuSomeShare === null ? "no PSI" : `CPU pressure some=${Math.round(p.cpuSomeShare * 100)}% of the step`;
  const summary = `over ${Math.round(p.durationMs)} ms: event-loop lag up to ${Math.round(p.maxLagMs)} ms; ${psi}; load ${p.loadPerCore.toFixed(2)} per core on ${p.cores} cores`;
  return { starved: signals.length > 0, signals, summary };
}

/**
 * Parse the `some … total=<µs>` line of `/proc/pressure/cpu`.
 * @returns the cumulative stall time in µs, or undefined when the text has no such line.
 */
export function parseCpuSomeTotal(text: string): number | undefined {
  const m = /^some\b.*\btotal=(\d+)/m.exec(text);
  return m ? Number(m[1]) : undefined;
}

function readCpuSomeTotal(): number | undefined {
  try {
    return parseCpuSomeTotal(readFileSync("/proc/pressure/cpu", "utf8"));
  } catch {
    return undefined;
  }
}

/** A running probe: `stop()` ends the sampling and returns what it measured. */
export interface PressureProbe {
  stop(): StepPressure;
}

/** Start measuring; call `stop()` when the step ends (the lag timer never keeps the process alive). */
export function startPressureProbe(now: () => number = () => performance.now()): PressureProbe {
  const started = now();
  const psiStart = readCpuSomeTotal();
  let expected = started + LAG_TICK_MS;
  let maxLagMs = 0;
  const timer = setInterval(() => {
    const t = now();
    maxLagMs = Math.max(maxLagMs, t - expected);
    expected = t + LAG_TICK_MS;
  }, LAG_TICK_MS);
  timer.unref?.();
  let result: StepPressure | undefined;
  return {
    stop() {
      if (result) return result;
      clearInterval(timer);
      const ended = now();
      // A lag still running when the step ends (the timer overdue right now) counts too.
      maxLagMs = Math.max(maxLagMs, ended - expected);
      const durationMs = Math.max(0, ended - started);
      const psiEnd = readCpuSomeTotal();
      const cores = Math.max(1, availableParallelism());
      const havePsi = psiStart !== undefined && psiEnd !== undefined && durationMs > 0;
      result = {
        durationMs,
        maxLagMs: Math.max(0, maxLagMs),
        source: havePsi ? "psi" : "loadavg",
        cpuSomeShare: havePsi ? Math.min(1, Math.max(0, (psiEnd - psiStart) / 1000 / durationMs)) : null,
        loadPerCore: (loadavg()[0] ?? 0) / cores,
        cores,
      };
      return result;
    },
  };
}

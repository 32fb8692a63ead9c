import { describe, expect, test } from "bun:test";
import {
  classifyStarvation,
  parseCpuSomeTotal,
  STARVED_CPU_SOME,
  STARVED_LAG_MS,
  STARVED_LOAD_PER_CORE,
  type StepPressure,
  startPressureProbe,
} from "../../src/runtime/host-pressure.ts";

const quiet: StepPressure = { durationMs: 10_000, maxLagMs: 12, source: "psi", cpuSomeShare: 0.02, loadPerCore: 0.3, cores: 2 };

describe("classifyStarvation", () => {
  test("a quiet host is not starved", () => {
    const v = classifyStarvation(quiet);
    expect(v.starved).toBe(false);
    expect(v.signals).toEqual([]);
    expect(v.summary).toContain("event-loop lag up to 12 ms");
  });
  test("each signal alone, at its threshold, makes the host starved", () => {
    expect(classifyStarvation({ ...quiet, maxLagMs: STARVED_LAG_MS }).signals).toEqual(["event_loop_lag"]);
    expect(classifyStarvation({ ...quiet, cpuSomeShare: STARVED_CPU_SOME }).signals).toEqual(["cpu_pressure"]);
    expect(classifyStarvation({ ...quiet, source: "loadavg", cpuSomeShare: null, loadPerCore: STARVED_LOAD_PER_CORE }).signals).toEqual(["load_average"]);
  });
  test("just under every threshold is not starved", () => {
    const v = classifyStarvation({ ...quiet, maxLagMs: STARVED_LAG_MS - 1, cpuSomeShare: STARVED_CPU_SOME - 0.01, loadPerCore: 99 });
    expect(v.starved).toBe(false); // with PSI, the load average is not consulted
  });
  test("without PSI the load average decides and the summary says so", () => {
    const v = classifyStarvation({ ...quiet, source: "loadavg", cpuSomeShare: null, loadPerCore: 1.2 });
    expect(v.starved).toBe(false);
    expect(v.summary).toContain("no PSI");
  });
  test("all signals together are all named", () => {
    expect(classifyStarvation({ ...quiet, maxLagMs: 5_000, cpuSomeShare: 0.98 }).signals).toEqual(["event_loop_lag", "cpu_pressure"]);
  });
});

describe("parseCpuSomeTotal", () => {
  test("reads the some line's total", () => {
    expect(parseCpuSomeTotal("some avg10=97.97 avg60=98.04 avg300=93.30 total=872646265\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n")).toBe(872646265);
  });
  test("no some line → undefined", () => {
    expect(parseCpuSomeTotal("full avg10=0.00 total=5\n")).toBeUndefined();
    expect(parseCpuSomeTotal("")).toBeUndefined();
  });
});

describe("startPressureProbe", () => {
  test("a blocked event loop is measured as lag", async () => {
    const probe = startPressureProbe();
    await Bun.sleep(150);
    const until = performance.now() + 400;
    while (performance.now() < until) {
      /* hold the event loop */
    }
    const p = probe.stop();
    expect(p.maxLagMs).toBeGreaterThanOrEqual(250);
    expect(p.durationMs).toBeGreaterThanOrEqual(550);
    expect(probe.stop()).toBe(p); // stop is idempotent
    expect(p.cores).toBeGreaterThanOrEqual(1);
    if (p.source === "psi") expect(p.cpuSomeShare).not.toBeNull();
    else expect(p.cpuSomeShare).toBeNull();
  });
});

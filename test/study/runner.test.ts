/**
 * The runner's scheduling logic with an in-process lane double (no engine): order of phases,
 * concurrency bound, finalize always, failures stay seat results, unconfirmed releases keep
 * their slot, study caps, signals, lease loss. The real lanes are tested against Docker in
 * test/lanes and test/routes.
 */
import { describe, expect, test } from "bun:test";
import type { ClockSample } from "../../src/broker/index.ts";
import { expandSeats } from "../../src/lab/seats.ts";
import { type Lane, planConcurrency, runSeats, type SeatRelease } from "../../src/study/index.ts";
import { waitUntil } from "../support/wait.ts";

interface Facts {
  id: string;
  calls: string[];
  usd: number;
}

type Behaviour = { failIn?: string; release?: SeatRelease["outcome"]; usd?: number; holdMs?: number; create?: boolean };

function fakeLane(behave: (id: string) => Behaviour, log: { active: number; peak: number; events: string[] }): Lane<Facts> {
  return {
    name: "fake",
    spentUsd: (f) => f.usd,
    jobs: () => 0,
    session(seat, hooks) {
      const b = behave(seat.id);
      const facts: Facts = { id: seat.id, calls: [], usd: 0 };
      let created = false;
      const step = async (name: string) => {
        facts.calls.push(name);
        log.events.push(`${seat.id}:${name}`);
        if (b.failIn === name) throw new Error(`${name} broke`);
      };
      return {
        async prepare() {
          if (b.create !== false) {
            hooks.beforeCreate();
            created = true;
            hooks.created(`c-${seat.id}`);
            log.active++;
            log.peak = Math.max(log.peak, log.active);
          }
          await step("prepare");
        },
        openSession: () => step("open"),
        async participate() {
          await step("participate");
          await new Promise<void>((resolve) => {
            const t = setTimeout(resolve, b.holdMs ?? 5);
            hooks.signal.addEventListener("abort", () => (clearTimeout(t), resolve()), { once: true });
          });
          facts.usd = b.usd ?? 0;
        },
        check: () => step("check"),
        async finalize() {
          facts.calls.push("finalize");
          if (created) log.active--;
          return created ? { outcome: b.release ?? "released", id: `c-${seat.id}`, reason: "test" } : { outcome: "none", reason: "nothing created" };
        },
        snapshot: () => facts,
      };
    },
  };
}

let boot = 1_000_000;
const clock = (): ClockSample => ({ bootId: "0123456789abcdef0123456789abcdef", boottimeMs: (boot += 1), sleepDetected: false });
const base = { clock, caps: { maxTotalUsd: null, maxJobs: null }, progress: () => undefined };

describe("runSeats", () => {
  test("every seat runs the phases in order, at most `concurrency` at once", async () => {
    const log = { active: 0, peak: 0, events: [] as string[] };
    const r = await runSeats({
      ...base,
      seats: expandSeats({ count: 7 }),
      lane: fakeLane(() => ({ holdMs: 20 }), log),
      concurrency: 3,
      signal: new AbortController().signal,
    });
    expect(r.seats.map((s) => s.state)).toEqual(Array(7).fill("completed"));
    expect(r.seats.map((s) => s.seat.id)).toEqual(["p1", "p2", "p3", "p4", "p5", "p6", "p7"]);
    for (const s of r.seats) expect(s.facts?.calls).toEqual(["prepare", "open", "participate", "check", "finalize"]);
    expect(log.peak).toBe(3);
    expect(r.heldSlots).toEqual([]);
  });
  test("a failing seat is a seat result; finalize still runs, also after a failed prepare", async () => {
    const log = { active: 0, peak: 0, events: [] as string[] };
    const r = await runSeats({
      ...base,
      seats: expandSeats({ count: 3 }),
      lane: fakeLane((id) => (id === "p2" ? { failIn: "prepare" } : id === "p3" ? { failIn: "participate" } : {}), log),
      concurrency: 3,
      signal: new AbortController().signal,
    });
    expect(r.seats.map((s) => s.state)).toEqual(["completed", "failed", "failed"]);
    expect(r.seats[1]!.error?.code).toBe("HUMANISH_SEAT_FAILED");
    expect(r.seats[1]!.error?.message).toMatch(/in provision: prepare broke/);
    expect(r.seats[1]!.facts?.calls).toEqual(["prepare", "finalize"]);
    expect(r.seats[2]!.facts?.calls).toEqual(["prepare", "open", "participate", "finalize"]);
  });
  test("an unconfirmed release keeps its slot: later seats wait for freed slots, and the slot is reported held", async () => {
    const log = { active: 0, peak: 0, events: [] as string[] };
    const r = await runSeats({
      ...base,
      seats: expandSeats({ count: 4 }),
      lane: fakeLane((id) => (id === "p1" ? { release: "unconfirmed" } : { holdMs: 10 }), log),
      concurrency: 2,
      signal: new AbortController().signal,
    });
    expect(r.seats.map((s) => s.error?.message ?? s.state)).toEqual(["completed", "completed", "completed", "completed"]);
    expect(r.heldSlots).toEqual(["p1"]);
    expect(r.seats[0]!.slotFreed).toBe(false);
    // With p1's slot held, only one other seat could run at a time after it ended.
    expect(log.peak).toBeLessThanOrEqual(2);
  });
  test("seats after the study budget is spent are budget_reached, not failures", async () => {
    const log = { active: 0, peak: 0, events: [] as string[] };
    const r = await runSeats({
      ...base,
      caps: { maxTotalUsd: 0.5, maxJobs: null },
      seats: expandSeats({ count: 3 }),
      lane: fakeLane(() => ({ usd: 0.3 }), log),
      concurrency: 1,
      signal: new AbortController().signal,
    });
    expect(r.seats.map((s) => s.state)).toEqual(["completed", "completed", "budget_reached"]);
    expect(r.seats[2]!.release.reason).toMatch(/maxTotalUsd 0.5/);
    expect(r.knownUsd).toBeCloseTo(0.6);
  });
  test("maxJobs across seats: with one billable job per seat, no more seats start than the cap allows, even at full concurrency", async () => {
    const log = { active: 0, peak: 0, events: [] as string[] };
    const lane = { ...fakeLane(() => ({ holdMs: 20 }), log), jobsPerSeat: 1 };
    const r = await runSeats({
      ...base,
      caps: { maxTotalUsd: null, maxJobs: 2 },
      seats: expandSeats({ count: 4 }),
      lane,
      concurrency: 4,
      signal: new AbortController().signal,
    });
    expect(r.seats.map((s) => s.state)).toEqual(["completed", "completed", "budget_reached", "budget_reached"]);
    expect(r.seats[2]!.release.reason).toMatch(/one more seat would pass scenario.caps.maxJobs 2/);
    expect(r.heldSlots).toEqual([]);
  });
  test("an abort stops running seats (still finalized) and leaves the rest interrupted and not started", async () => {
    const log = { active: 0, peak: 0, events: [] as string[] };
    const ac = new AbortController();
    const p = runSeats({ ...base, seats: expandSeats({ count: 5 }), lane: fakeLane(() => ({ holdMs: 10_000 }), log), concurrency: 2, signal: ac.signal });
    // The abort comes once both running seats are inside participate (where they hold 10 s).
    await waitUntil(() => log.events.filter((e) => e.endsWith(":participate")).length === 2, "two seats participating");
    ac.abort("SIGINT");
    const r = await p;
    expect(r.seats.map((s) => s.state)).toEqual(Array(5).fill("interrupted"));
    expect(r.seats.slice(0, 2).map((s) => s.facts?.calls.at(-1))).toEqual(["finalize", "finalize"]);
    expect(r.seats.slice(2).map((s) => s.phase)).toEqual(["not_started", "not_started", "not_started"]);
    expect(log.active).toBe(0);
  });
  test("a clock discontinuity (sleep) ends the lease and stops every running seat", async () => {
    const log = { active: 0, peak: 0, events: [] as string[] };
    let n = 0;
    const sleepy = (): ClockSample => ({ bootId: "0123456789abcdef0123456789abcdef", boottimeMs: 5_000 + n, sleepDetected: n++ > 0 });
    const origSetInterval = globalThis.setInterval;
    // Renew on every tick of a fast timer, so the test need not wait for the real period.
    globalThis.setInterval = ((f: () => void) => origSetInterval(f, 5)) as typeof setInterval;
    try {
      const r = await runSeats({
        ...base,
        clock: sleepy,
        seats: expandSeats({ count: 2 }),
        lane: fakeLane(() => ({ holdMs: 10_000 }), log),
        concurrency: 2,
        signal: new AbortController().signal,
      });
      expect(r.leaseLost).toMatch(/capacity lease ended/);
      expect(r.seats.map((s) => s.state)).toEqual(["interrupted", "interrupted"]);
    } finally {
      globalThis.setInterval = origSetInterval;
    }
  });
});

describe("runSeats progress", () => {
  test("each seat's done event carries the lane's summary; a waiting seat says it waits for a capacity slot", async () => {
    const log = { active: 0, peak: 0, events: [] as string[] };
    const lane = { ...fakeLane(() => ({}), log), summary: (f: Facts) => ({ status: "passed", tasksPassed: f.calls.length, tasksTotal: 5 }) };
    const events: { seat: string; phase: string; detail?: string; summary?: unknown }[] = [];
    await runSeats({
      ...base,
      progress: (seat, phase, detail, summary) => events.push({ seat, phase, ...(detail ? { detail } : {}), ...(summary ? { summary } : {}) }),
      seats: expandSeats({ count: 2 }),
      lane,
      concurrency: 1,
      signal: new AbortController().signal,
    });
    expect(events.filter((e) => e.phase === "done").map((e) => [e.seat, e.summary])).toEqual([
      ["p1", { status: "passed", tasksPassed: 5, tasksTotal: 5 }],
      ["p2", { status: "passed", tasksPassed: 5, tasksTotal: 5 }],
    ]);
    expect(events.find((e) => e.seat === "p2")).toEqual({ seat: "p2", phase: "allocate", detail: "waiting for a capacity slot" });
  });
});

describe("planConcurrency", () => {
  const GiB = 1024 ** 3;
  test("all seats by default, capped by the ledger, memory and the env (which only lowers)", () => {
    expect(planConcurrency({ seats: 3, perStudyLimit: 4, seatMemoryBytes: GiB, availableMemoryBytes: 8 * GiB }).concurrency).toBe(3);
    const waves = planConcurrency({ seats: 16, perStudyLimit: 4, seatMemoryBytes: GiB, availableMemoryBytes: 8 * GiB });
    expect([waves.concurrency, waves.waves]).toEqual([4, 4]);
    expect(waves.warnings[0]!.message).toMatch(/16 seats run in waves of 4 \(4 waves; capped by the capacity ledger's 4 slots per study\)/);
    expect(planConcurrency({ seats: 4, perStudyLimit: 4, seatMemoryBytes: 2 * GiB, availableMemoryBytes: 5 * GiB }).concurrency).toBe(2);
    expect(planConcurrency({ seats: 4, requested: 3, envMax: "1", perStudyLimit: 4, seatMemoryBytes: GiB, availableMemoryBytes: 8 * GiB }).concurrency).toBe(1);
    expect(planConcurrency({ seats: 2, envMax: "9", perStudyLimit: 4, seatMemoryBytes: GiB, availableMemoryBytes: 8 * GiB }).concurrency).toBe(2);
  });
  test("a machine that cannot hold one seat is refused with the numbers; a bad env value is refused", () => {
    expect(() => planConcurrency({ seats: 2, perStudyLimit: 4, seatMemoryBytes: 2 * GiB, availableMemoryBytes: GiB })).toThrow(
      /one seat needs 2048 MiB .* this machine has 1024 MiB available/,
    );
    expect(() => planConcurrency({ seats: 2, envMax: "0", perStudyLimit: 4, seatMemoryBytes: GiB, availableMemoryBytes: 8 * GiB })).toThrow(
      /HUMANISH_MAX_CONCURRENCY must be a positive integer/,
    );
  });
});

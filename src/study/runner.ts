/**
 * The study runner: the one place of a seat's lifecycle. For each seat, at most `concurrency`
 * at a time: reserve a capacity slot → prepare → openSession → participate → check → finalize
 * (always, in `finally`) → free the slot only when the release is confirmed. A seat that throws
 * is a seat result, never the study's crash. Writing, verifying and reporting the bundle happen
 * once, after every seat, in the route.
 *
 * Capacity: one ledger study holds one slot per running seat. A seat whose slot cannot be
 * reserved waits for another seat's confirmed release; an `unconfirmed` release keeps its slot
 * for the rest of the study (so a study with leaked containers slows down instead of piling up
 * more). The lease is renewed on a timer from the host clock; a lost lease (expiry, or a clock
 * discontinuity such as a sleep) stops every running seat.
 */
import { createCapacityLedger } from "../broker/index.ts";
import { errorMessage, HumanishError, isHumanishError } from "../errors.ts";
import { type HostClock, openHostClock } from "./clock.ts";
import { remoteSlots, type SeatSlots } from "./remote-slots.ts";
import type { Lane, SeatHooks, SeatRelease, SeatResult, SeatSpec, SeatSummary } from "./types.ts";

/** Lease renewal period, ms (the ledger's lease is {@link LEASE_MS}). */
const RENEW_EVERY_MS = 10_000;
/** Lease length asked of the ledger, ms. */
const LEASE_MS = 60_000;

export interface RunSeatsOptions<F> {
  seats: readonly SeatSpec[];
  lane: Lane<F>;
  /** Most seats at once (see planConcurrency); at most the ledger's per-study limit. */
  concurrency: number;
  /** SIGINT/SIGTERM of the study. */
  signal: AbortSignal;
  caps: { maxTotalUsd: number | null; maxJobs: number | null };
  /** Seat progress (phase, detail, and on `done` the seat's summary); never allowed to throw into the runner. */
  progress: (seatId: string, phase: string, detail?: string, summary?: SeatSummary) => void;
  /** The host clock (default: /proc boot id and uptime). */
  clock?: HostClock;
  /** Entropy for the ledger (default node:crypto). */
  entropy?: (n: number) => Uint8Array;
  /**
   * Seats whose machines are remote (E2B): they take no slot of this host's capacity ledger
   * (whose per-study limit bounds local containers); `concurrency` alone bounds them, and an
   * unconfirmed release still keeps its slot for the rest of the study.
   */
  remote?: boolean;
}

export interface SeatsRun<F> {
  seats: SeatResult<F>[];
  /** Slots still held at the end (seats whose release was not confirmed). */
  heldSlots: string[];
  /** Set when the capacity lease was lost mid-study. */
  leaseLost?: string;
  knownUsd: number;
  knownJobs: number;
}

/** Run every seat of a study on `lane`; resolves when each has a result (never rejects for a seat). */
export async function runSeats<F>(o: RunSeatsOptions<F>): Promise<SeatsRun<F>> {
  const clock = o.clock ?? openHostClock();
  const { randomBytes } = await import("node:crypto");
  const ledger: SeatSlots = o.remote
    ? remoteSlots(Math.max(1, o.concurrency))
    : createCapacityLedger(
        { perStudy: Math.min(4, Math.max(1, o.concurrency)), maxAttemptsPerStudy: 32, ttlMs: LEASE_MS, startupCapMs: 600_000, studyCapMs: 86_400_000 },
        { entropy: o.entropy ?? ((n) => new Uint8Array(randomBytes(n))), clock: clock() },
      );
  ledger.activate();
  const stop = new AbortController();
  const signal = AbortSignal.any([o.signal, stop.signal]);
  let leaseLost: string | undefined;
  const renew = setInterval(() => {
    try {
      const lost = ledger.advance(clock());
      if (lost.length > 0 || ledger.mode === "reconciliation") throw new Error(`the capacity lease ended (${ledger.mode})`);
      ledger.renew();
    } catch (e) {
      leaseLost ??= errorMessage(e);
      stop.abort("lease");
    }
  }, RENEW_EVERY_MS);
  renew.unref?.();

  const results: SeatResult<F>[] = new Array(o.seats.length);
  const freed = new Set<() => void>();
  const notifyFreed = () => {
    for (const f of [...freed]) f();
  };
  let running = 0;
  let knownUsd = 0;
  let knownJobs = 0;
  // Jobs of the seats started so far, counted when they start (their known jobs come at the end).
  let startedJobs = 0;
  let next = 0;
  const say = (id: string, phase: string, detail?: string, summary?: SeatSummary) => {
    try {
      o.progress(id, phase, detail, summary);
    } catch {
      // a broken progress sink never stops a study
    }
  };

  const budgetReason = (): string | undefined => {
    if (o.caps.maxTotalUsd !== null && knownUsd > 0 && knownUsd >= o.caps.maxTotalUsd)
      return `the study's known spend ${knownUsd} USD reached scenario.caps.maxTotalUsd ${o.caps.maxTotalUsd}`;
    if (o.caps.maxJobs !== null && knownJobs > 0 && knownJobs >= o.caps.maxJobs)
      return `${knownJobs} known billable job(s) reached scenario.caps.maxJobs ${o.caps.maxJobs}`;
    const perSeat = o.lane.jobsPerSeat ?? 0;
    if (o.caps.maxJobs !== null && perSeat > 0 && startedJobs + perSeat > o.caps.maxJobs)
      return `${startedJobs} billable job(s) already started; one more seat would pass scenario.caps.maxJobs ${o.caps.maxJobs}`;
    return undefined;
  };

  // A reserve is idempotent per seat (a retry replays the first answer, also a refusal), so a
  // seat only asks once a slot is free by the ledger's own count.
  const perStudy = ledger.usage().perStudy;
  const waitForFreedSlot = () =>
    new Promise<void>((resolve) => {
      const done = () => {
        freed.delete(done);
        signal.removeEventListener("abort", done);
        resolve();
      };
      freed.add(done);
      signal.addEventListener("abort", done, { once: true });
    });
  const reserve = async (seatId: string): Promise<{ ok: true } | { ok: false; error: SeatResult<F>["error"] }> => {
    while (ledger.usage().used >= perStudy && running > 0 && !signal.aborted) await waitForFreedSlot();
    if (signal.aborted) return { ok: false, error: undefined };
    const r = ledger.reserve(seatId);
    if (r.ok) {
      // Counted in the same tick as the reservation, so a waiting seat never sees the slot taken
      // by nobody running.
      running++;
      return { ok: true };
    }
    return {
      ok: false,
      error: {
        code: "HUMANISH_STUDY_CAPACITY",
        message: `no capacity slot for seat ${seatId} (${r.code}; ${ledger.usage().used} of ${perStudy} slot(s) held, by releases that were not confirmed)`,
        next: "Remove the containers named in the cleanup proof by id (docker rm -f <id>) and run the study again.",
      },
    };
  };

  const runOne = async (seat: SeatSpec): Promise<SeatResult<F>> => {
    const t0 = performance.now();
    const notStarted = (state: SeatResult<F>["state"], reason: string, error?: SeatResult<F>["error"]): SeatResult<F> => {
      say(seat.id, "done", reason);
      return { seat, state, phase: "not_started", ...(error ? { error } : {}), release: { outcome: "none", reason }, slotFreed: true, durationMs: 0 };
    };
    if (signal.aborted) return notStarted("interrupted", "not started: the study was interrupted");
    const budget = budgetReason();
    if (budget) return notStarted("budget_reached", `not started: ${budget}`);
    say(seat.id, "allocate", "waiting for a capacity slot");
    const slot = await reserve(seat.id);
    if (!slot.ok)
      return slot.error ? notStarted("failed", slot.error.message, slot.error) : notStarted("interrupted", "not started: the study was interrupted");
    // The wait may have outlasted the budget: check again once the slot is held.
    const late = budgetReason();
    if (late) {
      ledger.confirmAbsent(seat.id);
      running--;
      notifyFreed();
      return notStarted("budget_reached", `not started: ${late}`);
    }
    startedJobs += o.lane.jobsPerSeat ?? 0;
    let phase = "allocate";
    let creating = false;
    let created = false;
    const hooks: SeatHooks = {
      signal,
      progress: (p, d) => say(seat.id, p, d),
      beforeCreate: () => {
        ledger.beginCreate(seat.id);
        creating = true;
      },
      created: () => {
        if (creating && !created) ledger.recordOutcome(seat.id, "present");
        created = true;
      },
      remainingUsd: () => (o.caps.maxTotalUsd === null ? null : Math.max(0, o.caps.maxTotalUsd - knownUsd)),
    };
    const startedAt = new Date().toISOString();
    const session = o.lane.session(seat, hooks);
    let error: SeatResult<F>["error"];
    let release: SeatRelease = { outcome: "none", reason: "nothing was created" };
    try {
      const steps: [string, () => Promise<void>][] = [
        ["provision", () => session.prepare()],
        ["open", () => session.openSession()],
        ["participate", () => session.participate()],
        ["check", () => session.check()],
      ];
      for (const [name, step] of steps) {
        if (signal.aborted) break;
        phase = name;
        await step();
      }
    } catch (e) {
      if (!signal.aborted) error = isHumanishError(e) || !o.lane.harnessError ? harnessError(e, phase) : o.lane.harnessError(e, phase);
    } finally {
      say(seat.id, "teardown");
      try {
        release = await session.finalize({ ...(error ? { error } : {}), interrupted: signal.aborted });
      } catch (e) {
        release = { outcome: "unconfirmed", reason: `finalize threw: ${errorMessage(e)}` };
      }
      if (creating && !created) ledger.recordOutcome(seat.id, release.outcome === "none" ? "unknown" : "present");
    }
    const slotFreed = release.outcome === "released" || release.outcome === "none";
    if (slotFreed) ledger.confirmAbsent(seat.id);
    running--;
    notifyFreed();
    const facts = session.snapshot();
    knownUsd += o.lane.spentUsd(facts);
    knownJobs += o.lane.jobs(facts);
    const state: SeatResult<F>["state"] = error ? "failed" : signal.aborted ? "interrupted" : "completed";
    // A one-seat study's line goes on through write and verify (finishStudy ends it).
    if (o.seats.length > 1) say(seat.id, "done", state, o.lane.summary?.(facts));
    return {
      seat,
      state,
      phase: state === "completed" ? "done" : phase,
      ...(error ? { error } : {}),
      release,
      slotFreed,
      startedAt,
      durationMs: Math.round(performance.now() - t0),
      facts,
    };
  };

  const worker = async () => {
    for (;;) {
      const i = next++;
      const seat = o.seats[i];
      if (seat === undefined) return;
      results[i] = await runOne(seat);
    }
  };
  try {
    await Promise.all(Array.from({ length: Math.max(1, Math.min(o.concurrency, o.seats.length)) }, worker));
  } finally {
    clearInterval(renew);
  }
  const heldSlots = results.filter((r) => !r.slotFreed).map((r) => r.seat.id);
  try {
    ledger.release();
  } catch {
    // the study already ended (lease lost): its held slots are listed in heldSlots
  }
  return { seats: results, heldSlots, ...(leaseLost ? { leaseLost } : {}), knownUsd, knownJobs };
}

function harnessError(e: unknown, phase: string): NonNullable<SeatResult<unknown>["error"]> {
  if (isHumanishError(e)) return { code: e.code, message: e.message, ...(e.next ? { next: e.next } : {}) };
  const h = new HumanishError("HUMANISH_SEAT_FAILED", `the seat failed in ${phase}: ${errorMessage(e)}`, {
    next: "Read the seat's lifecycle in the bundle and rerun; report a bug if it repeats.",
  });
  return { code: h.code, message: h.message, ...(h.next ? { next: h.next } : {}) };
}

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
import type { Lane, SeatHooks, SeatRelease, SeatResult, SeatSession, SeatSpec, SeatSummary } from "./types.ts";

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
  const s: RunState<F> = {
    o,
    ledger,
    signal: AbortSignal.any([o.signal, stop.signal]),
    freed: new Set(),
    running: 0,
    knownUsd: 0,
    knownJobs: 0,
    startedJobs: 0,
    // A reserve is idempotent per seat (a retry replays the first answer, also a refusal), so a
    // seat only asks once a slot is free by the ledger's own count.
    perStudy: ledger.usage().perStudy,
  };
  const renew = setInterval(() => renewLease(s, clock, stop), RENEW_EVERY_MS);
  renew.unref?.();

  const results: SeatResult<F>[] = new Array(o.seats.length);
  let next = 0;
  const worker = async () => {
    for (;;) {
      const i = next++;
      const seat = o.seats[i];
      if (seat === undefined) return;
      results[i] = await runOne(s, seat);
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
  const { leaseLost, knownUsd, knownJobs } = s;
  return { seats: results, heldSlots, ...(leaseLost ? { leaseLost } : {}), knownUsd, knownJobs };
}

/** One study's runner state, shared by the seats' workers (counts and the known spend, USD). */
interface RunState<F> {
  o: RunSeatsOptions<F>;
  ledger: SeatSlots;
  /** The study's signal, or the runner's own stop once the lease is lost. */
  signal: AbortSignal;
  /** Waiters for a freed slot. */
  freed: Set<() => void>;
  perStudy: number;
  running: number;
  knownUsd: number;
  knownJobs: number;
  /** Jobs of the seats started so far, counted when they start (their known jobs come at the end). */
  startedJobs: number;
  leaseLost?: string;
}

/** One renewal tick: advance the ledger's clock and renew its lease; a lost lease (or a clock discontinuity) stops every seat. */
function renewLease<F>(s: RunState<F>, clock: HostClock, stop: AbortController): void {
  try {
    const lost = s.ledger.advance(clock());
    if (lost.length > 0 || s.ledger.mode === "reconciliation") throw new Error(`the capacity lease ended (${s.ledger.mode})`);
    s.ledger.renew();
  } catch (e) {
    s.leaseLost ??= errorMessage(e);
    stop.abort("lease");
  }
}

/** Seat progress to the study's sink; a broken sink never stops a study. */
function say<F>(s: RunState<F>, id: string, phase: string, detail?: string, summary?: SeatSummary): void {
  try {
    s.o.progress(id, phase, detail, summary);
  } catch {
    // a broken progress sink never stops a study
  }
}

function notifyFreed<F>(s: RunState<F>): void {
  for (const f of [...s.freed]) f();
}

/** Why no further seat may start (the study's shared caps), or undefined. */
function budgetReason<F>(s: RunState<F>): string | undefined {
  const { caps, lane } = s.o;
  if (caps.maxTotalUsd !== null && s.knownUsd > 0 && s.knownUsd >= caps.maxTotalUsd)
    return `the study's known spend ${s.knownUsd} USD reached scenario.caps.maxTotalUsd ${caps.maxTotalUsd}`;
  if (caps.maxJobs !== null && s.knownJobs > 0 && s.knownJobs >= caps.maxJobs)
    return `${s.knownJobs} known billable job(s) reached scenario.caps.maxJobs ${caps.maxJobs}`;
  const perSeat = lane.jobsPerSeat ?? 0;
  if (caps.maxJobs !== null && perSeat > 0 && s.startedJobs + perSeat > caps.maxJobs)
    return `${s.startedJobs} billable job(s) already started; one more seat would pass scenario.caps.maxJobs ${caps.maxJobs}`;
  return undefined;
}

/** Resolves when another seat frees a slot, or the study is stopped. */
function waitForFreedSlot<F>(s: RunState<F>): Promise<void> {
  return new Promise<void>((resolve) => {
    const done = () => {
      s.freed.delete(done);
      s.signal.removeEventListener("abort", done);
      resolve();
    };
    s.freed.add(done);
    s.signal.addEventListener("abort", done, { once: true });
  });
}

/**
 * Reserves a slot for `seatId`, waiting while every slot is held by running seats. Not ok with
 * no error: the study was stopped; with `HUMANISH_STUDY_CAPACITY`: the slots are held by
 * releases that were not confirmed.
 */
async function reserve<F>(s: RunState<F>, seatId: string): Promise<{ ok: true } | { ok: false; error: SeatResult<F>["error"] }> {
  const { ledger, perStudy } = s;
  while (ledger.usage().used >= perStudy && s.running > 0 && !s.signal.aborted) await waitForFreedSlot(s);
  if (s.signal.aborted) return { ok: false, error: undefined };
  const r = ledger.reserve(seatId);
  if (r.ok) {
    // Counted in the same tick as the reservation, so a waiting seat never sees the slot taken
    // by nobody running.
    s.running++;
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
}

/**
 * Admits a seat: its slot held and the budget still open. A result when it does not start
 * (interrupted, budget reached, or no slot), else undefined: the slot is the seat's and its
 * jobs are counted as started.
 */
async function admitSeat<F>(s: RunState<F>, seat: SeatSpec): Promise<SeatResult<F> | undefined> {
  const notStarted = (state: SeatResult<F>["state"], reason: string, error?: SeatResult<F>["error"]): SeatResult<F> => {
    say(s, seat.id, "done", reason);
    return { seat, state, phase: "not_started", ...(error ? { error } : {}), release: { outcome: "none", reason }, slotFreed: true, durationMs: 0 };
  };
  if (s.signal.aborted) return notStarted("interrupted", "not started: the study was interrupted");
  const budget = budgetReason(s);
  if (budget) return notStarted("budget_reached", `not started: ${budget}`);
  say(s, seat.id, "allocate", "waiting for a capacity slot");
  const slot = await reserve(s, seat.id);
  if (!slot.ok) return slot.error ? notStarted("failed", slot.error.message, slot.error) : notStarted("interrupted", "not started: the study was interrupted");
  // The wait may have outlasted the budget: check again once the slot is held.
  const late = budgetReason(s);
  if (late) {
    s.ledger.confirmAbsent(seat.id);
    s.running--;
    notifyFreed(s);
    return notStarted("budget_reached", `not started: ${late}`);
  }
  // Counted in the same tick as the last budget check, so a seat starting beside it sees these jobs.
  s.startedJobs += s.o.lane.jobsPerSeat ?? 0;
  return undefined;
}

/** Whether a seat asked to create its machine, and whether it said the machine exists (for the ledger's outcome). */
interface CreateTrack {
  creating: boolean;
  created: boolean;
}

/** The hooks a seat's session gets: the study's signal, its progress, the ledger's create bracket, the study's remaining USD. */
function seatHooks<F>(s: RunState<F>, seat: SeatSpec, track: CreateTrack): SeatHooks {
  const { ledger, o } = s;
  return {
    signal: s.signal,
    progress: (p, d) => say(s, seat.id, p, d),
    beforeCreate: () => {
      ledger.beginCreate(seat.id);
      track.creating = true;
    },
    created: () => {
      if (track.creating && !track.created) ledger.recordOutcome(seat.id, "present");
      track.created = true;
    },
    remainingUsd: () => (o.caps.maxTotalUsd === null ? null : Math.max(0, o.caps.maxTotalUsd - s.knownUsd)),
  };
}

/** One seat, from its admission to its result (never throws for the seat's own failures). */
async function runOne<F>(s: RunState<F>, seat: SeatSpec): Promise<SeatResult<F>> {
  const t0 = performance.now();
  const refused = await admitSeat(s, seat);
  if (refused) return refused;
  const { o, ledger } = s;
  const track: CreateTrack = { creating: false, created: false };
  const startedAt = new Date().toISOString();
  const session = o.lane.session(seat, seatHooks(s, seat, track));
  const { phase, error, release } = await runSession(s, seat, session, track);
  const slotFreed = release.outcome === "released" || release.outcome === "none";
  if (slotFreed) ledger.confirmAbsent(seat.id);
  s.running--;
  notifyFreed(s);
  const facts = session.snapshot();
  s.knownUsd += o.lane.spentUsd(facts);
  s.knownJobs += o.lane.jobs(facts);
  const state: SeatResult<F>["state"] = error ? "failed" : s.signal.aborted ? "interrupted" : "completed";
  // A one-seat study's line goes on through write and verify (finishStudy ends it).
  if (o.seats.length > 1) say(s, seat.id, "done", state, o.lane.summary?.(facts));
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
}

/**
 * The session's steps in order (each skipped once the study is stopped), then `finalize`,
 * always, and the ledger told what became of a create that never said it succeeded. The phase it ended in, its harness error (none when it was stopped), and the release
 * (`unconfirmed` when finalize itself threw).
 */
async function runSession<F>(
  s: RunState<F>,
  seat: SeatSpec,
  session: SeatSession<F>,
  track: CreateTrack,
): Promise<{ phase: string; error: SeatResult<F>["error"]; release: SeatRelease }> {
  const { o, signal } = s;
  let phase = "allocate";
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
    say(s, seat.id, "teardown");
    try {
      release = await session.finalize({ ...(error ? { error } : {}), interrupted: signal.aborted });
    } catch (e) {
      release = { outcome: "unconfirmed", reason: `finalize threw: ${errorMessage(e)}` };
    }
    if (track.creating && !track.created) s.ledger.recordOutcome(seat.id, release.outcome === "none" ? "unknown" : "present");
  }
  return { phase, error, release };
}

function harnessError(e: unknown, phase: string): NonNullable<SeatResult<unknown>["error"]> {
  if (isHumanishError(e)) return { code: e.code, message: e.message, ...(e.next ? { next: e.next } : {}) };
  const h = new HumanishError("HUMANISH_SEAT_FAILED", `the seat failed in ${phase}: ${errorMessage(e)}`, {
    next: "Read the seat's lifecycle in the bundle and rerun; report a bug if it repeats.",
  });
  return { code: h.code, message: h.message, ...(h.next ? { next: h.next } : {}) };
}

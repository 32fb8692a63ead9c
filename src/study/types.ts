/**
 * The seam between the study runner and a lane. A lane knows how to give one seat its own
 * machine (a Docker sandbox, a guest desktop, later a remote sandbox) and take it back; the
 * runner knows everything else about a seat's life: the capacity slot, the order of phases,
 * caps, signals, and that `finalize` always runs.
 */
import type { SeatSpec } from "../lab/seats.ts";

export type { SeatSpec } from "../lab/seats.ts";

/** How a seat's machine was given back: the release proof's outcome, or `none` when nothing was ever created. */
export interface SeatRelease {
  outcome: "released" | "retained" | "unconfirmed" | "none";
  /** The exact container id released (absent for `none`). */
  id?: string;
  reason: string;
}

/** What the runner hands a seat: its signal, a progress sink, and the two capacity hooks around the one create. */
export interface SeatHooks {
  /** Aborts on SIGINT/SIGTERM or when the study's capacity lease is lost. */
  signal: AbortSignal;
  /** A progress line for this seat (never throws). */
  progress(phase: string, detail?: string): void;
  /** Call immediately before the seat's single container create: the slot becomes `creating`. */
  beforeCreate(): void;
  /** Call with the exact container id as soon as the create returned it: the slot becomes `present`. */
  created(id: string): void;
  /** USD the study may still spend (null: no study cap), for a seat's own spend guard. */
  remainingUsd(): number | null;
}

/**
 * One seat's session on a lane. The runner calls, in order: `prepare` (allocate, record the
 * exact id before provisioning, provision), `openSession` (hand the participant its
 * executor/sandbox), `participate`, `check` (hidden task checks); then, always — also after a
 * failed `prepare` or an interruption — `finalize` (collect evidence, release by exact id) and
 * finally `snapshot`. A method that throws ends the seat as a harness failure; it never ends the
 * study.
 */
export interface SeatSession<F> {
  prepare(): Promise<void>;
  openSession(): Promise<void>;
  participate(): Promise<void>;
  check(): Promise<void>;
  /**
   * Collect evidence and release by exact id; must not throw (a failed release is an outcome).
   * `end.error` is the harness failure that ended the seat early, if any; `end.interrupted` says
   * the study was stopped by a signal (or lost its capacity lease).
   */
  finalize(end: { error?: { code: string; message: string; next?: string }; interrupted: boolean }): Promise<SeatRelease>;
  /** The seat's facts for the bundle, once `finalize` ran. */
  snapshot(): F;
}

/** A lane: makes one session per seat and reads the two numbers the study's caps sum. */
export interface Lane<F> {
  /** `docker-terminal`, `local-guest`, … */
  readonly name: string;
  session(seat: SeatSpec, hooks: SeatHooks): SeatSession<F>;
  /** Known USD the seat spent (0 when it calls no metered provider). */
  spentUsd(facts: F): number;
  /** Known billable jobs the seat ran. */
  jobs(facts: F): number;
  /**
   * Billable jobs one seat may start (1 for a participant that calls a model, 0 otherwise): with
   * `maxJobs`, the runner starts no seat whose jobs would pass the cap, even before any is known.
   */
  jobsPerSeat?: number;
  /** What a seat's `done` progress event carries: its participant's status and its tasks passed. */
  summary?(facts: F): SeatSummary;
  /** The lane's own code for an unexpected error in `phase` (default `HUMANISH_SEAT_FAILED`). */
  harnessError?(e: unknown, phase: string): { code: string; message: string; next?: string };
}

/** The facts of a finished seat its `done` progress event carries. */
export interface SeatSummary {
  status?: string;
  completionReason?: string;
  tasksPassed?: number;
  tasksTotal?: number;
}

/** How a seat ended, as the runner saw it (the participant's own verdict is in the facts). */
export type SeatState = "completed" | "failed" | "interrupted" | "budget_reached";

/** One seat's result. */
export interface SeatResult<F> {
  seat: SeatSpec;
  state: SeatState;
  /** The phase the seat was in when it ended (`done` when it completed). */
  phase: string;
  /** Set for `failed`: the harness failure. */
  error?: { code: string; message: string; next?: string };
  release: SeatRelease;
  /** True when the seat's capacity slot was freed (its release confirmed, or nothing created). */
  slotFreed: boolean;
  startedAt?: string;
  durationMs: number;
  /** Undefined only for a seat that never started. */
  facts?: F;
}

/**
 * The study runner (see ./runner.ts): one per-seat lifecycle for every route and lane, with the
 * capacity ledger, concurrency plan, study caps and signals.
 */
export { type HostClock, openHostClock } from "./clock.ts";
export { type ConcurrencyInput, type ConcurrencyPlan, planConcurrency, planStudyConcurrency } from "./plan.ts";
export { parseRerunWhich, pickSeatSpecs, pickSeats, planRerun, RERUN_WHICH, type RerunPlan, type RerunWhich } from "./rerun.ts";
export { type RunSeatsOptions, runSeats, type SeatsRun } from "./runner.ts";
export type { Lane, SeatHooks, SeatRelease, SeatResult, SeatSession, SeatSpec, SeatState, SeatSummary } from "./types.ts";

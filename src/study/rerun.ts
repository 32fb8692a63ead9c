/**
 * Continuing a study (`lab run --rerun-failed-from RUN`) — pure planning. Given the verified chain
 * of runs ending at RUN (oldest first, see src/bundle/chain.ts), choose the seats to run again:
 *
 * - `harness` (the default): the seats whose last attempt failed as a harness — a seat the study
 *   runner ended as failed (an engine error, a sandbox that never came up, a lost lease), a
 *   participant whose runtime failed or was interrupted, every seat of a run that failed as a
 *   whole. These seats are no evidence about the product, so running them again only fills the
 *   denominator; it cannot make the product look better.
 * - `not-reached`: every seat whose last attempt did not reach the goal (harness failures and
 *   findings). That gives the seats that failed a second chance and the ones that passed none,
 *   so the combined rate reads higher than one attempt each would; the result says so.
 *
 * The new run keeps the earlier seats' ids, so "each seat counted once, its last attempt" is
 * well defined (src/bundle/combined.ts).
 */
import { type CombinedResult, combineChain } from "../bundle/combined.ts";
import type { Continues, RunBundle } from "../bundle/schemas.ts";
import { HumanishError } from "../errors.ts";
import type { SeatSpec } from "./types.ts";

/** Which seats a continued run reruns. */
export type RerunWhich = Continues["which"];

/** The choices of `--rerun-which`, default first. */
export const RERUN_WHICH: readonly RerunWhich[] = ["harness", "not-reached"];

/**
 * The `--rerun-which` value (absent: `harness`).
 * @throws HUMANISH_RERUN_WHICH_INVALID for any other value
 */
export function parseRerunWhich(raw: string | undefined): RerunWhich {
  if (raw === undefined) return "harness";
  const hit = RERUN_WHICH.find((w) => w === raw);
  if (hit) return hit;
  throw new HumanishError("HUMANISH_RERUN_WHICH_INVALID", `--rerun-which must be harness or not-reached (got ${JSON.stringify(raw.slice(0, 40))})`, {
    next: "pass --rerun-which harness (seats that failed as a harness) or --rerun-which not-reached",
  });
}

/** What {@link planRerun} reads. */
export interface RerunInput {
  /** The verified chain ending at the run to continue, oldest first. */
  chain: readonly RunBundle[];
  /** SHA-256 of the continued run's `run.json` bytes, as they verified. */
  runJsonSha256: string;
  /** The lab about to run: its id and the SHA-256 of its text. */
  lab: { id: string; sha256: string };
  which: RerunWhich;
}

/** The plan: the seats to run (in the earlier run's order) and the link the new run records. */
export interface RerunPlan {
  seats: string[];
  continues: Continues;
  /** The combined result the rerun starts from. */
  before: CombinedResult;
}

/**
 * Choose the seats to rerun (see the module comment).
 * @throws HUMANISH_RERUN_DRY_RUN (the run is a dry run: nobody ran), HUMANISH_RERUN_LAB_MISMATCH
 *   (a run of another lab), HUMANISH_RERUN_LAB_CHANGED (the lab text changed since: its attempts
 *   would not be of one study), HUMANISH_RERUN_NOTHING (no seat to rerun under `which`)
 */
export function planRerun(i: RerunInput): RerunPlan {
  const last = i.chain[i.chain.length - 1]!;
  const id = last.runId;
  if (last.mode === "dry-run") {
    throw new HumanishError("HUMANISH_RERUN_DRY_RUN", `run ${id} is a dry run: contract only, nobody ran, so no seat failed`, {
      next: `run the lab live (humanish lab run ${i.lab.id} --live), then continue that run if seats fail`,
    });
  }
  if (last.lab.id !== i.lab.id) {
    throw new HumanishError("HUMANISH_RERUN_LAB_MISMATCH", `run ${id} is of lab ${last.lab.id}, not ${i.lab.id}; a continued run reruns seats of its own lab`, {
      next: `humanish lab run ${last.lab.id} --rerun-failed-from ${id}`,
    });
  }
  if (last.lab.source.sha256 !== i.lab.sha256) {
    throw new HumanishError(
      "HUMANISH_RERUN_LAB_CHANGED",
      `the text of lab ${i.lab.id} changed since run ${id} (SHA-256 ${last.lab.source.sha256.slice(0, 12)}… then, ${i.lab.sha256.slice(0, 12)}… now): attempts under two lab texts are not one study`,
      { next: `restore the lab text run ${id} used (its SHA-256 is in run.json lab.source), or run the changed lab as a new study` },
    );
  }
  const before = combineChain(i.chain);
  const pick = before.seats.filter((s) => (i.which === "harness" ? s.last.counted === "harness" : s.last.counted !== "goal"));
  if (pick.length === 0) {
    const notReached = before.seats.filter((s) => s.last.counted !== "goal").length;
    throw new HumanishError(
      "HUMANISH_RERUN_NOTHING",
      `run ${id} has nothing to rerun: ${i.which === "harness" ? "no seat failed as a harness" : "every seat reached the goal"} (${before.line})`,
      {
        next:
          i.which === "harness" && notReached > 0
            ? `--rerun-which not-reached reruns the ${notReached} seat(s) that did not reach the goal`
            : "the study is complete; compare it with another run: humanish runs compare <a> <b>",
      },
    );
  }
  const seats = pick.map((s) => s.id);
  return { seats, continues: { runId: id, runJsonSha256: i.runJsonSha256, which: i.which, seats }, before };
}

/**
 * The seats of a study restricted to `ids` (a continued run), in study order and indexed afresh
 * from 0 (the new run's own positions; the ids tie them to the earlier run). Absent: every seat.
 * `seatOf` reads the seat of an item (a plain seat, or a browser seat with its device).
 */
export function pickSeats<T>(items: readonly T[], ids: readonly string[] | undefined, seatOf: (t: T) => SeatSpec, withSeat: (t: T, s: SeatSpec) => T): T[] {
  if (!ids) return [...items];
  const want = new Set(ids);
  return items.filter((t) => want.has(seatOf(t).id)).map((t, index) => withSeat(t, { ...seatOf(t), index }));
}

/** {@link pickSeats} over plain seats. */
export function pickSeatSpecs(seats: readonly SeatSpec[], ids: readonly string[] | undefined): SeatSpec[] {
  return pickSeats(
    seats,
    ids,
    (s) => s,
    (_, s) => s,
  );
}

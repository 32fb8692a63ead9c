/**
 * How many seats run at once — pure. The number is the smallest of: the seats, the lab's
 * `execution.concurrency`, the capacity ledger's per-study slot limit, how many seats' memory
 * limits fit in the memory the machine has, and `HUMANISH_MAX_CONCURRENCY` (which can only
 * lower it). A machine that cannot hold even one seat is refused before anything starts.
 */
import { POLICY_BOUNDS } from "../broker/policy.ts";
import { HumanishError } from "../errors.ts";

export interface ConcurrencyInput {
  seats: number;
  /** `execution.concurrency`, if set. */
  requested?: number;
  /** The raw `HUMANISH_MAX_CONCURRENCY` value, if set. */
  envMax?: string;
  /** The capacity ledger's per-study slot limit. */
  perStudyLimit: number;
  /** The memory limit one seat's container is created with, bytes. */
  seatMemoryBytes: number;
  /** Memory the machine can give the study, bytes. */
  availableMemoryBytes: number;
}

export interface ConcurrencyPlan {
  concurrency: number;
  /** Seats ÷ concurrency, rounded up. */
  waves: number;
  /** What capped it, in words (for the warning). */
  cappedBy: string[];
  warnings: { code: string; message: string }[];
}

const MiB = 1024 * 1024;

/**
 * Plan concurrency. Throws `HUMANISH_STUDY_CANNOT_FIT` (with the numbers) when not one seat's
 * memory fits, `HUMANISH_MAX_CONCURRENCY_INVALID` for a malformed env value.
 */
export function planConcurrency(i: ConcurrencyInput): ConcurrencyPlan {
  const fit = Math.floor(i.availableMemoryBytes / i.seatMemoryBytes);
  if (fit < 1) {
    throw new HumanishError(
      "HUMANISH_STUDY_CANNOT_FIT",
      `one seat needs ${Math.round(i.seatMemoryBytes / MiB)} MiB (its container's memory limit) but this machine has ${Math.round(i.availableMemoryBytes / MiB)} MiB available; nothing was started`,
      { next: "Free memory (stop other containers or programs) or run the study on a larger machine." },
    );
  }
  const caps: [number, string][] = [
    [i.seats, "seats"],
    [i.perStudyLimit, `the capacity ledger's ${i.perStudyLimit} slots per study`],
    [fit, `memory for ${fit} seat(s) of ${Math.round(i.seatMemoryBytes / MiB)} MiB`],
  ];
  if (i.requested !== undefined) caps.push([i.requested, "execution.concurrency"]);
  if (i.envMax !== undefined && i.envMax !== "") {
    const n = Number(i.envMax);
    if (!/^[0-9]+$/.test(i.envMax) || !Number.isSafeInteger(n) || n < 1) {
      throw new HumanishError("HUMANISH_MAX_CONCURRENCY_INVALID", `HUMANISH_MAX_CONCURRENCY must be a positive integer (got ${JSON.stringify(i.envMax)})`, {
        next: "Set HUMANISH_MAX_CONCURRENCY to 1 or more, or unset it.",
      });
    }
    caps.push([n, "HUMANISH_MAX_CONCURRENCY"]);
  }
  const concurrency = Math.max(1, Math.min(...caps.map(([n]) => n)));
  const cappedBy = caps.filter(([n, why]) => n === concurrency && why !== "seats").map(([, why]) => why);
  const waves = Math.ceil(i.seats / concurrency);
  const warnings =
    waves > 1
      ? [
          {
            code: "HUMANISH_STUDY_WAVES",
            message: `${i.seats} seats run in waves of ${concurrency} (${waves} waves; capped by ${cappedBy.join(", ")})`,
          },
        ]
      : [];
  return { concurrency, waves, cappedBy, warnings };
}

/**
 * The concurrency plan of a live study: its seats, the lab's `execution.concurrency`, the
 * command's `HUMANISH_MAX_CONCURRENCY`, the ledger's per-study slot limit (4), and how many
 * seats of `seatMemoryBytes` (the memory limit each seat's container is created with) fit in
 * `availableMemoryBytes`. Throws as {@link planConcurrency}.
 */
export function planStudyConcurrency(o: {
  seats: number;
  requested: number | undefined;
  env: Record<string, string | undefined>;
  seatMemoryBytes: number;
  availableMemoryBytes: number;
}): ConcurrencyPlan {
  return planConcurrency({
    seats: o.seats,
    ...(o.requested !== undefined ? { requested: o.requested } : {}),
    ...(o.env.HUMANISH_MAX_CONCURRENCY !== undefined ? { envMax: o.env.HUMANISH_MAX_CONCURRENCY } : {}),
    perStudyLimit: POLICY_BOUNDS.perStudy[1],
    seatMemoryBytes: o.seatMemoryBytes,
    availableMemoryBytes: o.availableMemoryBytes,
  });
}

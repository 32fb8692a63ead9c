/**
 * The release rule of an E2B sandbox or desktop, shared by both E2B lanes. Pure, no SDK: each
 * lane runs the two calls with its own SDK (`e2b` or `@e2b/desktop`) and hands the steps here.
 *
 * A release is two calls, each under an outer deadline: kill by exact id (true: the API killed
 * it; false: the API answered 404, nothing to kill), then a lookup by the same id, which must
 * answer "not found". Only that answer proves the sandbox gone:
 *
 *   kill true  + lookup not-found        → released
 *   kill false + lookup not-found        → released, with the warning that it was already absent
 *                                          (its exact end time is unknown)
 *   lookup still finds the sandbox       → unconfirmed
 *   kill threw, failed or hung           → unconfirmed
 *   lookup failed, hung or was not made  → unconfirmed
 *
 * An unconfirmed id stays owned: E2B's own timeout (`onTimeout: kill`) is the backstop.
 */

/** What one release step observed: a value, the SDK's "not found", another error, or no answer by the deadline (ms). */
export type E2BReleaseStep<T> = { kind: "value"; value: T } | { kind: "not-found" } | { kind: "error"; message: string } | { kind: "deadline"; ms: number };

/** What the lookup said of a sandbox it still finds: its state, when the SDK gave one. */
export interface E2BAlive {
  state?: string;
}

/** The outcome of one release, its reason, and a warning when it was already absent. */
export interface E2BReleaseVerdict {
  outcome: "released" | "unconfirmed";
  reason: string;
  warning?: string;
}

/** The warning of a sandbox that had already ended before its release. */
export const E2B_ALREADY_ABSENT_WARNING = "the sandbox was already absent when released: its exact end time is unknown";

function killNote(kill: E2BReleaseStep<boolean>): string {
  switch (kill.kind) {
    case "value":
      return kill.value ? "kill answered true" : "kill answered 404";
    case "deadline":
      return `kill did not settle within ${kill.ms} ms`;
    case "not-found":
      return "kill failed (not found)";
    default:
      return `kill failed (${kill.message})`;
  }
}

function lookupNote(lookup: E2BReleaseStep<E2BAlive> | undefined): string {
  if (!lookup) return "the sandbox was not looked up afterwards";
  switch (lookup.kind) {
    case "not-found":
      return "getInfo answered not found";
    case "deadline":
      return `getInfo did not settle within ${lookup.ms} ms`;
    case "error":
      return `getInfo failed (${lookup.message})`;
    default:
      return `getInfo still finds the sandbox${lookup.value.state ? ` (${lookup.value.state})` : ""}`;
  }
}

/**
 * The rule above, from the kill step and the lookup step (`undefined` when no lookup was made,
 * e.g. after a kill that did not settle). The reason names both steps; a released sandbox that
 * was already absent says so in the reason and in `warning`.
 */
export function e2bReleaseVerdict(kill: E2BReleaseStep<boolean>, lookup: E2BReleaseStep<E2BAlive> | undefined): E2BReleaseVerdict {
  const reason = `${killNote(kill)}; ${lookupNote(lookup)}`;
  if (kill.kind !== "value" || lookup?.kind !== "not-found") return { outcome: "unconfirmed", reason };
  if (kill.value) return { outcome: "released", reason };
  return { outcome: "released", reason: `${reason} (warning: already absent, end time unknown)`, warning: E2B_ALREADY_ABSENT_WARNING };
}

/**
 * Races `p` against an outer deadline of `ms` and names what happened as a release step; never
 * throws. `isNotFound` says which rejection is the SDK's own "not found" (each SDK has its
 * class). An error's message is cut to 200 characters: the SDK may echo a request in it.
 */
export async function e2bReleaseStep<T>(p: Promise<T>, ms: number, isNotFound: (e: unknown) => boolean): Promise<E2BReleaseStep<T>> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const deadline = new Promise<E2BReleaseStep<T>>((resolve) => {
    timer = setTimeout(() => resolve({ kind: "deadline", ms }), ms);
  });
  const settled = p.then(
    (value): E2BReleaseStep<T> => ({ kind: "value", value }),
    (error: unknown): E2BReleaseStep<T> =>
      isNotFound(error)
        ? { kind: "not-found" }
        : { kind: "error", message: (error instanceof Error ? `${error.name}: ${error.message}` : String(error)).slice(0, 200) },
  );
  try {
    return await Promise.race([settled, deadline]);
  } finally {
    clearTimeout(timer);
  }
}

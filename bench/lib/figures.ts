/**
 * The machine-readable tail every bench prints for `bench/all.ts`: with `--json` on its command
 * line (or `HUMANISH_BENCH_JSON=1`), a bench prints its usual lines and then, as its LAST line,
 * `{"figures":[…]}` — each figure its value, the baseline measured in the same run, their ratio,
 * the goal and whether it was met. A bench whose prerequisite is missing prints
 * `{"figures":[],"notRun":"<why>"}` and exits 0. What a bench measures does not change.
 */
import { readFileSync } from "node:fs";

/** One figure of a bench. `value` and `baseline` in `unit`; `ratio` = value / baseline; null when not measured. */
export interface Figure {
  name: string;
  value: number | null;
  unit: string;
  baseline: number | null;
  ratio: number | null;
  /** The goal in words, e.g. `ratio ≤ 1.2` or `≤ 200 MiB`. */
  goal: string;
  /** Whether the goal was met; null when the figure has no goal (shown for context). */
  met: boolean | null;
}

/** The last line a bench prints in JSON mode. */
export interface BenchOutput {
  figures: Figure[];
  notRun?: string;
}

/** Whether the bench was asked for its JSON tail. */
export function wantJson(): boolean {
  return process.argv.includes("--json") || process.env.HUMANISH_BENCH_JSON === "1";
}

/** Round to 3 significant decimals for the table. */
function round(n: number | null): number | null {
  return n === null || !Number.isFinite(n) ? null : Math.round(n * 1000) / 1000;
}

/**
 * A figure against a goal on its ratio (`maxRatio`) or on its value (`maxValue`); with neither,
 * a context figure (`met: null`).
 */
export function figure(
  name: string,
  value: number | null,
  unit: string,
  baseline: number | null,
  goal: { maxRatio?: number; maxValue?: number; text?: string } = {},
): Figure {
  const ratio = value !== null && baseline !== null && baseline > 0 ? value / baseline : null;
  const checks: boolean[] = [];
  const words: string[] = [];
  if (goal.maxRatio !== undefined) {
    checks.push(ratio !== null && ratio <= goal.maxRatio);
    words.push(`ratio ≤ ${goal.maxRatio}`);
  }
  if (goal.maxValue !== undefined) {
    checks.push(value !== null && value <= goal.maxValue);
    words.push(`≤ ${goal.maxValue} ${unit}`);
  }
  return {
    name,
    value: round(value),
    unit,
    baseline: round(baseline),
    ratio: round(ratio),
    goal: goal.text ?? (words.join(", ") || "—"),
    met: checks.length ? checks.every(Boolean) : null,
  };
}

/** Print the JSON tail (in JSON mode only). */
export function emitFigures(figures: Figure[]): void {
  if (wantJson()) console.log(JSON.stringify({ figures } satisfies BenchOutput));
}

/** Report a missing prerequisite: the reason on stderr, the JSON tail in JSON mode; exits 0. */
export function notRun(why: string): never {
  console.error(`not run: ${why}`);
  if (wantJson()) console.log(JSON.stringify({ figures: [], notRun: why } satisfies BenchOutput));
  process.exit(0);
}

/** Peak resident set of this process so far (KiB, Linux VmHWM). */
export function peakRssKiB(): number {
  const m = /VmHWM:\s+(\d+)/.exec(readFileSync("/proc/self/status", "utf8"));
  return m ? Number(m[1]) : Number.NaN;
}

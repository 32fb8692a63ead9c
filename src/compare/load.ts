/**
 * Loading the two runs a comparison needs: resolve `latest` / `latest~N` / an id, verify each
 * bundle fail-closed, and read its `run.json` only after it verified. Refusals carry stable
 * codes: an unverified bundle, a dry run (nobody ran), the same run twice, runs of different
 * labs (unless the caller allows it).
 */
import { basename } from "node:path";
import { loadVerifiedChain } from "../bundle/chain.ts";
import { combineChain, combinedView } from "../bundle/combined.ts";
import { listRuns, resolveRunDir } from "../bundle/runs.ts";
import type { RunBundle } from "../bundle/schemas.ts";
import type { TrustSet } from "../bundle/signing/keys.ts";
import { HumanishError } from "../errors.ts";
import { labRunArg } from "../export/verified.ts";
import { type Comparison, compareRuns } from "./core.ts";

/**
 * The run directory of `ref`: `latest`, `latest~N` (N runs older than `latest` in the
 * `humanish runs` listing, newest first) or a run id.
 * @throws HUMANISH_RUN_NOT_FOUND when there is no such run
 */
export async function resolveRunRef(cwd: string, ref: string): Promise<string> {
  const m = /^latest~(\d{1,4})$/.exec(ref);
  if (!m) return resolveRunDir(cwd, ref);
  const back = Number(m[1]);
  const latest = basename(await resolveRunDir(cwd, "latest"));
  const runs = await listRuns(cwd);
  const at = runs.findIndex((r) => r.runId === latest);
  const target = runs[Math.max(at, 0) + back];
  if (!target) {
    throw new HumanishError("HUMANISH_RUN_NOT_FOUND", `${ref}: there are only ${runs.length} run(s), so no run is ${back} older than latest`, {
      next: "list runs with: humanish runs",
    });
  }
  return resolveRunDir(cwd, target.runId);
}

/** Options of {@link compareRunDirs}. */
export interface CompareOptions {
  trust: TrustSet;
  /** Compare runs of different labs anyway (the result says so in its notes). */
  allowDifferentLabs?: boolean;
}

/**
 * Verify both runs and compare A (before) with B (after).
 * @throws HUMANISH_INVALID_RUN_BUNDLE (a run does not verify), HUMANISH_COMPARE_SAME_RUN,
 *         HUMANISH_COMPARE_DRY_RUN (a contract-only run has no rates),
 *         HUMANISH_COMPARE_LAB_MISMATCH (different labs without `allowDifferentLabs`)
 */
export async function compareRunDirs(dirA: string, dirB: string, opts: CompareOptions): Promise<Comparison> {
  if (dirA === dirB) {
    throw new HumanishError("HUMANISH_COMPARE_SAME_RUN", `A and B are the same run (${basename(dirA)})`, {
      next: "name two different runs, e.g. humanish runs compare latest~1 latest",
    });
  }
  const ca = await loadVerifiedChain(dirA, opts.trust);
  const cb = await loadVerifiedChain(dirB, opts.trust);
  const a = sideOf(ca.chain);
  const b = sideOf(cb.chain);
  for (const [label, x] of [
    ["A", a],
    ["B", b],
  ] as const) {
    if (x.mode === "dry-run") {
      throw new HumanishError("HUMANISH_COMPARE_DRY_RUN", `run ${label} (${x.runId}) is a dry run: contract only, nobody ran, so it has no rates to compare`, {
        next: `compare two live runs; run the lab live with: humanish lab run ${labRunArg(x)} --live`,
      });
    }
  }
  if (a.lab.id !== b.lab.id && !opts.allowDifferentLabs) {
    throw new HumanishError(
      "HUMANISH_COMPARE_LAB_MISMATCH",
      `run A is of lab ${a.lab.id} and run B of lab ${b.lab.id}; a comparison is of two runs of one lab`,
      {
        next: "compare two runs of the same lab, or pass --allow-different-labs if the labs study the same tasks",
      },
    );
  }
  const comparison = compareRuns(a, b);
  comparison.notes.unshift(...chainNotes("A", ca.chain), ...chainNotes("B", cb.chain));
  if (cb.chain.some((x) => x.runId === a.runId) || ca.chain.some((x) => x.runId === b.runId))
    comparison.notes.unshift("one run is part of the other's combined result: the two sides share attempts");
  return comparison;
}

/** A run as the comparison reads it: itself, or (a continued run) the combined result of its chain. */
function sideOf(chain: readonly RunBundle[]): RunBundle {
  return chain.length > 1 ? combinedView(chain) : chain[0]!;
}

/** What a reader must know of a side that is a combined result. */
function chainNotes(label: "A" | "B", chain: readonly RunBundle[]): string[] {
  if (chain.length < 2) return [];
  const c = combineChain(chain);
  const notes = [
    `run ${label} is the combined result of runs ${c.runIds.join(" → ")}: each seat counted once, its last attempt (cost and wall time are of every run)`,
  ];
  if (c.links.some((l) => l.which === "not-reached"))
    notes.push(
      `run ${label} reran seats that did not reach the goal: those seats had a second chance and the others none, so its goal rate reads higher than one attempt each`,
    );
  return notes;
}

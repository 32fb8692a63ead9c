/**
 * The run library: list runs newest first with their liveness, and resolve `--run <id|latest>`
 * to a run directory.
 * Liveness: `finished` once the bundle is sealed; `running` while `status.json` says running and
 * its recorded pid is alive; `interrupted` otherwise (the process died before finalizing).
 * Every file is read through the safe reader (regular files only, bounded), so a FIFO, a link
 * to a device or a huge sparse file in a run directory makes that row less known, never a hang.
 */

import type { Stats } from "node:fs";
import { lstat, readdir, stat } from "node:fs/promises";
import { join } from "node:path";
import { sha256Hex } from "../bytes/sha256.ts";
import { HumanishError } from "../errors.ts";
import { combineChain } from "./combined.ts";
import { summarizeBundle } from "./derive.ts";
import { contradictedClaims } from "./goal.ts";
import { artifactRootFor, isSafeRunSegment, ORPHAN_RELEASE_FILE, RUN_FILE, runsDir } from "./paths.ts";
import { safeReadFile } from "./safe-read.ts";
import {
  type CleanupProof,
  LatestRunSchema,
  type Mode,
  OrphanReleaseSchema,
  type Route,
  type RunBundle,
  RunBundleSchema,
  type RunStatus,
  RunStatusSchema,
  type Verdict,
} from "./schemas.ts";

/** Liveness of a run directory. */
export type RunLiveness = "running" | "finished" | "interrupted";

/** One row of `humanish runs` (and the library index). Null = not recorded (yet). */
export interface RunSummary {
  runId: string;
  /** Project-relative `.humanish/runs/<id>`. */
  path: string;
  /** What the row was derived from: the sealed bundle, the status index, or only the directory. */
  derivedFrom: "bundle" | "status" | "directory";
  liveness: RunLiveness;
  lab: string | null;
  route: Route | null;
  mode: Mode | null;
  verdict: Verdict | null;
  /** Stakeholder line, e.g. `1/1 reached the goal; tasks: a 1/1`, when sealed. */
  line: string | null;
  /**
   * The denominator `reachedGoal/total` (`humanish runs` shows it as k/N); `harnessFailed` counts
   * seats whose harness failed (never findings), null when only the status index was readable.
   * Null when nothing recorded the participants yet.
   */
  participants: { total: number; reachedGoal: number; harnessFailed: number | null } | null;
  tasks: { id: string; completed: number; sessions: number }[];
  /** Estimated USD, or null = unmeasured (never 0 for unknown). */
  costUsd: number | null;
  /** `$0.0123` or `unmeasured`. */
  costLabel: string;
  /**
   * Resources of a sealed run whose release is not proven (`retained` or `unconfirmed`, less
   * those a later orphan release recorded as released); null when no bundle was readable.
   */
  cleanupUnproven: number | null;
  /**
   * Participants of a sealed run that claimed success while its hidden checks say they did not
   * reach the goal (a finding of its own); empty when none, null when no bundle was readable.
   */
  contradictedClaims: string[] | null;
  /**
   * Set when the run failed as a whole: the bundle's error code, or `HUMANISH_RUN_FAILED` when only
   * the status index says so (it records no code). Null otherwise.
   */
  failure: string | null;
  durationMs: number | null;
  /** The run this one continues (`lab run --rerun-failed-from`), or null. */
  continues: string | null;
  /**
   * A continued run's combined result (each seat once, its last attempt), read from the chain of
   * runs in this directory whose recorded digests match (a listing: not verified; `runs compare`
   * and the report verify it); null when the run continues nothing or a link cannot be followed.
   */
  combined: { line: string; total: number; reachedGoal: number; harnessFailed: number; runIds: string[] } | null;
  /** ISO start time (bundle createdAt, else status startedAt, else directory mtime). */
  startedAt: string;
  /** Current phase while running (from status.json). */
  phase: string | null;
  pid: number | null;
}

/** True when a process with this pid exists (EPERM counts as alive). */
export function isPidAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** Liveness from a parsed status (or none) and whether a sealed bundle exists. */
export function livenessOf(status: RunStatus | null, sealed: boolean, alive: (pid: number) => boolean = isPidAlive): RunLiveness {
  if (status?.state === "running" && alive(status.pid)) return "running";
  if (sealed || status?.state === "finished") return "finished";
  return "interrupted";
}

/** Largest `run.json` read for a listing row (bytes); the verifier's own bound is larger. */
export const MAX_RUN_JSON_BYTES = 32 * 1024 * 1024;
/** Largest `status.json` / `latest.json` read (bytes). */
export const MAX_STATUS_BYTES = 1024 * 1024;

/** JSON of a regular file within `maxBytes`, or undefined (missing, refused, or not JSON). */
function readJson(path: string, maxBytes: number): unknown {
  const r = safeReadFile(path, maxBytes);
  if (!r.ok) return undefined;
  try {
    return JSON.parse(new TextDecoder().decode(r.bytes));
  } catch {
    return undefined;
  }
}

/** Cleanup proofs not `released`, less the ids the run's orphan-release.json later released (unverified: a listing). */
function unprovenCleanup(dir: string, runId: string, cleanup: readonly CleanupProof[]): number {
  const raw = readJson(join(dir, ORPHAN_RELEASE_FILE), MAX_STATUS_BYTES);
  const o = raw === undefined ? null : OrphanReleaseSchema.safeParse(raw);
  const later = new Set(o?.success && o.data.runId === runId ? o.data.releases.filter((r) => r.outcome === "released").map((r) => r.id) : []);
  return cleanup.filter((c) => c.outcome !== "released" && !later.has(c.id)).length;
}

function costLabel(usd: number | null): string {
  return usd === null ? "unmeasured" : `$${usd.toFixed(usd < 0.01 && usd > 0 ? 6 : 4)}`;
}

/** The bundle of run `runId` in the runs directory when its run.json bytes have SHA-256 `sha256`, else null. */
function bundleWithDigest(cwd: string, runId: string, sha256: string): RunBundle | null {
  if (!isSafeRunSegment(runId)) return null;
  const r = safeReadFile(join(runsDir(cwd), runId, RUN_FILE), MAX_RUN_JSON_BYTES);
  if (!r.ok || sha256Hex(r.bytes) !== sha256) return null;
  try {
    const b = RunBundleSchema.safeParse(JSON.parse(new TextDecoder().decode(r.bytes)));
    return b.success && b.data.runId === runId ? b.data : null;
  } catch {
    return null;
  }
}

/** The combined result of a continued run for the listing (see {@link RunSummary.combined}). */
function combinedOfListing(cwd: string, bundle: RunBundle): RunSummary["combined"] {
  if (!bundle.continues) return null;
  const chain = [bundle];
  for (let at = bundle; at.continues; ) {
    const earlier = chain.length < 32 ? bundleWithDigest(cwd, at.continues.runId, at.continues.runJsonSha256) : null;
    if (!earlier || chain.some((b) => b.runId === earlier.runId)) return null;
    chain.unshift(earlier);
    at = earlier;
  }
  const c = combineChain(chain);
  return { line: c.line, total: c.total, reachedGoal: c.reachedGoal, harnessFailed: c.harnessFailed, runIds: c.runIds };
}

/** Summarise one run directory (never throws for bad content; bad content = less known). */
export async function summarizeRunDir(cwd: string, runId: string): Promise<RunSummary | null> {
  const dir = join(runsDir(cwd), runId);
  let st: Stats;
  try {
    st = await lstat(dir);
  } catch {
    return null;
  }
  if (!st.isDirectory() || st.isSymbolicLink()) return null;
  const bundleRaw = readJson(join(dir, RUN_FILE), MAX_RUN_JSON_BYTES);
  const b = bundleRaw === undefined ? null : RunBundleSchema.safeParse(bundleRaw);
  const bundle = b?.success && b.data.runId === runId ? b.data : null;
  const statusRaw = readJson(join(dir, "status.json"), MAX_STATUS_BYTES);
  const s = statusRaw === undefined ? null : RunStatusSchema.safeParse(statusRaw);
  const status = s?.success && s.data.runId === runId ? s.data : null;
  const liveness = livenessOf(status, bundle !== null);
  const base = {
    runId,
    path: artifactRootFor(runId),
    liveness,
    phase: status?.state === "running" ? status.phase : null,
    pid: status?.pid ?? null,
  };
  if (bundle) {
    const f = summarizeBundle(bundle);
    return {
      ...base,
      derivedFrom: "bundle",
      lab: bundle.lab.id,
      route: bundle.route,
      mode: bundle.mode,
      verdict: f.verdict,
      line: f.line,
      participants: { total: f.participants.total, reachedGoal: f.participants.reached, harnessFailed: bundle.review.participants.harnessFailed },
      tasks: f.tasks,
      costUsd: f.costUsd,
      costLabel: costLabel(f.costUsd),
      cleanupUnproven: unprovenCleanup(dir, runId, bundle.cleanup),
      contradictedClaims: contradictedClaims(bundle.participants).map((p) => p.id),
      failure: bundle.outcome.state === "failed" ? (bundle.outcome.error?.code ?? "HUMANISH_UNKNOWN") : null,
      durationMs: f.durationMs,
      continues: bundle.continues?.runId ?? null,
      combined: combinedOfListing(cwd, bundle),
      startedAt: bundle.createdAt,
    };
  }
  if (status) {
    const end = status.state === "finished" ? (status.completedAt ?? status.updatedAt) : status.updatedAt;
    const cost = status.outcome?.estimatedCostUsd ?? null;
    return {
      ...base,
      derivedFrom: "status",
      lab: status.lab ?? null,
      route: status.route ?? null,
      mode: status.mode ?? null,
      verdict: status.outcome?.verdict ?? null,
      line: null,
      participants: status.outcome?.participants
        ? { total: status.outcome.participants.total, reachedGoal: status.outcome.participants.reachedGoal, harnessFailed: null }
        : null,
      tasks: [],
      costUsd: cost,
      costLabel: costLabel(cost),
      cleanupUnproven: null,
      contradictedClaims: null,
      failure: status.outcome?.state === "failed" ? "HUMANISH_RUN_FAILED" : null,
      durationMs: status.outcome?.durationMs ?? Math.max(0, Date.parse(end) - Date.parse(status.startedAt)),
      continues: null,
      combined: null,
      startedAt: status.startedAt,
    };
  }
  const mtime = (await stat(dir)).mtime.toISOString();
  return {
    ...base,
    derivedFrom: "directory",
    lab: null,
    route: null,
    mode: null,
    verdict: null,
    line: null,
    participants: null,
    tasks: [],
    costUsd: null,
    costLabel: costLabel(null),
    cleanupUnproven: null,
    contradictedClaims: null,
    failure: null,
    durationMs: null,
    continues: null,
    combined: null,
    startedAt: mtime,
  };
}

/**
 * Every run under `<cwd>/.humanish/runs`, newest first (start time, then id). A missing runs
 * directory is an empty list.
 * @throws HUMANISH_RUNS_UNAVAILABLE when the runs directory exists but cannot be read
 */
export async function listRuns(cwd: string): Promise<RunSummary[]> {
  let names: string[];
  try {
    names = await readdir(runsDir(cwd));
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return [];
    throw new HumanishError("HUMANISH_RUNS_UNAVAILABLE", `cannot read .humanish/runs: ${(e as Error).message}`, {
      next: "check permissions of the .humanish/runs directory",
      cause: e,
    });
  }
  const out: RunSummary[] = [];
  for (const name of names) {
    if (!isSafeRunSegment(name) || name === "latest.json" || name.startsWith(".")) continue;
    const s = await summarizeRunDir(cwd, name);
    if (s) out.push(s);
  }
  out.sort((a, b) => {
    const t = Date.parse(b.startedAt) - Date.parse(a.startedAt);
    return t !== 0 ? t : a.runId < b.runId ? 1 : a.runId > b.runId ? -1 : 0;
  });
  return out;
}

/**
 * Resolve `idOrLatest` to an absolute run directory. `latest` reads `.humanish/runs/latest.json`
 * (valid only when its runId and path name the same direct child of runs/); when that pointer is
 * missing or invalid, the newest run in the listing is used.
 * @throws HUMANISH_RUN_NOT_FOUND (with the next step) when no such run exists;
 *         HUMANISH_INVALID_RUN_BUNDLE when the entry is a symlink or not a directory
 */
export async function resolveRunDir(cwd: string, idOrLatest: string = "latest"): Promise<string> {
  let id = idOrLatest;
  if (idOrLatest === "latest") {
    const raw = readJson(join(runsDir(cwd), "latest.json"), MAX_STATUS_BYTES);
    const p = raw === undefined ? null : LatestRunSchema.safeParse(raw);
    if (p?.success && p.data.path === artifactRootFor(p.data.runId) && (await summarizeRunDir(cwd, p.data.runId))) {
      id = p.data.runId;
    } else {
      const runs = await listRuns(cwd);
      if (runs.length === 0) {
        throw new HumanishError("HUMANISH_RUN_NOT_FOUND", "no runs in .humanish/runs yet", {
          next: "run a study first: humanish lab run <lab> (dry-run by default)",
        });
      }
      id = runs[0]!.runId;
    }
  }
  if (!isSafeRunSegment(id)) {
    throw new HumanishError("HUMANISH_RUN_NOT_FOUND", `run ${JSON.stringify(id.slice(0, 140))} is not a valid run id`, {
      next: "list runs with: humanish runs",
    });
  }
  const dir = join(runsDir(cwd), id);
  let st: Stats;
  try {
    st = await lstat(dir);
  } catch {
    throw new HumanishError("HUMANISH_RUN_NOT_FOUND", `run ${id} not found in .humanish/runs`, { next: "list runs with: humanish runs" });
  }
  if (st.isSymbolicLink() || !st.isDirectory()) {
    throw new HumanishError("HUMANISH_INVALID_RUN_BUNDLE", `run ${id} is not a real directory (symlink or file)`, {
      next: `remove .humanish/runs/${id}; run directories are never links`,
    });
  }
  return dir;
}

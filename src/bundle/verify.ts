/**
 * `verifyRun` — fail-closed verification of one run directory on disk: the thin walk
 * (./verify/disk.ts: lstat, safe bounded reads, never following a link, never writing) feeding
 * the pure core (./verify/core.ts `verifyFiles`, whose check table names every check).
 */
import type { Stats } from "node:fs";
import { lstat } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { isSafeRunSegment, RUN_FILE } from "./paths.ts";
import { MAX_RUN_JSON_BYTES } from "./runs.ts";
import { safeReadFile } from "./safe-read.ts";
import type { VerifyResult } from "./schemas.ts";
import { defaultTrust, type TrustSet } from "./signing/keys.ts";
import { finish, verifyFiles } from "./verify/core.ts";
import { readBundleDir } from "./verify/disk.ts";

export { DEADLINE_GRACE_MS } from "./verify/checks-judgement.ts";
export { type BundleFile, CHECKS, type VerifyFilesInput, verifyFiles } from "./verify/core.ts";
export { VERIFY_LIMITS } from "./verify/disk.ts";

/** Options of {@link verifyRun}. */
export interface VerifyRunOptions {
  /** Keys whose signature makes the bundle shareable; default: the local user's own key. */
  trust?: TrustSet;
}

const none = { scanFindings: 0, raw: false, unscanned: [] as string[], warnings: [] as string[], signer: null };

/**
 * Verify the run directory `runDir` fail-closed. Never throws for bundle content: every
 * problem becomes a failed check. A missing directory yields `error.code HUMANISH_RUN_NOT_FOUND`
 * with no checks; a symlinked/non-directory run dir yields one failed `run storage containment`
 * check and `HUMANISH_INVALID_RUN_BUNDLE`.
 */
export async function verifyRun(runDir: string, opts: VerifyRunOptions = {}): Promise<VerifyResult> {
  return (await verifyRunBytes(runDir, opts)).result;
}

/**
 * {@link verifyRun}, also returning the exact `run.json` bytes the checks judged (null when
 * none was read), so a caller that acts on the bundle acts on what verified, not a re-read.
 */
export async function verifyRunBytes(runDir: string, opts: VerifyRunOptions = {}): Promise<{ result: VerifyResult; runJson: Uint8Array | null }> {
  const run = basename(runDir);
  let rootStat: Stats;
  try {
    rootStat = await lstat(runDir);
  } catch {
    return { result: finish(run, [], none, { code: "HUMANISH_RUN_NOT_FOUND", message: `run directory ${run} does not exist` }), runJson: null };
  }
  if (rootStat.isSymbolicLink() || !rootStat.isDirectory()) {
    const result = finish(run, [{ name: "run storage containment", ok: false, message: `${run} is not a real directory (symlink or file)` }], none, {
      code: "HUMANISH_INVALID_RUN_BUNDLE",
      message: `run storage for ${run} fails containment`,
    });
    return { result, runJson: null };
  }
  const walked = await readBundleDir(runDir);
  const runJson = walked.files.find((f) => f.path === RUN_FILE)?.bytes ?? null;
  const continued = readContinued(runDir, runJson);
  const result = await verifyFiles({ run, ...walked, ...(continued ? { continued } : {}), trust: opts.trust ?? defaultTrust() });
  return { result, runJson };
}

/**
 * The `run.json` bytes of the run this bundle says it continues, read from beside it in the
 * runs directory (null when that run is not there or its run.json cannot be read safely);
 * undefined when the bundle continues nothing (or names no safe run id).
 */
function readContinued(runDir: string, runJson: Uint8Array | null): { runId: string; bytes: Uint8Array | null } | undefined {
  let id: unknown;
  try {
    id = runJson ? (JSON.parse(new TextDecoder().decode(runJson)) as { continues?: { runId?: unknown } }).continues?.runId : undefined;
  } catch {
    return undefined;
  }
  if (typeof id !== "string" || !isSafeRunSegment(id) || id === basename(runDir)) return undefined;
  const r = safeReadFile(join(dirname(runDir), id, RUN_FILE), MAX_RUN_JSON_BYTES);
  return { runId: id, bytes: r.ok ? r.bytes : null };
}

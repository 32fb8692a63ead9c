/**
 * `verifyRun` — fail-closed verification of one run directory on disk: the thin walk
 * (./verify/disk.ts: lstat, safe bounded reads, never following a link, never writing) feeding
 * the pure core (./verify/core.ts `verifyFiles`, whose check table names every check).
 */
import type { Stats } from "node:fs";
import { lstat } from "node:fs/promises";
import { basename } from "node:path";
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
  const run = basename(runDir);
  let rootStat: Stats;
  try {
    rootStat = await lstat(runDir);
  } catch {
    return finish(run, [], none, { code: "HUMANISH_RUN_NOT_FOUND", message: `run directory ${run} does not exist` });
  }
  if (rootStat.isSymbolicLink() || !rootStat.isDirectory()) {
    return finish(run, [{ name: "run storage containment", ok: false, message: `${run} is not a real directory (symlink or file)` }], none, {
      code: "HUMANISH_INVALID_RUN_BUNDLE",
      message: `run storage for ${run} fails containment`,
    });
  }
  const walked = await readBundleDir(runDir);
  return verifyFiles({ run, ...walked, trust: opts.trust ?? defaultTrust() });
}

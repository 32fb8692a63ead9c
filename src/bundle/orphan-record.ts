/**
 * The orphan record: release proofs that reconciliation adds to a run whose controller died,
 * plain before the run was sealed and a signed appendix after.
 */
import { lstatSync } from "node:fs";
import { join } from "node:path";
import { HumanishError } from "../errors.ts";
import { zodIssues } from "../text/zod-issues.ts";
import { writeFileAtomicSync } from "./atomic.ts";
import { artifactRootFor, assertRunId, ORPHAN_RELEASE_FILE, runDirFor } from "./paths.ts";
import { safeReadFile } from "./safe-read.ts";
import { type CleanupProof, CleanupProofSchema, type OrphanRelease, OrphanReleaseSchema } from "./schemas.ts";
import { SIGNATURE_FILE } from "./signing/manifest.ts";
import { writeSignedAppendix } from "./signing/seal.ts";
import { evidenceRedactor } from "./writer.ts";

/**
 * Append one after-the-fact release proof to `.humanish/runs/<runId>/orphan-release.json`
 * (`humanish.orphan-release.v1`), the record orphan reconciliation keeps when it releases a
 * resource of a run whose controller died. Redacted (cwd → `[target-cwd]`, host paths and secret
 * shapes removed), schema-checked, written atomically. In a sealed run it is written as a signed
 * appendix (`orphan-release.json.sig.json` extends the run's signature), the only form
 * `verifyRun` accepts; it then counts its `released` proofs as cleanup of the same exact ids.
 * Returns the project-relative path written, or null when the run directory does not exist here.
 * An existing record that does not parse is replaced (it was never valid evidence).
 * @throws HUMANISH_INVALID_RUN_ID, HUMANISH_INVALID_ARTIFACT (proof shape), HUMANISH_BUNDLE_WRITE_FAILED
 */
export function recordOrphanRelease(cwd: string, runId: string, proof: CleanupProof): string | null {
  assertRunId(runId);
  const dir = runDirFor(cwd, runId);
  try {
    const st = lstatSync(dir);
    if (!st.isDirectory() || st.isSymbolicLink()) return null;
  } catch {
    return null;
  }
  const redactor = evidenceRedactor([], cwd);
  const file = join(dir, ORPHAN_RELEASE_FILE);
  let doc: OrphanRelease = { schema: "humanish.orphan-release.v1", runId, releases: [] };
  try {
    const read = safeReadFile(file, 4 * 1024 * 1024);
    const prev = read.ok ? OrphanReleaseSchema.safeParse(JSON.parse(new TextDecoder().decode(read.bytes))) : { success: false as const };
    if (prev.success && prev.data.runId === runId) doc = prev.data;
  } catch {
    /* first record */
  }
  const p = CleanupProofSchema.safeParse(redactor.value(proof));
  if (!p.success) {
    throw new HumanishError("HUMANISH_INVALID_ARTIFACT", `orphan release proof for run ${runId} is invalid: ${zodIssues(p.error)}`, {
      next: "pass {id, provider, outcome, reason, at} (src/sandbox/types.ts ReleaseProof)",
    });
  }
  doc.releases.push(p.data);
  try {
    const bytes = new TextEncoder().encode(redactor.json(doc));
    // A sealed run takes the record as a signed appendix (the only form verify accepts);
    // a run that died before sealing keeps it as a plain record of what was released.
    if (safeReadFile(join(dir, SIGNATURE_FILE), 64 * 1024).ok) writeSignedAppendix(dir, runId, ORPHAN_RELEASE_FILE, bytes);
    else writeFileAtomicSync(file, bytes, `${artifactRootFor(runId)}/${ORPHAN_RELEASE_FILE}`);
  } catch (e) {
    if (e instanceof HumanishError) throw e;
    throw new HumanishError(
      "HUMANISH_BUNDLE_WRITE_FAILED",
      `could not write ${artifactRootFor(runId)}/${ORPHAN_RELEASE_FILE}: ${(e as NodeJS.ErrnoException).code ?? "error"}`,
      {
        next: "check free disk space and permissions of the .humanish directory",
        cause: e,
      },
    );
  }
  return `${artifactRootFor(runId)}/${ORPHAN_RELEASE_FILE}`;
}

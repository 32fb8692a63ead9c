/**
 * The verify core — pure: files in, verdict out, no I/O (the disk walk is ./disk.ts). Each
 * check is a named function of one shared context (./context.ts); {@link CHECKS} is the one
 * table that names and orders them, and the report order is the table order.
 *
 * `ok` = every check ok. `shareSafety`: any failed check → `blocked` (`VERIFY_FAILED`); scan
 * findings → `blocked` (`PUBLIC_SAFETY_FINDINGS`); otherwise a valid signature by a key outside
 * the trust set (`UNTRUSTED_SIGNER`), raw screenshots (`RAW_SCREENSHOTS`) or non-text
 * non-screenshot files (`UNSCANNED_ARTIFACT`) → `local_only`; else `share_ready`.
 */
import { artifactRootFor, isSafeRunSegment } from "../paths.ts";
import type { VerifyCheck, VerifyResult } from "../schemas.ts";
import type { TrustSet } from "../signing/trust.ts";
import { adapterOutput } from "./checks-adapter.ts";
import { analysisRecords } from "./checks-analysis.ts";
import { runBundleShape, runJsonExists, runSchema } from "./checks-bundle.ts";
import { continuedRun } from "./checks-continues.ts";
import { artifactSchemas, browserEvidence, screenshotsAdmitted, terminalEvidence } from "./checks-evidence.ts";
import { artifactsIntact, bundleSignature, noUnlistedFiles, publicSafetyScan, redactionPassed, storageContainment } from "./checks-files.ts";
import { headlineFromChecks } from "./checks-headline.ts";
import { actorEngagement, capsRespected, cleanupProven, costLabeling, verdictConsistency } from "./checks-judgement.ts";
import { studySeats } from "./checks-study.ts";
import type { Check, DigestedFile, UnreadPath, VerifyContext } from "./context.ts";
import { forgetLargeTexts } from "./scan.ts";

export type { DigestedFile, UnreadPath } from "./context.ts";

/** One regular file of the bundle: its bundle-relative path and bytes (treated as immutable). */
export interface BundleFile {
  path: string;
  bytes: Uint8Array;
}

/** One binary PNG of the bundle given by its facts (the disk walk's way of not holding it). */
export interface DigestedBundleFile extends DigestedFile {
  path: string;
}

/** Input of {@link verifyFiles}. */
export interface VerifyFilesInput {
  /** The run directory's name: the run id the bundle must carry. */
  run: string;
  files: readonly BundleFile[];
  /** Binary PNGs given by their facts instead of their bytes (paths disjoint from `files`); checked exactly as their bytes would be. */
  digested?: readonly DigestedBundleFile[];
  /** Paths seen but not read (directories, links, special or oversized files): name-scanned; non-directories are unlisted files. */
  unread?: readonly UnreadPath[];
  /** Problems the disk walk found (reported by `storage containment`). */
  containment?: readonly string[];
  /** Public keys whose signature makes a bundle shareable. */
  trust: TrustSet;
  /**
   * The `run.json` bytes of the run this bundle continues, as found beside it (null: not there or
   * unreadable); absent when the caller did not look (the bundle then verifies alone).
   */
  continued?: { runId: string; bytes: Uint8Array | null };
}

/** The checks, in report order. Later checks read what earlier ones put in the context. */
export const CHECKS: readonly (readonly [name: string, check: Check])[] = [
  ["run.json exists", runJsonExists],
  ["run schema", runSchema],
  ["run bundle shape", runBundleShape],
  ["bundle signature", bundleSignature],
  ["redaction passed", redactionPassed],
  ["storage containment", storageContainment],
  ["artifacts intact", artifactsIntact],
  ["no unlisted files", noUnlistedFiles],
  ["public-safety scan", publicSafetyScan],
  ["artifact schemas", artifactSchemas],
  ["screenshots admitted", screenshotsAdmitted],
  ["terminal-product evidence", terminalEvidence],
  ["browser evidence", browserEvidence],
  ["study seats", studySeats],
  ["continued run", continuedRun],
  ["cleanup proven", cleanupProven],
  ["caps respected", capsRespected],
  ["cost labeling", costLabeling],
  ["actor engagement", actorEngagement],
  ["verdict consistency", verdictConsistency],
  ["headline from checks", headlineFromChecks],
  ["analysis records", analysisRecords],
  ["adapter output", adapterOutput],
];

/** Most problems spelled out in one check's message. */
const MAX_PROBLEMS_SHOWN = 12;

function message(problems: string[], ok: string): string {
  if (!problems.length) return ok;
  const more = problems.length > MAX_PROBLEMS_SHOWN ? ` (+${problems.length - MAX_PROBLEMS_SHOWN} more)` : "";
  return problems.slice(0, MAX_PROBLEMS_SHOWN).join("; ") + more;
}

/** Build the result envelope from the checks and what they found (see module doc for share safety). */
export function finish(
  run: string,
  checks: VerifyCheck[],
  ctx: Pick<VerifyContext, "scanFindings" | "raw" | "unscanned" | "warnings" | "signer">,
  error?: VerifyResult["error"],
): VerifyResult {
  const ok = checks.length > 0 && checks.every((c) => c.ok) && !error;
  const reasons: VerifyResult["shareSafety"]["reasons"] = [];
  const failed = checks.filter((c) => !c.ok);
  if (!ok)
    reasons.push({
      code: "VERIFY_FAILED",
      message: failed.length ? `failed: ${failed.map((c) => c.name).join(", ")}` : (error?.message ?? "nothing verified"),
    });
  if (ctx.scanFindings > 0) reasons.push({ code: "PUBLIC_SAFETY_FINDINGS", message: `${ctx.scanFindings} secret or local-path finding(s)` });
  if (ctx.signer && !ctx.signer.trusted)
    reasons.push({ code: "UNTRUSTED_SIGNER", message: `signed by ${ctx.signer.fingerprint}, not a trusted key (pass --trust to trust it)` });
  if (ctx.raw) reasons.push({ code: "RAW_SCREENSHOTS", message: "screenshots are raw frames of the participant's screen" });
  if (ctx.unscanned.length) reasons.push({ code: "UNSCANNED_ARTIFACT", message: `non-text files not scanned: ${ctx.unscanned.slice(0, 10).join(", ")}` });
  const blocked = reasons.some((r) => r.code === "VERIFY_FAILED" || r.code === "PUBLIC_SAFETY_FINDINGS");
  return {
    schema: "humanish.verify-result.v1",
    ok,
    cwd: "[target-cwd]",
    run,
    ...(isSafeRunSegment(run) ? { bundlePath: artifactRootFor(run) } : {}),
    checks,
    shareSafety: { status: blocked ? "blocked" : reasons.length ? "local_only" : "share_ready", reasons },
    signer: ctx.signer ? { fingerprint: ctx.signer.fingerprint, publicKey: ctx.signer.publicKey, trusted: ctx.signer.trusted } : null,
    warnings: ctx.warnings,
    ...(error ? { error } : {}),
  };
}

/**
 * Verify a bundle given as files, fail-closed. Never throws for bundle content: every problem
 * becomes a failed check. Pure: the same input gives the same result.
 */
export async function verifyFiles(input: VerifyFilesInput): Promise<VerifyResult> {
  const ctx: VerifyContext = {
    run: input.run,
    files: new Map(input.files.map((f) => [f.path, f.bytes])),
    digested: new Map((input.digested ?? []).map(({ path, ...facts }) => [path, facts])),
    unread: input.unread ?? [],
    containment: input.containment ?? [],
    trust: input.trust,
    continued: input.continued,
    rawBundle: undefined,
    bundle: null,
    signer: null,
    manifestSha256: null,
    appendices: new Set(),
    appendixProblems: new Map(),
    traces: new Map(),
    ledgers: null,
    seatLedgers: new Map(),
    receipts: [],
    orphanReleases: [],
    scanFindings: 0,
    raw: false,
    unscanned: [],
    warnings: [],
  };
  const checks: VerifyCheck[] = [];
  for (const [name, check] of CHECKS) {
    const r = await check(ctx);
    checks.push({ name, ok: r.problems.length === 0, message: message(r.problems, r.ok) });
  }
  forgetLargeTexts(ctx.files.values());
  if (ctx.raw) ctx.warnings.push("screenshots are raw frames: keep this run local (share safety local_only)");
  if (ctx.bundle) {
    const geo = new Set<string>();
    for (const p of ctx.bundle.participants) for (const w of p.desktopGeometry?.warnings ?? []) geo.add(w);
    ctx.warnings.push(...geo);
  }
  return finish(input.run, checks, ctx);
}

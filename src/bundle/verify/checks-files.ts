/**
 * Checks of the files as files: redaction held, containment, listed artifacts intact, the
 * bundle signature (and signed appendices), nothing unlisted, and the public-safety scan.
 */
import { RUN_FILE } from "../paths.ts";
import { findSensitive } from "../redact.ts";
import { APPENDIX_SIGNATURE_SUFFIX, buildManifest, checkAppendix, checkBundleSignature, SIGNATURE_FILE } from "../signing/manifest.ts";
import { fingerprintOf, isTrusted } from "../signing/trust.ts";
import type { CheckOutcome, VerifyContext } from "./context.ts";
import { factsOf, readPaths, wasRead } from "./digest.ts";
import { decodeText, scanContent, scanJoinedStreams } from "./scan.ts";

/** Most findings reported by one scan check. */
export const MAX_FINDINGS = 50;

/** The status index beside the bundle. */
const STATUS_FILE = "status.json";

/** Findings of one file: its content shapes, plus the shapes of its joined chunk streams when it is NDJSON. */
function findingsOf(rel: string, bytes: Uint8Array): string[] {
  const out = scanContent(rel, bytes).map((s) => `${rel}: contains a ${s} shape`);
  if (rel.toLowerCase().endsWith(".ndjson")) for (const s of scanJoinedStreams(bytes)) out.push(`${rel}: joined ${s} shape across chunks`);
  return out;
}

/**
 * `redaction passed`: every text file the writer redacted — `run.json`, `status.json`, each
 * listed text artifact and each signed appendix — is rescanned for secret and local-path shapes
 * (NDJSON event streams also with their chunks joined). A shape here means redaction did not
 * hold, whatever the bundle claims about itself.
 */
export function redactionPassed(ctx: VerifyContext): CheckOutcome {
  const b = ctx.bundle;
  if (!b) return { problems: ["no valid bundle"], ok: "" };
  const redacted = [RUN_FILE, STATUS_FILE, ...b.artifacts.filter((a) => a.kind !== "screenshot").map((a) => a.path), ...ctx.appendices];
  const problems: string[] = [];
  let scanned = 0;
  for (const rel of new Set(redacted)) {
    const bytes = ctx.files.get(rel);
    if (!bytes || decodeText(bytes) === null) continue;
    scanned++;
    problems.push(...findingsOf(rel, bytes));
  }
  return { problems: problems.slice(0, MAX_FINDINGS), ok: `${scanned} redacted text file(s) rescanned: no secret or local-path shapes` };
}

/** `storage containment`: what the disk walk found (links, special files, bounds, risky segments). */
export function storageContainment(ctx: VerifyContext): CheckOutcome {
  return { problems: [...ctx.containment], ok: "no symlinks, hard links, special files or risky segments" };
}

/** `artifacts intact`: every listed artifact is present with its listed size and SHA-256. */
export function artifactsIntact(ctx: VerifyContext): CheckOutcome {
  const b = ctx.bundle;
  if (!b) return { problems: ["no valid bundle to check artifacts against"], ok: "" };
  const problems: string[] = [];
  for (const a of b.artifacts) {
    const f = factsOf(ctx, a.path);
    if (!f) problems.push(`${a.path}: missing`);
    else if (f.size !== a.bytes) problems.push(`${a.path}: ${f.size} bytes, listed ${a.bytes}`);
    else if (f.sha256 !== a.sha256) problems.push(`${a.path}: SHA-256 differs from the listed digest`);
  }
  return { problems, ok: `${b.artifacts.length} listed artifact(s) present with matching size and SHA-256` };
}

/** Accept each unlisted `X` with a valid `X.sig.json` by the bundle's own signer extending its seal. */
function acceptAppendices(ctx: VerifyContext, listed: ReadonlySet<string>): void {
  if (!ctx.signer || !ctx.manifestSha256 || !ctx.bundle) return;
  for (const rel of readPaths(ctx)) {
    if (listed.has(rel) || rel === RUN_FILE || rel === STATUS_FILE || rel === SIGNATURE_FILE || rel.endsWith(APPENDIX_SIGNATURE_SUFFIX)) continue;
    const sig = ctx.files.get(`${rel}${APPENDIX_SIGNATURE_SUFFIX}`);
    if (!sig) {
      ctx.appendixProblems.set(rel, "no appendix signature");
      continue;
    }
    const r = checkAppendix(sig, {
      runId: ctx.bundle.runId,
      path: rel,
      file: factsOf(ctx, rel)!,
      manifestSha256: ctx.manifestSha256,
      signer: ctx.signer.publicKey,
    });
    if (r.ok) {
      ctx.appendices.add(rel);
      ctx.appendices.add(`${rel}${APPENDIX_SIGNATURE_SUFFIX}`);
    } else ctx.appendixProblems.set(rel, r.problem);
  }
}

/**
 * `bundle signature`: `signature.json` verifies over the manifest rebuilt from the files
 * (`run.json`, `status.json`, every listed artifact). Unsigned or any mismatch fails — the writer
 * signs every bundle at seal, so a missing signature means it was removed. A valid signature by
 * a key outside the trust set passes here and makes the bundle `local_only` (see `finish`).
 */
export function bundleSignature(ctx: VerifyContext): CheckOutcome {
  const b = ctx.bundle;
  if (!b) return { problems: ["no valid bundle to check the signature against"], ok: "" };
  const stored = ctx.files.get(SIGNATURE_FILE);
  if (!stored) return { problems: [`unsigned: ${SIGNATURE_FILE} is missing (humanish signs every bundle when it seals it)`], ok: "" };
  const listed = b.artifacts.map((a) => a.path);
  const r = checkBundleSignature(
    stored,
    buildManifest(b.runId, (rel) => factsOf(ctx, rel), listed),
  );
  if (r.state === "invalid") {
    const who = r.publicKey ? ` (claims signer ${fingerprintOf(r.publicKey) ?? "malformed key"})` : "";
    return { problems: [`bad signature: ${r.problem}${who}`], ok: "" };
  }
  const trusted = isTrusted(ctx.trust, r.publicKey);
  ctx.signer = { publicKey: r.publicKey, fingerprint: r.fingerprint, trusted };
  ctx.manifestSha256 = r.manifestSha256;
  acceptAppendices(ctx, new Set(listed));
  if (!trusted)
    ctx.warnings.push(`signed by ${r.fingerprint}, which is not a trusted key: keep it local, or pass --trust ${r.fingerprint} if you trust its signer`);
  const extra = ctx.appendices.size ? `; ${ctx.appendices.size / 2} signed appendix(es)` : "";
  return {
    problems: [],
    ok: trusted ? `signed by trusted key ${r.fingerprint}${extra}` : `intact, signed by ${r.fingerprint} — not a trusted key (unknown signer)${extra}`,
  };
}

/** `no unlisted files`: every file is listed, is run.json/status.json/signature.json, or a signed appendix. */
export function noUnlistedFiles(ctx: VerifyContext): CheckOutcome {
  const b = ctx.bundle;
  const ok = `every file is listed (${RUN_FILE}, ${STATUS_FILE}, ${SIGNATURE_FILE} and signed appendices are covered by the signature)`;
  if (!b) return { problems: ["no valid bundle to list files against"], ok };
  const listed = new Set(b.artifacts.map((a) => a.path));
  const problems: string[] = [];
  const paths = [...readPaths(ctx), ...ctx.unread.filter((u) => !u.dir).map((u) => u.path)].sort();
  for (const rel of paths) {
    if (rel === RUN_FILE || rel === STATUS_FILE || rel === SIGNATURE_FILE || listed.has(rel) || ctx.appendices.has(rel)) continue;
    const why = ctx.appendixProblems.get(rel);
    if (rel.endsWith(APPENDIX_SIGNATURE_SUFFIX) && wasRead(ctx, rel.slice(0, -APPENDIX_SIGNATURE_SUFFIX.length))) continue; // reported with its appendix
    problems.push(`${rel}: not listed in run.json${why ? ` and not a signed appendix (${why})` : ""}`);
  }
  return { problems, ok };
}

/** `public-safety scan`: names and contents of every file, listed or not (streams joined too). */
export function publicSafetyScan(ctx: VerifyContext): CheckOutcome {
  const problems: string[] = [];
  for (const rel of [...readPaths(ctx), ...ctx.unread.map((u) => u.path)]) {
    for (const f of findSensitive(rel, 5)) problems.push(`${rel}: path matches ${f.shape}`);
  }
  for (const [rel, bytes] of ctx.files) {
    if (problems.length >= MAX_FINDINGS) break;
    problems.push(...findingsOf(rel, bytes));
  }
  for (const [rel, d] of ctx.digested) {
    if (problems.length >= MAX_FINDINGS) break;
    problems.push(...d.shapes.map((s) => `${rel}: contains a ${s} shape`));
  }
  ctx.scanFindings = problems.length;
  return { problems: problems.slice(0, MAX_FINDINGS), ok: "no secret or local-path shapes in any file name or content" };
}

import { readdirSync } from "node:fs";
import { join } from "node:path";
import { HASH_WINDOW_BYTES, scratchWindow } from "../../bytes/scratch.ts";
import { sha256Hex } from "../../bytes/sha256.ts";
import { HumanishError } from "../../errors.ts";
import { writeFileAtomicSync } from "../atomic.ts";
import { artifactRootFor } from "../paths.ts";
import { safeReadFile, safeReadOrThrow } from "../safe-read.ts";
import { loadSigningKey, type SigningKey } from "./keys.ts";
import {
  APPENDIX_SIGNATURE_SUFFIX,
  type BundleManifest,
  BundleSignatureSchema,
  buildManifest,
  checkAppendix,
  checkBundleSignature,
  encodeSigned,
  SIGNATURE_FILE,
  signAppendix,
  signManifest,
} from "./manifest.ts";

/** Largest file sealed (bytes) — the verifier's own per-file bound. */
const MAX_SEAL_FILE_BYTES = 64 * 1024 * 1024;

/** The manifest digest of the run's current `signature.json`, or null when there is none that parses. */
function currentSeal(runDir: string): string | null {
  const sig = safeReadFile(join(runDir, SIGNATURE_FILE), 64 * 1024);
  if (!sig.ok) return null;
  try {
    const p = BundleSignatureSchema.safeParse(JSON.parse(new TextDecoder().decode(sig.bytes)));
    return p.success ? p.data.manifestSha256 : null;
  } catch {
    return null;
  }
}

/**
 * Carry the run's valid appendices over to a new seal: each top-level `X` + `X.sig.json` that
 * this key signed as an extension of the previous seal is re-signed to extend `next`. Anything
 * else (unsigned, another key, a forged signature) is left as it is, and verify refuses it.
 */
function carryAppendices(runDir: string, runId: string, key: SigningKey, previous: string, next: string): void {
  const root = artifactRootFor(runId);
  for (const name of readdirSync(runDir)) {
    if (!name.endsWith(APPENDIX_SIGNATURE_SUFFIX)) continue;
    const rel = name.slice(0, -APPENDIX_SIGNATURE_SUFFIX.length);
    const sig = safeReadFile(join(runDir, name), 64 * 1024);
    const body = safeReadFile(join(runDir, rel), MAX_SEAL_FILE_BYTES);
    if (!sig.ok || !body.ok) continue;
    if (!checkAppendix(sig.bytes, { runId, path: rel, bytes: body.bytes, manifestSha256: previous, signer: key.publicKey }).ok) continue;
    const doc = signAppendix(key.privateKey, key.publicKey, { runId, path: rel, bytes: body.bytes, extendsSha256: next });
    writeFileAtomicSync(join(runDir, name), encodeSigned(doc), `${root}/${name}`);
  }
}

/**
 * The manifest of the run at `runDir` as it is on disk: `run.json`, `status.json` and every listed
 * artifact. Each file is read, hashed and dropped before the next, so a bundle of 1,600
 * screenshots costs one file's bytes at a time, never the whole bundle.
 */
function manifestOnDisk(runDir: string, runId: string): BundleManifest {
  const root = artifactRootFor(runId);
  const read = (rel: string) => safeReadOrThrow(join(runDir, rel), `${root}/${rel}`, MAX_SEAL_FILE_BYTES);
  const facts = new Map<string, { size: number; sha256: string }>();
  const scratch = scratchWindow(HASH_WINDOW_BYTES);
  const keep = (rel: string, bytes: Uint8Array) => {
    facts.set(rel, { size: bytes.byteLength, sha256: sha256Hex(bytes) });
    scratch.add(bytes.byteLength);
  };
  const runBytes = read("run.json");
  keep("run.json", runBytes);
  const listed = ((JSON.parse(new TextDecoder().decode(runBytes)) as { artifacts?: { path: string }[] }).artifacts ?? []).map((a) => a.path);
  // status.json is covered when present; anything but a plain file there is refused, never skipped.
  const status = safeReadFile(join(runDir, "status.json"), MAX_SEAL_FILE_BYTES);
  if (status.ok) keep("status.json", status.bytes);
  else if (status.reason !== "not_found") keep("status.json", read("status.json"));
  for (const rel of listed) keep(rel, read(rel));
  return buildManifest(runId, (rel) => facts.get(rel) ?? null, listed);
}

/**
 * Refuse to reopen a sealed run for more writes unless its current seal is valid over the files
 * on disk and was made by `key`. Re-sealing signs whatever is on disk, so without this check a
 * tampered, unsigned or foreign-signed bundle would come out of a reopen freshly signed and
 * trusted — the signature would launder the edit.
 * @throws HumanishError HUMANISH_BUNDLE_NOT_RESEALABLE naming what is wrong with the seal;
 *   HUMANISH_SIGNING_KEY_UNAVAILABLE; the safe reader's codes for a refused file
 */
export function assertResealable(runDir: string, runId: string, key: SigningKey | null = loadSigningKey()): void {
  if (!key) throw new HumanishError("HUMANISH_SIGNING_KEY_UNAVAILABLE", "no signing key", { next: "run `humanish keys` to create one" });
  const root = artifactRootFor(runId);
  const next = `run \`humanish verify --run ${runId}\` to see what changed; only a bundle you sealed and nobody edited can take a new report`;
  const sig = safeReadFile(join(runDir, SIGNATURE_FILE), 64 * 1024);
  if (!sig.ok)
    throw new HumanishError(
      "HUMANISH_BUNDLE_NOT_RESEALABLE",
      `${root} has no readable ${SIGNATURE_FILE} (${sig.reason}): it was never sealed or the seal was removed`,
      { next },
    );
  const check = checkBundleSignature(sig.bytes, manifestOnDisk(runDir, runId));
  if (check.state !== "valid") throw new HumanishError("HUMANISH_BUNDLE_NOT_RESEALABLE", `${root} does not match its seal: ${check.problem}`, { next });
  if (check.publicKey !== key.publicKey) {
    throw new HumanishError("HUMANISH_BUNDLE_NOT_RESEALABLE", `${root} is sealed by ${check.fingerprint}, not by your key ${key.fingerprint}`, {
      next: `verify it with \`humanish verify --run ${runId} --trust ${check.fingerprint}\`; a report can be added only by the key that sealed it`,
    });
  }
}

/**
 * Sign the run at `runDir` as it is on disk: `run.json`, `status.json` and every artifact
 * `run.json` lists; appendices this key signed for the previous seal are carried over to the
 * new one. Returns the manifest digest.
 * @throws HumanishError HUMANISH_UNSAFE_BUNDLE_FILE / HUMANISH_RUN_NOT_FOUND (a covered file is
 *   refused or missing), HUMANISH_BUNDLE_WRITE_FAILED, and the key loader's codes
 */
export function sealRunDir(runDir: string, runId: string, key: SigningKey | null = loadSigningKey()): string {
  if (!key) throw new HumanishError("HUMANISH_SIGNING_KEY_UNAVAILABLE", "no signing key", { next: "run `humanish keys` to create one" });
  const root = artifactRootFor(runId);
  const doc = signManifest(key.privateKey, key.publicKey, manifestOnDisk(runDir, runId));
  const previous = currentSeal(runDir);
  writeFileAtomicSync(join(runDir, SIGNATURE_FILE), encodeSigned(doc), `${root}/${SIGNATURE_FILE}`);
  if (previous && previous !== doc.manifestSha256) carryAppendices(runDir, runId, key, previous, doc.manifestSha256);
  return doc.manifestSha256;
}

/**
 * Write `bytes` to `rel` in the sealed run at `runDir`, with its appendix signature at
 * `rel + ".sig.json"` extending the run's current seal. Both writes are atomic; the signature
 * is written last, so a crash in between leaves an unsigned (refused) appendix, never a
 * signature over other bytes.
 * Appendices are top-level files, so a later re-seal can carry them over.
 * @throws HumanishError HUMANISH_BUNDLE_NOT_SEALED when the run has no valid `signature.json`;
 *   HUMANISH_UNSAFE_ARTIFACT_PATH for a name that is not one plain file name;
 *   HUMANISH_BUNDLE_WRITE_FAILED; the key loader's codes
 */
export function writeSignedAppendix(runDir: string, runId: string, rel: string, bytes: Uint8Array, key: SigningKey | null = loadSigningKey()): void {
  if (!key) throw new HumanishError("HUMANISH_SIGNING_KEY_UNAVAILABLE", "no signing key", { next: "run `humanish keys` to create one" });
  const root = artifactRootFor(runId);
  if (
    !/^[A-Za-z0-9][A-Za-z0-9._-]{0,200}$/.test(rel) ||
    rel.endsWith(APPENDIX_SIGNATURE_SUFFIX) ||
    rel === SIGNATURE_FILE ||
    rel === "run.json" ||
    rel === "status.json"
  ) {
    throw new HumanishError("HUMANISH_UNSAFE_ARTIFACT_PATH", `appendix ${JSON.stringify(rel.slice(0, 80))} must be one plain top-level file name`, {
      next: "name appendices like orphan-release.json",
    });
  }
  const extendsSha256 = currentSeal(runDir);
  if (!extendsSha256) {
    throw new HumanishError("HUMANISH_BUNDLE_NOT_SEALED", `${root} has no signature.json to extend, so ${rel} cannot be a signed appendix`, {
      next: "only a sealed run (run.json + signature.json) takes appendices",
    });
  }
  writeFileAtomicSync(join(runDir, rel), bytes, `${root}/${rel}`);
  const doc = signAppendix(key.privateKey, key.publicKey, { runId, path: rel, bytes, extendsSha256 });
  writeFileAtomicSync(join(runDir, `${rel}${APPENDIX_SIGNATURE_SUFFIX}`), encodeSigned(doc), `${root}/${rel}${APPENDIX_SIGNATURE_SUFFIX}`);
}

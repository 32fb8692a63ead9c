/**
 * Signed bundle documents — pure (no I/O; signing and checking are computations over bytes).
 *
 * The **manifest** (`humanish.bundle-manifest.v1`) a run is sealed with:
 *   `{schema, runId, files: [{path, bytes, sha256}, …]}` — one entry for `run.json`, one for
 *   `status.json` when present, and one per artifact listed in `run.json`, sorted by path. It is
 *   never stored: the writer and the verifier each build it from the bytes in front of them,
 *   encode it as canonical JSON (./canonical.ts) and sign / check those exact bytes. Since the
 *   complete `run.json` is covered, every free-text field, timestamp and cleanup proof in it is.
 *
 * `signature.json` (`humanish.bundle-signature.v1`), stored as canonical JSON plus a newline:
 *   `{schema, algorithm: "ed25519", publicKey, manifestSha256, signature}` — `publicKey` the
 *   base64 raw signer key, `manifestSha256` the hex SHA-256 of the canonical manifest bytes,
 *   `signature` the base64 Ed25519 signature of those bytes.
 *
 * A **signed appendix** is a file added after the seal (e.g. `orphan-release.json`) with its own
 * signature at `<path>.sig.json` (`humanish.bundle-appendix-signature.v1`):
 *   `{schema, algorithm, publicKey, runId, path, bytes, sha256, extends, signature}` — `extends`
 *   the `manifestSha256` of the sealed bundle it adds to; `signature` covers the canonical JSON
 *   of every other field. A verifier accepts it only when signed by the bundle's own signer.
 */
import { type KeyObject, sign, verify } from "node:crypto";
import { z } from "zod";
import { sha256Hex } from "../../bytes/sha256.ts";
import { Sha256Hex } from "../schemas.ts";
import { canonicalBytes, canonicalJson } from "./canonical.ts";
import { fingerprintOf, publicKeyObject } from "./trust.ts";

/** The bundle signature file beside `run.json`. */
export const SIGNATURE_FILE = "signature.json";
/** Suffix of an appendix's signature file: `orphan-release.json` → `orphan-release.json.sig.json`. */
export const APPENDIX_SIGNATURE_SUFFIX = ".sig.json";

/** One covered file: bundle-relative path, byte count, hex SHA-256. */
export interface ManifestFile {
  path: string;
  bytes: number;
  sha256: string;
}

/** `humanish.bundle-manifest.v1` (never stored; rebuilt from the files). */
export interface BundleManifest {
  schema: "humanish.bundle-manifest.v1";
  runId: string;
  files: ManifestFile[];
}

const Base64Key = z.string().regex(/^[A-Za-z0-9+/]{43}=$/, "expected base64 of 32 bytes");
const Base64Sig = z.string().regex(/^[A-Za-z0-9+/]{86}==$/, "expected base64 of 64 bytes");

/**
 * Who signed, as every signature document opens after its `schema`: the algorithm (Ed25519 only)
 * and the signer's raw public key in base64 (32 bytes).
 */
const Signer = { algorithm: z.literal("ed25519"), publicKey: Base64Key };

/** `signature.json`. */
export const BundleSignatureSchema = z.strictObject({
  schema: z.literal("humanish.bundle-signature.v1"),
  ...Signer,
  manifestSha256: Sha256Hex,
  signature: Base64Sig,
});
export type BundleSignature = z.infer<typeof BundleSignatureSchema>;

/** `<appendix>.sig.json`. */
export const AppendixSignatureSchema = z.strictObject({
  schema: z.literal("humanish.bundle-appendix-signature.v1"),
  ...Signer,
  runId: z.string().min(1),
  path: z.string().min(1),
  bytes: z.number().int().nonnegative(),
  sha256: Sha256Hex,
  extends: Sha256Hex,
  signature: Base64Sig,
});
export type AppendixSignature = z.infer<typeof AppendixSignatureSchema>;

/**
 * The manifest of a run from its files: `run.json`, `status.json` (when present) and each
 * path in `listed` (the artifact paths `run.json` lists). A listed path with no bytes gets
 * `bytes: -1` and an empty digest, which no writer ever signs. `files` is the bytes by path, or
 * a lookup of each file's size (bytes) and hex SHA-256 for a reader that hashed the files as it
 * read them and kept only the digests.
 */
export function buildManifest(
  runId: string,
  files: ReadonlyMap<string, Uint8Array> | ((path: string) => { size: number; sha256: string } | null),
  listed: readonly string[],
  digest: (bytes: Uint8Array) => string = sha256Hex,
): BundleManifest {
  const factsOf =
    typeof files === "function"
      ? files
      : (path: string) => {
          const b = files.get(path);
          return b ? { size: b.byteLength, sha256: digest(b) } : null;
        };
  const paths = new Set<string>(["run.json", ...listed]);
  if (factsOf("status.json")) paths.add("status.json");
  const out: ManifestFile[] = [];
  for (const path of [...paths].sort()) {
    const f = factsOf(path);
    out.push(f ? { path, bytes: f.size, sha256: f.sha256 } : { path, bytes: -1, sha256: "" });
  }
  return { schema: "humanish.bundle-manifest.v1", runId, files: out };
}

/** Sign a manifest: the `signature.json` document. */
export function signManifest(privateKey: KeyObject, publicKey: string, manifest: BundleManifest): BundleSignature {
  const bytes = canonicalBytes(manifest);
  return {
    schema: "humanish.bundle-signature.v1",
    algorithm: "ed25519",
    publicKey,
    manifestSha256: sha256Hex(bytes),
    signature: sign(null, bytes, privateKey).toString("base64"),
  };
}

/** The exact bytes a signature document is stored as (canonical JSON and a newline). */
export function encodeSigned(doc: BundleSignature | AppendixSignature): Uint8Array {
  return new TextEncoder().encode(`${canonicalJson(doc)}\n`);
}

/** Outcome of checking a stored signature document against freshly built content. */
export type SignatureCheck =
  | { state: "valid"; publicKey: string; fingerprint: string; manifestSha256: string }
  | { state: "invalid"; problem: string; publicKey?: string };

function parseStored<T>(bytes: Uint8Array, schema: z.ZodType<T>, label: string): { doc: T } | { problem: string } {
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    return { problem: `${label} is not UTF-8` };
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    return { problem: `${label} is not JSON` };
  }
  const r = schema.safeParse(raw);
  if (!r.success) return { problem: `${label} does not match its schema` };
  // Stored bytes must be the canonical encoding, so no byte of the file is outside what is checked.
  if (`${canonicalJson(r.data)}\n` !== text) return { problem: `${label} is not in canonical form` };
  return { doc: r.data };
}

function verifyBytes(publicKey: string, data: Uint8Array, signature: string): boolean {
  const key = publicKeyObject(publicKey);
  if (!key) return false;
  try {
    return verify(null, data, key, Buffer.from(signature, "base64"));
  } catch {
    return false;
  }
}

/** Check stored `signature.json` bytes against the manifest rebuilt from the files. */
export function checkBundleSignature(stored: Uint8Array, manifest: BundleManifest): SignatureCheck {
  const p = parseStored(stored, BundleSignatureSchema, SIGNATURE_FILE);
  if ("problem" in p) return { state: "invalid", problem: p.problem };
  const doc = p.doc;
  const bytes = canonicalBytes(manifest);
  const digest = sha256Hex(bytes);
  if (doc.manifestSha256 !== digest) {
    return { state: "invalid", publicKey: doc.publicKey, problem: "the files differ from what was signed (manifest digest mismatch)" };
  }
  if (!verifyBytes(doc.publicKey, bytes, doc.signature)) {
    return { state: "invalid", publicKey: doc.publicKey, problem: "the Ed25519 signature does not verify with its public key" };
  }
  return { state: "valid", publicKey: doc.publicKey, fingerprint: fingerprintOf(doc.publicKey)!, manifestSha256: digest };
}

/** The fields an appendix signature covers (everything but `signature`). */
function appendixBody(d: Omit<AppendixSignature, "signature">): Uint8Array {
  return canonicalBytes({ ...d, signature: undefined });
}

/** Sign an appendix file's bytes as an extension of the sealed manifest `extendsSha256`. */
export function signAppendix(
  privateKey: KeyObject,
  publicKey: string,
  a: { runId: string; path: string; bytes: Uint8Array; extendsSha256: string },
): AppendixSignature {
  const body = {
    schema: "humanish.bundle-appendix-signature.v1" as const,
    algorithm: "ed25519" as const,
    publicKey,
    runId: a.runId,
    path: a.path,
    bytes: a.bytes.byteLength,
    sha256: sha256Hex(a.bytes),
    extends: a.extendsSha256,
  };
  return { ...body, signature: sign(null, appendixBody(body), privateKey).toString("base64") };
}

/**
 * Check an appendix: its stored signature bytes, the appendix bytes (or their size and hex
 * SHA-256 as `file`, for a reader that kept only digests), against the run id, the bundle's
 * manifest digest and signer (an appendix by anyone else is refused).
 */
export function checkAppendix(
  stored: Uint8Array,
  a: { runId: string; path: string; manifestSha256: string; signer: string } & ({ bytes: Uint8Array } | { file: { size: number; sha256: string } }),
): { ok: true } | { ok: false; problem: string } {
  const file = "file" in a ? a.file : { size: a.bytes.byteLength, sha256: sha256Hex(a.bytes) };
  const label = `${a.path}${APPENDIX_SIGNATURE_SUFFIX}`;
  const p = parseStored(stored, AppendixSignatureSchema, label);
  if ("problem" in p) return { ok: false, problem: p.problem };
  const d = p.doc;
  if (d.runId !== a.runId) return { ok: false, problem: `${label} names run ${d.runId}` };
  if (d.path !== a.path) return { ok: false, problem: `${label} signs ${d.path}` };
  if (d.extends !== a.manifestSha256) return { ok: false, problem: `${label} extends another seal of this run` };
  if (d.publicKey !== a.signer) return { ok: false, problem: `${label} is signed by ${fingerprintOf(d.publicKey)}, not the bundle's signer` };
  if (d.bytes !== file.size || d.sha256 !== file.sha256) return { ok: false, problem: `${a.path} differs from what its appendix signature covers` };
  const { signature, ...body } = d;
  if (!verifyBytes(d.publicKey, appendixBody(body), signature)) return { ok: false, problem: `${label}: the Ed25519 signature does not verify` };
  return { ok: true };
}

/**
 * Trust in bundle signers, with no I/O: Ed25519 public keys as base64 of their 32 raw bytes,
 * fingerprints `ed25519:<hex SHA-256 of the raw public key, first 16 bytes>`, and the set of keys
 * a verifier trusts. The pure verify core depends on this module only; loading keys from the
 * environment or the config directory lives in `keys.ts`.
 */
import { createPublicKey, type KeyObject } from "node:crypto";
import { sha256Hex } from "../../bytes/sha256.ts";
import { HumanishError } from "../../errors.ts";

/** The public keys a verifier trusts, by raw key (base64) or fingerprint. */
export interface TrustSet {
  publicKeys: ReadonlySet<string>;
  fingerprints: ReadonlySet<string>;
}

/** An empty trust set (nothing is trusted). */
export const NO_TRUST: TrustSet = { publicKeys: new Set(), fingerprints: new Set() };

/** `ed25519:` + the first 16 bytes (32 hex) of SHA-256 over the raw public key; null when `publicKey` is not 32 bytes of base64. */
export function fingerprintOf(publicKey: string): string | null {
  const raw = rawPublicKey(publicKey);
  return raw ? `ed25519:${sha256Hex(raw).slice(0, 32)}` : null;
}

/** The 32 raw bytes of a base64 public key, or null when it is not exactly that. */
export function rawPublicKey(publicKey: string): Uint8Array | null {
  if (!/^[A-Za-z0-9+/]{43}=$/.test(publicKey)) return null;
  const raw = Buffer.from(publicKey, "base64");
  return raw.length === 32 ? new Uint8Array(raw) : null;
}

/** A Node KeyObject for a base64 raw Ed25519 public key, or null when malformed. */
export function publicKeyObject(publicKey: string): KeyObject | null {
  const raw = rawPublicKey(publicKey);
  if (!raw) return null;
  try {
    return createPublicKey({ key: { kty: "OKP", crv: "Ed25519", x: Buffer.from(raw).toString("base64url") }, format: "jwk" });
  } catch {
    return null;
  }
}

/** Base64 raw public key of a KeyObject (public or private Ed25519). */
export function publicKeyOf(key: KeyObject): string {
  const jwk = (key.type === "private" ? createPublicKey(key) : key).export({ format: "jwk" });
  return Buffer.from(String(jwk.x), "base64url").toString("base64");
}

/**
 * `text` when it is exactly one PEM block of `label` (e.g. `PRIVATE KEY`) and nothing else but
 * surrounding whitespace, else null. OpenSSL reads the first block and ignores what follows, so a
 * second key or pages of junk after the first would otherwise pass unseen.
 */
export function singlePemBlock(text: string, label: string): string | null {
  const t = text.trim();
  const begin = `-----BEGIN ${label}-----`;
  const end = `-----END ${label}-----`;
  if (!t.startsWith(begin) || !t.endsWith(end)) return null;
  const body = t.slice(begin.length, t.length - end.length);
  // Base64 lines only: no other BEGIN/END line, no header, no stray text.
  if (!/^\r?\n(?:[A-Za-z0-9+/=]{1,76}\r?\n)+$/.test(body)) return null;
  return t;
}

function trustItem(s: string): { publicKey?: string; fingerprint?: string } | null {
  const t = s.trim();
  if (/^ed25519:[0-9a-f]{32}$/.test(t)) return { fingerprint: t };
  if (rawPublicKey(t)) return { publicKey: t };
  if (t.startsWith("-----BEGIN PUBLIC KEY-----")) {
    if (singlePemBlock(t, "PUBLIC KEY") === null) return null;
    try {
      const k = createPublicKey({ key: t, format: "pem" });
      if (k.asymmetricKeyType === "ed25519") return { publicKey: publicKeyOf(k) };
    } catch {
      return null;
    }
  }
  return null;
}

/**
 * The trust set of `--trust` values (each may be comma-separated): a base64 raw public key, a
 * fingerprint `ed25519:<32 hex>`, or a file holding either, a PEM public key, or the JSON of
 * `humanish keys --json` (its `publicKey`). `readFile` reads a file's bytes (bounded) or null.
 * @throws HumanishError HUMANISH_TRUST_INVALID naming the value that is none of these
 */
export function parseTrust(values: readonly string[], readFile: (path: string) => Uint8Array | null): TrustSet {
  const publicKeys = new Set<string>();
  const fingerprints = new Set<string>();
  const add = (it: { publicKey?: string; fingerprint?: string }) => {
    if (it.publicKey) publicKeys.add(it.publicKey);
    if (it.fingerprint) fingerprints.add(it.fingerprint);
  };
  for (const v of values.flatMap((x) => x.split(","))) {
    const s = v.trim();
    if (!s) continue;
    const direct = trustItem(s);
    if (direct) {
      add(direct);
      continue;
    }
    const bytes = readFile(s);
    const text = bytes ? new TextDecoder().decode(bytes).trim() : null;
    let found = text !== null ? trustItem(text) : null;
    if (!found && text?.startsWith("{")) {
      try {
        const doc = JSON.parse(text) as { publicKey?: unknown };
        if (typeof doc.publicKey === "string") found = trustItem(doc.publicKey);
      } catch {
        found = null;
      }
    }
    if (!found) {
      throw new HumanishError("HUMANISH_TRUST_INVALID", `--trust ${JSON.stringify(s.slice(0, 80))} is not a public key, a fingerprint or a readable key file`, {
        next: "pass the publicKey or fingerprint printed by `humanish keys` on the signer's machine, or a file holding it",
      });
    }
    add(found);
  }
  return { publicKeys, fingerprints };
}

/** True when `publicKey` (base64 raw) is in `trust` by key or by fingerprint. */
export function isTrusted(trust: TrustSet, publicKey: string): boolean {
  if (trust.publicKeys.has(publicKey)) return true;
  const fp = fingerprintOf(publicKey);
  return fp !== null && trust.fingerprints.has(fp);
}

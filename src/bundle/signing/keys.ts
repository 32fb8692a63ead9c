/**
 * The per-user Ed25519 bundle-signing key, and the set of public keys a verifier trusts.
 *
 * Where the key comes from, first match wins:
 * 1. `HUMANISH_SIGNING_KEY`: an Ed25519 private key as a PKCS#8 PEM
 *    (`-----BEGIN PRIVATE KEY-----` …), for CI. Literal `\n` escapes are accepted for one-line
 *    secrets. The value is never printed, logged or written anywhere.
 * 2. `<config dir>/signing-key.pem`, created on first use (mode 0600, directory 0700), where the
 *    config dir is `HUMANISH_CONFIG_DIR`, else `$XDG_CONFIG_HOME/humanish`, else
 *    `~/.config/humanish` — outside any project, so a bundle directory never holds it.
 *
 * Public keys are written as the base64 of the 32 raw key bytes; a fingerprint is
 * `ed25519:<hex SHA-256 of the raw public key, first 16 bytes>`.
 */
import { createPrivateKey, generateKeyPairSync, type KeyObject, randomBytes } from "node:crypto";
import { chmodSync, closeSync, fsyncSync, linkSync, lstatSync, mkdirSync, openSync, unlinkSync, writeSync } from "node:fs";
import { homedir } from "node:os";
import { isAbsolute, join } from "node:path";
import { sha256Hex } from "../../bytes/sha256.ts";
import { HumanishError } from "../../errors.ts";
import { safeReadFile } from "../safe-read.ts";
import { fingerprintOf, NO_TRUST, publicKeyOf, type TrustSet } from "./trust.ts";

export { fingerprintOf, isTrusted, NO_TRUST, parseTrust, publicKeyObject, publicKeyOf, rawPublicKey, type TrustSet } from "./trust.ts";

/** File name of the private key inside the config dir. */
export const SIGNING_KEY_FILE = "signing-key.pem";
/** Largest key or trust file read, in bytes. */
const MAX_KEY_FILE_BYTES = 64 * 1024;

/** A loaded signing key. `privateKey` never leaves the process. */
export interface SigningKey {
  privateKey: KeyObject;
  /** Base64 of the 32 raw public key bytes. */
  publicKey: string;
  /** `ed25519:<32 hex>`. */
  fingerprint: string;
  /** Where it came from: the env var, or the key file (config-dir relative name only). */
  source: "env" | "file";
  /** True when this call created the key file. */
  created: boolean;
}

/** The config directory (see module doc). */
export function configDir(env: Record<string, string | undefined> = process.env): string {
  if (env.HUMANISH_CONFIG_DIR) return env.HUMANISH_CONFIG_DIR;
  if (env.XDG_CONFIG_HOME && isAbsolute(env.XDG_CONFIG_HOME)) return join(env.XDG_CONFIG_HOME, "humanish");
  return join(env.HOME || homedir(), ".config", "humanish");
}

function keyFromPem(pem: string, where: string): KeyObject {
  let key: KeyObject;
  try {
    key = createPrivateKey({ key: pem, format: "pem" });
  } catch {
    throw new HumanishError("HUMANISH_SIGNING_KEY_INVALID", `${where} is not a PKCS#8 PEM private key`, {
      next: `${where === "HUMANISH_SIGNING_KEY" ? "set HUMANISH_SIGNING_KEY to" : "replace it with"} the output of: openssl genpkey -algorithm ed25519`,
    });
  }
  if (key.asymmetricKeyType !== "ed25519") {
    throw new HumanishError("HUMANISH_SIGNING_KEY_INVALID", `${where} is a ${key.asymmetricKeyType ?? "unknown"} key, expected ed25519`, {
      next: "generate one with: openssl genpkey -algorithm ed25519",
    });
  }
  return key;
}

function describe(key: KeyObject, source: SigningKey["source"], created: boolean): SigningKey {
  const publicKey = publicKeyOf(key);
  return { privateKey: key, publicKey, fingerprint: fingerprintOf(publicKey)!, source, created };
}

/** Create `<dir>/signing-key.pem` unless it exists; a concurrent creator wins cleanly (link is exclusive). */
function createKeyFile(dir: string, file: string): boolean {
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
  } catch (e) {
    throw new HumanishError(
      "HUMANISH_SIGNING_KEY_UNAVAILABLE",
      `cannot create the humanish config directory: ${(e as NodeJS.ErrnoException).code ?? "error"}`,
      {
        next: "set HUMANISH_CONFIG_DIR to a writable directory, or supply HUMANISH_SIGNING_KEY",
      },
    );
  }
  const pem = generateKeyPairSync("ed25519").privateKey.export({ format: "pem", type: "pkcs8" }) as string;
  const tmp = join(dir, `.tmp-key-${randomBytes(6).toString("hex")}`);
  try {
    const fd = openSync(tmp, "wx", 0o600);
    try {
      writeSync(fd, pem);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    chmodSync(tmp, 0o600);
    try {
      linkSync(tmp, file);
      return true;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === "EEXIST") return false;
      throw e;
    }
  } catch (e) {
    throw new HumanishError("HUMANISH_SIGNING_KEY_UNAVAILABLE", `cannot write the signing key file: ${(e as NodeJS.ErrnoException).code ?? "error"}`, {
      next: "set HUMANISH_CONFIG_DIR to a writable directory, or supply HUMANISH_SIGNING_KEY",
    });
  } finally {
    try {
      unlinkSync(tmp);
    } catch {
      /* already gone */
    }
  }
}

const cache = new Map<string, SigningKey>();

/**
 * The user's signing key (see module doc). With `create` (default true) a missing key file is
 * created; without it a missing key gives null.
 * @throws HumanishError HUMANISH_SIGNING_KEY_INVALID (malformed env value or key file),
 *   HUMANISH_SIGNING_KEY_INSECURE (key file readable by group or others, or not a plain file),
 *   HUMANISH_SIGNING_KEY_UNAVAILABLE (cannot create the key file)
 */
export function loadSigningKey(env: Record<string, string | undefined> = process.env, opts: { create?: boolean } = {}): SigningKey | null {
  const fromEnv = env.HUMANISH_SIGNING_KEY;
  if (fromEnv) {
    const pem = fromEnv.includes("\\n") && !fromEnv.includes("\n") ? fromEnv.replace(/\\n/g, "\n") : fromEnv;
    const hit = cache.get(`env:${sha256Hex(pem)}`);
    if (hit) return hit;
    const k = describe(keyFromPem(pem, "HUMANISH_SIGNING_KEY"), "env", false);
    cache.set(`env:${sha256Hex(pem)}`, k);
    return k;
  }
  const dir = configDir(env);
  const file = join(dir, SIGNING_KEY_FILE);
  let created = false;
  let r = safeReadFile(file, MAX_KEY_FILE_BYTES);
  if (!r.ok && r.reason === "not_found") {
    if (opts.create === false) return null;
    created = createKeyFile(dir, file);
    r = safeReadFile(file, MAX_KEY_FILE_BYTES);
  }
  if (!r.ok) {
    throw new HumanishError(
      "HUMANISH_SIGNING_KEY_INSECURE",
      `the signing key file ${SIGNING_KEY_FILE} in the humanish config directory is refused (${r.reason})`,
      {
        next: `replace it with a plain file of mode 0600 (or delete it to have a new key created)`,
      },
    );
  }
  const mode = lstatSync(file).mode & 0o777;
  if (mode & 0o077) {
    throw new HumanishError(
      "HUMANISH_SIGNING_KEY_INSECURE",
      `the signing key file ${SIGNING_KEY_FILE} has mode ${mode.toString(8)}; it must be readable by you only`,
      {
        next: `chmod 600 the ${SIGNING_KEY_FILE} in ${configDir(env) === env.HUMANISH_CONFIG_DIR ? "HUMANISH_CONFIG_DIR" : "~/.config/humanish"}`,
      },
    );
  }
  const text = new TextDecoder().decode(r.bytes);
  const id = `file:${file}:${sha256Hex(text)}`;
  const hit = cache.get(id);
  if (hit) return created ? { ...hit, created } : hit;
  const k = describe(keyFromPem(text, SIGNING_KEY_FILE), "file", created);
  cache.set(id, { ...k, created: false });
  return k;
}

/** One `--trust` item as a key or fingerprint, or null when it is neither. */
/** Read a trust file through the safe reader (bounded, regular files only). */
export function readTrustFile(path: string): Uint8Array | null {
  const r = safeReadFile(path, MAX_KEY_FILE_BYTES, { singleLink: false });
  return r.ok ? r.bytes : null;
}

/**
 * The default trust set: the local user's own public key (env key or existing key file; nothing
 * is created) plus any `extra` trust. A key that cannot be loaded contributes nothing.
 */
export function defaultTrust(env: Record<string, string | undefined> = process.env, extra: TrustSet = NO_TRUST): TrustSet {
  const publicKeys = new Set(extra.publicKeys);
  try {
    const own = loadSigningKey(env, { create: false });
    if (own) publicKeys.add(own.publicKey);
  } catch {
    /* an unusable own key trusts nothing; verify then reports the signer as untrusted */
  }
  return { publicKeys, fingerprints: new Set(extra.fingerprints) };
}

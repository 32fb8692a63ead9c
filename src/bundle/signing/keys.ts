/**
 * The per-user Ed25519 bundle-signing key, and the set of public keys a verifier trusts.
 *
 * Where the key comes from, first match wins:
 * 1. `HUMANISH_SIGNING_KEY`: exactly one Ed25519 private key as a PKCS#8 PEM
 *    (`-----BEGIN PRIVATE KEY-----` …, at most 4 KiB), for CI. Literal `\n` escapes are accepted
 *    for one-line secrets. The value is never printed, logged or written anywhere.
 * 2. `<config dir>/signing-key.pem`, created on first use (mode 0600, directory 0700), where the
 *    config dir is `HUMANISH_CONFIG_DIR`, else `$XDG_CONFIG_HOME/humanish`, else
 *    `~/.config/humanish` — outside any project, so a bundle directory never holds it.
 *
 * As ssh does with `~/.ssh`, the file is refused when anyone else could have written it or can
 * read it: a config dir writable by group or others (anyone there could swap the key for their
 * own, and every bundle would be signed by them), or owned by another user; a key file readable
 * or writable by group or others, or owned by another user. Either way the file must hold one
 * PEM block and nothing else.
 *
 * Public keys are written as the base64 of the 32 raw key bytes; a fingerprint is
 * `ed25519:<hex SHA-256 of the raw public key, first 16 bytes>`.
 */
import { createPrivateKey, generateKeyPairSync, type KeyObject, randomBytes } from "node:crypto";
import { chmodSync, existsSync, linkSync, lstatSync, mkdirSync, statSync, unlinkSync } from "node:fs";
import { homedir } from "node:os";
import { isAbsolute, join } from "node:path";
import { sha256Hex } from "../../bytes/sha256.ts";
import { HumanishError } from "../../errors.ts";
import { writeNewFileSynced } from "../atomic.ts";
import { safeReadFile } from "../safe-read.ts";
import { fingerprintOf, NO_TRUST, publicKeyOf, singlePemBlock, type TrustSet } from "./trust.ts";

export { fingerprintOf, isTrusted, NO_TRUST, parseTrust, publicKeyObject, publicKeyOf, rawPublicKey, type TrustSet } from "./trust.ts";

/** File name of the private key inside the config dir. */
export const SIGNING_KEY_FILE = "signing-key.pem";
/** Largest key or trust file read, in bytes. */
const MAX_KEY_FILE_BYTES = 64 * 1024;
/** Largest `HUMANISH_SIGNING_KEY` value, in bytes: an Ed25519 PKCS#8 PEM is 119. */
export const MAX_SIGNING_KEY_ENV_BYTES = 4 * 1024;

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
  if (singlePemBlock(pem, "PRIVATE KEY") === null) {
    throw new HumanishError(
      "HUMANISH_SIGNING_KEY_INVALID",
      `${where} must hold exactly one PEM private key and nothing else (a second key or other text was found)`,
      {
        next: `${where === "HUMANISH_SIGNING_KEY" ? "set HUMANISH_SIGNING_KEY to" : "replace it with"} the output of: openssl genpkey -algorithm ed25519`,
      },
    );
  }
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
    writeNewFileSynced(tmp, new TextEncoder().encode(pem));
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

/** `path` as the user would type it: `~/…` under the home directory. */
function shown(path: string, env: Record<string, string | undefined>): string {
  const home = env.HOME || homedir();
  return home && (path === home || path.startsWith(`${home}/`)) ? `~${path.slice(home.length)}` : path;
}

/** Whether `owner` is neither this user nor root (root may own them, as ssh allows). */
function foreign(owner: number): boolean {
  const uid = typeof process.getuid === "function" ? process.getuid() : null;
  return uid !== null && owner !== uid && owner !== 0;
}

/**
 * Refuse a config directory someone else owns or could write (a key made or kept there could be
 * replaced). Called before a key is created in it too, so no key is ever left in such a place.
 * @throws HumanishError HUMANISH_SIGNING_KEY_INSECURE naming the directory, with the chmod/chown to run
 */
function assertPrivateDir(dir: string, env: Record<string, string | undefined>): void {
  // The directory may be a symlink (a dotfiles checkout); what it resolves to is what is checked.
  const d = statSync(dir);
  if (foreign(d.uid)) {
    throw new HumanishError(
      "HUMANISH_SIGNING_KEY_INSECURE",
      `the humanish config directory ${shown(dir, env)} is owned by uid ${d.uid}, not you; its signing key is refused`,
      {
        next: `chown $(id -u) ${shown(dir, env)}, or set HUMANISH_CONFIG_DIR to a directory of your own`,
      },
    );
  }
  if (d.mode & 0o022) {
    throw new HumanishError(
      "HUMANISH_SIGNING_KEY_INSECURE",
      `the humanish config directory ${shown(dir, env)} has mode ${(d.mode & 0o777).toString(8)}: others can write it, so anyone could replace the signing key; refused`,
      { next: `chmod 700 ${shown(dir, env)} (then check that ${SIGNING_KEY_FILE} in it is still yours: humanish keys)` },
    );
  }
}

/**
 * Refuse a config dir or key file that someone else could have written, or can read (see the
 * module doc). Root may own them (as ssh allows); nobody else but the current user.
 * @throws HumanishError HUMANISH_SIGNING_KEY_INSECURE naming the path, with the chmod/chown to run
 */
function assertPrivate(dir: string, file: string, env: Record<string, string | undefined>): void {
  assertPrivateDir(dir, env);
  const f = lstatSync(file);
  if (foreign(f.uid)) {
    throw new HumanishError("HUMANISH_SIGNING_KEY_INSECURE", `the signing key file ${shown(file, env)} is owned by uid ${f.uid}, not you; refused`, {
      next: `delete ${shown(file, env)} to have a new key created, or chown it to yourself`,
    });
  }
  if (f.mode & 0o077) {
    throw new HumanishError(
      "HUMANISH_SIGNING_KEY_INSECURE",
      `the signing key file ${shown(file, env)} has mode ${(f.mode & 0o777).toString(8)}; it must be readable by you only`,
      { next: `chmod 600 ${shown(file, env)}` },
    );
  }
}

const cache = new Map<string, SigningKey>();

/**
 * The user's signing key (see module doc). With `create` (default true) a missing key file is
 * created; without it a missing key gives null.
 * @throws HumanishError HUMANISH_SIGNING_KEY_INVALID (malformed env value or key file),
 *   HUMANISH_SIGNING_KEY_INSECURE (key file readable by group or others, or not a plain file;
 *   config dir writable by group or others; either owned by another user),
 *   HUMANISH_SIGNING_KEY_UNAVAILABLE (cannot create the key file)
 */
export function loadSigningKey(env: Record<string, string | undefined> = process.env, opts: { create?: boolean } = {}): SigningKey | null {
  const fromEnv = env.HUMANISH_SIGNING_KEY;
  if (fromEnv) {
    if (Buffer.byteLength(fromEnv, "utf8") > MAX_SIGNING_KEY_ENV_BYTES) {
      throw new HumanishError(
        "HUMANISH_SIGNING_KEY_INVALID",
        `HUMANISH_SIGNING_KEY is ${Buffer.byteLength(fromEnv, "utf8")} bytes; one Ed25519 PEM private key is about 120 (at most ${MAX_SIGNING_KEY_ENV_BYTES} accepted)`,
        { next: "set HUMANISH_SIGNING_KEY to exactly the output of: openssl genpkey -algorithm ed25519" },
      );
    }
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
    if (existsSync(dir)) assertPrivateDir(dir, env);
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
  assertPrivate(dir, file, env);
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

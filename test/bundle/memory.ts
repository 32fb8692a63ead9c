/**
 * In-memory bundles for the verify-core tests and the fuzz: read a real bundle written by the
 * writer once, then mutate copies of its files and verify them with `verifyFiles` (no disk).
 */
import { generateKeyPairSync, type KeyObject } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { type BundleFile, buildManifest, encodeSigned, NO_TRUST, SIGNATURE_FILE, signManifest, type TrustSet } from "../../src/bundle/index.ts";
import { publicKeyOf } from "../../src/bundle/signing/keys.ts";
import { readBundleDir } from "../../src/bundle/verify/disk.ts";

/** A throwaway Ed25519 key: its private KeyObject, base64 raw public key and a trust set of it. */
export interface TestKey {
  privateKey: KeyObject;
  publicKey: string;
  trust: TrustSet;
}

/** A fresh key pair (never written anywhere). */
export function testKey(): TestKey {
  const { privateKey } = generateKeyPairSync("ed25519");
  const publicKey = publicKeyOf(privateKey);
  return { privateKey, publicKey, trust: { publicKeys: new Set([publicKey]), fingerprints: NO_TRUST.fingerprints } };
}

/**
 * Every regular file of the bundle at `dir` with its bytes, in the walk's order (read by the
 * verifier's own disk walk; the screenshots it digests are read again whole, for the in-memory core).
 */
export async function loadFiles(dir: string): Promise<BundleFile[]> {
  const w = await readBundleDir(dir);
  if (w.containment.length) throw new Error(`fixture bundle is not clean: ${w.containment.join("; ")}`);
  return [...w.files, ...w.digested.map((d) => ({ path: d.path, bytes: new Uint8Array(readFileSync(join(dir, d.path))) }))];
}

/** The artifact paths run.json lists (from the given files). */
export function listedPaths(files: readonly BundleFile[]): string[] {
  const run = files.find((f) => f.path === "run.json");
  if (!run) return [];
  try {
    return ((JSON.parse(new TextDecoder().decode(run.bytes)) as { artifacts?: { path: string }[] }).artifacts ?? []).map((a) => a.path);
  } catch {
    return [];
  }
}

/** Re-sign `files` with `key` as the writer would at seal (signature.json replaced or added). */
export function resign(files: readonly BundleFile[], runId: string, key: TestKey): BundleFile[] {
  const map = new Map(files.map((f) => [f.path, f.bytes]));
  const doc = signManifest(key.privateKey, key.publicKey, buildManifest(runId, map, listedPaths(files)));
  return [...files.filter((f) => f.path !== SIGNATURE_FILE), { path: SIGNATURE_FILE, bytes: encodeSigned(doc) }];
}

/** Replace (or add) one file, returning a new list; `null` removes it. */
export function withFile(files: readonly BundleFile[], path: string, bytes: Uint8Array | null): BundleFile[] {
  const out = files.filter((f) => f.path !== path);
  if (bytes) out.push({ path, bytes });
  return out;
}

/** The file's text. */
export function textOf(files: readonly BundleFile[], path: string): string {
  const f = files.find((x) => x.path === path);
  if (!f) throw new Error(`no ${path}`);
  return new TextDecoder().decode(f.bytes);
}

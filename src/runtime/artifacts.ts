/**
 * Pinned build artifacts of an image recipe: files too large to embed in the binary (the Node
 * runtime of the sandbox image) that enter the build context only after their byte count and
 * SHA-256 match the pin kept in the repository.
 *
 * Each artifact is an npm registry package fetched on the host with `npm pack <spec>`, so it goes
 * through the operator's own npm configuration (registry mirror, proxy, `NODE_EXTRA_CA_CERTS`)
 * and needs no registry besides npm. A verified copy is kept in the artifact cache
 * (`HUMANISH_ARTIFACT_CACHE`, else `$XDG_CACHE_HOME/humanish/artifacts`, else
 * `~/.cache/humanish/artifacts`) under its SHA-256, so a rebuild never fetches again; a cached
 * file is re-verified on every use.
 */
import { spawnSync } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";
import { HumanishError } from "../errors.ts";

/** One pinned artifact of a recipe. */
export interface RecipeArtifact {
  /** Path of the file inside the build context, e.g. `node.tgz`. */
  path: string;
  /** Exact npm spec `name@version` (no ranges: the pin is the point). */
  npmSpec: string;
  /** Lowercase hex SHA-256 of the packed tarball. */
  sha256: string;
  /** Exact byte count of the packed tarball. */
  bytes: number;
}

/** Env var overriding the artifact cache directory. */
export const ARTIFACT_CACHE_ENV = "HUMANISH_ARTIFACT_CACHE";

/** Deadline of one `npm pack`, ms. */
const NPM_PACK_TIMEOUT_MS = 10 * 60_000;

/** The artifact cache directory for this environment (not created). */
export function artifactCacheDir(env: Record<string, string | undefined> = process.env): string {
  if (env[ARTIFACT_CACHE_ENV]) return env[ARTIFACT_CACHE_ENV]!;
  const base = env.XDG_CACHE_HOME || join(env.HOME || homedir(), ".cache");
  return join(base, "humanish", "artifacts");
}

function sha256Hex(bytes: Uint8Array): string {
  return createHash("sha256").update(bytes).digest("hex");
}

/** Throws unless the artifact's pin is well-formed (exact version, 64 hex, positive bytes). */
export function validateArtifact(a: RecipeArtifact): void {
  if (
    !/^(@[a-z0-9._-]+\/)?[a-z0-9._-]+@\d+\.\d+\.\d+$/.test(a.npmSpec) ||
    !/^[0-9a-f]{64}$/.test(a.sha256) ||
    !(Number.isSafeInteger(a.bytes) && a.bytes > 0)
  ) {
    throw new HumanishError(
      "HUMANISH_IMAGE_RECIPE_INVALID",
      `recipe artifact ${a.path}: pin must be an exact npm spec name@x.y.z, a 64-hex sha256 and a positive byte count (got ${a.npmSpec}, ${a.sha256}, ${a.bytes})`,
      { next: "fix the pin in src/runtime/recipes.ts" },
    );
  }
}

/** Whether `bytes` are exactly the pinned artifact. */
export function matchesPin(a: RecipeArtifact, bytes: Uint8Array): boolean {
  return bytes.byteLength === a.bytes && sha256Hex(bytes) === a.sha256;
}

function cachePath(a: RecipeArtifact, env: Record<string, string | undefined>): string {
  return join(artifactCacheDir(env), `${a.sha256}-${a.npmSpec.replace(/[@/]/g, "_")}.tgz`);
}

/** Runs `npm pack <spec>` into a private temp dir and returns the tarball's bytes. */
function npmPack(a: RecipeArtifact, env: Record<string, string | undefined>): Uint8Array {
  const npm = Bun.which("npm", { PATH: env.PATH ?? process.env.PATH ?? "" });
  if (!npm) {
    throw new HumanishError("HUMANISH_IMAGE_ARTIFACT_UNAVAILABLE", `cannot fetch ${a.npmSpec} for the image build: npm is not on PATH`, {
      next: `install npm (apt-get install -y npm), or put a copy of ${a.npmSpec} (sha256 ${a.sha256}) at ${cachePath(a, env)}`,
    });
  }
  const dir = mkdtempSync(join(tmpdir(), "humanish-pack-"));
  try {
    const cleanEnv: Record<string, string> = {};
    for (const [k, v] of Object.entries(env)) if (v !== undefined) cleanEnv[k] = v;
    const r = spawnSync(npm, ["pack", a.npmSpec, "--pack-destination", dir, "--silent"], {
      cwd: dir,
      env: cleanEnv,
      encoding: "utf8",
      timeout: NPM_PACK_TIMEOUT_MS,
      stdio: ["ignore", "pipe", "pipe"],
    });
    const tgz = readdirSync(dir).filter((f) => f.endsWith(".tgz"));
    if (r.status !== 0 || tgz.length !== 1) {
      const why = r.error ? r.error.message : `${(r.stderr || r.stdout || "").trim().slice(-600)} (exit ${r.status ?? r.signal})`;
      throw new HumanishError("HUMANISH_IMAGE_ARTIFACT_UNAVAILABLE", `npm pack ${a.npmSpec} failed: ${why}`, {
        next: "check that this machine reaches the npm registry (npm config get registry; a proxy needs NODE_EXTRA_CA_CERTS), then retry",
      });
    }
    return new Uint8Array(readFileSync(join(dir, tgz[0]!)));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * The artifact's verified bytes: from the cache when its copy still matches the pin, else
 * fetched with `npm pack`, verified, then cached.
 * @throws HumanishError `HUMANISH_IMAGE_ARTIFACT_MISMATCH` (the fetched bytes are not the pinned
 *   ones: nothing enters the build), `HUMANISH_IMAGE_ARTIFACT_UNAVAILABLE` (npm missing or failed).
 */
export function fetchArtifact(a: RecipeArtifact, env: Record<string, string | undefined> = process.env): Uint8Array {
  validateArtifact(a);
  const cached = cachePath(a, env);
  if (existsSync(cached)) {
    const bytes = new Uint8Array(readFileSync(cached));
    if (matchesPin(a, bytes)) return bytes;
    // A corrupted or tampered copy is dropped and fetched again, never used.
    rmSync(cached, { force: true });
  }
  const bytes = npmPack(a, env);
  if (!matchesPin(a, bytes)) {
    throw new HumanishError(
      "HUMANISH_IMAGE_ARTIFACT_MISMATCH",
      `npm pack ${a.npmSpec} gave ${bytes.byteLength} bytes with sha256 ${sha256Hex(bytes)}, expected ${a.bytes} bytes with sha256 ${a.sha256}; nothing was built`,
      {
        next: "the registry served different bytes than the pin: check the registry mirror (npm config get registry) before trusting it",
        details: { spec: a.npmSpec, bytes: bytes.byteLength, expectedBytes: a.bytes },
      },
    );
  }
  try {
    mkdirSync(artifactCacheDir(env), { recursive: true });
    const tmp = `${cached}.${randomBytes(6).toString("hex")}.tmp`;
    writeFileSync(tmp, bytes);
    renameSync(tmp, cached);
  } catch {
    // An unwritable cache only costs a fetch next time.
  }
  return bytes;
}

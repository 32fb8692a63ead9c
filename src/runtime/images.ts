/**
 * Local runtime images (ARCHITECTURE.md "Local runtime (Docker)"): tags derived from a
 * recipe's content, status without side effects, builds through the Engine API from an in-memory tar
 * of the recipe, and loading of a prebuilt archive whose byte count and SHA-256 are verified before a
 * single byte reaches the engine.
 *
 * A recipe is generic (sandbox image, guest image, test images): a name and a set of files
 * (`Dockerfile` plus anything it COPYs). Its revision is the first 12 hex digits of a SHA-256 over
 * the name, the Dockerfile path and every file (sorted by path, length-prefixed), so any change to
 * the recipe yields a new tag `<name>:<revision>`; the image carries the label
 * `humanish.runtime-revision=<revision>`.
 */
import { createHash } from "node:crypto";
import { open, stat } from "node:fs/promises";
import { type DockerClient, isDockerApiError, type JsonMessage, tarPack } from "../docker/index.ts";
import { errorMessage, HumanishError } from "../errors.ts";
import { fetchArtifact, type RecipeArtifact, validateArtifact } from "./artifacts.ts";

/** Label carrying the recipe revision on a built image. */
export const REVISION_LABEL = "humanish.runtime-revision";
/** Label naming the recipe on a built image. */
export const RECIPE_LABEL = "humanish.recipe";

/** An image recipe. File paths are relative to the build context; contents are text or bytes. */
export interface ImageRecipe {
  /** Repository part of the tag, e.g. `humanish-sandbox`. Lowercase `[a-z0-9._/-]`. */
  name: string;
  /** Build context files, e.g. `{ Dockerfile: "FROM …" }`. */
  files: Record<string, string | Uint8Array>;
  /** Dockerfile path inside `files` (default `Dockerfile`). */
  dockerfile?: string;
  /** Extra labels for the image (never secret). */
  labels?: Record<string, string>;
  /** Build args (never secret: they are recorded in the image history). */
  buildArgs?: Record<string, string>;
  /** File modes in the build context by path (default 0o644), e.g. `{ humanish: 0o555 }`. */
  modes?: Record<string, number>;
  /**
   * Pinned files fetched at build time (./artifacts.ts) and verified against their SHA-256
   * before they join the build context. Their pins, not their bytes, enter the revision: the
   * bytes are proven equal to the pin before any build.
   */
  artifacts?: RecipeArtifact[];
}

/** Status of a recipe's image in the engine. */
export interface ImageStatus {
  /** `<name>:<revision>`. */
  tag: string;
  revision: string;
  /** True when the tag exists AND carries the matching revision label. */
  present: boolean;
  /** `sha256:…` when the tag exists. */
  imageId?: string;
  /** Image size in bytes when present. */
  sizeBytes?: number;
  /** ISO creation time when present. */
  createdAt?: string;
  /** Why `present` is false although the tag exists (label mismatch). */
  mismatch?: string;
}

const enc = new TextEncoder();

function bytesOf(v: string | Uint8Array): Uint8Array {
  return typeof v === "string" ? enc.encode(v) : v;
}

function validate(recipe: ImageRecipe): void {
  if (!/^[a-z0-9]+(?:[._/-][a-z0-9]+)*$/.test(recipe.name)) {
    throw new HumanishError("HUMANISH_IMAGE_RECIPE_INVALID", `image recipe name ${JSON.stringify(recipe.name)} is not a valid repository name`, {
      next: "use lowercase letters, digits and . _ / - separators",
    });
  }
  for (const a of recipe.artifacts ?? []) {
    validateArtifact(a);
    if (a.path in recipe.files) {
      throw new HumanishError("HUMANISH_IMAGE_RECIPE_INVALID", `image recipe ${recipe.name} names ${a.path} both as a file and as an artifact`, {
        next: "give the artifact its own path",
      });
    }
  }
  const df = recipe.dockerfile ?? "Dockerfile";
  if (!(df in recipe.files)) {
    throw new HumanishError("HUMANISH_IMAGE_RECIPE_INVALID", `image recipe ${recipe.name} has no ${df} among its files`, {
      next: `add ${df} to the recipe files`,
    });
  }
}

/** The recipe's revision: 12 hex digits of a SHA-256 over its name, Dockerfile path and files. */
export function recipeRevision(recipe: ImageRecipe): string {
  validate(recipe);
  const h = createHash("sha256");
  const field = (b: Uint8Array) => {
    h.update(`${b.length}:`);
    h.update(b);
  };
  field(enc.encode("humanish.image-recipe.v1"));
  field(enc.encode(recipe.name));
  field(enc.encode(recipe.dockerfile ?? "Dockerfile"));
  for (const path of Object.keys(recipe.files).sort()) {
    field(enc.encode(path));
    field(bytesOf(recipe.files[path]!));
    // Only explicit modes enter the hash, so recipes without any keep their revision.
    if (recipe.modes?.[path] !== undefined) field(enc.encode(`mode ${recipe.modes[path]!.toString(8)}`));
  }
  for (const [k, v] of Object.entries(recipe.labels ?? {}).sort(([a], [b]) => (a < b ? -1 : 1))) field(enc.encode(`label ${k}=${v}`));
  for (const [k, v] of Object.entries(recipe.buildArgs ?? {}).sort(([a], [b]) => (a < b ? -1 : 1))) field(enc.encode(`arg ${k}=${v}`));
  for (const a of [...(recipe.artifacts ?? [])].sort((x, y) => (x.path < y.path ? -1 : 1)))
    field(enc.encode(`artifact ${a.path} ${a.npmSpec} ${a.sha256} ${a.bytes}`));
  return h.digest("hex").slice(0, 12);
}

/** `<name>:<revision>`. */
export function recipeTag(recipe: ImageRecipe): string {
  return `${recipe.name}:${recipeRevision(recipe)}`;
}

/**
 * The recipe's files as a tar build context (bytes). `artifacts` holds the verified bytes of
 * each declared artifact by path (see {@link fetchRecipeArtifacts}); a missing one throws
 * `HUMANISH_IMAGE_RECIPE_INVALID`.
 */
export function recipeContext(recipe: ImageRecipe, artifacts: Record<string, Uint8Array> = {}): Uint8Array {
  validate(recipe);
  const files: Record<string, string | Uint8Array> = { ...recipe.files };
  for (const a of recipe.artifacts ?? []) {
    const bytes = artifacts[a.path];
    if (!bytes) {
      throw new HumanishError("HUMANISH_IMAGE_RECIPE_INVALID", `image recipe ${recipe.name}: artifact ${a.path} (${a.npmSpec}) was not fetched`, {
        next: "fetch the recipe's artifacts first (fetchRecipeArtifacts)",
      });
    }
    files[a.path] = bytes;
  }
  return tarPack(
    Object.keys(files)
      .sort()
      .map((path) => ({ path, data: files[path]!, mode: recipe.modes?.[path] ?? 0o644 })),
  );
}

/**
 * The verified bytes of every artifact of the recipe, by context path.
 * @throws HumanishError `HUMANISH_IMAGE_ARTIFACT_MISMATCH`, `HUMANISH_IMAGE_ARTIFACT_UNAVAILABLE`.
 */
export function fetchRecipeArtifacts(recipe: ImageRecipe, env: Record<string, string | undefined> = process.env): Record<string, Uint8Array> {
  const out: Record<string, Uint8Array> = {};
  for (const a of recipe.artifacts ?? []) out[a.path] = fetchArtifact(a, env);
  return out;
}

/**
 * Whether the recipe's image exists (tag present with the matching revision label). Never builds or
 * pulls. Throws `HUMANISH_DOCKER_UNAVAILABLE` when the engine is unreachable.
 */
export async function imageStatus(docker: DockerClient, recipe: ImageRecipe): Promise<ImageStatus> {
  const revision = recipeRevision(recipe);
  const tag = `${recipe.name}:${revision}`;
  try {
    const info = await docker.imageInspect(tag);
    const label = info.Config?.Labels?.[REVISION_LABEL];
    const base = { tag, revision, imageId: info.Id, sizeBytes: info.Size, createdAt: info.Created };
    if (label !== revision) return { ...base, present: false, mismatch: `label ${REVISION_LABEL}=${label ?? "(absent)"}, expected ${revision}` };
    return { ...base, present: true };
  } catch (e) {
    if (isDockerApiError(e, 404)) return { tag, revision, present: false };
    throw e;
  }
}

/** Options of `ensureImage`. */
export interface EnsureImageOptions {
  /** Each message of the build's JSON progress stream. */
  onProgress?: (message: JsonMessage) => void;
  /** Rebuild even when present. */
  force?: boolean;
  noCache?: boolean;
  signal?: AbortSignal;
  /** Overall build deadline in ms (default none). */
  timeoutMs?: number;
  /** Environment for fetching the recipe's artifacts (npm config, proxies); default process.env. */
  env?: Record<string, string | undefined>;
}

/** Result of `ensureImage`. */
export interface EnsureImageResult {
  tag: string;
  revision: string;
  imageId: string;
  /** True when this call built it; false when it was already present. */
  built: boolean;
}

/**
 * Returns the recipe's image, building it through the Engine API (`POST /build` with the recipe
 * tarred in memory, its artifacts fetched and verified first, labelled with its revision) when
 * absent. Throws `HUMANISH_IMAGE_BUILD_FAILED` (with the engine's message) when the build fails,
 * `HUMANISH_IMAGE_ARTIFACT_MISMATCH` / `HUMANISH_IMAGE_ARTIFACT_UNAVAILABLE` when an artifact
 * cannot be had as pinned, `HUMANISH_DOCKER_UNAVAILABLE` when no engine.
 */
export async function ensureImage(docker: DockerClient, recipe: ImageRecipe, opts: EnsureImageOptions = {}): Promise<EnsureImageResult> {
  const status = await imageStatus(docker, recipe);
  if (status.present && status.imageId && !opts.force) return { tag: status.tag, revision: status.revision, imageId: status.imageId, built: false };
  // Artifacts are fetched and verified before the engine sees a byte; their errors stay as they are.
  const artifacts = fetchRecipeArtifacts(recipe, opts.env);
  try {
    const res = await docker.imageBuild(recipeContext(recipe, artifacts), {
      tags: [status.tag],
      ...(recipe.dockerfile ? { dockerfile: recipe.dockerfile } : {}),
      labels: { ...(recipe.labels ?? {}), [REVISION_LABEL]: status.revision, [RECIPE_LABEL]: recipe.name },
      ...(recipe.buildArgs ? { buildArgs: recipe.buildArgs } : {}),
      ...(opts.noCache ? { noCache: true } : {}),
      ...(opts.onProgress ? { onProgress: opts.onProgress } : {}),
      ...(opts.signal ? { signal: opts.signal } : {}),
      ...(opts.timeoutMs !== undefined ? { timeoutMs: opts.timeoutMs } : {}),
    });
    return { tag: status.tag, revision: status.revision, imageId: res.imageId, built: true };
  } catch (e) {
    if (e instanceof HumanishError && e.code === "HUMANISH_DOCKER_UNAVAILABLE") throw e;
    const msg = errorMessage(e);
    throw new HumanishError("HUMANISH_IMAGE_BUILD_FAILED", `building image ${status.tag} from recipe ${recipe.name} failed: ${msg}`, {
      next: "read the build error above; check that the base image exists (`bash scripts/base-image.sh`) and that the build can reach deb.debian.org",
      cause: e,
    });
  }
}

/** Expected identity of an image archive. */
export interface ArchiveExpectation {
  /** Lowercase hex SHA-256 of the whole file. */
  sha256: string;
  /** Exact byte count of the file. */
  bytes: number;
}

/** Result of `loadImageArchive`. */
export interface LoadImageResult {
  /** References the engine reported loaded. */
  loaded: string[];
  sha256: string;
  bytes: number;
}

/** SHA-256 and size of a file, streamed (bytes never all in memory). */
async function hashFile(file: string): Promise<{ sha256: string; bytes: number }> {
  const h = createHash("sha256");
  let bytes = 0;
  const fh = await open(file, "r");
  try {
    const buf = new Uint8Array(1024 * 1024);
    for (;;) {
      const { bytesRead } = await fh.read(buf, 0, buf.length, null);
      if (bytesRead === 0) break;
      h.update(buf.subarray(0, bytesRead));
      bytes += bytesRead;
    }
  } finally {
    await fh.close();
  }
  return { sha256: h.digest("hex"), bytes };
}

/**
 * Loads an image archive (`docker save` format) into the engine after verifying its byte count and
 * SHA-256 — a mismatch throws `HUMANISH_IMAGE_ARCHIVE_MISMATCH` and nothing is sent to the engine.
 * Errors: `HUMANISH_IMAGE_ARCHIVE_MISSING` (unreadable file), `HUMANISH_IMAGE_LOAD_FAILED` (engine
 * rejected it, including a 200 answer whose progress stream carries `errorDetail`).
 */
export async function loadImageArchive(
  docker: DockerClient,
  file: string,
  expect: ArchiveExpectation,
  opts: { onProgress?: (message: JsonMessage) => void; signal?: AbortSignal } = {},
): Promise<LoadImageResult> {
  if (!/^[0-9a-f]{64}$/.test(expect.sha256) || !Number.isSafeInteger(expect.bytes) || expect.bytes < 0) {
    throw new HumanishError(
      "HUMANISH_IMAGE_ARCHIVE_MISMATCH",
      `loadImageArchive: expected sha256 must be 64 lowercase hex digits and bytes a non-negative integer`,
      {
        next: "pass the archive's published sha256 and byte count",
      },
    );
  }
  let size: number;
  try {
    const st = await stat(file);
    if (!st.isFile()) throw new Error("not a regular file");
    size = st.size;
  } catch (e) {
    throw new HumanishError("HUMANISH_IMAGE_ARCHIVE_MISSING", `image archive ${file} cannot be read: ${(e as Error).message}`, {
      next: "download the archive again (`humanish runtime setup`)",
    });
  }
  if (size !== expect.bytes) {
    throw new HumanishError("HUMANISH_IMAGE_ARCHIVE_MISMATCH", `image archive ${file} is ${size} bytes, expected ${expect.bytes}; nothing was loaded`, {
      next: "delete the file and download it again",
      details: { file, bytes: size, expectedBytes: expect.bytes },
    });
  }
  const got = await hashFile(file);
  if (got.bytes !== expect.bytes || got.sha256 !== expect.sha256) {
    throw new HumanishError(
      "HUMANISH_IMAGE_ARCHIVE_MISMATCH",
      `image archive ${file} has sha256 ${got.sha256} (${got.bytes} bytes), expected ${expect.sha256} (${expect.bytes} bytes); nothing was loaded`,
      {
        next: "delete the file and download it again",
        details: { file, sha256: got.sha256, expectedSha256: expect.sha256 },
      },
    );
  }
  try {
    const res = await docker.imageLoad(Bun.file(file), {
      ...(opts.onProgress ? { onProgress: opts.onProgress } : {}),
      ...(opts.signal ? { signal: opts.signal } : {}),
    });
    return { loaded: res.loaded, sha256: got.sha256, bytes: got.bytes };
  } catch (e) {
    if (e instanceof HumanishError && e.code === "HUMANISH_DOCKER_UNAVAILABLE") throw e;
    throw new HumanishError("HUMANISH_IMAGE_LOAD_FAILED", `loading image archive ${file} failed: ${errorMessage(e)}`, {
      next: "check the archive format (docker save) and the engine's free disk space",
      cause: e,
    });
  }
}

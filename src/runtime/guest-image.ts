/**
 * The browser guest image (`runtime/guest/`): recipe = the embedded Dockerfile plus
 * the compiled humanish binary (the guest agent). Its runtime revision is
 * `guest-api1-<sha256 over the recipe and the binary>`; the image carries it as the label
 * `to.humanish.runtime.revision` (plus `to.humanish.runtime.api=1`) and as the guest's env, and
 * the host uses it as the browser-control `runtimeRevision`. Built images are cached by tag
 * `humanish-guest:<recipe revision>`, so an unchanged binary never rebuilds.
 *
 * `HUMANISH_LOCAL_RUNTIME_IMAGE` names an already-built compatible image instead; an invalid one
 * fails (it is never pulled or built).
 */
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import guestDockerfile from "../../runtime/guest/Dockerfile" with { type: "text" };
import { type DockerClient, isDockerApiError, type JsonMessage } from "../docker/index.ts";
import { HumanishError } from "../errors.ts";
import { ensureImage, type ImageRecipe, imageStatus } from "./images.ts";

/** Repository part of the guest image tag. */
export const GUEST_IMAGE_NAME = "humanish-guest";
/** Label naming the guest API version. */
export const RUNTIME_API_LABEL = "to.humanish.runtime.api";
/** Label carrying the runtime revision `guest-api1-<64 hex>`. */
export const RUNTIME_REVISION_LABEL = "to.humanish.runtime.revision";
/** Environment variable naming an already-built guest image to use instead of the recipe. */
export const RUNTIME_IMAGE_ENV = "HUMANISH_LOCAL_RUNTIME_IMAGE";
/** Shape of a guest runtime revision. */
export const RUNTIME_REVISION_PATTERN = /^guest-api1-[a-f0-9]{64}$/;

/** The guest Dockerfile text (embedded in the binary). */
export const GUEST_DOCKERFILE: string = guestDockerfile;

/** The guest binary chosen for the image. */
export interface GuestBinary {
  /** Absolute path of the executable. */
  path: string;
  /** Its bytes. */
  bytes: Uint8Array;
  /** `compiled-self` (this process is the compiled humanish) or `compiled-from-source` (cached build of src/guest/main.ts). */
  source: "compiled-self" | "compiled-from-source";
}

/** A resolved guest image: what allocation needs. */
export interface GuestImage {
  /** Image reference to create containers from (tag or id). */
  ref: string;
  /** `sha256:…` image id. */
  imageId: string;
  /** `guest-api1-<64 hex>`. */
  runtimeRevision: string;
  /** `recipe` (built/cached from runtime/guest) or `env` ({@link RUNTIME_IMAGE_ENV}). */
  origin: "recipe" | "env";
  /** True when this call built it. */
  built: boolean;
}

function projectRoot(): string {
  return resolve(import.meta.dir, "../..");
}

/** True when this process is a `bun build --compile` executable (its modules live in /$bunfs). */
export function isCompiledBinary(): boolean {
  return import.meta.path.startsWith("/$bunfs/") || import.meta.path.startsWith("B:/~BUN/");
}

/**
 * The guest agent binary: this executable when it is the compiled humanish; otherwise (running
 * from source) `src/guest/main.ts` compiled once per bundle content into
 * `<tmp>/humanish-guest-bin/<sha256 of the bundled JS>/humanish`, so an unchanged source tree
 * reuses the same bytes (and the same image).
 * @throws HumanishError `HUMANISH_GUEST_BINARY_FAILED` when compiling fails.
 */
export async function resolveGuestBinary(): Promise<GuestBinary> {
  if (isCompiledBinary()) {
    return { path: process.execPath, bytes: new Uint8Array(readFileSync(process.execPath)), source: "compiled-self" };
  }
  const entry = join(projectRoot(), "src/guest/main.ts");
  const bundled = await Bun.build({ entrypoints: [entry], target: "bun" });
  if (!bundled.success || bundled.outputs.length === 0) {
    throw new HumanishError("HUMANISH_GUEST_BINARY_FAILED", "bundling src/guest/main.ts failed", {
      next: "run `bun build src/guest/main.ts` to see the error",
    });
  }
  const js = await bundled.outputs[0]!.text();
  const key = createHash("sha256").update(Bun.version).update("\0").update(js).digest("hex");
  const dir = join(tmpdir(), "humanish-guest-bin", key);
  const out = join(dir, "humanish");
  if (!existsSync(out)) {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const tmpOut = `${out}.partial-${process.pid}`;
    const bun = process.execPath;
    const r = Bun.spawnSync([bun, "build", "--compile", entry, "--outfile", tmpOut], { stdout: "ignore", stderr: "pipe" });
    if (r.exitCode !== 0) {
      throw new HumanishError("HUMANISH_GUEST_BINARY_FAILED", `bun build --compile src/guest/main.ts failed (exit ${r.exitCode})`, {
        next: "run `bun build --compile src/guest/main.ts --outfile /tmp/humanish` to see the error",
      });
    }
    renameSync(tmpOut, out);
    pruneGuestBinaries(join(tmpdir(), "humanish-guest-bin"), key);
  }
  return { path: out, bytes: new Uint8Array(readFileSync(out)), source: "compiled-from-source" };
}

/** Keep the cache of compiled guest binaries small: the current one plus the 2 most recent others. */
function pruneGuestBinaries(root: string, keep: string): void {
  try {
    const entries = readdirSync(root)
      .filter((d) => /^[0-9a-f]{64}$/.test(d) && d !== keep)
      .map((d) => ({ d, t: statSync(join(root, d)).mtimeMs }))
      .sort((a, b) => b.t - a.t);
    for (const { d } of entries.slice(2)) rmSync(join(root, d), { recursive: true, force: true });
  } catch {
    /* a cache that cannot be pruned is only wasted space */
  }
}

/** `guest-api1-<sha256(len:Dockerfile, len:binary)>`. */
export function guestRuntimeRevision(dockerfile: string, binary: Uint8Array): string {
  const h = createHash("sha256");
  const enc = new TextEncoder().encode(dockerfile);
  h.update(`humanish.guest-runtime.v1\0${enc.length}:`);
  h.update(enc);
  h.update(`${binary.length}:`);
  h.update(binary);
  return `guest-api1-${h.digest("hex")}`;
}

/** The guest image recipe for `binary` (Dockerfile + binary; revision as build arg and labels). */
export function guestRecipe(binary: Uint8Array): ImageRecipe & { runtimeRevision: string } {
  const runtimeRevision = guestRuntimeRevision(GUEST_DOCKERFILE, binary);
  return {
    name: GUEST_IMAGE_NAME,
    files: { Dockerfile: GUEST_DOCKERFILE, humanish: binary },
    modes: { humanish: 0o555 },
    buildArgs: { HUMANISH_RUNTIME_REVISION: runtimeRevision },
    labels: { [RUNTIME_API_LABEL]: "1", [RUNTIME_REVISION_LABEL]: runtimeRevision },
    runtimeRevision,
  };
}

/**
 * Check an image named by {@link RUNTIME_IMAGE_ENV}: it must exist locally (never pulled) and
 * carry `to.humanish.runtime.api=1` and a `guest-api1-<64 hex>` revision.
 * @throws HumanishError `HUMANISH_LOCAL_RUNTIME_IMAGE_INVALID`.
 */
export async function inspectEnvGuestImage(docker: DockerClient, ref: string): Promise<GuestImage> {
  const invalid = (why: string) =>
    new HumanishError("HUMANISH_LOCAL_RUNTIME_IMAGE_INVALID", `${RUNTIME_IMAGE_ENV}=${ref} ${why}`, {
      next: `unset ${RUNTIME_IMAGE_ENV} to use the built-in guest recipe, or name an image built by \`humanish runtime setup\``,
    });
  let info: Awaited<ReturnType<typeof docker.imageInspect>>;
  try {
    info = await docker.imageInspect(ref);
  } catch (e) {
    if (isDockerApiError(e, 404)) throw invalid("must name an already-built local image (it is never pulled)");
    throw e;
  }
  const labels = info.Config?.Labels ?? {};
  if (labels[RUNTIME_API_LABEL] !== "1") throw invalid(`has no ${RUNTIME_API_LABEL}=1 label`);
  const rev = labels[RUNTIME_REVISION_LABEL];
  if (!rev || !RUNTIME_REVISION_PATTERN.test(rev)) throw invalid(`has no valid ${RUNTIME_REVISION_LABEL} label`);
  return { ref, imageId: info.Id, runtimeRevision: rev, origin: "env", built: false };
}

/** Status of the guest image without building: present or not, and its revision. */
export interface GuestImageStatus {
  origin: "recipe" | "env";
  present: boolean;
  ref: string;
  imageId?: string;
  runtimeRevision?: string;
  sizeBytes?: number;
}

/**
 * Read-only status (never builds, pulls or starts anything).
 * @throws HumanishError `HUMANISH_LOCAL_RUNTIME_IMAGE_INVALID` for a bad override image.
 */
export async function guestImageStatus(
  docker: DockerClient,
  env: Record<string, string | undefined> = process.env,
  binary?: GuestBinary,
): Promise<GuestImageStatus> {
  const override = env[RUNTIME_IMAGE_ENV];
  if (override) {
    const img = await inspectEnvGuestImage(docker, override);
    return { origin: "env", present: true, ref: img.ref, imageId: img.imageId, runtimeRevision: img.runtimeRevision };
  }
  const bin = binary ?? (await resolveGuestBinary());
  const recipe = guestRecipe(bin.bytes);
  const st = await imageStatus(docker, recipe);
  return {
    origin: "recipe",
    present: st.present,
    ref: st.tag,
    runtimeRevision: recipe.runtimeRevision,
    ...(st.imageId ? { imageId: st.imageId } : {}),
    ...(st.sizeBytes !== undefined ? { sizeBytes: st.sizeBytes } : {}),
  };
}

/** Options of {@link ensureGuestImage}. */
export interface EnsureGuestImageOptions {
  env?: Record<string, string | undefined>;
  onProgress?: (m: JsonMessage) => void;
  signal?: AbortSignal;
  /** Build deadline in ms (default 20 min). */
  timeoutMs?: number;
}

/**
 * The guest image to run: the override image when {@link RUNTIME_IMAGE_ENV} is set, else the
 * recipe's image — built through the Engine API when its tag is absent (the binary is packed
 * with mode 0555, everything else 0644).
 * @throws HumanishError `HUMANISH_LOCAL_RUNTIME_IMAGE_INVALID`, `HUMANISH_IMAGE_BUILD_FAILED`,
 *   `HUMANISH_GUEST_BINARY_FAILED`, `HUMANISH_DOCKER_UNAVAILABLE`.
 */
export async function ensureGuestImage(docker: DockerClient, opts: EnsureGuestImageOptions = {}): Promise<GuestImage> {
  const env = opts.env ?? process.env;
  const override = env[RUNTIME_IMAGE_ENV];
  if (override) return inspectEnvGuestImage(docker, override);
  const bin = await resolveGuestBinary();
  const recipe = guestRecipe(bin.bytes);
  const r = await ensureImage(docker, recipe, {
    timeoutMs: opts.timeoutMs ?? 20 * 60_000,
    ...(opts.onProgress ? { onProgress: opts.onProgress } : {}),
    ...(opts.signal ? { signal: opts.signal } : {}),
  });
  return { ref: r.tag, imageId: r.imageId, runtimeRevision: recipe.runtimeRevision, origin: "recipe", built: r.built };
}

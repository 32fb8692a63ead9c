/**
 * `humanish runtime status|setup [--json]` (result `humanish.runtime-result.v1`).
 *
 * - status: engine reachability and version, both local images (sandbox, guest) with their
 *   revisions (the sandbox's Node facts from its labels), and what `runtime prune` could reclaim
 *   (stale humanish images: count and bytes). Never builds, pulls or starts anything.
 * - setup: builds the missing images (both, or `only` one) from the embedded recipes through the
 *   Engine API, or — with `fromArchive {file, sha256, bytes}` — loads one prebuilt archive after
 *   verifying its byte count and SHA-256 (a mismatch loads nothing), then reports status again
 *   with the bytes the engine's layers grew by (`addedBytes`).
 * `HUMANISH_LOCAL_RUNTIME_IMAGE` names an already-built guest image; an invalid one fails.
 */
import type { DockerClient } from "../docker/index.ts";
import { errorMessage, HumanishError, isHumanishError } from "../errors.ts";
import { ensureGuestImage, type GuestImageStatus, guestImageStatus } from "./guest-image.ts";
import { ensureImage, imageStatus, loadImageArchive } from "./images.ts";
import { planPrune } from "./prune.ts";
import { nodeFactsOf, sandboxRecipe } from "./recipes.ts";

/** Schema id of the result envelope. */
export const RUNTIME_RESULT_SCHEMA = "humanish.runtime-result.v1";

/** One image line of the result. */
export interface RuntimeImageLine {
  ref: string;
  present: boolean;
  revision: string | null;
  imageId: string | null;
  origin: "recipe" | "env";
  /** Node runtime of the image from its labels (sandbox image only; null when absent or unlabelled). */
  node?: { version: string; sha256: string; npmVersion: string | null } | null;
}

/** `humanish.runtime-result.v1`. `ok` is false only on an error; `installed` says whether both images are present. */
export interface RuntimeResult {
  schema: typeof RUNTIME_RESULT_SCHEMA;
  ok: boolean;
  installed: boolean;
  message: string;
  engine: { reachable: boolean; version: string | null; apiVersion: string | null };
  images: { sandbox: RuntimeImageLine | null; guest: RuntimeImageLine | null };
  /** Stale humanish images `humanish runtime prune` would remove; null when it could not be computed. */
  reclaimable?: { count: number; bytes: number } | null;
  /** What setup did (absent for status). */
  actions?: string[];
  /** Setup only: bytes of image layers the built or loaded images added, shared layers excluded (0 when nothing was). */
  addedBytes?: number;
  error?: { code: string; message: string; next?: string };
}

function fail(e: unknown, partial: Partial<RuntimeResult> = {}): RuntimeResult {
  const err = isHumanishError(e)
    ? { code: e.code, message: e.message, ...(e.next ? { next: e.next } : {}) }
    : { code: "HUMANISH_LOCAL_RUNTIME_FAILED", message: errorMessage(e) };
  return {
    schema: RUNTIME_RESULT_SCHEMA,
    ok: false,
    installed: false,
    message: err.message,
    engine: partial.engine ?? { reachable: false, version: null, apiVersion: null },
    images: partial.images ?? { sandbox: null, guest: null },
    ...(partial.actions ? { actions: partial.actions } : {}),
    error: err,
  };
}

function guestLine(g: GuestImageStatus): RuntimeImageLine {
  return { ref: g.ref, present: g.present, revision: g.runtimeRevision ?? null, imageId: g.imageId ?? null, origin: g.origin };
}

/** Read-only status. Never throws: failures become `ok: false` with the error. */
export async function runtimeStatus(docker: DockerClient, env: Record<string, string | undefined> = process.env): Promise<RuntimeResult> {
  let engine: RuntimeResult["engine"] = { reachable: false, version: null, apiVersion: null };
  try {
    const v = await docker.version();
    engine = { reachable: true, version: v.Version, apiVersion: v.ApiVersion };
  } catch (e) {
    return fail(e);
  }
  try {
    const sb = await imageStatus(docker, sandboxRecipe);
    let node: RuntimeImageLine["node"] = null;
    if (sb.present) node = nodeFactsOf((await docker.imageInspect(sb.tag)).Config?.Labels);
    const sandbox: RuntimeImageLine = { ref: sb.tag, present: sb.present, revision: sb.revision, imageId: sb.imageId ?? null, origin: "recipe", node };
    const guest = guestLine(await guestImageStatus(docker, env));
    let reclaimable: RuntimeResult["reclaimable"] = null;
    try {
      reclaimable = (await planPrune(docker, env)).reclaimable;
    } catch {
      // Status stays useful without the prune estimate.
    }
    const installed = sandbox.present && guest.present;
    const missing = [!sandbox.present ? "sandbox" : null, !guest.present ? "guest" : null].filter(Boolean).join(" and ");
    return {
      schema: RUNTIME_RESULT_SCHEMA,
      ok: true,
      installed,
      message: installed ? "local runtime ready" : `${missing} image not built yet; run \`humanish runtime setup\``,
      engine,
      images: { sandbox, guest },
      reclaimable,
    };
  } catch (e) {
    return fail(e, { engine });
  }
}

/** Which images `runtime setup` sets up. */
export type SetupOnly = "sandbox" | "guest";

/** Options of {@link runtimeSetup}. */
export interface RuntimeSetupOptions {
  env?: Record<string, string | undefined>;
  /** Load this archive (docker save format) instead of building; verified first. */
  fromArchive?: { file: string; sha256: string; bytes: number };
  /** Build only this image (default both); not combined with `fromArchive`. */
  only?: SetupOnly;
  /** Build progress lines (human mode). */
  onProgress?: (line: string) => void;
  signal?: AbortSignal;
}

/** Build or load the images, then report status. Never throws: failures become `ok: false`. */
export async function runtimeSetup(docker: DockerClient, opts: RuntimeSetupOptions = {}): Promise<RuntimeResult> {
  const env = opts.env ?? process.env;
  const actions: string[] = [];
  const progress = (m: { stream?: unknown }) => {
    if (typeof m.stream === "string" && m.stream.trim()) opts.onProgress?.(m.stream.trimEnd());
  };
  // Ids of the images this setup built or loaded, for the bytes it added.
  const added: string[] = [];
  try {
    if (opts.fromArchive && opts.only) {
      throw new HumanishError("HUMANISH_USAGE", "--only cannot be combined with --from-archive (an archive loads the images it holds)", {
        next: "drop --only, or build with `humanish runtime setup --only sandbox|guest`",
      });
    }
    if (opts.fromArchive) {
      const { file, sha256, bytes } = opts.fromArchive;
      if (!/^[0-9a-f]{64}$/.test(sha256)) {
        throw new HumanishError("HUMANISH_USAGE", "--sha256 must be 64 lowercase hex digits", { next: "pass the archive's published SHA-256" });
      }
      if (!Number.isSafeInteger(bytes) || bytes <= 0)
        throw new HumanishError("HUMANISH_USAGE", "--bytes must be a positive integer", { next: "pass the archive's published byte count" });
      const res = await loadImageArchive(docker, file, { sha256, bytes }, { onProgress: progress, ...(opts.signal ? { signal: opts.signal } : {}) });
      actions.push(`loaded ${res.loaded.join(", ") || "archive"} (${res.bytes} bytes, sha256 verified)`);
      for (const ref of res.loaded) added.push(ref.startsWith("sha256:") ? ref : (await docker.imageInspect(ref)).Id);
    } else {
      if (opts.only !== "guest") {
        const sb = await ensureImage(docker, sandboxRecipe, { env, onProgress: progress, ...(opts.signal ? { signal: opts.signal } : {}) });
        actions.push(sb.built ? `built ${sb.tag}` : `${sb.tag} already present`);
        if (sb.built) added.push(sb.imageId);
      }
      if (opts.only !== "sandbox") {
        const g = await ensureGuestImage(docker, { env, onProgress: progress, ...(opts.signal ? { signal: opts.signal } : {}) });
        actions.push(g.built ? `built ${g.ref}` : `${g.ref} already present`);
        if (g.built) added.push(g.imageId);
      }
    }
  } catch (e) {
    const st = await runtimeStatus(docker, env);
    return fail(e, { engine: st.engine, images: st.images, actions });
  }
  const st = await runtimeStatus(docker, env);
  const addedBytes = await uniqueBytes(docker, added);
  actions.push(`added ${addedBytes} bytes of image layers`);
  return { ...st, actions, addedBytes };
}

/**
 * Bytes the given images hold that no other image shares (size minus `SharedSize` from
 * `GET /system/df`) — what building them added, whatever other builds the engine ran meanwhile.
 * 0 for no images or when the engine cannot say.
 */
async function uniqueBytes(docker: DockerClient, ids: string[]): Promise<number> {
  if (ids.length === 0) return 0;
  try {
    const df = await docker.systemDf();
    return df.Images.filter((i) => ids.includes(i.Id)).reduce((n, i) => n + Math.max(0, i.Size - Math.max(0, i.SharedSize)), 0);
  } catch {
    return 0;
  }
}

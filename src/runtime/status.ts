/**
 * `humanish runtime status|setup [--json]` (issue 4 §3; result `humanish.runtime-result.v1`).
 *
 * - status: engine reachability and version, and both local images (sandbox, guest) with their
 *   revisions. Never builds, pulls or starts anything.
 * - setup: builds the missing images from the embedded recipes through the Engine API, or —
 *   with `fromArchive {file, sha256, bytes}` — loads one prebuilt archive after verifying its
 *   byte count and SHA-256 (a mismatch loads nothing), then reports status again.
 * `HUMANISH_LOCAL_RUNTIME_IMAGE` names an already-built guest image; an invalid one fails.
 */
import type { DockerClient } from "../docker/index.ts";
import { HumanishError, isHumanishError } from "../errors.ts";
import { ensureGuestImage, type GuestImageStatus, guestImageStatus } from "./guest-image.ts";
import { ensureImage, imageStatus, loadImageArchive } from "./images.ts";
import { sandboxRecipe } from "./recipes.ts";

/** Schema id of the result envelope. */
export const RUNTIME_RESULT_SCHEMA = "humanish.runtime-result.v1";

/** One image line of the result. */
export interface RuntimeImageLine {
  ref: string;
  present: boolean;
  revision: string | null;
  imageId: string | null;
  origin: "recipe" | "env";
}

/** `humanish.runtime-result.v1`. `ok` is false only on an error; `installed` says whether both images are present. */
export interface RuntimeResult {
  schema: typeof RUNTIME_RESULT_SCHEMA;
  ok: boolean;
  installed: boolean;
  message: string;
  engine: { reachable: boolean; version: string | null; apiVersion: string | null };
  images: { sandbox: RuntimeImageLine | null; guest: RuntimeImageLine | null };
  /** What setup did (absent for status). */
  actions?: string[];
  error?: { code: string; message: string; next?: string };
}

function fail(e: unknown, partial: Partial<RuntimeResult> = {}): RuntimeResult {
  const err = isHumanishError(e)
    ? { code: e.code, message: e.message, ...(e.next ? { next: e.next } : {}) }
    : { code: "HUMANISH_LOCAL_RUNTIME_FAILED", message: e instanceof Error ? e.message : String(e) };
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
    const sandbox: RuntimeImageLine = { ref: sb.tag, present: sb.present, revision: sb.revision, imageId: sb.imageId ?? null, origin: "recipe" };
    const guest = guestLine(await guestImageStatus(docker, env));
    const installed = sandbox.present && guest.present;
    const missing = [!sandbox.present ? "sandbox" : null, !guest.present ? "guest" : null].filter(Boolean).join(" and ");
    return {
      schema: RUNTIME_RESULT_SCHEMA,
      ok: true,
      installed,
      message: installed ? "local runtime ready" : `${missing} image not built yet; run \`humanish runtime setup\``,
      engine,
      images: { sandbox, guest },
    };
  } catch (e) {
    return fail(e, { engine });
  }
}

/** Options of {@link runtimeSetup}. */
export interface RuntimeSetupOptions {
  env?: Record<string, string | undefined>;
  /** Load this archive (docker save format) instead of building; verified first. */
  fromArchive?: { file: string; sha256: string; bytes: number };
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
  try {
    if (opts.fromArchive) {
      const { file, sha256, bytes } = opts.fromArchive;
      if (!/^[0-9a-f]{64}$/.test(sha256)) {
        throw new HumanishError("HUMANISH_USAGE", "--sha256 must be 64 lowercase hex digits", { next: "pass the archive's published SHA-256" });
      }
      if (!Number.isSafeInteger(bytes) || bytes <= 0)
        throw new HumanishError("HUMANISH_USAGE", "--bytes must be a positive integer", { next: "pass the archive's published byte count" });
      const res = await loadImageArchive(docker, file, { sha256, bytes }, { onProgress: progress, ...(opts.signal ? { signal: opts.signal } : {}) });
      actions.push(`loaded ${res.loaded.join(", ") || "archive"} (${res.bytes} bytes, sha256 verified)`);
    } else {
      const sb = await ensureImage(docker, sandboxRecipe, { onProgress: progress, ...(opts.signal ? { signal: opts.signal } : {}) });
      actions.push(sb.built ? `built ${sb.tag}` : `${sb.tag} already present`);
      const g = await ensureGuestImage(docker, { env, onProgress: progress, ...(opts.signal ? { signal: opts.signal } : {}) });
      actions.push(g.built ? `built ${g.ref}` : `${g.ref} already present`);
    }
  } catch (e) {
    const st = await runtimeStatus(docker, env);
    return fail(e, { engine: st.engine, images: st.images, actions });
  }
  const st = await runtimeStatus(docker, env);
  return { ...st, actions };
}

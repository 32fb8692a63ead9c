/**
 * The quick start's mode rule: `humanish lab run default` (the embedded default lab, whose YAML
 * says `mode: dry-run`) runs *live* whenever the local Docker engine is usable — a scripted
 * participant spends nothing, so no `--live` is needed — and falls back to the dry run, with
 * one reason, when it is not. "Usable" is decided here, in order:
 *   1. `DOCKER_HOST` names a Unix socket humanish speaks (else: unsupported endpoint);
 *   2. the socket exists (else: no engine at <socket>);
 *   3. this user may read and write it (else: no permission on the socket);
 *   4. `GET /_ping` answers within the probe deadline (else: the engine does not answer);
 *   5. the route's local image is present or is built now through `runtime setup`'s code path,
 *      with its build progress handed to `onProgress` (else: image build failed: <reason>).
 * Nothing here starts a container; the study itself does that.
 */
import { accessSync, constants, statSync } from "node:fs";
import { type DockerClient, dockerClientFor, resolveDockerSocket } from "../docker/index.ts";
import { errorMessage } from "../errors.ts";
import { runtimeSetup } from "./status.ts";

/** Deadline of the engine probe (`GET /_ping`), in ms: a hung engine must not hold up a dry run. */
export const ENGINE_PROBE_TIMEOUT_MS = 3000;

/** Why a usable-engine probe said no. */
export type EngineProbeFailure = "engine-unsupported" | "no-engine" | "no-permission" | "engine-not-answering";

/** Result of {@link probeEngine}: the client for a usable engine, or why there is none. */
export type EngineProbe = { ok: true; socket: string; docker: DockerClient } | { ok: false; code: EngineProbeFailure; socket: string | null; message: string };

/**
 * Whether the engine `env` names is usable (steps 1–4 of the module doc). Never throws.
 * `message` is one short sentence naming the socket.
 */
export async function probeEngine(env: Record<string, string | undefined>, opts: { timeoutMs?: number; signal?: AbortSignal } = {}): Promise<EngineProbe> {
  let socket: string;
  try {
    socket = resolveDockerSocket(env);
  } catch (e) {
    return { ok: false, code: "engine-unsupported", socket: null, message: errorMessage(e) };
  }
  try {
    statSync(socket);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === "EACCES") return { ok: false, code: "no-permission", socket, message: `no permission to reach the Docker socket ${socket}` };
    return { ok: false, code: "no-engine", socket, message: `no Docker engine at ${socket}` };
  }
  try {
    accessSync(socket, constants.R_OK | constants.W_OK);
  } catch {
    return {
      ok: false,
      code: "no-permission",
      socket,
      message: `no permission on the Docker socket ${socket} (add this user to the docker group, or run with sudo)`,
    };
  }
  const docker = dockerClientFor(env);
  try {
    await docker.ping({ timeoutMs: opts.timeoutMs ?? ENGINE_PROBE_TIMEOUT_MS, ...(opts.signal ? { signal: opts.signal } : {}) });
  } catch (e) {
    const why = errorMessage(e);
    return { ok: false, code: "engine-not-answering", socket, message: `the Docker engine at ${socket} does not answer: ${why}` };
  }
  return { ok: true, socket, docker };
}

/** Stable codes of {@link QuickStartMode.modeReason}. */
export type QuickStartReason = "engine-ready" | EngineProbeFailure | "image-build-failed";

/** What the quick-start rule decided. */
export interface QuickStartMode {
  mode: "live" | "dry-run";
  /** Why: a stable code and one sentence (the sentence is the one stderr line on a fallback). */
  modeReason: { code: QuickStartReason; message: string };
}

/**
 * Decides the default lab's mode (module doc): live when the engine is usable and the `image`
 * the route needs (`sandbox` for a terminal lab, `guest` for a browser lab) is present or has
 * just been built; otherwise dry-run with the reason. `onProgress` receives image build lines
 * (`Step 1/9 : …`) only when a build runs. Never throws.
 */
export async function decideQuickStartMode(opts: {
  env: Record<string, string | undefined>;
  image: "sandbox" | "guest";
  onProgress?: (line: string) => void;
  signal?: AbortSignal;
  probeTimeoutMs?: number;
}): Promise<QuickStartMode> {
  const probe = await probeEngine(opts.env, {
    ...(opts.probeTimeoutMs !== undefined ? { timeoutMs: opts.probeTimeoutMs } : {}),
    ...(opts.signal ? { signal: opts.signal } : {}),
  });
  if (!probe.ok) return { mode: "dry-run", modeReason: { code: probe.code, message: probe.message } };
  const setup = await runtimeSetup(probe.docker, {
    env: opts.env,
    only: opts.image,
    ...(opts.onProgress ? { onProgress: opts.onProgress } : {}),
    ...(opts.signal ? { signal: opts.signal } : {}),
  });
  const line = setup.images[opts.image];
  if (!setup.ok || !line?.present) {
    const why = setup.error?.message ?? `the ${opts.image} image is still missing after setup`;
    return { mode: "dry-run", modeReason: { code: "image-build-failed", message: `image build failed: ${why}` } };
  }
  const built = (setup.actions ?? []).some((a) => a.startsWith("built "));
  return {
    mode: "live",
    modeReason: {
      code: "engine-ready",
      message: `the Docker engine at ${probe.socket} answered and the ${opts.image} image ${built ? "was built" : "is present"}`,
    },
  };
}

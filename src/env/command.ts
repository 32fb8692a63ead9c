/**
 * `humanish env serve [--backend docker|e2b] [--host 127.0.0.1] [--port 8000] [--max-concurrent N]`:
 * builds the backend, starts the server, runs until SIGINT/SIGTERM (or `signal` aborts), then
 * releases every owned sandbox by exact id and reports each outcome.
 */
import { dockerClientFor } from "../docker/index.ts";
import { HumanishError, isHumanishError } from "../errors.ts";
import { ensureImage } from "../runtime/images.ts";
import { sandboxRecipe } from "../runtime/recipes.ts";
import { createE2BSandboxProvider, DEFAULT_E2B_TEMPLATE } from "../sandbox/e2b.ts";
import { createDockerSandboxProvider } from "../sandbox/index.ts";
import type { ReleaseProof } from "../sandbox/types.ts";
import { secretValuesFromEnv } from "../secrets/index.ts";
import { envBackendFromProvider } from "./backends.ts";
import type { EnvBackend } from "./environment.ts";
import type { ReleaseSummary } from "./ledger.ts";
import { ENV_DEFAULTS, type EnvServerHandle, type EnvServerOptions, startEnvServer } from "./server.ts";

/**
 * Options as the CLI parsed them (numbers already validated as whole numbers). `host`, `port`
 * and the timeouts mean what they mean in {@link EnvServerOptions} (same defaults).
 */
export interface EnvServeCommandOptions extends Pick<EnvServerOptions, "host" | "port" | "sessionTimeoutMs" | "sandboxTimeoutMs" | "commandTimeoutMs"> {
  /** `docker` (default) or `e2b`. */
  backend?: string;
  /** Concurrent sessions (a number, or the flag's text). Default: `MAX_CONCURRENT_ENVS` from `env`, else 4. */
  maxConcurrent?: number | string;
  /** Docker image (default: the humanish sandbox image, built when absent) or E2B template id. */
  image?: string;
  /** `none` (default) or `bridge`. */
  network?: string;
  /** The invocation's environment (E2B_API_KEY, MAX_CONCURRENT_ENVS, DOCKER_HOST); default process.env. */
  env?: Record<string, string | undefined>;
  /** Receives status lines and the server's redacted event log (default: stderr). */
  log?: (line: string) => void;
  /** Stops the server like a signal would (tests, embedding). */
  signal?: AbortSignal;
  /** Called once the server listens. */
  onListening?: (server: EnvServerHandle) => void;
}

/** The command's result (`humanish.env-serve-result.v1` once the CLI adds `schema`). */
export interface EnvServeCommandOutcome {
  ok: boolean;
  backend: string;
  url: string | null;
  released: number;
  unconfirmed: number;
  retained: number;
  /** One proof per owned sandbox id, released at shutdown. */
  releases: ReleaseProof[];
  /** Signal that ended the server, if any. */
  stoppedBy: string | null;
  error?: { code: string; message: string; next?: string };
  /** Human summary lines. */
  human: string;
  exitCode: number;
}

function invalid(field: string, message: string, next: string): HumanishError {
  return new HumanishError("HUMANISH_ENV_OPTIONS_INVALID", `${field}: ${message}`, { next });
}

/**
 * The session limit: `--max-concurrent` when given, else `MAX_CONCURRENT_ENVS`, else the default.
 * Each must be a whole number ≥ 1 (`lots`, `0`, `2.5` are refused, naming the flag or variable).
 */
export function resolveMaxConcurrent(flag: number | string | undefined, fromEnv: string | undefined): number {
  const whole = (v: number | string) =>
    typeof v === "number" ? Number.isSafeInteger(v) && v >= 1 : /^[0-9]+$/.test(v) && Number.isSafeInteger(Number(v)) && Number(v) >= 1;
  if (flag !== undefined) {
    if (!whole(flag)) throw invalid("--max-concurrent", `must be a whole number ≥ 1 (got ${JSON.stringify(String(flag))})`, "pass e.g. --max-concurrent 4");
    return Number(flag);
  }
  if (fromEnv === undefined || fromEnv === "") return ENV_DEFAULTS.maxConcurrent;
  if (!whole(fromEnv))
    throw invalid("MAX_CONCURRENT_ENVS", `must be a whole number ≥ 1 (got ${JSON.stringify(fromEnv)})`, "set MAX_CONCURRENT_ENVS=4 or pass --max-concurrent");
  return Number(fromEnv);
}

/** Builds the env backend. Docker: pings the engine and ensures the image first. */
async function buildBackend(
  opts: EnvServeCommandOptions,
  env: Record<string, string | undefined>,
  log: (l: string) => void,
  sandboxTimeoutMs: number,
): Promise<EnvBackend> {
  const backend = opts.backend ?? "docker";
  const network = opts.network ?? "none";
  if (network !== "none" && network !== "bridge")
    throw invalid("--network", `must be none or bridge (got ${JSON.stringify(network)})`, "pass --network none or --network bridge");
  if (backend === "docker") {
    const docker = dockerClientFor(env);
    await docker.ping();
    let image = opts.image;
    if (image === undefined) {
      log("humanish env serve: ensuring the sandbox image (built once when absent)…");
      image = (await ensureImage(docker, sandboxRecipe, { env })).tag;
    } else {
      try {
        await docker.imageInspect(image);
      } catch (e) {
        throw new HumanishError("HUMANISH_SANDBOX_IMAGE_MISSING", `--image ${image} is not present in the Docker engine`, {
          next: "build or load it first, or omit --image to use the humanish sandbox image",
          cause: e,
        });
      }
    }
    return envBackendFromProvider(createDockerSandboxProvider({ docker }), { image, network });
  }
  if (backend === "e2b") {
    // The key is checked at reset (reset answers done = true with a clear error when it is missing).
    const provider = createE2BSandboxProvider({ apiKey: env.E2B_API_KEY, sandboxTimeoutMs });
    return envBackendFromProvider(provider, { image: opts.image ?? DEFAULT_E2B_TEMPLATE, network });
  }
  throw invalid("--backend", `must be docker or e2b (got ${JSON.stringify(backend)})`, "pass --backend docker or --backend e2b");
}

/**
 * The outcome of a command that failed before or while starting: a HumanishError keeps its code,
 * message and `next`; anything else is `HUMANISH_ENV_SERVE_FAILED`. Exit code 1 for a bad option
 * (usage), 2 for anything else (port in use, missing image).
 */
function failedOutcome(backendName: string, e: unknown): EnvServeCommandOutcome {
  const error = isHumanishError(e)
    ? { code: e.code, message: e.message, ...(e.next ? { next: e.next } : {}) }
    : { code: "HUMANISH_ENV_SERVE_FAILED", message: (e as Error)?.message ?? String(e) };
  return {
    ok: false,
    backend: backendName,
    url: null,
    released: 0,
    unconfirmed: 0,
    retained: 0,
    releases: [],
    stoppedBy: null,
    error,
    human: `env serve failed: ${error.message}`,
    // A bad option is a usage error (1); anything else (port in use, missing image) a domain failure (2).
    exitCode: error.code === "HUMANISH_ENV_OPTIONS_INVALID" ? 1 : 2,
  };
}

/**
 * Resolves the limits, builds the backend and starts the server; resolves once it listens.
 * Timeouts are in ms. Throws what {@link resolveMaxConcurrent}, {@link buildBackend} and
 * {@link startEnvServer} throw (`HUMANISH_ENV_OPTIONS_INVALID`, `HUMANISH_SANDBOX_IMAGE_MISSING`,
 * `HUMANISH_ENV_LISTEN_FAILED`, an engine error).
 */
async function startServer(opts: EnvServeCommandOptions, env: Record<string, string | undefined>, log: (line: string) => void): Promise<EnvServerHandle> {
  const maxConcurrent = resolveMaxConcurrent(opts.maxConcurrent, env.MAX_CONCURRENT_ENVS);
  const sandboxTimeoutMs = opts.sandboxTimeoutMs ?? ENV_DEFAULTS.sandboxTimeoutMs;
  const backend = await buildBackend(opts, env, log, sandboxTimeoutMs);
  return startEnvServer({
    backend,
    host: opts.host ?? ENV_DEFAULTS.host,
    port: opts.port ?? ENV_DEFAULTS.port,
    maxConcurrent,
    sandboxTimeoutMs,
    ...(opts.sessionTimeoutMs !== undefined ? { sessionTimeoutMs: opts.sessionTimeoutMs } : {}),
    ...(opts.commandTimeoutMs !== undefined ? { commandTimeoutMs: opts.commandTimeoutMs } : {}),
    secrets: secretValuesFromEnv(env),
    log,
  });
}

/**
 * Resolves with what stopped the server: `SIGINT`, `SIGTERM`, or `abort` when `signal` aborts
 * (at once when it already has). Removes its listeners before resolving. Never rejects.
 */
function waitForStop(signal: AbortSignal | undefined): Promise<string> {
  return new Promise<string>((resolve) => {
    const onSignal = (sig: NodeJS.Signals) => {
      cleanup();
      resolve(sig);
    };
    const onAbort = () => {
      cleanup();
      resolve("abort");
    };
    const cleanup = () => {
      process.off("SIGINT", onSignal);
      process.off("SIGTERM", onSignal);
      signal?.removeEventListener("abort", onAbort);
    };
    process.on("SIGINT", onSignal);
    process.on("SIGTERM", onSignal);
    if (signal?.aborted) onAbort();
    else signal?.addEventListener("abort", onAbort);
  });
}

/**
 * The outcome once the server stopped and released what it owned: ok only when every release was
 * confirmed (else `HUMANISH_ENV_RELEASE_UNCONFIRMED` and exit code 2); otherwise 130/143 after
 * SIGINT/SIGTERM, 0 after an abort.
 */
function stoppedOutcome(backendName: string, url: string, stoppedBy: string, summary: ReleaseSummary): EnvServeCommandOutcome {
  const lines = summary.proofs.map((p) => `  ${p.provider} ${p.id}: ${p.outcome} (${p.reason})`);
  const human = [
    `env serve stopped (${stoppedBy}): ${summary.released} released, ${summary.unconfirmed} unconfirmed, ${summary.retained} retained`,
    ...lines,
    ...(summary.unconfirmed > 0 ? ["  unconfirmed ids are still owned: remove each by its exact id (docker rm -f <id> / E2B kill <id>)"] : []),
  ].join("\n");
  const ok = summary.unconfirmed === 0;
  return {
    ok,
    backend: backendName,
    url,
    released: summary.released,
    unconfirmed: summary.unconfirmed,
    retained: summary.retained,
    releases: summary.proofs,
    stoppedBy,
    ...(ok
      ? {}
      : {
          error: {
            code: "HUMANISH_ENV_RELEASE_UNCONFIRMED",
            message: `${summary.unconfirmed} sandbox release(s) were not confirmed`,
            next: "remove each listed id by its exact id",
          },
        }),
    human,
    // Like every humanish command: 130/143 after SIGINT/SIGTERM once cleanup has run; 2 when a release is unconfirmed.
    exitCode: !ok ? 2 : stoppedBy === "SIGINT" ? 130 : stoppedBy === "SIGTERM" ? 143 : 0,
  };
}

/**
 * Runs the server until SIGINT/SIGTERM (or `opts.signal`), then releases every owned sandbox
 * by exact id. Never throws: failures come back as `ok: false` with `error` and exit code 1 for
 * a bad option (usage), 2 for anything else (port in use, missing image); exit code 2 too when
 * any release was not confirmed.
 */
export async function runEnvServeCommand(opts: EnvServeCommandOptions = {}): Promise<EnvServeCommandOutcome> {
  const env = opts.env ?? process.env;
  const log = opts.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  const backendName = opts.backend ?? "docker";
  let server: EnvServerHandle;
  try {
    server = await startServer(opts, env, log);
  } catch (e) {
    return failedOutcome(backendName, e);
  }

  const stats = server.stats();
  log(
    `humanish env serve: listening on ${server.url} (backend ${backendName}, max ${stats.maxConcurrent} concurrent) — web UI ${server.url}/web; Ctrl-C to stop`,
  );
  opts.onListening?.(server);

  const stoppedBy = await waitForStop(opts.signal);
  log(`humanish env serve: ${stoppedBy} received; releasing every owned sandbox by exact id…`);
  const summary = await server.stop();
  return stoppedOutcome(backendName, server.url, stoppedBy, summary);
}

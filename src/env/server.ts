/**
 * The environment server (`humanish env serve`): OpenEnv-style HTTP, WebSocket and MCP
 * surfaces over {@link TerminalEnvironment}.
 *
 * Routes: `GET /health`, `GET /schema`, `POST /reset`, `POST /step`, `GET /state`, `POST /mcp`,
 * `GET /ws` (WebSocket, one environment per connection), `GET /web` (small terminal UI).
 * Sessions follow OpenEnv (see `SESSIONS_NOTE` in wire.ts): each WebSocket is one session, MCP
 * sessions are opened with `openenv/session/create`, and `/reset`, `/step`, `/state` are
 * stateless — each request gets a temporary environment that is closed before the answer.
 * The routes are in http.ts and the WebSocket messages in ws.ts; this file binds the port, reaps
 * idle sessions and stops.
 */
import type { Server } from "bun";
import { createRedactor } from "../bundle/index.ts";
import { HumanishError, isHumanishError } from "../errors.ts";
import type { ReleaseProof, SandboxProvider } from "../sandbox/types.ts";
import type { EnvBackend, EnvLogEvent } from "./environment.ts";
import { handleHttp, httpError } from "./http.ts";
import { type ReleaseSummary, SandboxLedger, summarize } from "./ledger.ts";
import { SessionRegistry } from "./registry.ts";
import { SlotPool } from "./sessions.ts";
import { type WsData, wsHandlers } from "./ws.ts";

/** Defaults (ms unless noted). */
export const ENV_DEFAULTS = {
  host: "127.0.0.1",
  port: 8000,
  maxConcurrent: 4,
  sessionTimeoutMs: 600_000,
  sandboxTimeoutMs: 300_000,
  commandTimeoutMs: 120_000,
  maxOutputBytes: 256 * 1024,
  releaseDeadlineMs: 30_000,
  capacityWaitMs: 60_000,
} as const;

/** Options of {@link startEnvServer}. */
export interface EnvServerOptions {
  /** Creates the sandboxes (see backends.ts: docker or e2b). */
  backend: EnvBackend;
  host?: string;
  /** 0 picks a free port. */
  port?: number;
  /** Concurrent sessions (default 4); see sessions.ts for what holds a slot. */
  maxConcurrent?: number;
  /** How long a newcomer at the limit waits for slots whose release is in flight (default 60 000 ms). */
  capacityWaitMs?: number;
  /** Idle time after which the reaper ends a session and releases its sandbox (default 600 000 ms). */
  sessionTimeoutMs?: number;
  /** Sandbox lifetime from creation (default 300 000 ms); expiry = infrastructure failure. */
  sandboxTimeoutMs?: number;
  /** Default per-command deadline (default 120 000 ms); a step's `timeout_s` overrides it. */
  commandTimeoutMs?: number;
  /** Per-stream output cap in observations, bytes (default 256 KiB, tail kept). */
  maxOutputBytes?: number;
  /** Outer deadline of one sandbox release (default 30 000 ms). */
  releaseDeadlineMs?: number;
  /** Reaper period (default: a quarter of the session timeout, between 250 ms and 5 s). */
  reaperIntervalMs?: number;
  /** Secret values to scrub from every log line (literal scrub before pattern redaction). */
  secrets?: readonly string[];
  /** Receives one redacted JSON line per event (default: stderr). */
  log?: (line: string) => void;
}

/** A running server. */
export interface EnvServerHandle {
  url: string;
  port: number;
  /** Stops accepting, ends every session, releases every owned sandbox by exact id. */
  stop(): Promise<ReleaseSummary>;
  /** Retries every release that was not confirmed (what each reaper tick does); a confirmation frees the slot it held. */
  retryReleases(): Promise<ReleaseProof[]>;
  /** Live facts for tests and status lines. */
  stats(): { sessions: number; mcpSessions: number; slotsInUse: number; maxConcurrent: number; ownedSandboxIds: string[] };
}

/** Checks the numeric options; returns the refusal, if any. */
function optionsError(o: { maxConcurrent: number; sessionTimeoutMs: number; capacityWaitMs: number }): HumanishError | null {
  for (const [name, v] of Object.entries({ maxConcurrent: o.maxConcurrent, sessionTimeoutMs: o.sessionTimeoutMs })) {
    if (!Number.isInteger(v) || v < 1)
      return new HumanishError("HUMANISH_ENV_OPTIONS_INVALID", `${name} must be a positive integer (got ${v})`, { next: `fix ${name}` });
  }
  if (!Number.isInteger(o.capacityWaitMs) || o.capacityWaitMs < 0) {
    return new HumanishError("HUMANISH_ENV_OPTIONS_INVALID", `capacityWaitMs must be a whole number of ms (got ${o.capacityWaitMs})`, {
      next: "fix capacityWaitMs",
    });
  }
  return null;
}

/** What the server's steps share: the bind host, the limits (ms) and the session machinery. */
interface EnvServerState {
  host: string;
  maxConcurrent: number;
  /** Idle time after which a session is ended, ms. */
  sessionTimeoutMs: number;
  ledger: SandboxLedger;
  slots: SlotPool;
  registry: SessionRegistry;
}

/**
 * Builds the redacted event log, the sandbox ledger, the slot pool and the session registry
 * from validated options (timeouts in ms, output cap in bytes). Creates no sandbox.
 */
function serverState(
  opts: EnvServerOptions,
  limits: { host: string; maxConcurrent: number; sessionTimeoutMs: number; capacityWaitMs: number },
): EnvServerState {
  const redactor = createRedactor([...(opts.secrets ?? [])]);
  const sink = opts.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  const log = (event: EnvLogEvent) => {
    sink(redactor.text(JSON.stringify(redactor.value({ t: new Date().toISOString(), ...event }))));
  };
  const ledger = new SandboxLedger(opts.releaseDeadlineMs ?? ENV_DEFAULTS.releaseDeadlineMs);
  const slots = new SlotPool(limits.maxConcurrent, limits.capacityWaitMs);
  const envCfg = {
    backend: opts.backend,
    ledger,
    sandboxTimeoutMs: opts.sandboxTimeoutMs ?? ENV_DEFAULTS.sandboxTimeoutMs,
    commandTimeoutMs: opts.commandTimeoutMs ?? ENV_DEFAULTS.commandTimeoutMs,
    maxOutputBytes: opts.maxOutputBytes ?? ENV_DEFAULTS.maxOutputBytes,
    acquireSlot: () => slots.acquire(),
    log,
  };
  const registry = new SessionRegistry(envCfg, slots, log);
  return { host: limits.host, maxConcurrent: limits.maxConcurrent, sessionTimeoutMs: limits.sessionTimeoutMs, ledger, slots, registry };
}

/**
 * Binds `state.host:port` (0 picks a free port). An unexpected error in a handler answers 500
 * `EXECUTION_ERROR`. Throws `HUMANISH_ENV_LISTEN_FAILED` when the port cannot be bound.
 */
function listen(state: EnvServerState, port: number): Server<WsData> {
  const { registry, host } = state;
  try {
    return Bun.serve<WsData>({
      hostname: host,
      port,
      idleTimeout: 0,
      async fetch(req, srv) {
        try {
          return await handleHttp(registry, host, req, srv);
        } catch (e) {
          const msg = isHumanishError(e) ? `${e.code}: ${e.message}` : ((e as Error)?.message ?? String(e));
          return httpError(500, "EXECUTION_ERROR", msg);
        }
      },
      websocket: wsHandlers(registry),
    });
  } catch (e) {
    throw new HumanishError("HUMANISH_ENV_LISTEN_FAILED", `cannot listen on ${host}:${port}: ${(e as Error).message}`, {
      next: "pick another --port or stop the process using it",
    });
  }
}

/**
 * Starts the reaper: every `intervalMs` (default a quarter of the session timeout, between 250 ms
 * and 5 s) it ends idle sessions (half-open sockets, abandoned MCP sessions) and retries
 * unconfirmed releases; a tick is skipped while the previous one runs or the server stops.
 */
function startReaper(state: EnvServerState, intervalMs: number | undefined): ReturnType<typeof setInterval> {
  const { registry, ledger, sessionTimeoutMs } = state;
  const reaperMs = intervalMs ?? Math.min(5_000, Math.max(250, Math.floor(sessionTimeoutMs / 4)));
  let reaping = false;
  return setInterval(() => {
    if (reaping || registry.stopping) return;
    reaping = true;
    void registry
      .reapIdle(sessionTimeoutMs)
      .then(() => ledger.retryUnconfirmed())
      .finally(() => {
        reaping = false;
      });
  }, reaperMs);
}

/**
 * Ends every session, releases every sandbox still owned by exact id, then closes the listener.
 * One proof per id: the last word on each id wins (a retry may confirm an earlier failure).
 */
async function closeAndRelease(state: EnvServerState, server: Server<WsData>): Promise<ReleaseSummary> {
  const proofs = await state.registry.closeAll();
  const rest = await state.ledger.releaseAll();
  server.stop(true);
  const byId = new Map<string, ReleaseProof>();
  for (const p of [...proofs, ...rest.proofs]) byId.set(p.id, p);
  return summarize([...byId.values()]);
}

/** The handle of a listening server; `stop` stops the reaper and runs {@link closeAndRelease} once. */
function serverHandle(state: EnvServerState, server: Server<WsData>, reaper: ReturnType<typeof setInterval>): EnvServerHandle {
  const { host, registry, ledger, slots, maxConcurrent } = state;
  let stopped: Promise<ReleaseSummary> | null = null;
  return {
    url: `http://${host.includes(":") ? `[${host}]` : host}:${server.port}`,
    port: server.port as number,
    retryReleases: () => ledger.retryUnconfirmed(),
    stats: () => ({ sessions: registry.sessions.size, mcpSessions: registry.mcp.size, slotsInUse: slots.inUse, maxConcurrent, ownedSandboxIds: ledger.ids() }),
    stop() {
      if (stopped) return stopped;
      clearInterval(reaper);
      stopped = closeAndRelease(state, server);
      return stopped;
    },
  };
}

/**
 * Starts the server. Resolves once it listens. Errors: `HUMANISH_ENV_OPTIONS_INVALID` for a bad
 * option, `HUMANISH_ENV_LISTEN_FAILED` when the port cannot be bound.
 */
export function startEnvServer(opts: EnvServerOptions): Promise<EnvServerHandle> {
  const host = opts.host ?? ENV_DEFAULTS.host;
  const maxConcurrent = opts.maxConcurrent ?? ENV_DEFAULTS.maxConcurrent;
  const sessionTimeoutMs = opts.sessionTimeoutMs ?? ENV_DEFAULTS.sessionTimeoutMs;
  const capacityWaitMs = opts.capacityWaitMs ?? ENV_DEFAULTS.capacityWaitMs;
  const bad = optionsError({ maxConcurrent, sessionTimeoutMs, capacityWaitMs });
  if (bad) return Promise.reject(bad);
  const state = serverState(opts, { host, maxConcurrent, sessionTimeoutMs, capacityWaitMs });
  let server: Server<WsData>;
  try {
    server = listen(state, opts.port ?? ENV_DEFAULTS.port);
  } catch (e) {
    return Promise.reject(e);
  }
  const reaper = startReaper(state, opts.reaperIntervalMs);
  return Promise.resolve(serverHandle(state, server, reaper));
}

export type { ReleaseSummary, SandboxProvider };

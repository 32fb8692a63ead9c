/**
 * The environment server (`humanish env serve`): OpenEnv-style HTTP, WebSocket and MCP
 * surfaces over {@link TerminalEnvironment}.
 *
 * Routes: `GET /health`, `GET /schema`, `POST /reset`, `POST /step`, `GET /state`, `POST /mcp`,
 * `GET /ws` (WebSocket, one environment per connection), `GET /web` (small terminal UI).
 * Sessions follow OpenEnv (see `SESSIONS_NOTE` in wire.ts): each WebSocket is one session, MCP
 * sessions are opened with `openenv/session/create`, and `/reset`, `/step`, `/state` are
 * stateless — each request gets a temporary environment that is closed before the answer.
 */
import type { Server, ServerWebSocket } from "bun";
import { createRedactor } from "../bundle/index.ts";
import { HumanishError, isHumanishError } from "../errors.ts";
import type { ReleaseProof, SandboxProvider } from "../sandbox/types.ts";
import { zodIssues } from "../text/zod-issues.ts";
import type { EnvBackend, EnvLogEvent, EnvResponse } from "./environment.ts";
import { type ReleaseSummary, SandboxLedger, summarize } from "./ledger.ts";
import { handleMcpMessage, RPC } from "./mcp.ts";
import { HTTP_NO_EPISODE_HINT, SessionRegistry } from "./registry.ts";
import { type Session, SlotPool } from "./sessions.ts";
import { WEB_PAGE_HTML } from "./web.ts";
import { type Action, actionSchema, resetRequestSchema, schemaDocument, stepRequestSchema, type WsErrorCode, wsMessageSchema } from "./wire.ts";

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

interface WsData {
  session: Session;
  /** Settles once the session has its slot (null) or was refused one (the capacity error). */
  admission: Promise<HumanishError | null>;
}

function json(body: unknown, status = 200): Response {
  return new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json" } });
}

function httpError(status: number, code: string, message: string, extra: Record<string, unknown> = {}): Response {
  return json({ detail: message, code, ...extra }, status);
}

async function readJson(req: Request): Promise<{ ok: true; value: unknown } | { ok: false }> {
  try {
    const text = await req.text();
    return { ok: true, value: text.trim() === "" ? {} : JSON.parse(text) };
  } catch {
    return { ok: false };
  }
}

/** True for a loopback bind address (`127.0.0.0/8`, `::1`, `localhost`). */
function isLoopbackHost(h: string): boolean {
  const v = h.toLowerCase().replace(/^\[|\]$/g, "");
  return v === "localhost" || v === "::1" || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(v);
}

/**
 * Keeps web pages out (the environment runs commands): a request whose `Origin` is not this
 * server's own origin (`http://<Host>`) gets 403 `FORBIDDEN_ORIGIN` — a cross-origin text/plain
 * POST needs no CORS preflight, so a visited page could otherwise reset and step episodes; on a
 * loopback bind, a `Host` that is not `127.0.0.1|localhost|[::1]:<port>` (DNS rebinding) gets
 * 421. Clients that send no `Origin` (SDKs, curl) are unaffected. Returns undefined to proceed.
 */
function refuseForeignRequest(req: Request, bindHost: string, port: number): Response | undefined {
  const hostHeader = (req.headers.get("host") ?? "").toLowerCase();
  if (isLoopbackHost(bindHost)) {
    const allowed = new Set([`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`, `${bindHost.toLowerCase()}:${port}`]);
    if (!allowed.has(hostHeader)) {
      return httpError(
        421,
        "MISDIRECTED_REQUEST",
        `this server answers only its loopback origin (http://127.0.0.1:${port}); Host ${JSON.stringify(hostHeader.slice(0, 100))} is refused`,
      );
    }
  }
  const origin = req.headers.get("origin");
  if (origin !== null && origin.toLowerCase() !== `http://${hostHeader}`) {
    return httpError(
      403,
      "FORBIDDEN_ORIGIN",
      `requests from another origin (${JSON.stringify(origin.slice(0, 100))}) are refused; use the /web page of this server or a client that sends no Origin`,
    );
  }
  return undefined;
}

/** Runs one validated action on a session. */
function runAction(session: Session, action: Action, timeoutMs?: number): Promise<EnvResponse> {
  if (action.type === "list_tools") return session.run(async () => session.env.listTools());
  return session.run(() => session.env.callTool(action.tool_name, action.arguments, timeoutMs));
}

const wsSend = (ws: ServerWebSocket<WsData>, type: string, data: unknown) => {
  ws.send(JSON.stringify({ type, data }));
};
const wsError = (ws: ServerWebSocket<WsData>, code: WsErrorCode, message: string, extra: Record<string, unknown> = {}) =>
  wsSend(ws, "error", { message, code, ...extra });

/** A WebSocket `step`'s action: `data` is the action itself, or the HTTP body shape `{action, timeout_s}`. */
function wsStepAction(data: Record<string, unknown>): { ok: true; action: Action; timeoutMs?: number } | { ok: false; message: string } {
  if ("action" in data && !("type" in data)) {
    const req = stepRequestSchema.safeParse(data);
    if (!req.success) return { ok: false, message: `step: ${zodIssues(req.error)}` };
    const t = req.data.timeout_s;
    return { ok: true, action: req.data.action, ...(t == null ? {} : { timeoutMs: Math.round(t * 1000) }) };
  }
  const a = actionSchema.safeParse(data);
  if (!a.success) return { ok: false, message: `step: ${zodIssues(a.error)}` };
  return { ok: true, action: a.data };
}

/** One WebSocket message: `close` at once (so a reconnecting client waits for its release), the rest after admission. */
async function handleWsMessage(registry: SessionRegistry, ws: ServerWebSocket<WsData>, raw: string | Buffer): Promise<void> {
  const { session } = ws.data;
  session.touch();
  let parsed: unknown;
  try {
    parsed = JSON.parse(typeof raw === "string" ? raw : raw.toString("utf8"));
  } catch {
    return wsError(ws, "INVALID_JSON", "the message is not valid JSON");
  }
  const type = (parsed as { type?: unknown })?.type;
  if (type === "close") {
    await registry.endWs(session);
    ws.close(1000, "closed by client");
    return;
  }
  const refusal = await ws.data.admission;
  if (refusal) {
    wsError(ws, "CAPACITY_REACHED", refusal.message, refusal.details ?? {});
    ws.close(1013, "capacity reached");
    return;
  }
  if (!["reset", "step", "state", "mcp"].includes(type as string)) {
    return wsError(ws, "UNKNOWN_TYPE", `unknown message type ${JSON.stringify(type)}; expected reset, step, state, close or mcp`);
  }
  const msg = wsMessageSchema.safeParse(parsed);
  if (!msg.success) return wsError(ws, "VALIDATION_ERROR", zodIssues(msg.error));
  const m = msg.data;
  try {
    if (m.type === "reset") {
      const req = resetRequestSchema.safeParse(m.data);
      if (!req.success) return wsError(ws, "VALIDATION_ERROR", `reset: ${zodIssues(req.error)}`);
      return wsSend(ws, "observation", await session.run(() => session.env.reset(req.data)));
    }
    if (m.type === "step") {
      const step = wsStepAction(m.data);
      if (!step.ok) return wsError(ws, "VALIDATION_ERROR", step.message);
      return wsSend(ws, "observation", await runAction(session, step.action, step.timeoutMs));
    }
    if (m.type === "state") return wsSend(ws, "state", session.env.state());
    if (m.type === "mcp") {
      const res = await handleMcpMessage(m.data, registry.wsMcp(session));
      if (res) wsSend(ws, "mcp", res);
    }
  } catch (e) {
    if (isHumanishError(e, "HUMANISH_ENV_CAPACITY")) return wsError(ws, "CAPACITY_REACHED", e.message, e.details ?? {});
    if (isHumanishError(e, "HUMANISH_ENV_SESSION_CLOSED")) return wsError(ws, "SESSION_ERROR", e.message);
    return wsError(ws, "EXECUTION_ERROR", (e as Error)?.message ?? String(e));
  }
}

/** `POST /reset` and `POST /step`: stateless, each on a temporary environment closed before the answer. */
async function handleStateless(registry: SessionRegistry, route: "reset" | "step", req: Request): Promise<Response> {
  const body = await readJson(req);
  if (!body.ok) return httpError(400, "INVALID_JSON", "the request body is not valid JSON");
  if (route === "reset") {
    const parsed = resetRequestSchema.safeParse(body.value);
    if (!parsed.success) return httpError(422, "VALIDATION_ERROR", `reset: ${zodIssues(parsed.error)}`);
    try {
      const { value, release } = await registry.withTemp(HTTP_NO_EPISODE_HINT, (s) => s.env.reset(parsed.data));
      if (release && value.metadata.sandbox_release === undefined) value.metadata.sandbox_release = release;
      return json(value);
    } catch (e) {
      if (isHumanishError(e, "HUMANISH_ENV_CAPACITY")) return httpError(503, "CAPACITY_REACHED", e.message, e.details);
      throw e;
    }
  }
  const parsed = stepRequestSchema.safeParse(body.value);
  if (!parsed.success) return httpError(422, "VALIDATION_ERROR", `step: ${zodIssues(parsed.error)}`);
  const t = parsed.data.timeout_s;
  const action = parsed.data.action;
  const { value } = await registry.withTemp(HTTP_NO_EPISODE_HINT, async (s) =>
    action.type === "list_tools" ? s.env.listTools() : s.env.callTool(action.tool_name, action.arguments, t == null ? undefined : Math.round(t * 1000)),
  );
  return json(value);
}

/** Every HTTP request (the WebSocket upgrade included). */
async function handleHttp(registry: SessionRegistry, host: string, req: Request, server: Server<WsData>): Promise<Response | undefined> {
  const url = new URL(req.url);
  const route = `${req.method} ${url.pathname}`;
  const refused = refuseForeignRequest(req, host, server.port ?? 0);
  if (refused) return refused;
  if (registry.stopping) return httpError(503, "SHUTTING_DOWN", "the server is shutting down");
  switch (route) {
    case "GET /health":
      return json({ status: "healthy" });
    case "GET /schema":
      return json(schemaDocument());
    case "GET /state":
      // Stateless, as in OpenEnv: the state of a fresh environment (no sandbox is created).
      return json(registry.freshState());
    case "GET /":
      return Response.redirect("/web", 302);
    case "GET /web":
      return new Response(WEB_PAGE_HTML, {
        headers: {
          "content-type": "text/html; charset=utf-8",
          "content-security-policy": "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; connect-src 'self'",
        },
      });
    case "GET /ws": {
      if (server.upgrade(req, { data: { session: registry.newWsSession(), admission: Promise.resolve(null) } })) return undefined;
      return httpError(400, "VALIDATION_ERROR", "GET /ws needs a WebSocket upgrade");
    }
    case "POST /reset":
      return handleStateless(registry, "reset", req);
    case "POST /step":
      return handleStateless(registry, "step", req);
    case "POST /mcp": {
      const body = await readJson(req);
      if (!body.ok) return json({ jsonrpc: "2.0", id: null, error: { code: RPC.parse, message: "parse error: the body is not valid JSON" } });
      const res = await handleMcpMessage(body.value, registry.httpMcp);
      return res ? json(res) : new Response(null, { status: 202 });
    }
    default:
      if (url.pathname === "/mcp") return httpError(405, "METHOD_NOT_ALLOWED", "POST JSON-RPC messages to /mcp (no server-sent event stream is offered)");
      return httpError(404, "NOT_FOUND", `no route ${route}; see GET /schema and GET /web`);
  }
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
  const redactor = createRedactor([...(opts.secrets ?? [])]);
  const sink = opts.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  const log = (event: EnvLogEvent) => {
    sink(redactor.text(JSON.stringify(redactor.value({ t: new Date().toISOString(), ...event }))));
  };
  const ledger = new SandboxLedger(opts.releaseDeadlineMs ?? ENV_DEFAULTS.releaseDeadlineMs);
  const slots = new SlotPool(maxConcurrent, capacityWaitMs);
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

  let server: Server<WsData>;
  try {
    server = Bun.serve<WsData>({
      hostname: host,
      port: opts.port ?? ENV_DEFAULTS.port,
      idleTimeout: 0,
      async fetch(req, srv) {
        try {
          return await handleHttp(registry, host, req, srv);
        } catch (e) {
          const msg = isHumanishError(e) ? `${e.code}: ${e.message}` : ((e as Error)?.message ?? String(e));
          return httpError(500, "EXECUTION_ERROR", msg);
        }
      },
      websocket: {
        idleTimeout: 0,
        open(ws) {
          if (registry.stopping) {
            ws.close(1001, "server shutting down");
            return;
          }
          ws.data.admission = registry.admit(ws.data.session);
          ws.data.session.onEvict = () => {
            try {
              wsSend(ws, "error", { code: "SESSION_ERROR", message: "session ended by the server (idle timeout or shutdown); its sandbox was released" });
              ws.terminate();
            } catch {
              // the socket is already gone
            }
          };
        },
        message(ws, raw) {
          void handleWsMessage(registry, ws, raw);
        },
        close(ws) {
          void registry.endWs(ws.data.session);
        },
      },
    });
  } catch (e) {
    return Promise.reject(
      new HumanishError("HUMANISH_ENV_LISTEN_FAILED", `cannot listen on ${host}:${opts.port ?? ENV_DEFAULTS.port}: ${(e as Error).message}`, {
        next: "pick another --port or stop the process using it",
      }),
    );
  }

  // Each tick ends idle sessions (half-open sockets, abandoned MCP sessions) and retries unconfirmed releases.
  const reaperMs = opts.reaperIntervalMs ?? Math.min(5_000, Math.max(250, Math.floor(sessionTimeoutMs / 4)));
  let reaping = false;
  const reaper = setInterval(() => {
    if (reaping || registry.stopping) return;
    reaping = true;
    void registry
      .reapIdle(sessionTimeoutMs)
      .then(() => ledger.retryUnconfirmed())
      .finally(() => {
        reaping = false;
      });
  }, reaperMs);

  let stopped: Promise<ReleaseSummary> | null = null;
  const handle: EnvServerHandle = {
    url: `http://${host.includes(":") ? `[${host}]` : host}:${server.port}`,
    port: server.port as number,
    retryReleases: () => ledger.retryUnconfirmed(),
    stats: () => ({ sessions: registry.sessions.size, mcpSessions: registry.mcp.size, slotsInUse: slots.inUse, maxConcurrent, ownedSandboxIds: ledger.ids() }),
    stop() {
      if (stopped) return stopped;
      clearInterval(reaper);
      stopped = (async () => {
        const proofs = await registry.closeAll();
        const rest = await ledger.releaseAll();
        server.stop(true);
        // A proof per id: the last word on each id wins (a retry may confirm an earlier failure).
        const byId = new Map<string, ReleaseProof>();
        for (const p of [...proofs, ...rest.proofs]) byId.set(p.id, p);
        return summarize([...byId.values()]);
      })();
      return stopped;
    },
  };
  return Promise.resolve(handle);
}

export type { ReleaseSummary, SandboxProvider };

/**
 * The environment server (`humanish env serve`): OpenEnv-style HTTP, WebSocket and MCP
 * surfaces over {@link TerminalEnvironment} (reference openenv-wire.md; issue 6 "Server").
 *
 * Routes: `GET /health`, `GET /schema`, `POST /reset`, `POST /step`, `GET /state`, `POST /mcp`,
 * `GET /ws` (WebSocket, one environment per connection), `GET /web` (small terminal UI).
 * The HTTP routes and `/mcp` share one server-wide session; each WebSocket has its own.
 */
import { randomUUID } from "node:crypto";
import type { Server, ServerWebSocket } from "bun";
import { createRedactor } from "../bundle/index.ts";
import { HumanishError, isHumanishError } from "../errors.ts";
import type { ReleaseProof, SandboxProvider } from "../sandbox/types.ts";
import type { EnvBackend, EnvLogEvent, EnvResponse } from "./environment.ts";
import { type ReleaseSummary, SandboxLedger, summarize } from "./ledger.ts";
import { handleMcpMessage } from "./mcp.ts";
import { Session, SlotPool } from "./sessions.ts";
import { WEB_PAGE_HTML } from "./web.ts";
import {
  type Action,
  actionSchema,
  describeZodError,
  resetRequestSchema,
  schemaDocument,
  stepRequestSchema,
  type WsErrorCode,
  wsMessageSchema,
} from "./wire.ts";

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
} as const;

/** Options of {@link startEnvServer}. */
export interface EnvServerOptions {
  /** Creates the sandboxes (see backends.ts: docker or e2b). */
  backend: EnvBackend;
  host?: string;
  /** 0 picks a free port. */
  port?: number;
  /** Environments with a live sandbox at once (default 4). */
  maxConcurrent?: number;
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
  /** Live facts for tests and status lines. */
  stats(): { sessions: number; slotsInUse: number; maxConcurrent: number; ownedSandboxIds: string[] };
}

interface WsData {
  session: Session;
}

function json(body: unknown, status = 200): Response {
  return new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json" } });
}

function httpError(status: number, code: string, message: string): Response {
  return json({ detail: message, code }, status);
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

/**
 * Starts the server. Resolves once it listens. Errors: `HUMANISH_ENV_OPTIONS_INVALID` for a bad
 * option, `HUMANISH_ENV_LISTEN_FAILED` when the port cannot be bound.
 */
export function startEnvServer(opts: EnvServerOptions): Promise<EnvServerHandle> {
  const host = opts.host ?? ENV_DEFAULTS.host;
  const maxConcurrent = opts.maxConcurrent ?? ENV_DEFAULTS.maxConcurrent;
  const sessionTimeoutMs = opts.sessionTimeoutMs ?? ENV_DEFAULTS.sessionTimeoutMs;
  for (const [name, v] of Object.entries({ maxConcurrent, sessionTimeoutMs })) {
    if (!Number.isInteger(v) || v < 1) {
      return Promise.reject(new HumanishError("HUMANISH_ENV_OPTIONS_INVALID", `${name} must be a positive integer (got ${v})`, { next: `fix ${name}` }));
    }
  }
  const redactor = createRedactor([...(opts.secrets ?? [])]);
  const sink = opts.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  const log = (event: EnvLogEvent) => {
    sink(redactor.text(JSON.stringify(redactor.value({ t: new Date().toISOString(), ...event }))));
  };
  const ledger = new SandboxLedger(opts.releaseDeadlineMs ?? ENV_DEFAULTS.releaseDeadlineMs);
  const slots = new SlotPool(maxConcurrent);
  const envCfg = {
    backend: opts.backend,
    ledger,
    sandboxTimeoutMs: opts.sandboxTimeoutMs ?? ENV_DEFAULTS.sandboxTimeoutMs,
    commandTimeoutMs: opts.commandTimeoutMs ?? ENV_DEFAULTS.commandTimeoutMs,
    maxOutputBytes: opts.maxOutputBytes ?? ENV_DEFAULTS.maxOutputBytes,
    reserveSlot: () => slots.reserve(),
    releaseSlot: () => slots.release(),
    log,
  };
  const sessions = new Set<Session>();
  let httpSession = new Session("http", "http", envCfg);
  sessions.add(httpSession);
  let stopping = false;

  const wsSend = (ws: ServerWebSocket<WsData>, type: string, data: unknown) => {
    ws.send(JSON.stringify({ type, data }));
  };
  const wsError = (ws: ServerWebSocket<WsData>, code: WsErrorCode, message: string) => wsSend(ws, "error", { message, code });

  async function handleWsMessage(ws: ServerWebSocket<WsData>, raw: string | Buffer): Promise<void> {
    const session = ws.data.session;
    session.touch();
    let parsed: unknown;
    try {
      parsed = JSON.parse(typeof raw === "string" ? raw : raw.toString("utf8"));
    } catch {
      return wsError(ws, "INVALID_JSON", "the message is not valid JSON");
    }
    const type = (parsed as { type?: unknown })?.type;
    if (!["reset", "step", "state", "close", "mcp"].includes(type as string)) {
      return wsError(ws, "UNKNOWN_TYPE", `unknown message type ${JSON.stringify(type)}; expected reset, step, state, close or mcp`);
    }
    const msg = wsMessageSchema.safeParse(parsed);
    if (!msg.success) return wsError(ws, "VALIDATION_ERROR", describeZodError(msg.error));
    const m = msg.data;
    try {
      switch (m.type) {
        case "reset": {
          const req = resetRequestSchema.safeParse(m.data);
          if (!req.success) return wsError(ws, "VALIDATION_ERROR", `reset: ${describeZodError(req.error)}`);
          const res = await session.run(() => session.env.reset(req.data));
          return wsSend(ws, "observation", res);
        }
        case "step": {
          // `data` is the action itself; `{action, timeout_s}` (the HTTP body shape) is accepted too.
          const wrapped = "action" in m.data && !("type" in m.data);
          let action: Action;
          let timeoutMs: number | undefined;
          if (wrapped) {
            const req = stepRequestSchema.safeParse(m.data);
            if (!req.success) return wsError(ws, "VALIDATION_ERROR", `step: ${describeZodError(req.error)}`);
            action = req.data.action;
            timeoutMs = req.data.timeout_s === undefined ? undefined : Math.round(req.data.timeout_s * 1000);
          } else {
            const a = actionSchema.safeParse(m.data);
            if (!a.success) return wsError(ws, "VALIDATION_ERROR", `step: ${describeZodError(a.error)}`);
            action = a.data;
          }
          return wsSend(ws, "observation", await runAction(session, action, timeoutMs));
        }
        case "state":
          return wsSend(ws, "state", session.env.state());
        case "close": {
          sessions.delete(session);
          await session.run(() => session.close());
          ws.close(1000, "closed by client");
          return;
        }
        case "mcp": {
          const res = await handleMcpMessage(m.data, {
            callTerminal: (args) => session.run(() => session.env.callTool("terminal", args)),
          });
          if (res) wsSend(ws, "mcp", res);
          return;
        }
      }
    } catch (e) {
      if (isHumanishError(e, "HUMANISH_ENV_CAPACITY")) return wsError(ws, "CAPACITY_REACHED", e.message);
      if (isHumanishError(e, "HUMANISH_ENV_SESSION_CLOSED")) return wsError(ws, "SESSION_ERROR", e.message);
      return wsError(ws, "EXECUTION_ERROR", (e as Error)?.message ?? String(e));
    }
  }

  async function handleHttp(req: Request, server: Server<WsData>): Promise<Response | undefined> {
    const url = new URL(req.url);
    const route = `${req.method} ${url.pathname}`;
    const refused = refuseForeignRequest(req, host, server.port ?? 0);
    if (refused) return refused;
    if (stopping) return httpError(503, "SHUTTING_DOWN", "the server is shutting down");
    switch (route) {
      case "GET /health":
        return json({ status: "healthy" });
      case "GET /schema":
        return json(schemaDocument());
      case "GET /state":
        httpSession.touch();
        return json(httpSession.env.state());
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
        const session = new Session(`ws-${randomUUID()}`, "ws", envCfg);
        if (server.upgrade(req, { data: { session } })) return undefined;
        return httpError(400, "VALIDATION_ERROR", "GET /ws needs a WebSocket upgrade");
      }
      case "POST /reset": {
        const body = await readJson(req);
        if (!body.ok) return httpError(400, "INVALID_JSON", "the request body is not valid JSON");
        const parsed = resetRequestSchema.safeParse(body.value);
        if (!parsed.success) return httpError(422, "VALIDATION_ERROR", `reset: ${describeZodError(parsed.error)}`);
        const session = httpSession;
        try {
          return json(await session.run(() => session.env.reset(parsed.data)));
        } catch (e) {
          if (isHumanishError(e, "HUMANISH_ENV_CAPACITY")) return httpError(503, "CAPACITY_REACHED", e.message);
          throw e;
        }
      }
      case "POST /step": {
        const body = await readJson(req);
        if (!body.ok) return httpError(400, "INVALID_JSON", "the request body is not valid JSON");
        const parsed = stepRequestSchema.safeParse(body.value);
        if (!parsed.success) return httpError(422, "VALIDATION_ERROR", `step: ${describeZodError(parsed.error)}`);
        const t = parsed.data.timeout_s;
        return json(await runAction(httpSession, parsed.data.action, t === undefined ? undefined : Math.round(t * 1000)));
      }
      case "POST /mcp": {
        const body = await readJson(req);
        if (!body.ok) return json({ jsonrpc: "2.0", id: null, error: { code: -32700, message: "parse error: the body is not valid JSON" } });
        const session = httpSession;
        const res = await handleMcpMessage(body.value, {
          callTerminal: (args) => session.run(() => session.env.callTool("terminal", args)),
        });
        return res ? json(res) : new Response(null, { status: 202 });
      }
      default:
        if (url.pathname === "/mcp") return httpError(405, "METHOD_NOT_ALLOWED", "POST JSON-RPC messages to /mcp (no server-sent event stream is offered)");
        return httpError(404, "NOT_FOUND", `no route ${route}; see GET /schema and GET /web`);
    }
  }

  let server: Server<WsData>;
  try {
    server = Bun.serve<WsData>({
      hostname: host,
      port: opts.port ?? ENV_DEFAULTS.port,
      idleTimeout: 0,
      async fetch(req, srv) {
        try {
          return await handleHttp(req, srv);
        } catch (e) {
          const msg = isHumanishError(e) ? `${e.code}: ${e.message}` : ((e as Error)?.message ?? String(e));
          return httpError(500, "EXECUTION_ERROR", msg);
        }
      },
      websocket: {
        idleTimeout: 0,
        open(ws) {
          if (stopping) {
            ws.close(1001, "server shutting down");
            return;
          }
          sessions.add(ws.data.session);
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
          void handleWsMessage(ws, raw);
        },
        close(ws) {
          const session = ws.data.session;
          if (sessions.delete(session)) void session.run(() => session.close());
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

  const reaperMs = opts.reaperIntervalMs ?? Math.min(5_000, Math.max(250, Math.floor(sessionTimeoutMs / 4)));
  let reaping = false;
  const reaper = setInterval(() => {
    if (reaping || stopping) return;
    reaping = true;
    void reap().finally(() => {
      reaping = false;
    });
  }, reaperMs);

  /** Ends idle sessions (half-open or abandoned) and retries unconfirmed releases. */
  async function reap(): Promise<void> {
    const now = Date.now();
    const idle = [...sessions].filter((s) => s.pending === 0 && now - s.lastActivity > sessionTimeoutMs);
    await Promise.all(
      idle.map(async (s) => {
        if (s.kind === "http") {
          if (!s.env.hasSlot) return;
          sessions.delete(s);
          const fresh = new Session("http", "http", envCfg);
          httpSession = fresh;
          sessions.add(fresh);
          log({ session: s.id, episode_id: s.env.state().episode_id, kind: "release", detail: `reaper: idle for ${now - s.lastActivity} ms` });
          await s.close();
          return;
        }
        sessions.delete(s);
        log({ session: s.id, episode_id: s.env.state().episode_id, kind: "release", detail: `reaper: idle for ${now - s.lastActivity} ms` });
        await s.close();
        s.onEvict?.();
      }),
    );
    await ledger.retryUnconfirmed();
  }

  let stopped: Promise<ReleaseSummary> | null = null;
  const handle: EnvServerHandle = {
    url: `http://${host.includes(":") ? `[${host}]` : host}:${server.port}`,
    port: server.port as number,
    stats: () => ({ sessions: sessions.size, slotsInUse: slots.inUse, maxConcurrent, ownedSandboxIds: ledger.ids() }),
    stop() {
      if (stopped) return stopped;
      stopping = true;
      clearInterval(reaper);
      stopped = (async () => {
        const all = [...sessions];
        sessions.clear();
        const proofs: ReleaseProof[] = [];
        for (const p of await Promise.all(
          all.map((s) =>
            s.close().then((proof) => {
              s.onEvict?.();
              return proof;
            }),
          ),
        ))
          if (p) proofs.push(p);
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

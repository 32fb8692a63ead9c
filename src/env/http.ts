/**
 * The HTTP side of the environment server: the loopback Host/Origin rule, the stateless
 * `/reset`, `/step` and `/state`, `/mcp`, the schema, health and web page, and the WebSocket
 * upgrade at `/ws`.
 */
import type { Server } from "bun";
import { isHumanishError } from "../errors.ts";
import { zodIssues } from "../text/zod-issues.ts";
import { handleMcpMessage, RPC } from "./mcp.ts";
import { HTTP_NO_EPISODE_HINT, type SessionRegistry } from "./registry.ts";
import { WEB_PAGE_HTML } from "./web.ts";
import { resetRequestSchema, schemaDocument, stepRequestSchema } from "./wire.ts";
import type { WsData } from "./ws.ts";

function json(body: unknown, status = 200): Response {
  return new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json" } });
}

export function httpError(status: number, code: string, message: string, extra: Record<string, unknown> = {}): Response {
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
export async function handleHttp(registry: SessionRegistry, host: string, req: Request, server: Server<WsData>): Promise<Response | undefined> {
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

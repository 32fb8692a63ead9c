/**
 * The WebSocket side of the environment server: one session per connection, admitted to a slot
 * when the socket opens, and the messages `reset`, `step`, `state`, `close` and `mcp` (see
 * wire.ts for their shapes).
 */
import type { ServerWebSocket, WebSocketHandler } from "bun";
import { type HumanishError, isHumanishError } from "../errors.ts";
import { zodIssues } from "../text/zod-issues.ts";
import type { EnvResponse } from "./environment.ts";
import { handleMcpMessage } from "./mcp.ts";
import type { SessionRegistry } from "./registry.ts";
import type { Session } from "./sessions.ts";
import { type Action, actionSchema, resetRequestSchema, stepRequestSchema, type WsErrorCode, wsMessageSchema } from "./wire.ts";

/** What each socket carries: its session and its admission. */
export interface WsData {
  session: Session;
  /** Settles once the session has its slot (null) or was refused one (the capacity error). */
  admission: Promise<HumanishError | null>;
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

/**
 * A socket just opened: refused with 1001 while the server stops, else its session asks for a
 * slot (the answer awaited by its first message) and learns how to tell the client when the
 * server ends it (idle timeout, shutdown).
 */
function openWs(registry: SessionRegistry, ws: ServerWebSocket<WsData>): void {
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
}

/** The `websocket` handlers of `Bun.serve` over `registry`: no idle timeout (the reaper ends idle sessions). */
export function wsHandlers(registry: SessionRegistry): WebSocketHandler<WsData> {
  return {
    idleTimeout: 0,
    open(ws) {
      openWs(registry, ws);
    },
    message(ws, raw) {
      void handleWsMessage(registry, ws, raw);
    },
    close(ws) {
      void registry.endWs(ws.data.session);
    },
  };
}

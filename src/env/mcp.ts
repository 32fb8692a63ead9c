/**
 * MCP JSON-RPC 2.0 for the environment: `initialize`, `ping`, `tools/list`, `tools/call` (the
 * `terminal` tool), and OpenEnv's session methods `openenv/session/create` /
 * `openenv/session/close` (what its client's production mode sends first and last).
 * Notifications get no response. Tool failures (framework errors) are results with
 * `isError: true`; protocol problems are JSON-RPC errors.
 */
import { isHumanishError } from "../errors.ts";
import { zodIssues } from "../text/zod-issues.ts";
import type { EnvResponse } from "./environment.ts";
import { toolErrorText } from "./text.ts";
import { type ResetRequest, resetRequestSchema, TERMINAL_TOOL_NAME, terminalToolMcp } from "./wire.ts";

/** MCP protocol revision we answer with when the client does not name one. */
export const MCP_PROTOCOL_VERSION = "2025-06-18";

/** JSON-RPC error codes used here (OpenEnv's `SERVER_ERROR` is -32000). */
export const RPC = { parse: -32700, invalidRequest: -32600, methodNotFound: -32601, invalidParams: -32602, internal: -32603, server: -32000 } as const;

/** A JSON-RPC response object. */
export interface JsonRpcResponse {
  jsonrpc: "2.0";
  id: string | number | null;
  result?: unknown;
  error?: { code: number; message: string; data?: unknown };
}

/** What the MCP layer needs from the transport it runs on (HTTP `/mcp` or one WebSocket). */
export interface McpTarget {
  /**
   * `openenv/session/create`: opens a session whose first terminal call starts an episode with
   * `reset` (over a WebSocket: answers the socket's own session). Rejects with
   * `HUMANISH_ENV_CAPACITY` when no slot frees in time.
   */
  createSession(reset: ResetRequest): Promise<string>;
  /** `openenv/session/close`: `own` when the id is the WebSocket's own session (not closable here). */
  closeSession(id: string): Promise<"closed" | "unknown" | "own">;
  /** True when `id` names a live session this target can use. */
  knows(id: string): boolean;
  /** Runs one terminal call on the session `sessionId` (null: a temporary environment). */
  callTerminal(sessionId: string | null, args: Record<string, unknown>): Promise<EnvResponse>;
}

function rpcError(id: JsonRpcResponse["id"], code: number, message: string, data?: unknown): JsonRpcResponse {
  return { jsonrpc: "2.0", id, error: { code, message, ...(data === undefined ? {} : { data }) } };
}

/**
 * A failure as a JSON-RPC error: a capacity refusal is OpenEnv's server error with
 * `active_sessions` / `max_sessions`; anything else an internal error naming its code.
 */
function failureRpcError(id: JsonRpcResponse["id"], e: unknown): JsonRpcResponse {
  if (isHumanishError(e, "HUMANISH_ENV_CAPACITY")) return rpcError(id, RPC.server, e.message, { code: "CAPACITY_REACHED", ...(e.details ?? {}) });
  if (isHumanishError(e)) return rpcError(id, RPC.internal, `${e.code}: ${e.message}`, { code: e.code });
  return rpcError(id, RPC.internal, (e as Error)?.message ?? String(e));
}

/**
 * The `tools/call` result: `content` (the text a model reads: output, exit code, timeout),
 * `structuredContent` (`{result, error, done, reward}`), `isError`, and `data` — what OpenEnv's
 * client returns to its caller (the same text, as upstream's tool returns text).
 */
export function callToolResult(res: EnvResponse): { content: { type: "text"; text: string }[]; structuredContent: unknown; isError: boolean; data: string } {
  const obs = res.observation as Record<string, unknown>;
  const error = obs.error as { error_type: string; message: string } | undefined;
  const result = (obs.result ?? null) as { data?: unknown } | null;
  const text = typeof result?.data === "string" ? result.data : error ? toolErrorText(error) : JSON.stringify(result);
  return {
    content: [{ type: "text", text }],
    structuredContent: { result, error: error ?? null, done: res.done, reward: res.reward },
    isError: error !== undefined,
    data: text,
  };
}

/** The optional `session_id` of tools/list and tools/call: a non-empty string naming a live session. */
function sessionParam(
  params: Record<string, unknown>,
  target: McpTarget,
  id: JsonRpcResponse["id"],
): { ok: true; value: string | null } | { ok: false; error: JsonRpcResponse } {
  const sid = params.session_id;
  if (sid === undefined || sid === null || sid === "") return { ok: true, value: null };
  if (typeof sid !== "string") return { ok: false, error: rpcError(id, RPC.invalidParams, 'invalid params: "session_id" must be a string') };
  if (!target.knows(sid)) return { ok: false, error: rpcError(id, RPC.invalidParams, `unknown session_id: ${sid}; create one with openenv/session/create`) };
  return { ok: true, value: sid };
}

/**
 * Handles one JSON-RPC message (already JSON-parsed). Returns `null` for notifications.
 * Error codes: -32600 invalid request, -32601 unknown method, -32602 invalid params, -32000
 * capacity (with `data.active_sessions` / `data.max_sessions`), -32603 any other failure.
 */
export async function handleMcpMessage(msg: unknown, target: McpTarget): Promise<JsonRpcResponse | null> {
  if (!msg || typeof msg !== "object" || Array.isArray(msg)) return rpcError(null, RPC.invalidRequest, "invalid request: expected one JSON-RPC object");
  const m = msg as Record<string, unknown>;
  const id = typeof m.id === "string" || typeof m.id === "number" ? m.id : null;
  const isNotification = !("id" in m);
  if (m.jsonrpc !== "2.0" || typeof m.method !== "string") {
    return rpcError(id, RPC.invalidRequest, 'invalid request: need "jsonrpc": "2.0" and a string "method"');
  }
  if (isNotification) return null;
  const params = (m.params ?? {}) as Record<string, unknown>;
  if (typeof params !== "object" || params === null || Array.isArray(params)) return rpcError(id, RPC.invalidParams, "invalid params: expected an object");
  switch (m.method) {
    case "initialize":
      return {
        jsonrpc: "2.0",
        id,
        result: {
          protocolVersion: typeof params.protocolVersion === "string" ? params.protocolVersion : MCP_PROTOCOL_VERSION,
          capabilities: { tools: { listChanged: false } },
          serverInfo: { name: "humanish-env", version: "0.1.0" },
          instructions: "One tool, `terminal`: run a shell command in the sandbox, or submit `final_answer` to end the episode.",
        },
      };
    case "ping":
      return { jsonrpc: "2.0", id, result: {} };
    case "openenv/session/create": {
      // OpenEnv's client sends `{}`; reset fields (setup, verify, seed, episode_id) are this server's extension.
      const reset = resetRequestSchema.safeParse(params);
      if (!reset.success) return rpcError(id, RPC.invalidParams, `invalid params: ${zodIssues(reset.error)}`);
      try {
        return { jsonrpc: "2.0", id, result: { session_id: await target.createSession(reset.data) } };
      } catch (e) {
        return failureRpcError(id, e);
      }
    }
    case "openenv/session/close": {
      const sid = params.session_id;
      if (typeof sid !== "string" || sid === "") return rpcError(id, RPC.invalidParams, "invalid params: 'session_id' is required");
      const outcome = await target.closeSession(sid);
      if (outcome === "unknown") return rpcError(id, RPC.invalidParams, `unknown session_id: ${sid}`);
      if (outcome === "own")
        return rpcError(id, RPC.invalidRequest, 'cannot close the WebSocket-managed session through MCP; send {"type": "close"} on the socket');
      return { jsonrpc: "2.0", id, result: { session_id: sid, closed: true } };
    }
    case "tools/list": {
      const sid = sessionParam(params, target, id);
      if (!sid.ok) return sid.error;
      return { jsonrpc: "2.0", id, result: { tools: [terminalToolMcp()] } };
    }
    case "tools/call": {
      const name = params.name;
      if (typeof name !== "string") return rpcError(id, RPC.invalidParams, 'invalid params: "name" must be a string');
      if (name !== TERMINAL_TOOL_NAME) return rpcError(id, RPC.invalidParams, `unknown tool ${JSON.stringify(name)}; the only tool is "${TERMINAL_TOOL_NAME}"`);
      const args = params.arguments ?? {};
      if (typeof args !== "object" || args === null || Array.isArray(args))
        return rpcError(id, RPC.invalidParams, 'invalid params: "arguments" must be an object');
      const sid = sessionParam(params, target, id);
      if (!sid.ok) return sid.error;
      try {
        return { jsonrpc: "2.0", id, result: callToolResult(await target.callTerminal(sid.value, args as Record<string, unknown>)) };
      } catch (e) {
        return failureRpcError(id, e);
      }
    }
    default:
      return rpcError(id, RPC.methodNotFound, `method not found: ${m.method}`);
  }
}

/**
 * MCP JSON-RPC 2.0 for the environment (reference openenv-wire.md `POST /mcp`): `initialize`,
 * `ping`, `tools/list`, `tools/call` (the `terminal` tool). Notifications get no response.
 * Tool failures (framework errors) are results with `isError: true`; protocol problems are
 * JSON-RPC errors.
 */
import type { EnvResponse } from "./environment.ts";
import { TERMINAL_TOOL_NAME, terminalToolMcp } from "./wire.ts";

/** MCP protocol revision we answer with when the client does not name one. */
export const MCP_PROTOCOL_VERSION = "2025-06-18";

/** A JSON-RPC response object. */
export interface JsonRpcResponse {
  jsonrpc: "2.0";
  id: string | number | null;
  result?: unknown;
  error?: { code: number; message: string; data?: unknown };
}

/** What the MCP layer needs from a session: run a terminal call on its environment. */
export interface McpTarget {
  callTerminal(args: Record<string, unknown>): Promise<EnvResponse>;
}

function rpcError(id: JsonRpcResponse["id"], code: number, message: string): JsonRpcResponse {
  return { jsonrpc: "2.0", id, error: { code, message } };
}

/**
 * Handles one JSON-RPC message (already JSON-parsed). Returns `null` for notifications.
 * Error codes: -32600 invalid request, -32601 unknown method, -32602 invalid params.
 */
export async function handleMcpMessage(msg: unknown, target: McpTarget): Promise<JsonRpcResponse | null> {
  if (!msg || typeof msg !== "object" || Array.isArray(msg)) return rpcError(null, -32600, "invalid request: expected one JSON-RPC object");
  const m = msg as Record<string, unknown>;
  const id = typeof m.id === "string" || typeof m.id === "number" ? m.id : null;
  const isNotification = !("id" in m);
  if (m.jsonrpc !== "2.0" || typeof m.method !== "string") {
    return rpcError(id, -32600, 'invalid request: need "jsonrpc": "2.0" and a string "method"');
  }
  if (isNotification) return null;
  const params = (m.params ?? {}) as Record<string, unknown>;
  if (typeof params !== "object" || params === null || Array.isArray(params)) return rpcError(id, -32602, "invalid params: expected an object");
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
    case "tools/list":
      return { jsonrpc: "2.0", id, result: { tools: [terminalToolMcp()] } };
    case "tools/call": {
      const name = params.name;
      if (typeof name !== "string") return rpcError(id, -32602, 'invalid params: "name" must be a string');
      if (name !== TERMINAL_TOOL_NAME) return rpcError(id, -32602, `unknown tool ${JSON.stringify(name)}; the only tool is "${TERMINAL_TOOL_NAME}"`);
      const args = params.arguments ?? {};
      if (typeof args !== "object" || args === null || Array.isArray(args)) return rpcError(id, -32602, 'invalid params: "arguments" must be an object');
      const res = await target.callTerminal(args as Record<string, unknown>);
      const obs = res.observation as Record<string, unknown>;
      const error = obs.error as { error_type: string; message: string } | undefined;
      const structured = { result: obs.result ?? null, error: error ?? null, done: res.done, reward: res.reward };
      return {
        jsonrpc: "2.0",
        id,
        result: {
          content: [
            {
              type: "text",
              text: error ? `${error.error_type}: ${error.message}${obs.result ? `\n${JSON.stringify(obs.result)}` : ""}` : JSON.stringify(obs.result),
            },
          ],
          structuredContent: structured,
          isError: error !== undefined,
        },
      };
    }
    default:
      return rpcError(id, -32601, `method not found: ${m.method}`);
  }
}

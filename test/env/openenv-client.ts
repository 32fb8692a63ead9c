/**
 * A TypeScript client that speaks OpenEnv's wire protocol the way its Python client
 * (openenv-core `EnvClient` / `MCPToolClient`, terminus_env `TerminusEnv`) sends it: exact
 * method names, params shapes and response handling, in each mode —
 * - WebSocket (`EnvClient`): `{"type":"reset","data":{…}}`, `{"type":"step","data":<action>}`,
 *   `{"type":"state"}`, and on close `{"type":"close"}` followed by closing the socket;
 *   a `{"type":"error"}` reply raises.
 * - MCP production mode (`use_production_mode=True`): `POST /mcp` with
 *   `{"jsonrpc":"2.0","method","params":params or {},"id":n}`; the first call creates a session
 *   (`openenv/session/create`), every tools call carries `params.session_id`, close sends
 *   `openenv/session/close`; `call_tool` returns `result.data` when present, else the result.
 * - HTTP simulation routes: `POST /reset`, `POST /step` `{"action":…}`, `GET /state`.
 */

/** A server `{"type":"error"}` reply or a JSON-RPC error, raised like the Python client raises. */
export class OpenEnvError extends Error {
  constructor(
    message: string,
    readonly code: string | number,
    readonly data?: unknown,
  ) {
    super(message);
  }
}

/** `StepResult`: what reset/step return. */
export interface StepResult {
  observation: Record<string, any>;
  reward: number | null;
  done: boolean;
  metadata: Record<string, any>;
}

/** `EnvClient` over `/ws`: one server-side session per connection. */
export class OpenEnvWsClient {
  private inbox: any[] = [];
  private waiters: ((m: any) => void)[] = [];
  closed = false;

  private constructor(private readonly ws: WebSocket) {
    ws.onmessage = (ev) => {
      const msg = JSON.parse(String(ev.data));
      const w = this.waiters.shift();
      if (w) w(msg);
      else this.inbox.push(msg);
    };
    ws.onclose = () => {
      this.closed = true;
    };
  }

  /** `base_url` http(s):// becomes ws(s)://…/ws, as `convert_to_ws_url` does. */
  static async connect(baseUrl: string): Promise<OpenEnvWsClient> {
    const ws = new WebSocket(`${baseUrl.replace(/^http/, "ws").replace(/\/$/, "")}/ws`);
    await new Promise<void>((resolve, reject) => {
      ws.onopen = () => resolve();
      ws.onerror = () => reject(new Error(`Failed to connect to ${baseUrl}/ws`));
    });
    return new OpenEnvWsClient(ws);
  }

  private receive(ms = 120_000): Promise<any> {
    const m = this.inbox.shift();
    if (m !== undefined) return Promise.resolve(m);
    return new Promise((resolve, reject) => {
      const t = setTimeout(() => reject(new Error(`no message within ${ms} ms`)), ms);
      this.waiters.push((msg) => {
        clearTimeout(t);
        resolve(msg);
      });
    });
  }

  /** `_send_and_receive`: an error reply raises `Server error: … (code: …)`. */
  private async sendAndReceive(message: unknown): Promise<any> {
    this.ws.send(JSON.stringify(message));
    const res = await this.receive();
    if (res.type === "error") {
      const d = res.data ?? {};
      throw new OpenEnvError(`Server error: ${d.message ?? "Unknown error"} (code: ${d.code ?? "UNKNOWN"})`, d.code ?? "UNKNOWN", d);
    }
    return res;
  }

  /** `reset(**kwargs)` → `StepResult`. */
  async reset(kwargs: Record<string, unknown> = {}): Promise<StepResult> {
    return (await this.sendAndReceive({ type: "reset", data: kwargs })).data;
  }

  /** `step(action)`: `data` is the action payload (`_step_payload`). */
  async step(action: Record<string, unknown>): Promise<StepResult> {
    return (await this.sendAndReceive({ type: "step", data: action })).data;
  }

  /** `state()` → the state payload. */
  async state(): Promise<Record<string, any>> {
    return (await this.sendAndReceive({ type: "state" })).data;
  }

  /** `list_tools()` through a `ListToolsAction` step. */
  async listTools(): Promise<{ name: string; description: string; input_schema: Record<string, unknown> }[]> {
    return (await this.step({ type: "list_tools" })).observation.tools;
  }

  /** `MCPToolClient.call_tool` (simulation path): raises on `observation.error`, returns `result.data` when present. */
  async callTool(name: string, args: Record<string, unknown>): Promise<unknown> {
    const { observation: obs } = await this.step({ type: "call_tool", tool_name: name, arguments: args });
    if (obs.error) throw new OpenEnvError(`Tool '${name}' failed: ${obs.error.message} (type: ${obs.error.error_type})`, obs.error.error_type, obs);
    const result = obs.result;
    if (result && typeof result === "object" && "data" in result) return result.data;
    return result;
  }

  /** `disconnect()`: sends `{"type":"close"}` (best effort), then closes the socket and waits for it. */
  async close(): Promise<void> {
    if (this.closed) return;
    try {
      this.ws.send(JSON.stringify({ type: "close" }));
    } catch {
      // best effort, as upstream
    }
    this.ws.close();
    for (let i = 0; i < 200 && !this.closed; i++) await Bun.sleep(10);
  }
}

/** `MCPToolClient` with `use_production_mode=True`: JSON-RPC over `POST /mcp` with a persistent session. */
export class OpenEnvMcpClient {
  private nextId = 0;
  sessionId: string | null = null;

  constructor(private readonly baseUrl: string) {}

  /** `_production_mcp_request`: raises for a non-2xx status, returns the parsed body. */
  async request(method: string, params?: Record<string, unknown>): Promise<any> {
    this.nextId += 1;
    const res = await fetch(`${this.baseUrl.replace(/\/$/, "")}/mcp`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ jsonrpc: "2.0", method, params: params ?? {}, id: this.nextId }),
    });
    if (!res.ok) throw new Error(`HTTP ${res.status} from /mcp`);
    return res.json();
  }

  /** `_ensure_production_session`. */
  async ensureSession(): Promise<string> {
    if (this.sessionId !== null) return this.sessionId;
    const data = await this.request("openenv/session/create");
    if ("error" in data) throw new OpenEnvError(`Failed to create MCP session: ${data.error?.message ?? "unknown error"}`, data.error?.code, data.error?.data);
    const id = data.result?.session_id;
    if (!id) throw new Error("Failed to create MCP session: missing session_id");
    this.sessionId = id;
    return id;
  }

  /** `list_tools()` (production). */
  async listTools(): Promise<{ name: string; description: string; input_schema: Record<string, unknown> }[]> {
    const sid = await this.ensureSession();
    const data = await this.request("tools/list", { session_id: sid });
    if ("error" in data) throw new OpenEnvError(`list_tools failed: ${data.error.message}`, data.error.code);
    return data.result.tools.map((t: any) => ({ name: t.name ?? "", description: t.description ?? "", input_schema: t.input_schema ?? t.inputSchema ?? {} }));
  }

  /** `call_tool(name, **kwargs)` (production): `result.data` when present, else the whole result. */
  async callTool(name: string, args: Record<string, unknown>): Promise<unknown> {
    return OpenEnvMcpClient.unwrap(name, await this.callToolRaw(name, args));
  }

  /** The JSON-RPC body of one tools/call on this client's session. */
  async callToolRaw(name: string, args: Record<string, unknown>): Promise<any> {
    const sid = await this.ensureSession();
    return this.request("tools/call", { name, arguments: args, session_id: sid });
  }

  static unwrap(name: string, data: any): unknown {
    if ("error" in data) throw new OpenEnvError(`Tool '${name}' failed: ${data.error?.message ?? "unknown error"}`, data.error?.code, data.error?.data);
    const result = data.result;
    if (result && typeof result === "object" && "data" in result) return result.data;
    return result;
  }

  /** `close()`: closes the server-side session (best effort). */
  async close(): Promise<void> {
    if (this.sessionId === null) return;
    try {
      await this.request("openenv/session/close", { session_id: this.sessionId });
    } finally {
      this.sessionId = null;
    }
  }
}

/** The HTTP simulation routes. */
export const openEnvHttp = {
  async reset(baseUrl: string, body: Record<string, unknown> = {}): Promise<{ status: number; body: any }> {
    const res = await fetch(`${baseUrl}/reset`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
    return { status: res.status, body: await res.json() };
  },
  async step(baseUrl: string, action: Record<string, unknown>, extra: Record<string, unknown> = {}): Promise<{ status: number; body: any }> {
    const res = await fetch(`${baseUrl}/step`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ action, ...extra }) });
    return { status: res.status, body: await res.json() };
  },
  async state(baseUrl: string): Promise<any> {
    return (await fetch(`${baseUrl}/state`)).json();
  },
};

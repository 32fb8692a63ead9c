/**
 * The server's sessions, as OpenEnv models them: WebSocket sessions (one per connection), MCP
 * sessions (`openenv/session/create` … `openenv/session/close`), and temporary environments for
 * stateless requests (`POST /reset`, `POST /step`, a `tools/call` without a session id), each
 * closed before its request answers. The transports (server.ts) hand messages here; capacity is
 * the {@link SlotPool}'s (see sessions.ts for what holds a slot).
 */
import { randomUUID } from "node:crypto";
import { HumanishError, isHumanishError } from "../errors.ts";
import type { ReleaseProof } from "../sandbox/types.ts";
import type { EnvironmentConfig, EnvLogEvent, EnvResponse, EnvState } from "./environment.ts";
import type { McpTarget } from "./mcp.ts";
import { Session, type SlotPool } from "./sessions.ts";
import { resetRequestSchema } from "./wire.ts";

/** What a stateless HTTP `call_tool` step says instead of "call reset first". */
export const HTTP_NO_EPISODE_HINT =
  "POST /reset and POST /step are stateless (as in OpenEnv: each request gets a temporary environment), so a step cannot continue a reset; run episodes on a WebSocket session (GET /ws) or an MCP session (POST /mcp openenv/session/create)";

/** What an MCP session's call says once its episode is over (MCP has no reset). */
export const MCP_EPISODE_OVER_HINT = "close this session (openenv/session/close) and create a new one (openenv/session/create) for a new episode";

/** An `{observation, reward, done, metadata}` for a terminal call whose episode could not start. */
function notStarted(reset: EnvResponse): EnvResponse {
  const err = reset.metadata.error as { code: string; message: string } | undefined;
  const failed = reset.metadata.setup_failed as { index: number; reason: string } | undefined;
  const message = err ? `${err.code}: ${err.message}` : failed ? `setup command ${failed.index} failed (${failed.reason})` : "the episode ended during setup";
  const metadata = { ...reset.metadata };
  const error = { error_type: "execution_error", message: `the episode could not start: ${message}` };
  return { observation: { tool_name: "terminal", result: null, error, done: true, reward: null, metadata }, reward: null, done: true, metadata };
}

/** Every live session of one server. */
export class SessionRegistry {
  /** Persistent sessions (WebSocket and MCP); the reaper and shutdown walk these. */
  readonly sessions = new Set<Session>();
  /** MCP sessions by id (`params.session_id`). */
  readonly mcp = new Map<string, Session>();
  /** Temporary environments of requests in flight (closed by their request, or by shutdown). */
  private readonly temps = new Set<Session>();
  /** Set once shutdown began: no new session is admitted. */
  stopping = false;

  /** `POST /mcp`: MCP sessions by id; calls without one get a temporary environment. */
  readonly httpMcp: McpTarget = {
    createSession: (reset) => this.createMcpSession(reset),
    closeSession: (id) => this.closeMcpSession(id),
    knows: (id) => this.mcp.has(id),
    callTerminal: async (sid, args) => {
      const s = sid === null ? undefined : this.mcp.get(sid);
      if (s) return s.run(() => this.mcpTerminal(s, args));
      const { value, release } = await this.withTemp(undefined, (t) => this.mcpTerminal(t, args));
      if (release) value.metadata.sandbox_release = release;
      return value;
    },
  };

  constructor(
    private readonly envCfg: Omit<EnvironmentConfig, "sessionId">,
    private readonly slots: SlotPool,
    private readonly log: (event: EnvLogEvent) => void,
  ) {}

  /**
   * Runs `fn` on a temporary environment (`hint` replaces "call reset first" in its no-episode
   * error), then closes it — releasing any sandbox — before returning the value and that release.
   */
  async withTemp<T>(hint: string | undefined, fn: (s: Session) => Promise<T>): Promise<{ value: T; release: ReleaseProof | null }> {
    const s = new Session(`tmp-${randomUUID()}`, "temp", hint ? { ...this.envCfg, noEpisodeHint: hint } : this.envCfg);
    this.temps.add(s);
    try {
      const value = await s.run(() => fn(s));
      return { value, release: await s.close() };
    } finally {
      await s.close();
      this.temps.delete(s);
    }
  }

  /** The state of a fresh environment (stateless `GET /state`); creates nothing. */
  freshState(): EnvState {
    return new Session(`tmp-${randomUUID()}`, "temp", this.envCfg).env.state();
  }

  /** A new WebSocket session (not yet admitted: see {@link admit}). */
  newWsSession(): Session {
    return new Session(`ws-${randomUUID()}`, "ws", this.envCfg);
  }

  /**
   * Registers a WebSocket session and takes its slot first in its queue, so later messages wait
   * behind the admission. Resolves to null when admitted, or to the capacity refusal.
   */
  admit(session: Session): Promise<HumanishError | null> {
    this.sessions.add(session);
    return session.run(async () => {
      try {
        session.env.adoptSlot(await this.slots.acquire());
        return null;
      } catch (e) {
        if (isHumanishError(e, "HUMANISH_ENV_CAPACITY")) return e;
        throw e;
      }
    });
  }

  /** Ends a WebSocket session (its close message or its socket closing). Idempotent. */
  endWs(session: Session): Promise<ReleaseProof | null> {
    this.sessions.delete(session);
    return session.close();
  }

  /** A WebSocket's `mcp` messages act on the socket's own session, as OpenEnv's do. */
  wsMcp(session: Session): McpTarget {
    return {
      createSession: async () => session.id,
      closeSession: async (id) => (id === session.id ? "own" : this.closeMcpSession(id)),
      knows: (id) => id === session.id || this.mcp.has(id),
      callTerminal: (_sid, args) => session.run(() => session.env.callTool("terminal", args)),
    };
  }

  /** Ends every persistent session idle (no call queued) for longer than `idleMs`, releasing its sandbox. */
  async reapIdle(idleMs: number): Promise<void> {
    const now = Date.now();
    const idle = [...this.sessions].filter((s) => s.pending === 0 && now - s.lastActivity > idleMs);
    await Promise.all(
      idle.map(async (s) => {
        this.sessions.delete(s);
        if (s.kind === "mcp") this.mcp.delete(s.id);
        this.log({ session: s.id, episode_id: s.env.state().episode_id, kind: "release", detail: `reaper: idle for ${now - s.lastActivity} ms` });
        await s.close();
        s.onEvict?.();
      }),
    );
  }

  /** Shutdown: closes every session and temporary environment; returns their release proofs. */
  async closeAll(): Promise<ReleaseProof[]> {
    this.stopping = true;
    const all = [...this.sessions, ...this.temps];
    this.sessions.clear();
    this.mcp.clear();
    const proofs = await Promise.all(
      all.map(async (s) => {
        const proof = await s.close({ abandonInFlight: true });
        s.onEvict?.();
        return proof;
      }),
    );
    return proofs.filter((p): p is ReleaseProof => p !== null);
  }

  private async createMcpSession(reset: Parameters<McpTarget["createSession"]>[0]): Promise<string> {
    const slot = await this.slots.acquire();
    if (this.stopping) {
      slot.free();
      throw new HumanishError("HUMANISH_ENV_SESSION_CLOSED", "the server is shutting down", { next: "start the server again" });
    }
    const id = randomUUID();
    const s = new Session(id, "mcp", { ...this.envCfg, episodeOverHint: MCP_EPISODE_OVER_HINT }, slot, reset);
    this.sessions.add(s);
    this.mcp.set(id, s);
    this.log({ session: id, episode_id: null, kind: "reset", detail: "MCP session created" });
    return id;
  }

  private async closeMcpSession(id: string): Promise<"closed" | "unknown"> {
    const s = this.mcp.get(id);
    if (!s) return "unknown";
    this.mcp.delete(id);
    this.sessions.delete(s);
    await s.close();
    return "closed";
  }

  /** A terminal call over HTTP MCP: starts the episode first when nothing reset this environment. */
  private async mcpTerminal(s: Session, args: Record<string, unknown>): Promise<EnvResponse> {
    if (s.env.neverReset) {
      const started = await s.env.reset(s.lazyReset ?? resetRequestSchema.parse({}));
      if (started.done) return notStarted(started);
    }
    return s.env.callTool("terminal", args);
  }
}

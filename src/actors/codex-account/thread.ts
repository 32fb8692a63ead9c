/**
 * The one ephemeral thread of a session and its turns: input bounds, `thread/start` with the
 * caller's dynamic tools and checks of its reply, `turn/start`, the turn's messages fed through
 * the {@link TurnMonitor}, tool calls served by the caller, and the ways a turn ends (completed,
 * refused by a rule, interrupted by the deadline or the caller's signal, failed).
 */
import type { CodexAccountBounds } from "./bounds.ts";
import type { LaunchedAppServer } from "./launch.ts";
import { RpcError } from "./rpc.ts";
import { checkImageDataUrl, type TurnDecision, TurnMonitor } from "./turn.ts";
import type { CodexAccountProfile, CodexDynamicToolResult, CodexTurnInput, CodexTurnResult } from "./types.ts";

type Json = Record<string, unknown>;

/** The thread a session holds: its id and what every later turn must repeat unchanged. */
export interface ThreadState {
  id: string;
  instructions: string;
  toolsKey: string;
}

function toolsKey(turn: CodexTurnInput): string {
  return JSON.stringify(turn.tools.map((t) => [t.name, t.description, t.inputSchema]));
}

/** Input bound check; returns the rule it breaks, or null. */
export function checkTurnInput(turn: CodexTurnInput, b: CodexAccountBounds): string | null {
  if (Buffer.byteLength(turn.instructions, "utf8") > b.instructionsBytes) return "instructions_too_large";
  let images = 0;
  let imageBytes = 0;
  for (const part of turn.input) {
    if (part.type !== "image") continue;
    images++;
    const c = checkImageDataUrl(part.url);
    if (!c.ok) return "image_not_admitted";
    imageBytes += c.bytes;
  }
  if (images > b.images) return "too_many_images";
  if (imageBytes > b.imageBytes) return "image_bytes_too_large";
  for (const t of turn.tools) if (!/^[A-Za-z0-9_-]{1,64}$/.test(t.name)) return "tool_name_invalid";
  return null;
}

/** Starts the ephemeral thread and checks the reply; `{refused}` names the rule that failed. */
export async function startRestrictedThread(
  l: LaunchedAppServer,
  profile: CodexAccountProfile,
  b: CodexAccountBounds,
  turn: CodexTurnInput,
): Promise<ThreadState | { refused: string }> {
  const bad = checkTurnInput(turn, b);
  if (bad) return { refused: bad };
  const params = {
    cwd: l.dir.cwd,
    ephemeral: true,
    experimentalRawEvents: true,
    approvalPolicy: "never",
    sandbox: "read-only",
    model: profile.model,
    modelProvider: l.modelProvider,
    allowProviderModelFallback: false,
    environments: [],
    runtimeWorkspaceRoots: [],
    dynamicTools: turn.tools.map((t) => ({ type: "function", name: t.name, description: t.description, inputSchema: t.inputSchema })),
    baseInstructions: turn.instructions,
    config: {},
  };
  let r: Json;
  try {
    r = await l.conn.request<Json>("thread/start", params, b.rpcMs);
  } catch (e) {
    return { refused: `codex_protocol_error:thread/start:${e instanceof RpcError ? e.message.slice(0, 200) : String(e)}` };
  }
  const t = (r.thread ?? {}) as Json;
  const sandbox = (r.sandbox ?? {}) as Json;
  const problems: string[] = [];
  if (typeof t.id !== "string" || t.id.length < 1 || t.id.length > 200) problems.push("thread id");
  if (t.ephemeral !== true) problems.push("not ephemeral");
  if (t.path !== null) problems.push("thread has a rollout path");
  if (r.model !== profile.model || t.model !== profile.model) problems.push("model");
  if (r.modelProvider !== l.modelProvider || t.modelProvider !== l.modelProvider) problems.push("model provider");
  if (r.reasoningEffort !== profile.effort) problems.push("effort");
  if (t.cliVersion !== profile.cliVersion) problems.push("cli version");
  if (Array.isArray(t.environments) ? t.environments.length > 0 : t.environments !== null) problems.push("environments");
  if (r.cwd !== l.dir.cwd) problems.push("cwd");
  if (r.approvalPolicy !== "never") problems.push("approval policy");
  if (sandbox.type !== "readOnly" || sandbox.networkAccess !== false) problems.push("sandbox");
  if (!Array.isArray(r.instructionSources) || r.instructionSources.length > 0) problems.push("inherited instructions");
  if (!Array.isArray(r.runtimeWorkspaceRoots) || r.runtimeWorkspaceRoots.length > 0) problems.push("workspace roots");
  if (problems.length > 0) return { refused: `codex_unsafe_configuration:thread/start:${problems.join(",")}` };
  return { id: t.id as string, instructions: turn.instructions, toolsKey: toolsKey(turn) };
}

function toolResultProblem(r: CodexDynamicToolResult, b: CodexAccountBounds): string | null {
  if (!r || typeof r.success !== "boolean" || !Array.isArray(r.contentItems)) return "tool_result_invalid";
  for (const c of r.contentItems) {
    if (c.type === "inputImage") {
      if (!checkImageDataUrl(c.imageUrl).ok) return "tool_image_not_admitted";
    } else if (c.type !== "inputText" || typeof c.text !== "string") return "tool_result_invalid";
  }
  if (Buffer.byteLength(JSON.stringify(r), "utf8") > b.toolOutputBytes) return "tool_output_too_large";
  return null;
}

/** The `turn/start` params of a restricted turn: read-only, no environments or roots, the profile's model and effort. */
export function turnStartParams(l: LaunchedAppServer, thread: ThreadState, profile: CodexAccountProfile, turn: CodexTurnInput): Json {
  return {
    threadId: thread.id,
    cwd: l.dir.cwd,
    approvalPolicy: "never",
    sandboxPolicy: { type: "readOnly", networkAccess: false },
    environments: [],
    runtimeWorkspaceRoots: [],
    effort: profile.effort,
    model: profile.model,
    ...(turn.outputSchema ? { outputSchema: turn.outputSchema } : {}),
    input: turn.input.map((p) => (p.type === "text" ? { type: "text", text: p.text, text_elements: [] } : { type: "image", url: p.url })),
  };
}

type Settled = { status: CodexTurnResult["status"]; reason: string };

/** One running turn: routes the connection's messages through the monitor until the turn settles. */
class TurnRun {
  readonly monitor: TurnMonitor;
  private settled: Settled | null = null;
  private settleOutcome!: (s: Settled) => void;
  readonly outcome = new Promise<Settled>((r) => {
    this.settleOutcome = r;
  });
  private ended = false;
  private endedSignal!: () => void;
  private readonly endedPromise = new Promise<void>((r) => {
    this.endedSignal = r;
  });

  constructor(
    private readonly l: LaunchedAppServer,
    private readonly thread: ThreadState,
    private readonly b: CodexAccountBounds,
    private readonly turn: CodexTurnInput,
  ) {
    this.monitor = new TurnMonitor(thread.id, new Set(turn.tools.map((t) => t.name)), b.assistantTextBytes);
    l.conn.onNotification = (m, p) => this.decide(this.monitor.onNotification(m, p));
    l.conn.onServerRequest = (req) => this.decide(this.monitor.onServerRequest(req));
  }

  /** Ends the turn's wait with the first outcome; later ones are ignored. */
  settle(s: Settled): void {
    if (this.settled) return;
    this.settled = s;
    this.settleOutcome(s);
  }

  private decide(d: TurnDecision): void {
    if (d.kind === "refuse") this.settle({ status: "refused", reason: d.rule });
    else if (d.kind === "ended") {
      this.ended = true;
      this.endedSignal();
      this.settle(d.status === "completed" ? { status: "completed", reason: "" } : { status: d.status, reason: d.errorMessage ?? d.status });
    } else if (d.kind === "reject-request") {
      this.l.conn.respondError(d.requestId, d.code, d.message);
      this.settle({ status: "refused", reason: d.rule });
    } else if (d.kind === "tool") void this.serveTool(d);
  }

  private async serveTool(d: Extract<TurnDecision, { kind: "tool" }>): Promise<void> {
    const conn = this.l.conn;
    // A call arriving after the turn settled (a refusal, the deadline) is not run.
    if (this.settled || !this.turn.onToolCall) {
      conn.respondError(d.requestId, -32601, "Tool call refused");
      return this.settle({ status: "refused", reason: `undeclared_tool:${d.call.tool}` });
    }
    let result: CodexDynamicToolResult;
    try {
      result = await this.turn.onToolCall(d.call);
    } catch (e) {
      conn.respondError(d.requestId, -32000, "Tool failed");
      return this.settle({ status: "failed", reason: `tool_failed:${String((e as Error)?.message ?? e).slice(0, 300)}` });
    }
    const problem = toolResultProblem(result, this.b);
    if (problem) {
      conn.respondError(d.requestId, -32000, "Tool result refused");
      return this.settle({ status: "refused", reason: problem });
    }
    const payload = { success: result.success, contentItems: result.contentItems };
    // The server echoes a tool result twice (item and raw item): budget for it.
    conn.allowEcho(4 * Buffer.byteLength(JSON.stringify(payload), "utf8") + 64 * 1024);
    conn.respond(d.requestId, payload);
  }

  /** Sends `turn/interrupt` (once the turn id is known) and waits a bounded time for the turn to end. */
  async interrupt(): Promise<void> {
    if (this.ended || !this.monitor.turnId) return;
    try {
      await this.l.conn.request("turn/interrupt", { threadId: this.thread.id, turnId: this.monitor.turnId }, this.b.interruptWaitMs);
    } catch {
      // An unanswered interrupt leaves closing the child as the remedy.
    }
    await Promise.race([this.endedPromise, Bun.sleep(this.b.interruptWaitMs)]);
  }
}

/**
 * Runs one turn to its end. `setRunning` hands the session an interrupt handle while the turn
 * runs (closing the session mid-turn interrupts it first).
 */
export async function runRestrictedTurn(
  l: LaunchedAppServer,
  thread: ThreadState,
  profile: CodexAccountProfile,
  b: CodexAccountBounds,
  turn: CodexTurnInput,
  setRunning: (r: { interrupt: () => Promise<void> } | null) => void,
): Promise<CodexTurnResult> {
  const none = { inputTokens: null, cachedInputTokens: null, outputTokens: null };
  const bad = checkTurnInput(turn, b);
  if (bad) return { status: "refused", reason: bad, usage: none, turnId: null };
  if (turn.instructions !== thread.instructions || toolsKey(turn) !== thread.toolsKey)
    return { status: "refused", reason: "instructions_changed", usage: none, turnId: null };
  if (turn.signal.aborted) return { status: "interrupted", reason: "cancelled", usage: none, turnId: null };
  const params = turnStartParams(l, thread, profile, turn);
  const requestBytes = Buffer.byteLength(JSON.stringify(params), "utf8");
  if (requestBytes > b.requestBytes) return { status: "refused", reason: "request_too_large", usage: none, turnId: null };
  // The server echoes the input back (user message item, raw item): budget for it.
  l.conn.allowEcho(3 * requestBytes);
  const run = new TurnRun(l, thread, b, turn);
  const onAbort = (): void => run.settle({ status: "interrupted", reason: "cancelled" });
  turn.signal.addEventListener("abort", onAbort, { once: true });
  const deadline = setTimeout(() => run.settle({ status: "interrupted", reason: "deadline" }), turn.deadlineMs);
  void l.conn
    .whenFatal()
    .then((f) =>
      run.settle(f.rule === "process_exited" ? { status: "failed", reason: `codex_process_failed:${f.detail}` } : { status: "refused", reason: f.rule }),
    );
  setRunning({
    interrupt: async () => {
      run.settle({ status: "interrupted", reason: "session_closed" });
      await run.interrupt();
    },
  });
  try {
    try {
      // From here on the turn counts as dispatched: even a lost reply may have spent.
      const r = await l.conn.request<Json>("turn/start", params, b.rpcMs);
      const t = (r.turn ?? {}) as Json;
      if (run.monitor.turnId === null && typeof t.id === "string") run.monitor.turnId = t.id;
    } catch (e) {
      run.settle({ status: "failed", reason: `codex_protocol_error:turn/start:${e instanceof RpcError ? e.message.slice(0, 200) : String(e)}` });
    }
    const out = await run.outcome;
    if (out.status !== "completed") await run.interrupt();
    const usage = run.monitor.usage();
    const turnId = run.monitor.turnId;
    if (out.status !== "completed") return { status: out.status, reason: out.reason, usage, turnId };
    const text = run.monitor.finalText;
    if (text === null) return { status: "failed", reason: "no_final_answer", usage, turnId };
    return { status: "completed", finalText: text, usage, turnId: turnId ?? "" };
  } finally {
    clearTimeout(deadline);
    turn.signal.removeEventListener("abort", onAbort);
    setRunning(null);
  }
}

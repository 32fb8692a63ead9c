/**
 * The pure rules of one turn: which app-server notifications and server requests a restricted
 * turn may see, how its usage and final answer are folded, and which launcher rule ends it.
 * No I/O: the session feeds it messages and acts on its decisions.
 */
import type { ServerRequest } from "./rpc.ts";
import type { CodexTurnUsage } from "./types.ts";

type Json = Record<string, unknown>;

/** Thread item types a restricted turn may produce; anything else is a raw tool or host feature. */
export const ALLOWED_ITEM_TYPES = new Set(["userMessage", "agentMessage", "reasoning", "dynamicToolCall", "contextCompaction"]);
/** Raw Responses items a restricted turn may carry (a `function_call` only to a declared tool). */
export const ALLOWED_RAW_ITEM_TYPES = new Set(["message", "reasoning", "function_call", "function_call_output", "compaction"]);

/** What the session should do after a message. */
export type TurnDecision =
  | { kind: "continue" }
  | { kind: "refuse"; rule: string }
  | { kind: "tool"; call: { tool: string; callId: string; arguments: unknown }; requestId: number | string }
  | { kind: "reject-request"; requestId: number | string; code: number; message: string; rule: string }
  | { kind: "ended"; status: "completed" | "interrupted" | "failed"; errorMessage: string | null };

/** Monitors one turn of one thread. */
export class TurnMonitor {
  turnId: string | null = null;
  private assistantBytes = 0;
  private readonly usageParts: Array<CodexTurnUsage> = [];
  private responsesWithoutUsage = 0;
  private lastAgentText: string | null = null;
  private readonly callIds = new Set<string>();
  private lastError: string | null = null;

  constructor(
    private readonly threadId: string,
    private readonly tools: ReadonlySet<string>,
    private readonly assistantTextBytes: number,
  ) {}

  /** The final assistant message of the turn (the structured answer), if any. */
  get finalText(): string | null {
    return this.lastAgentText;
  }

  /** Usage reported so far; a field is null unless every finished model response reported it. */
  usage(): CodexTurnUsage {
    const sum = (f: (u: CodexTurnUsage) => number | null): number | null => {
      if (this.usageParts.length === 0 || this.responsesWithoutUsage > 0) return null;
      let t = 0;
      for (const u of this.usageParts) {
        const v = f(u);
        if (v === null) return null;
        t += v;
      }
      return t;
    };
    return { inputTokens: sum((u) => u.inputTokens), cachedInputTokens: sum((u) => u.cachedInputTokens), outputTokens: sum((u) => u.outputTokens) };
  }

  private mine(p: Json): boolean {
    if (p.threadId !== undefined && p.threadId !== this.threadId) return false;
    if (this.turnId !== null && p.turnId !== undefined && p.turnId !== this.turnId) return false;
    return true;
  }

  /** Folds one notification. */
  onNotification(method: string, p: Json): TurnDecision {
    if (!this.mine(p)) return { kind: "continue" };
    switch (method) {
      case "turn/started": {
        const t = p.turn as Json | undefined;
        if (this.turnId === null && typeof t?.id === "string") this.turnId = t.id;
        return { kind: "continue" };
      }
      case "item/started":
      case "item/completed":
        return this.onItem(method, (p.item ?? {}) as Json);
      case "rawResponseItem/completed":
        return this.onRawItem((p.item ?? {}) as Json);
      case "rawResponse/completed": {
        const u = p.usage as Json | null | undefined;
        if (!u || typeof u !== "object") this.responsesWithoutUsage++;
        else this.usageParts.push({ inputTokens: num(u.inputTokens), cachedInputTokens: num(u.cachedInputTokens), outputTokens: num(u.outputTokens) });
        return { kind: "continue" };
      }
      case "item/agentMessage/delta": {
        this.assistantBytes += Buffer.byteLength(typeof p.delta === "string" ? p.delta : "", "utf8");
        if (this.assistantBytes > this.assistantTextBytes) return { kind: "refuse", rule: "assistant_text_too_large" };
        return { kind: "continue" };
      }
      case "error": {
        const e = (p.error ?? {}) as Json;
        if (typeof e.message === "string") this.lastError = e.message.slice(0, 500);
        return { kind: "continue" };
      }
      case "turn/completed": {
        const t = (p.turn ?? {}) as Json;
        if (this.turnId !== null && t.id !== this.turnId) return { kind: "continue" };
        const status = t.status === "completed" || t.status === "interrupted" ? t.status : "failed";
        const err =
          t.error && typeof t.error === "object" && typeof (t.error as Json).message === "string"
            ? ((t.error as Json).message as string).slice(0, 500)
            : this.lastError;
        return { kind: "ended", status, errorMessage: err };
      }
      default:
        return { kind: "continue" };
    }
  }

  private onItem(method: string, item: Json): TurnDecision {
    const type = typeof item.type === "string" ? item.type : "unknown";
    if (!ALLOWED_ITEM_TYPES.has(type)) return { kind: "refuse", rule: `raw_tool_call:${type}` };
    if (type === "dynamicToolCall" && ((item.namespace !== null && item.namespace !== undefined) || !this.tools.has(String(item.tool))))
      return { kind: "refuse", rule: `undeclared_tool:${String(item.tool).slice(0, 80)}` };
    if (type === "agentMessage") {
      if (Array.isArray(item.questions) && item.questions.length > 0) return { kind: "refuse", rule: "async_question" };
      if (method === "item/completed" && typeof item.text === "string") this.lastAgentText = item.text;
    }
    return { kind: "continue" };
  }

  private onRawItem(item: Json): TurnDecision {
    const type = typeof item.type === "string" ? item.type : "unknown";
    if (!ALLOWED_RAW_ITEM_TYPES.has(type)) return { kind: "refuse", rule: `raw_tool_call:${type}` };
    if (type === "function_call") {
      const name = String(item.name);
      if (!this.tools.has(name) || (item.namespace !== undefined && item.namespace !== null))
        return { kind: "refuse", rule: `raw_tool_call:${name.slice(0, 80)}` };
    }
    return { kind: "continue" };
  }

  /** Decides one server→host request: only a declared dynamic tool call of this turn is served. */
  onServerRequest(req: ServerRequest): TurnDecision {
    const p = (req.params ?? {}) as Json;
    if (req.method === "item/tool/call") {
      const tool = String(p.tool);
      const callId = typeof p.callId === "string" ? p.callId : "";
      if (p.threadId !== this.threadId || (this.turnId !== null && p.turnId !== this.turnId))
        return { kind: "reject-request", requestId: req.id, code: -32600, message: "Tool call for another thread or turn", rule: "foreign_tool_call" };
      if (!this.tools.has(tool) || (p.namespace !== null && p.namespace !== undefined))
        return { kind: "reject-request", requestId: req.id, code: -32601, message: "Tool is not declared", rule: `undeclared_tool:${tool.slice(0, 80)}` };
      if (!callId || this.callIds.has(callId))
        return { kind: "reject-request", requestId: req.id, code: -32600, message: "Duplicate or missing call id", rule: "duplicate_tool_call" };
      this.callIds.add(callId);
      return { kind: "tool", requestId: req.id, call: { tool, callId, arguments: p.arguments } };
    }
    const rule =
      req.method === "item/tool/requestUserInput" || req.method === "mcpServer/elicitation/request"
        ? "async_question"
        : `host_request:${req.method.slice(0, 80)}`;
    return { kind: "reject-request", requestId: req.id, code: -32601, message: "Host request is disabled", rule };
  }
}

function num(v: unknown): number | null {
  return typeof v === "number" && Number.isFinite(v) && v >= 0 ? v : null;
}

/** A data URL an image may be sent as: PNG, JPEG or WebP, base64 that round-trips exactly. */
export function checkImageDataUrl(url: string): { ok: true; bytes: number } | { ok: false; why: string } {
  const m = /^data:image\/(png|jpeg|webp);base64,([A-Za-z0-9+/]*={0,2})$/.exec(url);
  if (!m?.[2]) return { ok: false, why: "not a data:image/(png|jpeg|webp);base64 URL" };
  const bytes = Buffer.from(m[2], "base64");
  if (bytes.toString("base64") !== m[2]) return { ok: false, why: "base64 does not round-trip" };
  return { ok: true, bytes: bytes.length };
}

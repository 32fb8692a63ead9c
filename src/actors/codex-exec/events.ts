/**
 * The `codex exec --json` event stream (JSONL on stdout) folded into an actor trace.
 *
 * Event facts (public Codex CLI exec JSONL format): `thread.started {thread_id}`,
 * `turn.started`, `item.started|item.updated|item.completed {item}`,
 * `turn.completed {usage: {input_tokens, cached_input_tokens, output_tokens, reasoning_output_tokens?}}`,
 * `turn.failed {error: {message}}`, `error {message}`. Item types: `agent_message`, `reasoning`,
 * `command_execution`, `file_change`, `mcp_tool_call`, `web_search`, `todo_list`, `plan`, `error`.
 *
 * Semantics we hold: success is a `turn.completed` event, whose usage sums
 * every model request of the turn; `codex exec` exits 1 on `turn.failed`; an `error` event is
 * not by itself final. Unknown event or item types become `notice` items — never a crash.
 */

import type { ActorItem, TokenUsage, TurnUsage } from "../../actor-registry/types.ts";
import { tail } from "../../text/tail.ts";

/** Longest stdout line we buffer while waiting for its newline (bytes); longer lines are dropped as a notice. */
export const MAX_EVENT_LINE_BYTES = 4 * 1024 * 1024;
/** Longest text kept per message/reasoning/plan item (chars, the tail after redaction). */
export const MAX_ITEM_TEXT_CHARS = 8000;
/** Most items kept in the trace; later ones are counted but dropped. */
export const MAX_TRACE_ITEMS = 1000;

/** How the stream ended, as far as the events tell. */
export type CodexStreamEnd =
  /** The last turn ended with `turn.completed`. */
  | "turn_completed"
  /** A turn ended with `turn.failed`. */
  | "turn_failed"
  /** No final turn event was seen (killed, crashed, or stream cut). */
  | "no_final_event";

/** The folded state of a Codex event stream. */
export interface CodexTraceState {
  threadId?: string;
  turnsStarted: number;
  turnsCompleted: number;
  /** Per `turn.completed`, in order. */
  turns: TurnUsage[];
  /** `turn.failed` error message, if any. */
  turnFailedMessage?: string;
  /** Messages of non-final `error` events (and error items), in order. */
  errors: string[];
  /** Items by id in first-seen order, each in its latest state. */
  items: Map<string, ActorItem>;
  /** Text of every completed `agent_message`, in order. */
  agentMessages: string[];
  commands: number;
  /** Lines that were not JSON objects with a string `type`. */
  malformedLines: number;
  /** Lines dropped for exceeding {@link MAX_EVENT_LINE_BYTES}. */
  oversizedLines: number;
  /** Items not kept because the trace already held {@link MAX_TRACE_ITEMS}. */
  droppedItems: number;
  end: CodexStreamEnd;
}

type Json = Record<string, unknown>;

function str(v: unknown): string | undefined {
  return typeof v === "string" ? v : undefined;
}
function num(v: unknown): number | undefined {
  return typeof v === "number" && Number.isFinite(v) && v >= 0 ? v : undefined;
}

/** Creates an empty fold state. */
export function emptyCodexTrace(): CodexTraceState {
  return {
    turnsStarted: 0,
    turnsCompleted: 0,
    turns: [],
    errors: [],
    items: new Map(),
    agentMessages: [],
    commands: 0,
    malformedLines: 0,
    oversizedLines: 0,
    droppedItems: 0,
    end: "no_final_event",
  };
}

/** Maps one Codex item (any lifecycle) to a trace item; `redact` is applied to every text. */
export function codexItemToActorItem(item: Json, lifecycle: "started" | "completed", redact: (s: string) => string, fallbackId: string): ActorItem {
  const id = str(item.id) ?? fallbackId;
  const type = str(item.type) ?? "unknown";
  const status = str(item.status);
  const base = { id, lifecycle, at: new Date().toISOString(), ...(status ? { status } : {}) };
  const text = (v: unknown): string => tail(redact(str(v) ?? ""), MAX_ITEM_TEXT_CHARS).replace(/^\(no output\)$/, "");
  switch (type) {
    case "agent_message":
      return { ...base, kind: "message", title: "agent message", text: text(item.text) };
    case "reasoning":
      return { ...base, kind: "reasoning", title: "reasoning", text: text(item.text) };
    case "command_execution": {
      const text = redact(str(item.command) ?? "");
      const exitCode = typeof item.exit_code === "number" ? item.exit_code : undefined;
      const output = str(item.aggregated_output);
      return {
        ...base,
        kind: "command",
        title: `command: ${text}`,
        command: {
          text,
          ...(exitCode !== undefined ? { exitCode } : {}),
          ...(output !== undefined ? { outputTail: tail(redact(output)) } : {}),
        },
      };
    }
    case "file_change": {
      const changes = Array.isArray(item.changes) ? item.changes : [];
      const parts = changes
        .map((c) => (c && typeof c === "object" ? `${str((c as Json).kind) ?? "change"} ${str((c as Json).path) ?? "?"}` : ""))
        .filter(Boolean);
      return { ...base, kind: "file_change", title: redact(`file change: ${parts.join(", ") || "(none)"}`) };
    }
    case "mcp_tool_call": {
      const tool = `${str(item.server) ?? "?"}.${str(item.tool) ?? "?"}`;
      return { ...base, kind: "tool_call", tool: redact(tool), title: redact(`tool call: ${tool}`) };
    }
    case "web_search":
      return { ...base, kind: "tool_call", tool: "web_search", title: redact(`web search: ${str(item.query) ?? ""}`) };
    case "todo_list": {
      const entries = Array.isArray(item.items) ? item.items : [];
      const lines = entries
        .map((e) => (e && typeof e === "object" ? `${(e as Json).completed === true ? "[x]" : "[ ]"} ${str((e as Json).text) ?? ""}` : ""))
        .join("\n");
      return { ...base, kind: "plan", title: "to-do list", text: tail(redact(lines), MAX_ITEM_TEXT_CHARS) };
    }
    case "plan":
      return { ...base, kind: "plan", title: "plan", text: text(item.text) };
    case "error":
      return { ...base, kind: "notice", status: "error", title: "runtime error item", text: text(item.message) };
    default:
      return { ...base, kind: "notice", title: `unrecognised item type ${redact(type).slice(0, 80)}` };
  }
}

/** Applies one parsed event to the state. Returns a short progress description, if any. */
export function applyCodexEvent(state: CodexTraceState, ev: Json, redact: (s: string) => string): string | undefined {
  const type = str(ev.type);
  switch (type) {
    case "thread.started":
      state.threadId = str(ev.thread_id);
      return "thread started";
    case "turn.started":
      state.turnsStarted++;
      return `turn ${state.turnsStarted} started`;
    case "turn.completed": {
      const u = (ev.usage && typeof ev.usage === "object" ? ev.usage : {}) as Json;
      const turn: TurnUsage = {
        input: num(u.input_tokens) ?? 0,
        cachedInput: num(u.cached_input_tokens) ?? 0,
        output: num(u.output_tokens) ?? 0,
      };
      const reasoning = num(u.reasoning_output_tokens);
      if (reasoning !== undefined) turn.reasoningOutput = reasoning;
      state.turns.push(turn);
      state.turnsCompleted++;
      state.end = "turn_completed";
      return `turn ${state.turnsCompleted} completed`;
    }
    case "turn.failed": {
      const err = (ev.error && typeof ev.error === "object" ? ev.error : {}) as Json;
      state.turnFailedMessage = redact(str(err.message) ?? "turn failed without a message");
      state.end = "turn_failed";
      return "turn failed";
    }
    case "error":
      // Not final by itself: codex may retry and still complete the turn.
      state.errors.push(redact(str(ev.message) ?? "error event without a message"));
      return "runtime reported an error";
    case "item.started":
    case "item.updated":
    case "item.completed": {
      const item = ev.item;
      if (!item || typeof item !== "object") {
        state.malformedLines++;
        return undefined;
      }
      const it = item as Json;
      const id = str(it.id) ?? `item-${state.items.size + 1}`;
      const completed = type === "item.completed";
      const mapped = codexItemToActorItem(it, completed ? "completed" : "started", redact, id);
      const seen = state.items.has(id);
      if (seen || state.items.size < MAX_TRACE_ITEMS) state.items.set(id, mapped);
      else if (completed) state.droppedItems++;
      if (completed) {
        if (it.type === "agent_message") state.agentMessages.push(str(it.text) ?? "");
        if (it.type === "command_execution") state.commands++;
        if (it.type === "error") state.errors.push(redact(str(it.message) ?? ""));
      }
      if (!seen || completed) return mapped.title.slice(0, 160);
      return undefined;
    }
    default:
      state.malformedLines++;
      return undefined;
  }
}

/** Token usage summed over turns (trace `tokenUsage`), or undefined when no turn completed. */
export function codexTokenUsage(state: CodexTraceState): TokenUsage | undefined {
  if (state.turns.length === 0) return undefined;
  const sum = (f: (t: TurnUsage) => number): number => state.turns.reduce((a, t) => a + f(t), 0);
  const input = sum((t) => t.input);
  const output = sum((t) => t.output);
  return { input, output, cachedInput: sum((t) => t.cachedInput), total: input + output, turns: state.turns };
}

/**
 * Splits a byte stream into JSONL lines and folds each into a {@link CodexTraceState}.
 * Chunks may split lines (and UTF-8 sequences) anywhere.
 */
export class CodexEventStream {
  readonly state: CodexTraceState = emptyCodexTrace();
  private pending: Uint8Array[] = [];
  private pendingBytes = 0;
  private dropping = false;

  constructor(
    private readonly redact: (s: string) => string,
    private readonly onProgress?: (detail: string) => void,
  ) {}

  /** Feeds one stdout chunk. */
  push(chunk: Uint8Array): void {
    let start = 0;
    for (let i = 0; i < chunk.length; i++) {
      if (chunk[i] !== 0x0a) continue;
      this.take(chunk.subarray(start, i));
      this.flushLine();
      start = i + 1;
    }
    if (start < chunk.length) this.take(chunk.subarray(start));
  }

  /** Ends the stream: a final line without a newline is still parsed. Returns the state. */
  end(): CodexTraceState {
    if (this.pendingBytes > 0 || this.dropping) this.flushLine();
    return this.state;
  }

  private take(part: Uint8Array): void {
    if (this.dropping || part.length === 0) return;
    if (this.pendingBytes + part.length > MAX_EVENT_LINE_BYTES) {
      this.dropping = true;
      this.pending = [];
      this.pendingBytes = 0;
      return;
    }
    this.pending.push(part.slice());
    this.pendingBytes += part.length;
  }

  private flushLine(): void {
    if (this.dropping) {
      this.state.oversizedLines++;
      this.dropping = false;
      return;
    }
    const bytes = new Uint8Array(this.pendingBytes);
    let o = 0;
    for (const p of this.pending) {
      bytes.set(p, o);
      o += p.length;
    }
    this.pending = [];
    this.pendingBytes = 0;
    const line = new TextDecoder().decode(bytes).trim();
    if (line.length === 0) return;
    let ev: unknown;
    try {
      ev = JSON.parse(line);
    } catch {
      this.state.malformedLines++;
      return;
    }
    if (!ev || typeof ev !== "object" || Array.isArray(ev) || typeof (ev as Json).type !== "string") {
      this.state.malformedLines++;
      return;
    }
    const detail = applyCodexEvent(this.state, ev as Json, this.redact);
    if (detail && this.onProgress) this.onProgress(detail);
  }
}

/** The verdict marker a model participant is asked to print as its final line. */
export interface VerdictMarker {
  verdict: "passed" | "blocked" | "failed";
}

/**
 * Finds `HUMANISH_ACTOR_VERDICT=<passed|blocked|failed> HUMANISH_ACTOR_NONCE=<nonce>` in the
 * agent's messages (last match wins) and returns it only when the nonce matches this run's.
 */
export function findVerdictMarker(messages: readonly string[], nonce: string): VerdictMarker | undefined {
  const re = /HUMANISH_ACTOR_VERDICT=(passed|blocked|failed)\s+HUMANISH_ACTOR_NONCE=([A-Za-z0-9-]+)/g;
  let found: VerdictMarker | undefined;
  for (const m of messages) {
    for (const match of m.matchAll(re)) {
      if (match[2] === nonce) found = { verdict: match[1] as VerdictMarker["verdict"] };
    }
  }
  return found;
}

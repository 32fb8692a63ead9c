/**
 * The Responses function-calling wire of a vision participant: the replayed conversation (the
 * brief and a screenshot as `input_image`, every output item the model returned, one
 * `function_call_output` per call, the next screenshot), the request body, and reading a
 * response's function calls. Pure (no I/O); any Responses-compatible endpoint speaks it.
 *
 * Every request replays the whole conversation (`store: false`), so no server-side state is
 * assumed. Before a request leaves, every `function_call` must have exactly one
 * `function_call_output` and no output may name an unknown call ({@link checkFunctionPairs}):
 * an endpoint answers 400 otherwise, so a mismatch is our bug and is never sent.
 */
import { HumanishError } from "../errors.ts";
import { parseUsage, type RequestUsage } from "./usage.ts";

type Json = Record<string, unknown>;

/** A function tool as the Responses API declares it. */
export interface FunctionTool {
  name: string;
  description: string;
  /** JSON Schema of the arguments. */
  parameters: Json;
}

/** One `function_call` of a response: its id, the tool name and the raw JSON arguments text. */
export interface FunctionCall {
  callId: string;
  name: string;
  arguments: string;
}

/** What one response said. */
export interface FunctionResponse {
  id: string | null;
  status: string;
  incompleteReason: string | null;
  model: string | null;
  calls: FunctionCall[];
  reasoning: string[];
  messages: string[];
  usage: RequestUsage | null;
  /** Output items as returned (replayed verbatim). */
  output: Json[];
  /** Problems reading the response (a call without call_id or name); non-empty = malformed. */
  problems: string[];
}

function texts(v: unknown, field: string): string[] {
  if (!Array.isArray(v)) return [];
  return v.flatMap((p) => (p && typeof p === "object" && typeof (p as Json)[field] === "string" ? [(p as Json)[field] as string] : []));
}

/** Reads a Responses object (already JSON). Never throws. */
export function parseFunctionResponse(resp: unknown): FunctionResponse {
  const r = (resp && typeof resp === "object" ? resp : {}) as Json;
  const output = Array.isArray(r.output) ? (r.output.filter((o) => o && typeof o === "object") as Json[]) : [];
  const incomplete = r.incomplete_details && typeof r.incomplete_details === "object" ? (r.incomplete_details as Json).reason : undefined;
  const out: FunctionResponse = {
    id: typeof r.id === "string" ? r.id : null,
    status: typeof r.status === "string" ? r.status : "unknown",
    incompleteReason: typeof incomplete === "string" ? incomplete : null,
    model: typeof r.model === "string" ? r.model : null,
    calls: [],
    reasoning: [],
    messages: [],
    usage: parseUsage(r.usage),
    output,
    problems: [],
  };
  for (const item of output) {
    if (item.type === "reasoning") out.reasoning.push(...[...texts(item.summary, "text"), ...texts(item.content, "text")].filter((s) => s.trim()));
    else if (item.type === "message") {
      const t = texts(item.content, "text").join("\n").trim();
      if (t) out.messages.push(t);
    } else if (item.type === "function_call") {
      if (typeof item.call_id !== "string" || item.call_id.length === 0) out.problems.push("a function_call has no call_id");
      else if (typeof item.name !== "string") out.problems.push(`function_call ${item.call_id} has no name`);
      else out.calls.push({ callId: item.call_id, name: item.name, arguments: typeof item.arguments === "string" ? item.arguments : "" });
    }
  }
  return out;
}

/** A PNG as the data URL an `input_image` carries. */
export function pngDataUrl(png: Uint8Array): string {
  return `data:image/png;base64,${Buffer.from(png.buffer, png.byteOffset, png.byteLength).toString("base64")}`;
}

/** Fixed fields of every request of one seat. */
export interface FunctionSettings {
  model: string;
  instructions: string;
  tools: readonly FunctionTool[];
  reasoningEffort?: string;
  /** Per-response output ceiling, tokens (bounds the admission estimate). */
  maxOutputTokens: number;
}

/** The conversation of one seat; {@link FunctionConversation.body} builds the next request. */
export class FunctionConversation {
  private readonly items: Json[] = [];

  constructor(private readonly settings: FunctionSettings) {}

  /** A user turn: `text`, and the screenshot when given. */
  addUser(text: string, png?: Uint8Array): void {
    this.items.push({
      role: "user",
      content: [{ type: "input_text", text }, ...(png ? [{ type: "input_image", image_url: pngDataUrl(png), detail: "high" }] : [])],
    });
  }

  /** The model's output items of a response, replayed on every later request. */
  addResponse(parsed: FunctionResponse): void {
    for (const o of parsed.output) this.items.push(o);
  }

  /** The answer to one call (a JSON text: acknowledgements, or the refusal and its reason). */
  addCallOutput(callId: string, output: string): void {
    this.items.push({ type: "function_call_output", call_id: callId, output });
  }

  /** Every item so far (for the pairing check and tests). */
  all(): readonly Json[] {
    return this.items;
  }

  /**
   * The next request body. `extra` adds fields.
   * @throws HumanishError `HUMANISH_VISION_CALL_OUTPUT_MISMATCH` when a call lacks its output.
   */
  body(extra: Json = {}): Json {
    checkFunctionPairs(this.items);
    const s = this.settings;
    return {
      model: s.model,
      instructions: s.instructions,
      input: [...this.items],
      tools: s.tools.map((t) => ({ type: "function", name: t.name, description: t.description, parameters: t.parameters, strict: false })),
      tool_choice: "auto",
      parallel_tool_calls: false,
      store: false,
      max_output_tokens: s.maxOutputTokens,
      ...(s.reasoningEffort ? { reasoning: { effort: s.reasoningEffort } } : {}),
      ...extra,
    };
  }
}

/**
 * Checks that every `function_call` has exactly one `function_call_output` after it and that
 * every output names a call.
 * @throws HumanishError `HUMANISH_VISION_CALL_OUTPUT_MISMATCH` naming the call id.
 */
export function checkFunctionPairs(items: readonly Json[]): void {
  const open = new Map<string, number>();
  for (const it of items) {
    if (it.type === "function_call" && typeof it.call_id === "string") open.set(it.call_id, 0);
    else if (it.type === "function_call_output") {
      const id = typeof it.call_id === "string" ? it.call_id : "";
      const n = open.get(id);
      if (n === undefined || n > 0) throw mismatch(`function_call_output ${id} ${n === undefined ? "names no earlier function_call" : "repeats an output"}`);
      open.set(id, 1);
    }
  }
  for (const [id, n] of open) if (n === 0) throw mismatch(`function_call ${id} has no function_call_output`);
}

function mismatch(message: string): HumanishError {
  return new HumanishError("HUMANISH_VISION_CALL_OUTPUT_MISMATCH", `${message}; the request was not sent.`, {
    next: "this is a humanish bug in the vision participant's loop; report it with the run's actor trace",
  });
}

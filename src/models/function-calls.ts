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
import { checkOutputPairs, pngDataUrl, type ResponseOutput, readResponseOutput } from "./response-output.ts";

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

/** What one response said: the shared fields, with the function calls. */
export type FunctionResponse = ResponseOutput<FunctionCall>;

/** Reads a Responses object (already JSON): a call without call_id or name is a problem. Never throws. */
export function parseFunctionResponse(resp: unknown): FunctionResponse {
  return readResponseOutput<FunctionCall>(resp, (item, out) => {
    if (item.type !== "function_call") return;
    if (typeof item.call_id !== "string" || item.call_id.length === 0) out.problems.push("a function_call has no call_id");
    else if (typeof item.name !== "string") out.problems.push(`function_call ${item.call_id} has no name`);
    else out.calls.push({ callId: item.call_id, name: item.name, arguments: typeof item.arguments === "string" ? item.arguments : "" });
  });
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
  checkOutputPairs(items, "function_call", "function_call_output", mismatch);
}

function mismatch(message: string): HumanishError {
  return new HumanishError("HUMANISH_VISION_CALL_OUTPUT_MISMATCH", `${message}; the request was not sent.`, {
    next: "this is a humanish bug in the vision participant's loop; report it with the run's actor trace",
  });
}

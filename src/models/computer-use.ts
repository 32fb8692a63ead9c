/**
 * The Responses computer-use wire: request bodies, the replayed conversation, and reading a
 * response. Pure (no I/O). It lives in models/, the one place that speaks Responses; the
 * computer-use actor drives it.
 *
 * - Tool by model: `computer-use-preview` (and its dated snapshots) gets the preview tool
 *   `computer_use_preview` with its display size and `truncation: "auto"`; every other model the
 *   GA `computer` tool (no display fields, batched `actions[]`).
 * - Context: with `store: false` (the default) every request replays the whole conversation
 *   (the first user turn, every output item the model returned, every call output and hint) and
 *   asks for `reasoning.encrypted_content` so reasoning survives the replay;
 *   `previous_response_id` is used only with `store: true`, sending just the new items.
 * - Instructions ride every request.
 * - Before a request leaves, every `computer_call` of the conversation must have exactly one
 *   `computer_call_output` with its `call_id` and no output may name an unknown call
 *   ({@link checkCallPairs}); the service answers 400 otherwise, so a mismatch is our bug and is
 *   never sent.
 */
import { HumanishError } from "../errors.ts";
import { checkOutputPairs, pngDataUrl, type ResponseOutput, readResponseOutput } from "./response-output.ts";

type Json = Record<string, unknown>;

/** Which computer tool a model speaks. */
export type ComputerTool = "computer" | "computer_use_preview";

/** The tool of `model`: the preview tool only for `computer-use-preview`. */
export function toolFor(model: string): ComputerTool {
  return /^computer-use-preview(-\d{4}-\d{2}-\d{2})?$/.test(model) ? "computer_use_preview" : "computer";
}

/** Fixed fields of every request of one seat. */
export interface RequestSettings {
  model: string;
  instructions: string;
  reasoningEffort?: string;
  /** Per-response output ceiling (tokens). */
  maxOutputTokens?: number;
  /** `false` (default): full replay; `true`: `previous_response_id` chaining. */
  store: boolean;
  /** The screen in px (the preview tool needs it). */
  display: { width: number; height: number };
}

/** A safety check the service asked the operator to acknowledge. */
export interface SafetyCheck {
  id: string;
  code: string;
  message: string;
}

/** One `computer_call` of a response. */
export interface ComputerCall {
  callId: string;
  /** Raw actions (`actions[]`, or the singular `action` as a one-element list). */
  actions: unknown[];
  safetyChecks: SafetyCheck[];
}

/** What one response said: the shared fields, with the computer calls. */
export type ParsedResponse = ResponseOutput<ComputerCall>;

/** Reads a Responses object (already JSON): a computer call without call_id is a problem. Never throws. */
export function parseResponse(resp: unknown): ParsedResponse {
  return readResponseOutput<ComputerCall>(resp, (item, out) => {
    if (item.type !== "computer_call") return;
    if (typeof item.call_id !== "string" || item.call_id.length === 0) {
      out.problems.push("a computer_call has no call_id");
      return;
    }
    const actions = Array.isArray(item.actions) ? item.actions : item.action !== undefined ? [item.action] : [];
    const checks: SafetyCheck[] = [];
    for (const c of Array.isArray(item.pending_safety_checks) ? item.pending_safety_checks : []) {
      const o = (c && typeof c === "object" ? c : {}) as Json;
      checks.push({ id: String(o.id ?? ""), code: String(o.code ?? ""), message: String(o.message ?? "") });
    }
    out.calls.push({ callId: item.call_id, actions, safetyChecks: checks });
  });
}

/** A call output to send: the screenshot after the call's actions, plus acknowledged checks. */
export interface CallOutput {
  callId: string;
  /** PNG bytes of the fresh frame. */
  png: Uint8Array;
  acknowledged?: SafetyCheck[];
}

/**
 * The conversation of one seat. Items are appended as the loop goes; {@link Conversation.body}
 * builds the next request (full replay, or only the new items after the previous response).
 */
export class Conversation {
  private readonly items: Json[] = [];
  /** Index of the first item not yet sent (for `store: true`). */
  private sentUpTo = 0;
  private previousResponseId: string | null = null;

  constructor(private readonly settings: RequestSettings) {}

  /** The opening user turn: the brief as text and the first frame (whose size the preview tool declares). */
  start(png: Uint8Array, display: { width: number; height: number }): void {
    this.settings.display = display;
    this.items.push({
      role: "user",
      content: [
        { type: "input_text", text: this.settings.instructions },
        { type: "input_image", image_url: pngDataUrl(png) },
      ],
    });
  }

  /** The model's output items of a response (replayed under `store: false`). */
  addResponse(parsed: ParsedResponse): void {
    for (const o of parsed.output) this.items.push(o);
    if (this.settings.store && parsed.id) {
      this.previousResponseId = parsed.id;
      this.sentUpTo = this.items.length;
    }
  }

  /** One `computer_call_output` per call. */
  addCallOutput(o: CallOutput): void {
    this.items.push({
      type: "computer_call_output",
      call_id: o.callId,
      output: { type: "computer_screenshot", image_url: pngDataUrl(o.png) },
      ...(o.acknowledged?.length ? { acknowledged_safety_checks: o.acknowledged.map((c) => ({ id: c.id, code: c.code, message: c.message })) } : {}),
    });
  }

  /** A user hint (a rejected action, a backstop nudge). */
  addHint(text: string): void {
    this.items.push({ role: "user", content: [{ type: "input_text", text }] });
  }

  /** Every item so far (for the pairing check and tests). */
  all(): readonly Json[] {
    return this.items;
  }

  /**
   * The next request body. `extra` adds fields (the closing account's `tool_choice`/`text`).
   * @throws HumanishError `HUMANISH_CUA_CALL_OUTPUT_MISMATCH` when a call lacks its output.
   */
  body(extra: Json = {}): Json {
    checkCallPairs(this.items);
    const s = this.settings;
    const tool = toolFor(s.model);
    const chained = s.store && this.previousResponseId !== null;
    const body: Json = {
      model: s.model,
      instructions: s.instructions,
      input: chained ? this.items.slice(this.sentUpTo) : [...this.items],
      tools:
        tool === "computer"
          ? [{ type: "computer" }]
          : [{ type: "computer_use_preview", display_width: s.display.width, display_height: s.display.height, environment: "browser" }],
      store: s.store,
      reasoning: { ...(s.reasoningEffort ? { effort: s.reasoningEffort } : {}), summary: tool === "computer" ? "auto" : "concise" },
      ...(tool === "computer_use_preview" ? { truncation: "auto" } : {}),
      ...(s.store ? {} : { include: ["reasoning.encrypted_content"] }),
      ...(chained ? { previous_response_id: this.previousResponseId } : {}),
      ...(s.maxOutputTokens ? { max_output_tokens: s.maxOutputTokens } : {}),
      ...extra,
    };
    return body;
  }
}

/**
 * Checks that every `computer_call` has exactly one `computer_call_output` after it and that
 * every output names a call.
 * @throws HumanishError `HUMANISH_CUA_CALL_OUTPUT_MISMATCH` naming the call id.
 */
export function checkCallPairs(items: readonly Json[]): void {
  checkOutputPairs(items, "computer_call", "computer_call_output", mismatch);
}

function mismatch(message: string): HumanishError {
  return new HumanishError("HUMANISH_CUA_CALL_OUTPUT_MISMATCH", `${message}; the request was not sent.`, {
    next: "this is a humanish bug in the computer-use loop; report it with the run's actor trace",
  });
}

/**
 * The extra fields of a request that must answer in text, no tool call: `tool_choice: "none"`,
 * an output ceiling (tokens), and a strict JSON-schema format the answer is held to.
 */
export function textOnlyRequest(o: { maxOutputTokens: number; format: { name: string; schema: object } }): Json {
  return {
    tool_choice: "none",
    max_output_tokens: o.maxOutputTokens,
    text: { format: { type: "json_schema", name: o.format.name, strict: true, schema: o.format.schema } },
  };
}

/**
 * The vision-agent loop: any vision model on a Responses-compatible endpoint drives the browser
 * desktop through ordinary function calling, with the local agent's one tool `humanish_ui`
 * (`{narration, actions: [{kind, …}]}`) — the same definition, the same judging before dispatch,
 * the same batch dispatch.
 *
 * One turn: stop if the seat was stopped or its clock ran out → send the request (admitted
 * against the USD and token budgets first, by the computer-use loop's request path) → record
 * usage, reasoning and messages → refuse to act on an unreadable or non-`completed` response →
 * no function call: the participant ended (its declared outcome is recorded, never trusted) →
 * else answer every call with a `function_call_output`: a call that cannot be read (not JSON,
 * another tool, an unknown action kind, bad fields) is refused with its reason and nothing of it
 * is dispatched; a readable call is dispatched up to its first rejected action (an off-screen
 * point, a key the desktop lacks), acknowledged action by action with a hint → observe once and
 * send the new screenshot as an `input_image` → `stopWhen`, the friction backstop.
 * {@link MAX_REFUSED_CALLS} refused calls in a row end the seat as a harness failure (a model
 * that cannot use the tool is no finding about the product).
 */
import type { BrowserAction, BrowserObservation } from "../../browser-control/index.ts";
import { type FunctionCall, FunctionConversation, type FunctionResponse, parseFunctionResponse, type SpendBudget } from "../../models/index.ts";
import { recordRefusal, runBatch } from "../codex-account/participant.ts";
import { frameDataUrl, judgeUiCall, MAX_NARRATION_CHARS, MAX_UI_ACTIONS, UI_TOOL, UI_TOOL_NAME } from "../codex-account/participant-tool.ts";
import type { Frame } from "../computer-use/actions.ts";
import { type ComputerUseOutcome, conversationBasics, LoopSeat, type LoopSeatOptions } from "../computer-use/loop-seat.ts";
import { harnessStop as harness, type SeatStop as Stop } from "../computer-use/seat-record.ts";

/** Output ceiling of one response when the lab sets none, tokens (it also bounds the token admission). */
export const DEFAULT_VISION_OUTPUT_TOKENS = 4_096;

/** The tool as a Responses function tool: the local agent's `humanish_ui`, unchanged. */
export const UI_FUNCTION = { name: UI_TOOL.name, description: UI_TOOL.description, parameters: UI_TOOL.inputSchema };

/** Options of {@link runVisionAgent}: the loops' shared options, and the function-calling loop's own. */
export interface VisionAgentOptions extends LoopSeatOptions {
  /** Per-response output ceiling, tokens (default {@link DEFAULT_VISION_OUTPUT_TOKENS}). */
  maxOutputTokens?: number;
  /** Token budgets (the seat's `maxTokens`, the study's `maxTotalTokens`). */
  tokenBudgets?: readonly SpendBudget[];
}

/** What the seat did: the computer-use outcome's shape (so trace and ledger are its), with refused calls counted. */
export type VisionAgentOutcome = ComputerUseOutcome & { counts: ComputerUseOutcome["counts"] & { refusedCalls: number } };

class Seat extends LoopSeat<FunctionResponse> {
  readonly conv: FunctionConversation;
  refused = 0;
  refusedInRow = 0;
  last: { obs: BrowserObservation; frame: Frame } | undefined;
  /** A stop decided while answering calls (the first wins). */
  stop: Stop | undefined;

  constructor(override readonly o: VisionAgentOptions) {
    super(o, "HUMANISH_VISION_ABORTED", "HUMANISH_VISION_LOOP_FAILED");
    this.conv = new FunctionConversation({
      ...conversationBasics(o),
      tools: [UI_FUNCTION],
      maxOutputTokens: o.maxOutputTokens ?? DEFAULT_VISION_OUTPUT_TOKENS,
    });
  }

  protected read(res: { raw: unknown }): FunctionResponse {
    return parseFunctionResponse(res.raw);
  }
  protected override tokenBudgets(): readonly SpendBudget[] {
    return this.o.tokenBudgets ?? [];
  }

  end(stop: Stop): void {
    this.stop ??= stop;
  }

  /** Observes, records the observation, and admits its frame for the model. */
  async observe(): Promise<{ obs: BrowserObservation; frame: Frame } | Stop> {
    const obs = await this.o.executor.observe(this.signal);
    this.recordObservation(obs);
    const admitted = frameDataUrl(obs.png);
    if (typeof admitted === "string") return harness("HUMANISH_VISION_FRAME_REFUSED", `no frame was sent to the model: ${admitted}`);
    this.last = { obs, frame: admitted.frame };
    return this.last;
  }
}

/**
 * Runs one vision-agent seat to a stop. Never throws for model, budget or desktop failures: the
 * outcome says what happened.
 */
export async function runVisionAgent(o: VisionAgentOptions): Promise<VisionAgentOutcome> {
  const s = new Seat(o);
  const stop = await s.runToStop(() => drive(s), "loop");
  return s.outcome(stop, { extraCounts: { refusedCalls: s.refused }, modelSettings: { maxOutputTokens: o.maxOutputTokens ?? DEFAULT_VISION_OUTPUT_TOKENS } });
}

async function drive(s: Seat): Promise<Stop> {
  const start = await s.observe();
  if (!("obs" in start)) return start;
  s.conv.addUser(`This is the screen now (${start.frame.width}×${start.frame.height} pixels). Begin.`, start.obs.png);
  const first = s.begin(start.obs);
  if (first) return first;
  return await s.turns(async (parsed) => (parsed.calls.length === 0 ? await s.ended(parsed) : await act(s, parsed.calls)));
}

/** Answers every call of a response, then observes once and sends the new frame; a stop, or undefined to go on. */
async function act(s: Seat, calls: readonly FunctionCall[]): Promise<Stop | undefined> {
  const all: BrowserAction[] = [];
  const frame = (s.last as { frame: Frame }).frame;
  for (const call of calls) {
    const answer = await answerCall(s, call, frame);
    all.push(...answer.dispatched);
    s.conv.addCallOutput(call.callId, JSON.stringify(answer.output));
    if (s.stop) return s.stop;
  }
  const after = await s.observe();
  if (!("obs" in after)) return after;
  s.keep(`turn-${String(s.turn).padStart(2, "0")}`, after.obs);
  s.conv.addUser(
    `The screen after your ${calls.length > 1 ? `${calls.length} calls` : "call"} (${after.frame.width}×${after.frame.height} pixels).`,
    after.obs.png,
  );
  const end = await s.closeTurn(all, after.obs);
  if (end.nudge) s.conv.addUser(end.nudge);
  return end.stop;
}

/** One call judged, dispatched or refused; the `function_call_output` to send and what was dispatched. */
async function answerCall(s: Seat, call: FunctionCall, frame: Frame): Promise<{ output: Record<string, unknown>; dispatched: BrowserAction[] }> {
  const at = new Date().toISOString();
  s.items.push({ id: s.id("tool_call"), kind: "tool_call", lifecycle: "completed", tool: UI_TOOL_NAME, title: `turn ${s.turn}: ${UI_TOOL_NAME}`, at });
  const judged =
    call.name !== UI_TOOL_NAME
      ? ({ ok: false, reason: `there is no tool ${JSON.stringify(call.name.slice(0, 64))}; the one tool is ${UI_TOOL_NAME}` } as const)
      : judgeArguments(call.arguments, frame);
  if (!judged.ok) return { output: refuse(s, judged.reason), dispatched: [] };
  s.refusedInRow = 0;
  if (judged.narration.trim()) {
    s.messages++;
    s.items.push({ id: s.id("message"), kind: "message", lifecycle: "completed", title: `turn ${s.turn} narration`, at, text: s.scrub(judged.narration) });
  }
  const { acks, dispatched, hint } = await runBatch(s, judged.actions);
  return { output: { acknowledgements: acks, ...(hint ? { hint } : {}) }, dispatched };
}

/** The call's JSON arguments judged against the frame the model saw (text that is not JSON is refused as such). */
function judgeArguments(text: string, frame: Frame): ReturnType<typeof judgeUiCall> {
  let args: unknown;
  try {
    args = JSON.parse(text);
  } catch {
    return { ok: false, reason: "the arguments are not JSON" };
  }
  return judgeUiCall(args, frame);
}

/** A call that could not be read: nothing dispatched, its reason answered; too many in a row end the seat. */
function refuse(s: Seat, reason: string): Record<string, unknown> {
  recordRefusal(s, reason, "HUMANISH_VISION_CALLS_REFUSED");
  return {
    refused: reason,
    hint: `Nothing was dispatched. Call ${UI_TOOL_NAME} with JSON arguments {narration, actions}: a narration of at most ${MAX_NARRATION_CHARS} characters and 1–${MAX_UI_ACTIONS} actions as described in the tool.`,
  };
}

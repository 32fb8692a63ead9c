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
import type { BrowserAction, BrowserControlExecutor, BrowserObservation } from "../../browser-control/index.ts";
import { isBrowserControlError } from "../../browser-control/index.ts";
import { isHumanishError } from "../../errors.ts";
import type { OpenAI } from "../../models/client.ts";
import {
  type FunctionCall,
  FunctionConversation,
  type FunctionResponse,
  type GatewayLedgerLine,
  parseFunctionResponse,
  type SpendBudget,
} from "../../models/index.ts";
import { MAX_REFUSED_CALLS, runBatch } from "../codex-account/participant.ts";
import { frameDataUrl, judgeUiCall, MAX_NARRATION_CHARS, MAX_UI_ACTIONS, UI_TOOL, UI_TOOL_NAME } from "../codex-account/participant-tool.ts";
import type { Frame } from "../computer-use/actions.ts";
import { type BackstopState, DEFAULT_IDLE_STEPS, DEFAULT_NO_PROGRESS_STEPS, foldTurn, progressKey, startBackstop } from "../computer-use/backstop.ts";
import { type ComputerUseOutcome, DEFAULT_TURN_TIMEOUT_MS, type LoopTurnUsage, requestStop, responseStop } from "../computer-use/loop.ts";
import { type DeclaredOutcome, declaredOutcome, type LoopTask, matchStopWhen, type StopWhen } from "../computer-use/outcome.ts";
import { sendRequest } from "../computer-use/provider.ts";
import { harnessStop as harness, SeatRecord, type SeatStop as Stop } from "../computer-use/seat-record.ts";

/** Output ceiling of one response when the lab sets none, tokens (it also bounds the token admission). */
export const DEFAULT_VISION_OUTPUT_TOKENS = 4_096;

/** The tool as a Responses function tool: the local agent's `humanish_ui`, unchanged. */
export const UI_FUNCTION = { name: UI_TOOL.name, description: UI_TOOL.description, parameters: UI_TOOL.inputSchema };

/** Options of {@link runVisionAgent}. */
export interface VisionAgentOptions {
  executor: BrowserControlExecutor;
  /** SDK client from `createModelClient` (endpoint from `OPENAI_BASE_URL`, `maxRetries: 0`). */
  client: OpenAI;
  model: string;
  reasoningEffort?: string;
  /** Per-response output ceiling, tokens (default {@link DEFAULT_VISION_OUTPUT_TOKENS}). */
  maxOutputTokens?: number;
  /** The participant's brief (sent on every request). */
  instructions: string;
  /** App origin: only its observations count for checks and `stopWhen`. */
  origin: string;
  tasks?: readonly LoopTask[];
  stopWhen?: StopWhen;
  /** Wall-clock budget of the seat, ms. */
  timeoutMs: number;
  /** Per-request deadline, ms (default the computer-use loop's). */
  turnTimeoutMs?: number;
  idleSteps?: number;
  noProgressSteps?: number;
  /** USD budgets (the seat's `maxUsd`, the study's `maxTotalUsd`). */
  seatBudget?: SpendBudget;
  studyBudget?: SpendBudget;
  /** Token budgets (the seat's `maxTokens`, the study's `maxTotalTokens`). */
  tokenBudgets?: readonly SpendBudget[];
  scrubText?: (s: string) => string;
  signal?: AbortSignal;
  /** Progress per turn (no model text). */
  onTurn?: (turn: number, note: string) => void;
}

/** What the seat did: the computer-use outcome's shape (so trace and ledger are its), with refused calls counted. */
export type VisionAgentOutcome = ComputerUseOutcome & { counts: ComputerUseOutcome["counts"] & { refusedCalls: number } };

class Seat extends SeatRecord {
  readonly requests: GatewayLedgerLine[] = [];
  readonly turnsUsage: LoopTurnUsage[] = [];
  readonly signal: AbortSignal;
  readonly conv: FunctionConversation;
  turn = 0;
  actions = 0;
  reasonings = 0;
  messages = 0;
  refused = 0;
  refusedInRow = 0;
  backstop: BackstopState | undefined;
  last: { obs: BrowserObservation; frame: Frame } | undefined;
  lastResponseId: string | undefined;
  declared: DeclaredOutcome | undefined;
  /** A stop decided while answering calls (the first wins). */
  stop: Stop | undefined;

  constructor(override readonly o: VisionAgentOptions) {
    super(o, "HUMANISH_VISION_ABORTED");
    this.signal = o.signal ? AbortSignal.any([o.signal, this.clock]) : this.clock;
    this.conv = new FunctionConversation({
      model: o.model,
      instructions: o.instructions,
      tools: [UI_FUNCTION],
      maxOutputTokens: o.maxOutputTokens ?? DEFAULT_VISION_OUTPUT_TOKENS,
      ...(o.reasoningEffort ? { reasoningEffort: o.reasoningEffort } : {}),
    });
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

  stopWhenMatched(): boolean {
    const rec = this.observations.at(-1);
    if (!rec || !this.o.stopWhen) return false;
    const i = matchStopWhen(this.o.stopWhen, rec, this.o.origin);
    if (i < 0) return false;
    this.notice(`stopWhen rule ${this.o.stopWhen.any[i]?.id ?? i + 1} matched`, "matched");
    return true;
  }

  /** Sends the next request; the parsed response, or a stop. */
  async request(): Promise<FunctionResponse | Stop> {
    let body: Record<string, unknown>;
    try {
      body = this.conv.body();
    } catch (e) {
      return harness(isHumanishError(e) ? e.code : "HUMANISH_VISION_LOOP_FAILED", e instanceof Error ? e.message : String(e));
    }
    const res = await sendRequest({
      client: this.o.client,
      body,
      budgets: [this.o.seatBudget, this.o.studyBudget].filter((b): b is SpendBudget => b !== undefined),
      tokenBudgets: this.o.tokenBudgets ?? [],
      ordinal: this.requests.length + 1,
      timeoutMs: Math.min(this.o.turnTimeoutMs ?? DEFAULT_TURN_TIMEOUT_MS, Math.max(1, this.deadline - Date.now())),
      signal: this.signal,
    });
    this.requests.push(res.line);
    const stop = requestStop(res, {
      studyBudget: this.o.studyBudget,
      seatBudget: this.o.seatBudget,
      outside: () => this.outsideStop("while waiting for the model"),
    });
    if (stop) return stop;
    return res.kind === "response" ? parseFunctionResponse(res.raw) : harness("HUMANISH_VISION_LOOP_FAILED", "the request ended without a response");
  }

  /** Records what a response carried (usage, reasoning summaries, messages). */
  record(p: FunctionResponse): void {
    const u = p.usage;
    if (u) {
      this.turnsUsage.push({ input: u.input, cachedInput: u.cached, output: u.output, reasoningOutput: u.reasoning });
      this.items.push({
        id: this.id("usage"),
        kind: "usage",
        lifecycle: "completed",
        title: `turn ${this.turn} usage`,
        usage: { input: u.input, output: u.output, cachedInput: u.cached, reasoningOutput: u.reasoning, total: u.input + u.output },
      });
    }
    const at = new Date().toISOString();
    for (const r of p.reasoning) {
      this.reasonings++;
      this.items.push({ id: this.id("reasoning"), kind: "reasoning", lifecycle: "completed", title: `turn ${this.turn} reasoning`, at, text: this.scrub(r) });
    }
    for (const m of p.messages) {
      this.messages++;
      this.items.push({ id: this.id("message"), kind: "message", lifecycle: "completed", title: `turn ${this.turn} message`, at, text: this.scrub(m) });
    }
    if (p.id) this.lastResponseId = p.id;
  }
}

/**
 * Runs one vision-agent seat to a stop. Never throws for model, budget or desktop failures: the
 * outcome says what happened.
 */
export async function runVisionAgent(o: VisionAgentOptions): Promise<VisionAgentOutcome> {
  const s = new Seat(o);
  let stop: Stop;
  try {
    stop = await drive(s);
  } catch (e) {
    stop = isBrowserControlError(e)
      ? (s.outsideStop("while observing") ?? harness(e.code, `an observation failed in the desktop: ${e.errorCode}/${e.disposition}`))
      : { status: "failed", completionReason: "actor_error", reason: `the loop failed: ${e instanceof Error ? e.name : "unexpected error"}` };
  }
  return finish(s, stop);
}

async function drive(s: Seat): Promise<Stop> {
  const start = await s.observe();
  if (!("obs" in start)) return start;
  s.keep("turn-00-start", start.obs);
  s.conv.addUser(`This is the screen now (${start.frame.width}×${start.frame.height} pixels). Begin.`, start.obs.png);
  s.backstop = startBackstop(progressKey(start.obs));
  if (s.stopWhenMatched()) return { status: "passed", completionReason: "goal_satisfied", reason: "a stopWhen rule matched the first frame" };
  for (;;) {
    const stopped = s.outsideStop("between turns");
    if (stopped) return stopped;
    s.turn++;
    const parsed = await s.request();
    if (!("calls" in parsed)) return parsed;
    s.record(parsed);
    s.conv.addResponse(parsed);
    const bad = responseStop(parsed);
    if (bad) return bad;
    if (parsed.calls.length === 0) return await ended(s, parsed);
    const step = await act(s, parsed.calls);
    if (step) return step;
  }
}

/** The participant ended (no function call): observe once more for the checks, read its declaration. */
async function ended(s: Seat, parsed: FunctionResponse): Promise<Stop> {
  s.declared = declaredOutcome(parsed.messages.at(-1));
  await s.observe();
  s.o.onTurn?.(s.turn, "the model ended its session");
  if (s.declared === "not_reached") return { status: "abandoned", completionReason: "gave_up", reason: "the model said it did not reach the goal" };
  return {
    status: "passed",
    completionReason: "goal_satisfied",
    reason: `the model ended its session${s.declared ? ` declaring ${s.declared.replace("_", " ")}` : ""}`,
  };
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
  s.o.onTurn?.(s.turn, `${all.length} action(s) dispatched`);
  if (s.stopWhenMatched()) return { status: "passed", completionReason: "goal_satisfied", reason: `a stopWhen rule matched after turn ${s.turn}` };
  const limits = { idleSteps: s.o.idleSteps ?? DEFAULT_IDLE_STEPS, noProgressSteps: s.o.noProgressSteps ?? DEFAULT_NO_PROGRESS_STEPS };
  const fold = foldTurn(s.backstop as BackstopState, all, progressKey(after.obs), limits);
  s.backstop = fold.state;
  if (fold.tripped === "idle") return { status: "abandoned", completionReason: "gave_up", reason: `${limits.idleSteps} idle turns in a row` };
  if (fold.tripped === "no_progress")
    return { status: "abandoned", completionReason: "gave_up", reason: `${limits.noProgressSteps} turns in a row without progress` };
  if (fold.nudge) s.conv.addUser(fold.nudge);
  return undefined;
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
  s.refused++;
  s.refusedInRow++;
  s.actionItem("refused/not_dispatched", `turn ${s.turn}: call refused: ${reason}`);
  s.notice(`${UI_TOOL_NAME} call refused before dispatch`, "warn", reason);
  if (s.refusedInRow >= MAX_REFUSED_CALLS)
    s.end(
      harness(
        "HUMANISH_VISION_CALLS_REFUSED",
        `${MAX_REFUSED_CALLS} ${UI_TOOL_NAME} calls in a row could not be read (last: ${reason}); nothing of them was dispatched`,
      ),
    );
  return {
    refused: reason,
    hint: `Nothing was dispatched. Call ${UI_TOOL_NAME} with JSON arguments {narration, actions}: a narration of at most ${MAX_NARRATION_CHARS} characters and 1–${MAX_UI_ACTIONS} actions as described in the tool.`,
  };
}

function finish(s: Seat, stop: Stop): VisionAgentOutcome {
  const { core, funnel } = s.outcomeCore(stop, s.o.tasks, s.o.origin);
  const usd = s.requests.reduce<number | null>((a, l) => (a === null || l.usd === null ? null : a + l.usd), 0);
  const u = s.turnsUsage;
  const sum = (f: (t: LoopTurnUsage) => number) => u.reduce((a, t) => a + f(t), 0);
  return {
    ...core,
    ...(s.declared ? { declaredOutcome: s.declared } : {}),
    ...(funnel ? { taskFunnel: funnel } : {}),
    requests: s.requests,
    usd: usd === null ? null : Math.round(usd * 1e6) / 1e6,
    tokenUsage: {
      input: sum((t) => t.input),
      output: sum((t) => t.output),
      cachedInput: sum((t) => t.cachedInput),
      total: sum((t) => t.input + t.output),
      turns: u,
    },
    counts: {
      turns: s.turn,
      actions: s.actions,
      materialActions: s.material,
      screenshots: s.screenshots.length,
      reasonings: s.reasonings,
      messages: s.messages,
      idleTurns: s.backstop?.idleTurns ?? 0,
      noProgressTurns: s.backstop?.noProgressTurns ?? 0,
      refusedCalls: s.refused,
    },
    ...(s.lastResponseId ? { lastResponseId: s.lastResponseId } : {}),
    modelSettings: { reasoningEffort: s.o.reasoningEffort ?? "provider-default", maxOutputTokens: s.o.maxOutputTokens ?? DEFAULT_VISION_OUTPUT_TOKENS },
  };
}

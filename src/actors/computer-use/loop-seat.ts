/**
 * The turn bookkeeping every browser loop over a Responses endpoint shares — the computer-use
 * loop (the OpenAI computer tool) and the vision agent (function calls of `humanish_ui`): the
 * turn loop itself (the caller's stop and the clock between turns, one request admitted against
 * the spend and token budgets, its usage, reasoning and messages recorded, a response that may
 * not be acted on refused), the start frame, `stopWhen`, the friction backstop, the declared end
 * of a session, and the outcome with its ledger, cost and counts.
 *
 * What differs stays in each loop: how its conversation builds a request, how a response's calls
 * are read and answered, and how a hint reaches the model.
 */
import type { BrowserAction, BrowserControlExecutor, BrowserObservation } from "../../browser-control/index.ts";
import { errorMessage, isHumanishError } from "../../errors.ts";
import type { OpenAI } from "../../models/client.ts";
import type { GatewayLedgerLine, ResponseOutput, SpendBudget } from "../../models/index.ts";
import { type BackstopState, backstopTurn, progressKey, startBackstop } from "./backstop.ts";
import { type ClosingReport, type DeclaredOutcome, declaredOutcome, type LoopTask, matchStopWhen, type StopWhen, type TaskFunnel } from "./outcome.ts";
import { type RequestResult, sendRequest } from "./provider.ts";
import { harnessStop as harness, type SeatOutcomeCore, SeatRecord, type SeatRecordOptions, type SeatStop as Stop } from "./seat-record.ts";

type Json = Record<string, unknown>;

/** Default per-request deadline, ms. */
export const DEFAULT_TURN_TIMEOUT_MS = 180_000;

/** Per-turn token usage. */
export interface LoopTurnUsage {
  input: number;
  cachedInput: number;
  output: number;
  reasoningOutput: number;
}

/** Result of the closing-account request. */
export interface DebriefResult {
  trigger: "stop_when";
  status: "completed" | "skipped" | "failed";
  reason: string;
  report?: ClosingReport;
}

/** What the participant did: the seat core every model-driven browser seat shares, and the model's facts. */
export interface ComputerUseOutcome extends SeatOutcomeCore {
  declaredOutcome?: DeclaredOutcome;
  taskFunnel?: TaskFunnel;
  debrief?: DebriefResult;
  /** Every request: sent, refused or failed (the gateway's ledger-line shape). */
  requests: GatewayLedgerLine[];
  /** Known spend, USD; null when any sent request's cost is unknown. */
  usd: number | null;
  tokenUsage: { input: number; output: number; cachedInput: number; total: number; turns: LoopTurnUsage[] };
  counts: {
    turns: number;
    actions: number;
    materialActions: number;
    screenshots: number;
    reasonings: number;
    messages: number;
    idleTurns: number;
    noProgressTurns: number;
  };
  /** Last response id (for the trace's `ids.turnId`). */
  lastResponseId?: string;
  modelSettings: { reasoningEffort: string; maxOutputTokens?: number };
}

/** The options both loops take alike. */
export interface LoopSeatOptions extends SeatRecordOptions {
  executor: BrowserControlExecutor;
  /** SDK client from `createModelClient` (endpoint from `OPENAI_BASE_URL`, `maxRetries: 0`). */
  client: OpenAI;
  model: string;
  reasoningEffort?: string;
  /** The participant's brief (sent on every request). */
  instructions: string;
  /** App origin, e.g. `http://127.0.0.1:41731`: only its observations count for checks and `stopWhen`. */
  origin: string;
  tasks?: readonly LoopTask[];
  stopWhen?: StopWhen;
  /** Wall-clock budget of the seat, ms. */
  timeoutMs: number;
  /** Per-request deadline, ms (default {@link DEFAULT_TURN_TIMEOUT_MS}). */
  turnTimeoutMs?: number;
  idleSteps?: number;
  noProgressSteps?: number;
  /** The seat's `maxUsd` budget and the study's `maxTotalUsd` budget (shared by all seats). */
  seatBudget?: SpendBudget;
  studyBudget?: SpendBudget;
  /** Scrubs known secret values out of model-authored text before it is recorded. */
  scrubText?: (s: string) => string;
  signal?: AbortSignal;
  /** Progress per turn (safe to print: no model text). */
  onTurn?: (turn: number, note: string) => void;
}

/** The fixed request fields both conversations take from the options: the model, the brief, the reasoning effort when set. */
export function conversationBasics(o: LoopSeatOptions): { model: string; instructions: string; reasoningEffort?: string } {
  return { model: o.model, instructions: o.instructions, ...(o.reasoningEffort ? { reasoningEffort: o.reasoningEffort } : {}) };
}

/** What the loop core needs of a conversation: the next request body (it may throw), and a response to replay. */
export interface LoopConversation<R> {
  body(extra?: Json): Json;
  addResponse(parsed: R): void;
}

/** A response as the core reads it: the shared fields, with the loop's own calls. */
type LoopResponse = ResponseOutput<unknown>;

/**
 * One seat of a browser loop. A loop's seat extends it with its conversation, how it reads a
 * response and observes, and how it answers calls; `abortedCode` is the code of a stop by the
 * caller, `failedCode` that of a request the loop could not build or that ended without a
 * response.
 */
export abstract class LoopSeat<R extends LoopResponse> extends SeatRecord {
  readonly requests: GatewayLedgerLine[] = [];
  readonly turnsUsage: LoopTurnUsage[] = [];
  /** Aborts on the caller's stop or the seat's clock. */
  readonly signal: AbortSignal;
  abstract readonly conv: LoopConversation<R>;
  reasonings = 0;
  lastResponseId: string | undefined;
  declared: DeclaredOutcome | undefined;

  constructor(
    override readonly o: LoopSeatOptions,
    abortedCode: string,
    private readonly failedCode: string,
  ) {
    super(o, abortedCode);
    this.signal = o.signal ? AbortSignal.any([o.signal, this.clock]) : this.clock;
  }

  /** The loop's reading of a response the provider returned. */
  protected abstract read(res: Extract<RequestResult, { kind: "response" }>): R;
  /** Observes once, recording the observation (what it returns is the loop's). */
  abstract observe(): Promise<unknown>;
  /** Token budgets to admit each request against (none unless the loop enforces them). */
  protected tokenBudgets(): readonly SpendBudget[] {
    return [];
  }

  /** Whether a `stopWhen` rule matches the latest observation (a notice names it). */
  stopWhenMatched(): boolean {
    const rec = this.observations.at(-1);
    if (!rec || !this.o.stopWhen) return false;
    const i = matchStopWhen(this.o.stopWhen, rec, this.o.origin);
    if (i < 0) return false;
    this.notice(`stopWhen rule ${this.o.stopWhen.any[i]?.id ?? i + 1} matched`, "matched");
    return true;
  }

  /** Records what a response carried (usage, reasoning summaries, messages). */
  record(p: R): void {
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

  /**
   * Sends the next request (`extra` fields added to the body; `timeoutMs` caps the per-request
   * deadline, ms, within what is left of the seat's clock); the response, or a stop when it did
   * not produce one to act on.
   */
  async request(extra?: Json, timeoutMs?: number): Promise<R | Stop> {
    let body: Json;
    try {
      body = this.conv.body(extra);
    } catch (e) {
      return harness(isHumanishError(e) ? e.code : this.failedCode, errorMessage(e));
    }
    const res = await sendRequest({
      client: this.o.client,
      body,
      budgets: [this.o.seatBudget, this.o.studyBudget].filter((b): b is SpendBudget => b !== undefined),
      tokenBudgets: this.tokenBudgets(),
      ordinal: this.requests.length + 1,
      timeoutMs: Math.min(timeoutMs ?? this.o.turnTimeoutMs ?? DEFAULT_TURN_TIMEOUT_MS, Math.max(1, this.deadline - Date.now())),
      signal: this.signal,
    });
    this.requests.push(res.line);
    const stop = requestStop(res, {
      studyBudget: this.o.studyBudget,
      seatBudget: this.o.seatBudget,
      outside: () => this.outsideStop("while waiting for the model"),
    });
    if (stop) return stop;
    return res.kind === "response" ? this.read(res) : harness(this.failedCode, "the request ended without a response");
  }

  /**
   * Keeps the start frame, starts the backstop on it; a `goal_satisfied` stop when a `stopWhen`
   * rule already matches it.
   */
  begin(start: BrowserObservation): Stop | undefined {
    this.keep("turn-00-start", start);
    this.backstop = startBackstop(progressKey(start));
    if (this.stopWhenMatched()) return { status: "passed", completionReason: "goal_satisfied", reason: "a stopWhen rule matched the first frame" };
    return undefined;
  }

  /**
   * Runs turns until one stops: the caller's stop or the clock → `beforeTurn` → the request →
   * the response recorded and replayed → a response that may not be acted on stops → `act`
   * (the loop's: answer the calls, or end the session), a stop or undefined to go on.
   */
  async turns(act: (p: R) => Promise<Stop | undefined>, beforeTurn?: () => void): Promise<Stop> {
    for (;;) {
      const stopped = this.outsideStop("between turns");
      if (stopped) return stopped;
      beforeTurn?.();
      this.turn++;
      const parsed = await this.request();
      if (!("calls" in parsed)) return parsed;
      this.record(parsed);
      this.conv.addResponse(parsed);
      const bad = responseStop(parsed);
      if (bad) return bad;
      const step = await act(parsed);
      if (step) return step;
    }
  }

  /** The participant ended (no call): observe once more for the checks, read its declaration. */
  async ended(p: R): Promise<Stop> {
    this.declared = declaredOutcome(p.messages.at(-1));
    await this.observe();
    this.o.onTurn?.(this.turn, "the model ended its session");
    if (this.declared === "not_reached") return { status: "abandoned", completionReason: "gave_up", reason: "the model said it did not reach the goal" };
    return {
      status: "passed",
      completionReason: "goal_satisfied",
      reason: `the model ended its session${this.declared ? ` declaring ${this.declared.replace("_", " ")}` : ""}`,
    };
  }

  /**
   * The end of an acted turn (its dispatched actions, the frame after them): the progress note,
   * then a `stopWhen` match (`onGoal` runs before the `goal_satisfied` stop), else the backstop
   * fold — its give-up stop, or the nudge the loop passes on to the model.
   */
  async closeTurn(dispatched: readonly BrowserAction[], after: BrowserObservation, onGoal?: () => Promise<void>): Promise<{ stop?: Stop; nudge?: string }> {
    this.o.onTurn?.(this.turn, `${dispatched.length} action(s) dispatched`);
    if (this.stopWhenMatched()) {
      await onGoal?.();
      return { stop: { status: "passed", completionReason: "goal_satisfied", reason: `a stopWhen rule matched after turn ${this.turn}` } };
    }
    const fold = backstopTurn(this.backstop as BackstopState, dispatched, after, this.o);
    this.backstop = fold.state;
    return fold.stop ? { stop: fold.stop } : fold.nudge ? { nudge: fold.nudge } : {};
  }

  /**
   * The outcome for `stop`: the seat core, the declaration, the task funnel, `debrief` when
   * given, the ledger with its known spend (USD, rounded to 1e-6; null when any cost is unknown),
   * the token usage, the counts (with the loop's `extraCounts` last) and the model settings
   * (`maxOutputTokens` as the loop reports it).
   */
  outcome<X extends Record<string, number>>(
    stop: Stop,
    own: { debrief?: DebriefResult | undefined; extraCounts: X; modelSettings: { maxOutputTokens?: number } },
  ): ComputerUseOutcome & { counts: ComputerUseOutcome["counts"] & X } {
    const { core, funnel } = this.outcomeCore(stop, this.o.tasks, this.o.origin);
    const usd = this.requests.reduce<number | null>((a, l) => (a === null || l.usd === null ? null : a + l.usd), 0);
    const u = this.turnsUsage;
    const sum = (f: (t: LoopTurnUsage) => number) => u.reduce((a, t) => a + f(t), 0);
    return {
      ...core,
      ...(this.declared ? { declaredOutcome: this.declared } : {}),
      ...(funnel ? { taskFunnel: funnel } : {}),
      ...(own.debrief ? { debrief: own.debrief } : {}),
      requests: this.requests,
      usd: usd === null ? null : Math.round(usd * 1e6) / 1e6,
      tokenUsage: {
        input: sum((t) => t.input),
        output: sum((t) => t.output),
        cachedInput: sum((t) => t.cachedInput),
        total: sum((t) => t.input + t.output),
        turns: u,
      },
      counts: {
        turns: this.turn,
        actions: this.actions,
        materialActions: this.material,
        screenshots: this.screenshots.length,
        reasonings: this.reasonings,
        messages: this.messages,
        idleTurns: this.backstop?.idleTurns ?? 0,
        noProgressTurns: this.backstop?.noProgressTurns ?? 0,
        ...own.extraCounts,
      },
      ...(this.lastResponseId ? { lastResponseId: this.lastResponseId } : {}),
      modelSettings: { reasoningEffort: this.o.reasoningEffort ?? "provider-default", ...own.modelSettings },
    };
  }
}

/**
 * The stop a settled request means, if any: a refusal by a budget (a cap reached ends the seat
 * `budget_reached`; an unknown earlier spend or an unpriced model is a harness condition), or a
 * provider error (the caller's stop or clock first, via `outside`). Undefined: a response to read.
 * Shared by every participant that sends its requests through {@link sendRequest}.
 */
export function requestStop(
  res: RequestResult,
  o: { studyBudget?: SpendBudget | undefined; seatBudget?: SpendBudget | undefined; outside: () => Stop | undefined },
): Stop | undefined {
  if (res.kind === "refused") {
    if (res.reason === "spend_unknown") return harness("HUMANISH_CUA_USAGE_UNREPORTED", `no request sent: ${res.message}`, "usage_unreported");
    if (res.reason === "unpriced") return harness("HUMANISH_CUA_MODEL_UNPRICED", `no request sent: ${res.message}`);
    const study = res.budget === o.studyBudget?.label && o.studyBudget !== o.seatBudget;
    const tokens = /tokens/i.test(res.budget);
    return {
      status: "incomplete",
      completionReason: "budget_reached",
      stopCause: tokens ? (/total/i.test(res.budget) ? "study_token_limit" : "token_limit") : study ? "study_spend_limit" : "spend_limit",
      reason: `no request sent: ${res.message}`,
    };
  }
  if (res.kind === "error") return o.outside() ?? harness(res.code, res.message, "provider_error");
  return undefined;
}

/**
 * Whether a response may be acted on (it was read without problems and is `completed`); the
 * stop when not. A response cut at its output ceiling ends the seat `budget_reached`.
 */
export function responseStop(p: { problems: readonly string[]; status: string; incompleteReason: string | null }): Stop | undefined {
  if (p.problems.length) return harness("HUMANISH_CUA_RESPONSE_MALFORMED", `the model's response could not be read: ${p.problems.join("; ")}`);
  if (p.status === "completed") return undefined;
  if (p.status === "incomplete" && p.incompleteReason === "max_output_tokens")
    return {
      status: "incomplete",
      completionReason: "budget_reached",
      stopCause: "provider_output_limit",
      reason: "the response stopped at its output ceiling (max_output_tokens); its actions were not run",
    };
  if (p.status === "incomplete")
    return harness(
      "HUMANISH_CUA_PROVIDER_INCOMPLETE",
      `the response is incomplete (${p.incompleteReason ?? "no reason given"}); its actions were not run`,
      "provider_incomplete",
    );
  return harness("HUMANISH_CUA_PROVIDER_STATUS", `the response status is ${p.status}, not completed; its actions were not run`, "provider_status");
}

/**
 * The computer-use loop: observe → request → act → observe, over the host's browser-control
 * executor. The model sees only full-frame screenshots; the page's URL and text stay in memory
 * for `stopWhen` and the hidden task checks (on observations of the app origin only).
 *
 * One turn: stop if the seat was stopped or its clock ran out → send the request (admitted
 * against the spend budgets first) → record usage, reasoning and messages → refuse to act on an
 * interrupted or non-`completed` response → safety checks (unacknowledged: `blocked_approval`)
 * → no computer call: the participant ended (its declared outcome is recorded, never trusted:
 * the hidden checks decide) → else run each call's batch, observe once after it, answer the
 * call with that frame (`turn-NN`), evaluate `stopWhen`, fold the friction backstop.
 * After a `stopWhen` stop one closing-account request is made (no tools, bounded).
 *
 * Batches: a rejected action (unknown key, off-frame point, refused by the desktop before
 * dispatch) stops the batch — the rest is recorded as not dispatched — and the next request
 * carries a hint. A malformed action ends the seat as a harness failure. Any other executor
 * failure ends the seat (an `outcome_uncertain` one is never replayed). Provider errors are
 * never retried.
 */
import { type BrowserAction, type BrowserControlExecutor, type BrowserObservation, isBrowserControlError } from "../../browser-control/index.ts";
import { errorMessage, isHumanishError } from "../../errors.ts";
import type { OpenAI } from "../../models/client.ts";
import { type ComputerCall, Conversation, type ParsedResponse, type SafetyCheck, textOnlyRequest } from "../../models/computer-use.ts";
import type { GatewayLedgerLine, SpendBudget } from "../../models/index.ts";
import { type Frame, mapBatch } from "./actions.ts";
import { type BackstopState, DEFAULT_IDLE_STEPS, DEFAULT_NO_PROGRESS_STEPS, foldTurn, progressKey, startBackstop } from "./backstop.ts";
import {
  CLOSING_REPORT_FORMAT,
  type ClosingReport,
  type DeclaredOutcome,
  declaredOutcome,
  type LoopTask,
  matchStopWhen,
  parseClosingReport,
  type StopWhen,
  type TaskFunnel,
} from "./outcome.ts";
import { type RequestResult, sendRequest } from "./provider.ts";
import { harnessStop as harness, type SeatOutcomeCore, SeatRecord, type SeatStop as Stop } from "./seat-record.ts";

/** Default per-request deadline, ms. */
export const DEFAULT_TURN_TIMEOUT_MS = 180_000;
/** Longest closing-account request, ms. */
export const DEBRIEF_TIMEOUT_MS = 30_000;
/** Output ceiling of the closing-account request, tokens. */
export const DEBRIEF_MAX_OUTPUT_TOKENS = 1_024;
const DEBRIEF_HINT =
  "The session is over; do not act. Reply only with JSON {summary, frictionReports}: a short account of what you did and, as separate strings, anything in the product that confused, slowed or blocked you.";

/** Options of {@link runComputerUse}. */
export interface ComputerUseOptions {
  executor: BrowserControlExecutor;
  /** SDK client from `createModelClient` (endpoint from `OPENAI_BASE_URL`, `maxRetries: 0`). */
  client: OpenAI;
  model: string;
  reasoningEffort?: string;
  /** Per-response output ceiling, tokens (also bounds the admission estimate). */
  maxOutputTokens?: number;
  /** `false` (default): full replay; `true`: `previous_response_id` chaining. */
  store?: boolean;
  /** The participant's brief (sent on every request). */
  instructions: string;
  /** App origin, e.g. `http://127.0.0.1:41731`: only its observations count for checks. */
  origin: string;
  tasks?: readonly LoopTask[];
  stopWhen?: StopWhen;
  /** Safety-check codes the lab acknowledges; any other pending check blocks the seat. */
  acknowledgeSafetyChecks?: readonly string[];
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

/** Width and height from a PNG's header (the client admitted the PNG before handing it over). */
function frameOf(png: Uint8Array): Frame {
  const v = new DataView(png.buffer, png.byteOffset, png.byteLength);
  return { width: v.getUint32(16), height: v.getUint32(20) };
}

/** One seat of the loop; {@link runComputerUse} is the entry point. */
class Seat extends SeatRecord {
  readonly requests: GatewayLedgerLine[] = [];
  readonly turnsUsage: LoopTurnUsage[] = [];
  readonly signal: AbortSignal;
  readonly conv: Conversation;
  turn = 0;
  actions = 0;
  reasonings = 0;
  messages = 0;
  backstop: BackstopState | undefined;
  hints: string[] = [];
  last: BrowserObservation | undefined;
  lastResponseId: string | undefined;
  declared: DeclaredOutcome | undefined;
  debrief: DebriefResult | undefined;

  constructor(override readonly o: ComputerUseOptions) {
    super(o, "HUMANISH_CUA_ABORTED");
    this.signal = o.signal ? AbortSignal.any([o.signal, this.clock]) : this.clock;
    this.conv = new Conversation({
      model: o.model,
      instructions: o.instructions,
      ...(o.reasoningEffort ? { reasoningEffort: o.reasoningEffort } : {}),
      ...(o.maxOutputTokens ? { maxOutputTokens: o.maxOutputTokens } : {}),
      store: o.store ?? false,
      // The real size comes from the first frame (`Conversation.start`).
      display: { width: 0, height: 0 },
    });
  }

  budgets(): SpendBudget[] {
    return [this.o.seatBudget, this.o.studyBudget].filter((b): b is SpendBudget => b !== undefined);
  }
  async observe(): Promise<BrowserObservation> {
    const obs = await this.o.executor.observe(this.signal);
    this.recordObservation(obs);
    this.last = obs;
    return obs;
  }
  stopWhenMatched(): boolean {
    const rec = this.observations.at(-1);
    if (!rec || !this.o.stopWhen) return false;
    const i = matchStopWhen(this.o.stopWhen, rec, this.o.origin);
    if (i < 0) return false;
    this.notice(`stopWhen rule ${this.o.stopWhen.any[i]?.id ?? i + 1} matched`, "matched");
    return true;
  }

  /** Records what a response carried (usage, reasoning summaries, messages). */
  record(parsed: ParsedResponse): void {
    const u = parsed.usage;
    if (u) {
      const t = { input: u.input, cachedInput: u.cached, output: u.output, reasoningOutput: u.reasoning };
      this.turnsUsage.push(t);
      this.items.push({
        id: this.id("usage"),
        kind: "usage",
        lifecycle: "completed",
        title: `turn ${this.turn} usage`,
        usage: { input: u.input, output: u.output, cachedInput: u.cached, reasoningOutput: u.reasoning, total: u.input + u.output },
      });
    }
    const at = new Date().toISOString();
    for (const r of parsed.reasoning) {
      this.reasonings++;
      this.items.push({ id: this.id("reasoning"), kind: "reasoning", lifecycle: "completed", title: `turn ${this.turn} reasoning`, at, text: this.scrub(r) });
    }
    for (const m of parsed.messages) {
      this.messages++;
      this.items.push({ id: this.id("message"), kind: "message", lifecycle: "completed", title: `turn ${this.turn} message`, at, text: this.scrub(m) });
    }
    if (parsed.id) this.lastResponseId = parsed.id;
  }

  /** Sends the next request; a stop when it did not produce a response to act on. */
  async request(extra?: Record<string, unknown>, timeoutMs?: number): Promise<ParsedResponse | Stop> {
    let body: Record<string, unknown>;
    try {
      body = this.conv.body(extra);
    } catch (e) {
      return harness(isHumanishError(e) ? e.code : "HUMANISH_CUA_LOOP_FAILED", errorMessage(e));
    }
    const remaining = Math.max(1, this.deadline - Date.now());
    const res = await sendRequest({
      client: this.o.client,
      body,
      budgets: this.budgets(),
      ordinal: this.requests.length + 1,
      timeoutMs: Math.min(timeoutMs ?? this.o.turnTimeoutMs ?? DEFAULT_TURN_TIMEOUT_MS, remaining),
      signal: this.signal,
    });
    this.requests.push(res.line);
    const stop = requestStop(res, {
      studyBudget: this.o.studyBudget,
      seatBudget: this.o.seatBudget,
      outside: () => this.outsideStop("while waiting for the model"),
    });
    if (stop) return stop;
    if (res.kind !== "response") return harness("HUMANISH_CUA_LOOP_FAILED", "the request ended without a response");
    return res.parsed;
  }

  /** Whether the response may be acted on; a stop when not. */
  admissible(p: ParsedResponse): Stop | undefined {
    return responseStop(p);
  }

  /** Acknowledged checks per call, or a stop for the first check the lab did not opt in to. */
  safety(calls: readonly ComputerCall[]): Map<string, SafetyCheck[]> | Stop {
    const allowed = new Set(this.o.acknowledgeSafetyChecks ?? []);
    const acks = new Map<string, SafetyCheck[]>();
    for (const c of calls) {
      if (!c.safetyChecks.length) continue;
      const at = new Date().toISOString();
      const blocked = c.safetyChecks.find((s) => !allowed.has(s.code));
      for (const s of c.safetyChecks)
        this.items.push({
          id: this.id("approval"),
          kind: "approval",
          lifecycle: "completed",
          status: blocked ? "blocked" : "acknowledged",
          title: `safety check ${s.code.replace(/[^A-Za-z0-9_.-]/g, "").slice(0, 64) || "(no code)"}`,
          at,
          text: this.scrub(s.message),
        });
      if (blocked)
        return {
          status: "blocked",
          completionReason: "blocked_approval",
          reason: `the model raised a safety check (${blocked.code.replace(/[^A-Za-z0-9_.-]/g, "").slice(0, 64)}) the lab does not acknowledge`,
        };
      acks.set(c.callId, c.safetyChecks);
    }
    return acks;
  }

  /** Runs one call's batch; the dispatched actions, or a stop. */
  async runBatch(call: ComputerCall): Promise<{ dispatched: BrowserAction[]; stop?: Stop }> {
    const frame = frameOf((this.last as BrowserObservation).png);
    const mapped = mapBatch(call.actions, frame);
    const dispatched: BrowserAction[] = [];
    for (let i = 0; i < mapped.length; i++) {
      const m = mapped[i]!;
      const at = new Date().toISOString();
      const item = (status: string, title: string, action?: BrowserAction) => this.actionItem(status, title, action, at);
      const skipRest = (why: string) => {
        for (const rest of mapped.slice(i + 1)) item("not_dispatched", `${rest.label}: ${why}`, rest.ok ? rest.action : undefined);
      };
      this.actions++;
      if (!m.ok) {
        item(m.refusal === "malformed" ? "malformed" : "rejected/not_dispatched", `${m.label}: ${m.reason}`);
        skipRest("not dispatched after an earlier refusal");
        if (m.refusal === "malformed")
          return {
            dispatched,
            stop: harness(
              "HUMANISH_CUA_ACTION_MALFORMED",
              `the model sent an action that could not be read (${m.label}: ${m.reason}); nothing of it was dispatched`,
            ),
          };
        this.notice(`action rejected before dispatch: ${m.label}`, "warn");
        this.hints.push(`${m.hint}. The rest of that batch was not dispatched; choose from the fresh screenshot.`);
        return { dispatched };
      }
      if (this.signal.aborted) {
        item("not_dispatched", `${m.label}: the seat stopped first`, m.action);
        skipRest("the seat stopped first");
        return { dispatched, stop: this.outsideStop("during an action batch") };
      }
      try {
        await this.o.executor.execute(m.action, this.signal);
      } catch (e) {
        if (isBrowserControlError(e) && e.errorCode === "action_rejected" && e.disposition === "not_dispatched") {
          item("action_rejected/not_dispatched", `${m.label}: refused by the desktop before any input`, m.action);
          skipRest("not dispatched after an earlier refusal");
          this.notice(`the desktop refused ${m.label} before dispatch`, "warn");
          this.hints.push(`Your action (${m.label}) was rejected before dispatch by the desktop; choose from the fresh screenshot.`);
          return { dispatched };
        }
        const status = isBrowserControlError(e) ? `${e.errorCode}/${e.disposition}` : "failed";
        item(status, `${m.label}: failed in the desktop`, m.action);
        skipRest("not dispatched: the session ended");
        const stopped = this.outsideStop(`during ${m.label} (its outcome is uncertain)`);
        const code = isBrowserControlError(e) ? e.code : "HUMANISH_BROWSER_PARTICIPANT_FAILED";
        return { dispatched, stop: stopped ?? harness(code, `${m.label} failed in the desktop: ${status}; nothing is replayed`) };
      }
      item("dispatched", m.label, m.action);
      dispatched.push(m.action);
      if (m.action.kind !== "wait" && m.action.kind !== "screenshot") this.material++;
    }
    return { dispatched };
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

/**
 * Runs one computer-use seat to a stop. Never throws for model, budget or desktop failures:
 * the outcome says what happened.
 */
export async function runComputerUse(o: ComputerUseOptions): Promise<ComputerUseOutcome> {
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
  s.keep("turn-00-start", start);
  s.conv.start(start.png, frameOf(start.png));
  s.backstop = startBackstop(progressKey(start));
  if (s.stopWhenMatched()) return { status: "passed", completionReason: "goal_satisfied", reason: "a stopWhen rule matched the first frame" };
  for (;;) {
    const stopped = s.outsideStop("between turns");
    if (stopped) return stopped;
    for (const h of s.hints) s.conv.addHint(h);
    s.hints = [];
    s.turn++;
    const parsed = await s.request();
    if (!("calls" in parsed)) return parsed;
    s.record(parsed);
    s.conv.addResponse(parsed);
    const bad = s.admissible(parsed);
    if (bad) return bad;
    const acks = s.safety(parsed.calls);
    if (!(acks instanceof Map)) return acks;
    if (parsed.calls.length === 0) return await ended(s, parsed);
    const step = await act(s, parsed.calls, acks);
    if (step) return step;
  }
}

/** The participant ended (no computer call): observe once more for the checks, read its declaration. */
async function ended(s: Seat, parsed: ParsedResponse): Promise<Stop> {
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

/** Runs every call of a response and folds the turn; a stop, or undefined to go on. */
async function act(s: Seat, calls: readonly ComputerCall[], acks: Map<string, SafetyCheck[]>): Promise<Stop | undefined> {
  const all: BrowserAction[] = [];
  for (const [k, call] of calls.entries()) {
    const { dispatched, stop } = await s.runBatch(call);
    all.push(...dispatched);
    if (stop) return stop;
    const after = await s.observe();
    s.keep(`turn-${String(s.turn).padStart(2, "0")}${calls.length > 1 ? `-${k + 1}` : ""}`, after);
    const acknowledged = acks.get(call.callId);
    s.conv.addCallOutput({ callId: call.callId, png: after.png, ...(acknowledged ? { acknowledged } : {}) });
  }
  s.o.onTurn?.(s.turn, `${all.length} action(s) dispatched`);
  if (s.stopWhenMatched()) {
    await closingAccount(s);
    return { status: "passed", completionReason: "goal_satisfied", reason: `a stopWhen rule matched after turn ${s.turn}` };
  }
  const limits = { idleSteps: s.o.idleSteps ?? DEFAULT_IDLE_STEPS, noProgressSteps: s.o.noProgressSteps ?? DEFAULT_NO_PROGRESS_STEPS };
  const fold = foldTurn(s.backstop as BackstopState, all, progressKey(s.last as BrowserObservation), limits);
  s.backstop = fold.state;
  if (fold.tripped === "idle") return { status: "abandoned", completionReason: "gave_up", reason: `${limits.idleSteps} idle turns in a row` };
  if (fold.tripped === "no_progress")
    return { status: "abandoned", completionReason: "gave_up", reason: `${limits.noProgressSteps} turns in a row without progress` };
  if (fold.nudge) s.hints.push(fold.nudge);
  return undefined;
}

/** One closing-account request after a structured stop; never changes the stop. */
async function closingAccount(s: Seat): Promise<void> {
  const remaining = s.deadline - Date.now();
  if (remaining < 1_000 || s.signal.aborted) {
    s.debrief = { trigger: "stop_when", status: "skipped", reason: "no time left" };
    return;
  }
  s.conv.addHint(DEBRIEF_HINT);
  const res = await s.request(
    textOnlyRequest({ maxOutputTokens: Math.min(DEBRIEF_MAX_OUTPUT_TOKENS, s.o.maxOutputTokens ?? DEBRIEF_MAX_OUTPUT_TOKENS), format: CLOSING_REPORT_FORMAT }),
    Math.min(DEBRIEF_TIMEOUT_MS, s.o.turnTimeoutMs ?? DEFAULT_TURN_TIMEOUT_MS),
  );
  if (!("calls" in res)) {
    s.debrief = { trigger: "stop_when", status: res.completionReason === "budget_reached" ? "skipped" : "failed", reason: res.reason };
    return;
  }
  s.record(res);
  const report = parseClosingReport(res.messages.at(-1));
  s.debrief =
    typeof report === "string"
      ? { trigger: "stop_when", status: "failed", reason: report }
      : {
          trigger: "stop_when",
          status: "completed",
          reason: "the model gave its closing account",
          report: { summary: s.scrub(report.summary), frictionReports: report.frictionReports.map((f) => s.scrub(f)) },
        };
}

function finish(s: Seat, stop: Stop): ComputerUseOutcome {
  const { core, funnel } = s.outcomeCore(stop, s.o.tasks, s.o.origin);
  const usd = s.requests.reduce<number | null>((a, l) => (a === null || l.usd === null ? null : a + l.usd), 0);
  const u = s.turnsUsage;
  const sum = (f: (t: LoopTurnUsage) => number) => u.reduce((a, t) => a + f(t), 0);
  return {
    ...core,
    ...(s.declared ? { declaredOutcome: s.declared } : {}),
    ...(funnel ? { taskFunnel: funnel } : {}),
    ...(s.debrief ? { debrief: s.debrief } : {}),
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
    },
    ...(s.lastResponseId ? { lastResponseId: s.lastResponseId } : {}),
    modelSettings: { reasoningEffort: s.o.reasoningEffort ?? "provider-default", ...(s.o.maxOutputTokens ? { maxOutputTokens: s.o.maxOutputTokens } : {}) },
  };
}

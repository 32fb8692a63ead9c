/**
 * A `local-agent` seat (`localAgent: codex`): the operator's signed-in Codex CLI, in a restricted
 * app-server session, uses the product on the seat's browser desktop through one dynamic tool.
 *
 * One thread, one turn: the brief and the start frame go in; the model calls `humanish_ui` as
 * often as it likes (each call: narration, 1–4 actions, then a fresh frame back) and ends the
 * turn with its final answer `{outcome, summary, frictionReports}`. That answer is recorded and
 * never trusted as success: the hidden checks over the observations decide.
 *
 * The seat stops the turn (interrupting it through the session) when its clock runs out, the
 * study is stopped, the friction backstop trips, the desktop fails, or the model sends
 * {@link MAX_REFUSED_CALLS} unreadable calls in a row. Typed text is recorded as a length only;
 * narration and the final answer are scrubbed before they are kept.
 */
import type { BrowserAction, BrowserControlExecutor, BrowserObservation } from "../../browser-control/index.ts";
import { isBrowserControlError } from "../../browser-control/index.ts";
import type { LocalAgentActor } from "../../lab/schema.ts";
import type { Frame } from "../computer-use/actions.ts";
import { backstopTurn, progressKey, startBackstop } from "../computer-use/backstop.ts";
import type { LoopTask, TaskFunnel } from "../computer-use/outcome.ts";
import { harnessStop as harness, type SeatOutcomeCore, SeatRecord, type SeatRecordOptions, type SeatStop as Stop } from "../computer-use/seat-record.ts";
import { defaultBounds } from "./bounds.ts";
import {
  type AckStatus,
  compactFrameDataUrl,
  FINAL_ANSWER_SCHEMA,
  type FinalAnswer,
  frameDataUrl,
  type JudgedAction,
  judgeUiCall,
  MAX_NARRATION_CHARS,
  MAX_UI_ACTIONS,
  parseFinalAnswer,
  UI_TOOL,
  UI_TOOL_NAME,
  uiToolResult,
} from "./participant-tool.ts";
import type { CodexAccountSession, CodexDynamicToolResult, CodexExecutionIdentity, CodexTurnResult, CodexTurnUsage } from "./types.ts";

/** Unreadable calls in a row that end the seat (a model that cannot use the tool is no finding). */
export const MAX_REFUSED_CALLS = 3;
/** Persona id when the lab names none. */
export const DEFAULT_LOCAL_AGENT_PERSONA = "first-time-user";
/** Longest account turn the launcher runs, ms. */
const TURN_CEILING_MS = defaultBounds("participant").turnMs;
/** Largest tool result the launcher passes on, serialized bytes (a frame must fit in it). */
const TOOL_OUTPUT_BYTES = defaultBounds("participant").toolOutputBytes;
/** Longest wait for the observation after the final answer, ms. */
const FINAL_OBSERVE_MS = 30_000;

/** The seat fields that change the brief. */
export interface LocalAgentSeatFields {
  persona?: string;
  instruction?: string;
}

/**
 * The participant brief (the thread's developer instructions): persona, mission, the seat's
 * instruction, the task goals in order, how to use the tool and how to end. The hidden checks
 * are never part of it.
 */
export function localAgentBrief(actor: LocalAgentActor, seat: LocalAgentSeatFields = {}): string {
  const lines = [
    `You are a participant in a usability study (persona: ${seat.persona ?? actor.persona ?? DEFAULT_LOCAL_AGENT_PERSONA}). You see a browser on a desktop through screenshots and act only with the ${UI_TOOL_NAME} tool.`,
    ...(actor.mission ? [actor.mission] : []),
    ...(seat.instruction ? [seat.instruction] : []),
  ];
  const tasks = actor.tasks ?? [];
  if (tasks.length) lines.push("Work through these in order:", ...tasks.map((t, i) => `${i + 1}. ${t.goal}`));
  lines.push(
    `Each ${UI_TOOL_NAME} call carries a short narration (at most ${MAX_NARRATION_CHARS} characters) and 1–${MAX_UI_ACTIONS} actions; its result acknowledges each action and shows the new screenshot. Use only what you see on the screen.`,
    "When you are finished, stop calling the tool and give your final answer: outcome (reached, not_reached or blocked), a short summary of what you did, and as separate frictionReports anything in the product that confused, slowed or blocked you.",
  );
  return lines.join("\n");
}

/** Options of {@link runLocalAgentSeat}. */
export interface LocalAgentSeatOptions {
  session: CodexAccountSession;
  executor: BrowserControlExecutor;
  /** The brief ({@link localAgentBrief}). */
  instructions: string;
  /** App origin: only its observations count for the hidden checks. */
  origin: string;
  tasks?: readonly LoopTask[];
  /** Wall-clock budget of the seat, ms. */
  timeoutMs: number;
  idleSteps?: number;
  noProgressSteps?: number;
  /** Scrubs known secret values out of model-authored text before it is recorded. */
  scrubText?: (s: string) => string;
  signal?: AbortSignal;
  /** Progress per tool call (safe to print: no model text). */
  onTurn?: (turn: number, note: string) => void;
}

/** What the seat did: the seat core every model-driven browser seat shares, with the account turn's facts. */
export interface LocalAgentOutcome extends SeatOutcomeCore {
  /** The final answer, scrubbed; recorded, never trusted. */
  answer?: FinalAnswer;
  taskFunnel?: TaskFunnel;
  identity: CodexExecutionIdentity;
  /** Usage the app-server reported for the turn; null fields are unknown, never zero. */
  usage: CodexTurnUsage;
  turnId?: string;
  counts: {
    turns: number;
    actions: number;
    materialActions: number;
    screenshots: number;
    messages: number;
    refusedCalls: number;
    compactedFrames: number;
    idleTurns: number;
    noProgressTurns: number;
  };
}

/** One seat; {@link runLocalAgentSeat} is the entry point. */
class Seat extends SeatRecord {
  /** Ends the account turn: the caller's stop, the seat clock, or a stop of the seat's own. */
  readonly turnAbort = new AbortController();
  readonly signal: AbortSignal;
  refused = 0;
  refusedInRow = 0;
  /** Frames re-encoded to fit the tool-output bound. */
  compacted = 0;
  pendingHint: string | undefined;
  last: { obs: BrowserObservation; url: string; frame: Frame } | undefined;
  /** When the account turn's own deadline falls (epoch ms). */
  turnEndsAt = Number.POSITIVE_INFINITY;
  /** A stop the seat decided during the turn (it wins over how the turn itself ended). */
  stop: Stop | undefined;

  constructor(override readonly o: LocalAgentSeatOptions) {
    super(o, "HUMANISH_LOCAL_AGENT_ABORTED");
    this.signal = AbortSignal.any([this.turnAbort.signal, this.clock, ...(o.signal ? [o.signal] : [])]);
  }

  /** Ends the turn with `stop` (the first decided stop wins). */
  end(stop: Stop): void {
    this.stop ??= stop;
    this.turnAbort.abort();
  }

  /** Observes, records the observation, and admits its frame for the model. */
  async observe(): Promise<{ obs: BrowserObservation; url: string; frame: Frame } | Stop> {
    const obs = await this.o.executor.observe(this.signal);
    this.recordObservation(obs);
    const admitted = frameDataUrl(obs.png);
    if (typeof admitted === "string") return harness("HUMANISH_LOCAL_AGENT_FRAME_REFUSED", `no frame was sent to the model: ${admitted}`);
    this.last = { obs, ...admitted };
    return this.last;
  }
}

/**
 * Runs one local-agent seat to a stop. Never throws for model, session or desktop failures: the
 * outcome says what happened. The caller owns the session (and closes it).
 */
export async function runLocalAgentSeat(o: LocalAgentSeatOptions): Promise<LocalAgentOutcome> {
  const s = new Seat(o);
  let stop: Stop;
  let turn: CodexTurnResult | undefined;
  let answer: FinalAnswer | undefined;
  try {
    const r = await drive(s);
    stop = r.stop;
    turn = r.turn;
    answer = r.answer;
  } catch (e) {
    stop = s.thrownStop(e, "seat");
  }
  return finish(s, stop, turn, answer);
}

async function drive(s: Seat): Promise<{ stop: Stop; turn?: CodexTurnResult; answer?: FinalAnswer }> {
  const start = await s.observe();
  if (!("obs" in start)) return { stop: start };
  s.keep("turn-00-start", start.obs);
  s.backstop = startBackstop(progressKey(start.obs));
  const turn = await s.o.session.runTurn({
    instructions: s.o.instructions,
    input: [
      { type: "text", text: `This is the screen now (${start.frame.width}×${start.frame.height} pixels). Begin.` },
      { type: "image", url: start.url },
    ],
    tools: [UI_TOOL],
    onToolCall: (call) => onToolCall(s, call),
    outputSchema: FINAL_ANSWER_SCHEMA,
    deadlineMs: turnDeadlineMs(s),
    signal: s.signal,
  });
  return await settle(s, turn);
}

/**
 * The account turn's deadline, ms: what is left of the seat's clock, within the launcher's
 * ceiling for one turn (a seat budget above it ends at the ceiling, as a time stop).
 */
function turnDeadlineMs(s: Seat): number {
  const left = Math.max(1, s.deadline - Date.now());
  const ms = Math.min(left, TURN_CEILING_MS);
  s.turnEndsAt = Date.now() + ms;
  return ms;
}

/** How the turn's end becomes the seat's stop. */
async function settle(s: Seat, turn: CodexTurnResult): Promise<{ stop: Stop; turn: CodexTurnResult; answer?: FinalAnswer }> {
  if (s.stop) return { stop: s.stop, turn };
  const outside = s.outsideStop("during the account turn");
  if (outside) return { stop: outside, turn };
  if (turn.status !== "completed" && Date.now() >= s.turnEndsAt)
    return { stop: { ...s.timeStop("during the account turn"), reason: `the account turn reached its ceiling of ${TURN_CEILING_MS} ms` }, turn };
  if (turn.status !== "completed") {
    const code = turn.status === "refused" ? "HUMANISH_LOCAL_AGENT_TURN_REFUSED" : "HUMANISH_LOCAL_AGENT_TURN_FAILED";
    return {
      stop: harness(code, `the account turn ended ${turn.status}: ${turn.reason}`, turn.status === "refused" ? "provider_refused" : "provider_error"),
      turn,
    };
  }
  const parsed = parseFinalAnswer(turn.finalText);
  if (typeof parsed === "string") return { stop: harness("HUMANISH_LOCAL_AGENT_ANSWER_INVALID", `the final answer could not be read: ${parsed}`), turn };
  const answer: FinalAnswer = { outcome: parsed.outcome, summary: s.scrub(parsed.summary), frictionReports: parsed.frictionReports.map((f) => s.scrub(f)) };
  const at = new Date().toISOString();
  s.messages++;
  s.items.push({ id: s.id("message"), kind: "message", lifecycle: "completed", status: answer.outcome, title: "final answer", at, text: answer.summary });
  for (const f of answer.frictionReports) s.notice("friction report", "friction", f);
  // One more observation after the end, for the hidden checks (no screenshot: nothing changed hands).
  try {
    s.recordObservation(await s.o.executor.observe(AbortSignal.timeout(FINAL_OBSERVE_MS)));
  } catch (e) {
    // The checks still read every earlier observation; the gap is said, not hidden.
    s.notice("the observation after the final answer failed", "warn", isBrowserControlError(e) ? `${e.errorCode}/${e.disposition}` : "unexpected error");
  }
  s.o.onTurn?.(s.turn, "the participant gave its final answer");
  if (answer.outcome === "not_reached")
    return { stop: { status: "abandoned", completionReason: "gave_up", reason: "the participant said it did not reach the goal" }, turn, answer };
  return {
    stop: { status: "passed", completionReason: "goal_satisfied", reason: `the participant ended its session declaring ${answer.outcome.replace("_", " ")}` },
    turn,
    answer,
  };
}

/** Answers one `humanish_ui` call; throws only after deciding the seat's stop. */
async function onToolCall(s: Seat, call: { tool: string; callId: string; arguments: unknown }): Promise<CodexDynamicToolResult> {
  const last = s.last!;
  if (s.stop) throw new Error("the seat already stopped");
  const outside = s.outsideStop("between tool calls");
  if (outside) {
    s.end(outside);
    throw new Error("the seat stopped");
  }
  s.turn++;
  const at = new Date().toISOString();
  s.items.push({ id: s.id("tool_call"), kind: "tool_call", lifecycle: "completed", tool: UI_TOOL_NAME, title: `turn ${s.turn}: ${UI_TOOL_NAME}`, at });
  const judged =
    call.tool === UI_TOOL_NAME
      ? judgeUiCall(call.arguments, last.frame)
      : ({ ok: false, reason: `there is no tool ${JSON.stringify(call.tool.slice(0, 64))}` } as const);
  if (!judged.ok) return refuseCall(s, judged.reason, last);
  s.refusedInRow = 0;
  if (judged.narration.trim()) {
    s.messages++;
    s.items.push({ id: s.id("message"), kind: "message", lifecycle: "completed", title: `turn ${s.turn} narration`, at, text: s.scrub(judged.narration) });
  }
  const { acks, dispatched, hint } = await runBatch(s, judged.actions);
  if (s.stop) throw new Error("the seat stopped during the batch");
  const after = await s.observe();
  if (!("obs" in after)) {
    s.end(after);
    throw new Error("the new frame was refused");
  }
  s.keep(`turn-${String(s.turn).padStart(2, "0")}`, after.obs);
  s.o.onTurn?.(s.turn, `${dispatched.length} action(s) dispatched`);
  const fold = backstopTurn(s.backstop!, dispatched, after.obs, s.o);
  s.backstop = fold.state;
  if (fold.stop) s.end(fold.stop);
  const hints = [hint, fold.nudge].filter((h): h is string => Boolean(h));
  return deliver(s, (url) => uiToolResult({ acks, hint: hints.length ? hints.join(" ") : undefined, url, frame: after.frame }));
}

/**
 * The result for the latest frame, when it fits the launcher's tool-output bound: as the guest
 * encoded it, else re-encoded compactly (same pixels). A frame too large either way would be
 * refused by the launcher under a generic rule; the seat ends here instead, naming the cause.
 */
function deliver(s: Seat, build: (url: string) => CodexDynamicToolResult): CodexDynamicToolResult {
  const last = s.last!;
  const size = (r: CodexDynamicToolResult) => Buffer.byteLength(JSON.stringify(r), "utf8");
  const r = build(last.url);
  if (size(r) <= TOOL_OUTPUT_BYTES) return r;
  const compact = compactFrameDataUrl(last.obs.png);
  const small = typeof compact === "string" ? undefined : build(compact.url);
  if (small && size(small) <= TOOL_OUTPUT_BYTES) {
    s.compacted++;
    return small;
  }
  s.end(
    harness(
      "HUMANISH_LOCAL_AGENT_FRAME_TOO_LARGE",
      `a ${last.frame.width}×${last.frame.height} frame makes a ${size(small ?? r)}-byte tool result even re-encoded; the account session passes at most ${TOOL_OUTPUT_BYTES} bytes`,
    ),
  );
  throw new Error("the frame is too large for the account session");
}

/** A call that could not be read: nothing dispatched; the seat ends after too many in a row. */
function refuseCall(s: Seat, reason: string, last: { url: string; frame: Frame }): CodexDynamicToolResult {
  recordRefusal(s, reason, "HUMANISH_LOCAL_AGENT_CALLS_REFUSED");
  return deliver(s, (url) =>
    uiToolResult({
      refused: reason,
      hint: `Nothing was dispatched. Send a narration of at most ${MAX_NARRATION_CHARS} characters and 1–${MAX_UI_ACTIONS} actions as described in the tool.`,
      url,
      frame: last.frame,
    }),
  );
}

/** What {@link recordRefusal} needs of a seat: its record, its refusal counters and its own stop. */
export interface RefusingSeat extends SeatRecord {
  refused: number;
  refusedInRow: number;
  /** Ends the seat with `stop` (the first decided stop wins). */
  end(stop: Stop): void;
}

/**
 * Records a `humanish_ui` call that could not be read (`reason`): nothing of it is dispatched,
 * its action item and a notice say why; {@link MAX_REFUSED_CALLS} in a row end the seat as the
 * harness failure `code` (a model that cannot use the tool is no finding about the product).
 */
export function recordRefusal(s: RefusingSeat, reason: string, code: string): void {
  s.refused++;
  s.refusedInRow++;
  s.actionItem("refused/not_dispatched", `turn ${s.turn}: call refused: ${reason}`);
  s.notice(`${UI_TOOL_NAME} call refused before dispatch`, "warn", reason);
  if (s.refusedInRow >= MAX_REFUSED_CALLS)
    s.end(harness(code, `${MAX_REFUSED_CALLS} ${UI_TOOL_NAME} calls in a row could not be read (last: ${reason}); nothing of them was dispatched`));
}

/** What {@link runBatch} needs of a seat: its record and counters, its executor, its stop signal and its own stop. */
export interface BatchSeat extends SeatRecord {
  readonly signal: AbortSignal;
  readonly o: SeatRecordOptions & { executor: BrowserControlExecutor };
  /** Ends the seat with `stop` (the first decided stop wins). */
  end(stop: Stop): void;
}

/**
 * Dispatches a judged `humanish_ui` batch in order (any seat that judges calls with
 * `judgeUiCall`); stops at the first rejection or desktop failure. One acknowledgement per action,
 * the dispatched actions, and the hint for the model.
 */
export async function runBatch(
  s: BatchSeat,
  actions: readonly JudgedAction[],
): Promise<{ acks: { index: number; status: AckStatus }[]; dispatched: BrowserAction[]; hint?: string }> {
  const acks: { index: number; status: AckStatus }[] = [];
  const dispatched: BrowserAction[] = [];
  const skipRest = (from: number, why: string) => {
    for (let k = from; k < actions.length; k++) {
      const rest = actions[k]!;
      acks.push({ index: k, status: "not_dispatched" });
      s.actionItem("not_dispatched", `${rest.label}: ${why}`, rest.ok ? rest.action : undefined);
    }
  };
  for (const [i, m] of actions.entries()) {
    s.actions++;
    if (!m.ok) {
      acks.push({ index: i, status: "rejected" });
      s.actionItem("rejected/not_dispatched", `${m.label}: ${m.reason}`);
      skipRest(i + 1, "not dispatched after an earlier rejection");
      s.notice(`action rejected before dispatch: ${m.label}`, "warn");
      return { acks, dispatched, hint: `${m.hint}. The rest of that call was not dispatched.` };
    }
    const outside = s.outsideStop("during an action batch");
    if (outside) {
      s.actionItem("not_dispatched", `${m.label}: the seat stopped first`, m.action);
      skipRest(i + 1, "the seat stopped first");
      s.end(outside);
      return { acks, dispatched };
    }
    try {
      await s.o.executor.execute(m.action, s.signal);
    } catch (e) {
      if (isBrowserControlError(e) && e.errorCode === "action_rejected" && e.disposition === "not_dispatched") {
        acks.push({ index: i, status: "rejected" });
        s.actionItem("action_rejected/not_dispatched", `${m.label}: refused by the desktop before any input`, m.action);
        skipRest(i + 1, "not dispatched after an earlier rejection");
        return { acks, dispatched, hint: `Your action (${m.label}) was rejected by the desktop before dispatch; choose from the new screenshot.` };
      }
      const status = isBrowserControlError(e) ? `${e.errorCode}/${e.disposition}` : "failed";
      s.actionItem(status, `${m.label}: failed in the desktop`, m.action);
      skipRest(i + 1, "not dispatched: the session ended");
      const code = isBrowserControlError(e) ? e.code : "HUMANISH_BROWSER_PARTICIPANT_FAILED";
      s.end(s.outsideStop(`during ${m.label} (its outcome is uncertain)`) ?? harness(code, `${m.label} failed in the desktop: ${status}; nothing is replayed`));
      return { acks, dispatched };
    }
    acks.push({ index: i, status: "completed" });
    s.actionItem("dispatched", m.label, m.action);
    dispatched.push(m.action);
    if (m.action.kind !== "wait" && m.action.kind !== "screenshot") s.material++;
  }
  return { acks, dispatched };
}

function finish(s: Seat, stop: Stop, turn: CodexTurnResult | undefined, answer: FinalAnswer | undefined): LocalAgentOutcome {
  const { core, funnel } = s.outcomeCore(stop, s.o.tasks, s.o.origin);
  const usage = turn?.usage ?? { inputTokens: null, cachedInputTokens: null, outputTokens: null };
  if (usage.inputTokens !== null || usage.outputTokens !== null)
    s.items.push({
      id: s.id("usage"),
      kind: "usage",
      lifecycle: "completed",
      title: "account turn usage",
      usage: {
        ...(usage.inputTokens !== null ? { input: usage.inputTokens } : {}),
        ...(usage.outputTokens !== null ? { output: usage.outputTokens } : {}),
        ...(usage.cachedInputTokens !== null ? { cachedInput: usage.cachedInputTokens } : {}),
      },
    });
  return {
    ...core,
    ...(answer ? { answer } : {}),
    ...(funnel ? { taskFunnel: funnel } : {}),
    identity: s.o.session.identity,
    usage,
    ...(turn?.turnId ? { turnId: turn.turnId } : {}),
    counts: {
      turns: s.turn,
      actions: s.actions,
      materialActions: s.material,
      screenshots: s.screenshots.length,
      messages: s.messages,
      refusedCalls: s.refused,
      compactedFrames: s.compacted,
      idleTurns: s.backstop?.idleTurns ?? 0,
      noProgressTurns: s.backstop?.noProgressTurns ?? 0,
    },
  };
}

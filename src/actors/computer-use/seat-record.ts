/**
 * What every model-driven browser seat records the same way — the computer-use loop and the
 * `local-agent` seat: trace item ids, scrubbed model text, notices, the observations the hidden
 * checks read, kept screenshots, `ui_action` items (typed text as a length only), the seat's
 * clock and time stops, and the rule that a declared success passes only when every hidden check
 * does. How a seat talks to its model (requests, tool calls, batches) differs and stays in it.
 */
import { type BrowserAction, type BrowserObservation, isBrowserControlError } from "../../browser-control/index.ts";
import type { ActorStatus, CompletionReason, TraceItem } from "../../bundle/index.ts";
import { type BrowserOutcomeCore, type KeptScreenshot, type ObservationRecord, observationRecord } from "../scripted-browser/index.ts";
import type { BackstopState } from "./backstop.ts";
import { type LoopTask, type TaskFunnel, taskFunnel } from "./outcome.ts";

/** Longest model text kept in one trace item, chars. */
export const MAX_ITEM_TEXT = 4_000;

/** Why a seat stopped; `harnessError` only for a fault of the harness, not a finding. */
export type SeatStop = {
  status: ActorStatus;
  completionReason: CompletionReason;
  reason: string;
  stopCause?: string;
  harnessError?: { code: string; message: string };
};

/** A harness failure stop: `failed`/`harness_error` with the code and message recorded. */
export function harnessStop(code: string, message: string, stopCause?: string): SeatStop {
  return { status: "failed", completionReason: "harness_error", reason: message, harnessError: { code, message }, ...(stopCause ? { stopCause } : {}) };
}

/** Trace form of a dispatched action: the point, button, keys and deltas, never the typed text (its length only). */
export function recordedAction(a: BrowserAction): { type: string } & Record<string, unknown> {
  const r: { type: string } & Record<string, unknown> = { type: a.kind };
  if ("x" in a) Object.assign(r, { x: a.x, y: a.y });
  if (a.kind === "click" && a.button) r.button = a.button;
  if (a.kind === "keypress") r.keys = a.keys;
  if (a.kind === "scroll") Object.assign(r, { dx: a.dx, dy: a.dy });
  if (a.kind === "type") r.chars = a.text.length;
  if (a.kind === "drag") r.points = a.path.length;
  return r;
}

/**
 * The stop when the seat's clock ran out `what` (e.g. "between turns"): `incomplete`/
 * `budget_reached` after at least one material action, else `timed_out`. `timeoutMs` is the
 * seat's budget, ms.
 */
export function timeStop(material: number, timeoutMs: number, what: string): SeatStop {
  return material > 0
    ? { status: "incomplete", completionReason: "budget_reached", stopCause: "time_limit", reason: `the session budget of ${timeoutMs} ms ran out ${what}` }
    : {
        status: "timed_out",
        completionReason: "timed_out",
        stopCause: "time_limit",
        reason: `the session budget of ${timeoutMs} ms ran out ${what} before any action`,
      };
}

/**
 * A declared success under hidden checks: it stays `passed` only when every check passed (a
 * participant's word is never success); else `incomplete`/`turn_completed`, saying how many did.
 */
export function hiddenCheckVerdict(stop: SeatStop, funnel: TaskFunnel | undefined): Pick<SeatStop, "status" | "completionReason" | "reason"> {
  const { status, completionReason, reason } = stop;
  if (status === "passed" && funnel && funnel.completed < funnel.total)
    return { status: "incomplete", completionReason: "turn_completed", reason: `${reason}; ${funnel.completed} of ${funnel.total} hidden check(s) passed` };
  return { status, completionReason, reason };
}

/** The part of a seat's outcome every model-driven browser seat shares: the browser core and why the seat was stopped. */
export interface SeatOutcomeCore extends BrowserOutcomeCore {
  stopCause?: string;
}

/** The seat options the record reads: the budget (ms), the scrubber, and the caller's stop. */
export interface SeatRecordOptions {
  timeoutMs: number;
  scrubText?: (s: string) => string;
  signal?: AbortSignal;
}

/**
 * The trace, observations and screenshots of one seat, with its clock. A seat class extends it
 * and adds how it talks to its model; `abortedCode` is the code of a stop by the caller.
 */
export class SeatRecord {
  readonly items: TraceItem[] = [];
  readonly observations: ObservationRecord[] = [];
  readonly screenshots: KeptScreenshot[] = [];
  readonly started = Date.now();
  /** When the seat's clock runs out (epoch ms). */
  readonly deadline: number;
  /** Aborts when the seat's clock runs out. */
  readonly clock: AbortSignal;
  private n = 0;
  /** Turns so far: requests of a loop, tool calls of an account turn. */
  turn = 0;
  /** Actions the model sent, dispatched or not. */
  actions = 0;
  /** Dispatched actions other than `wait` and `screenshot`. */
  material = 0;
  /** Model messages kept (text, narration, a final answer). */
  messages = 0;
  /** The friction backstop, from the start frame on. */
  backstop: BackstopState | undefined;

  constructor(
    readonly o: SeatRecordOptions,
    private readonly abortedCode: string,
  ) {
    this.deadline = this.started + o.timeoutMs;
    this.clock = AbortSignal.timeout(o.timeoutMs);
  }

  /** The next trace item id of a kind, `kind-NNN`. */
  id(kind: string): string {
    return `${kind}-${String(++this.n).padStart(3, "0")}`;
  }
  /** Model text as it may be kept: secrets scrubbed, at most {@link MAX_ITEM_TEXT} chars. */
  scrub(s: string): string {
    const t = this.o.scrubText ? this.o.scrubText(s) : s;
    return t.length > MAX_ITEM_TEXT ? `${t.slice(0, MAX_ITEM_TEXT)}…` : t;
  }
  notice(title: string, status: string, text?: string): void {
    this.items.push({ id: this.id("notice"), kind: "notice", lifecycle: "completed", status, title, at: new Date().toISOString(), ...(text ? { text } : {}) });
  }
  timeStop(what: string): SeatStop {
    return timeStop(this.material, this.o.timeoutMs, what);
  }
  /** Why the seat must stop now (the caller's stop, its clock), if it must. */
  outsideStop(what: string): SeatStop | undefined {
    if (this.o.signal?.aborted) return harnessStop(this.abortedCode, `the seat was stopped ${what}`, "harness_aborted");
    if (this.clock.aborted || Date.now() >= this.deadline) return this.timeStop(what);
    return undefined;
  }
  /**
   * The stop for an error thrown out of the seat's run (`subject` names it in the reason, e.g.
   * "loop"): a desktop failure while observing (the caller's stop or the clock first), else
   * `failed`/`actor_error` naming only the error's class, never its message.
   */
  thrownStop(e: unknown, subject: string): SeatStop {
    return isBrowserControlError(e)
      ? (this.outsideStop("while observing") ?? harnessStop(e.code, `an observation failed in the desktop: ${e.errorCode}/${e.disposition}`))
      : { status: "failed", completionReason: "actor_error", reason: `the ${subject} failed: ${e instanceof Error ? e.name : "unexpected error"}` };
  }
  /** Runs `drive` to the seat's stop; an error thrown out of it becomes {@link thrownStop}'s stop. */
  async runToStop(drive: () => Promise<SeatStop>, subject: string): Promise<SeatStop> {
    try {
      return await drive();
    } catch (e) {
      return this.thrownStop(e, subject);
    }
  }
  /** Keeps an observation for the hidden checks. */
  recordObservation(obs: BrowserObservation): void {
    this.observations.push(observationRecord(obs));
  }
  /** Keeps the observation's frame as a screenshot named `name`, with its trace item. */
  keep(name: string, obs: BrowserObservation): void {
    const at = new Date().toISOString();
    this.screenshots.push({ name, png: obs.png, at });
    this.items.push({ id: this.id("screenshot"), kind: "screenshot", lifecycle: "completed", title: name, at });
  }
  /** A `ui_action` item; a click carries its point as `coord`. */
  actionItem(status: string, title: string, action?: BrowserAction, at = new Date().toISOString()): void {
    this.items.push({
      id: this.id("ui_action"),
      kind: "ui_action",
      lifecycle: "completed",
      status,
      title,
      at,
      ...(action ? { action: recordedAction(action) } : {}),
      ...(action && (action.kind === "click" || action.kind === "double_click") ? { coord: { x: action.x, y: action.y } } : {}),
    });
  }
  /**
   * The shared part of the outcome for `stop`, and the task funnel over the observations of
   * `origin` when there are tasks (the verdict of {@link hiddenCheckVerdict} applied).
   */
  outcomeCore(stop: SeatStop, tasks: readonly LoopTask[] | undefined, origin: string): { core: SeatOutcomeCore; funnel?: TaskFunnel } {
    const completed = Date.now();
    const funnel = tasks?.length ? taskFunnel(tasks, this.observations, origin) : undefined;
    const { status, completionReason, reason } = hiddenCheckVerdict(stop, funnel);
    const core: SeatOutcomeCore = {
      status,
      completionReason,
      ...(stop.stopCause ? { stopCause: stop.stopCause } : {}),
      reason,
      startedAt: new Date(this.started).toISOString(),
      completedAt: new Date(completed).toISOString(),
      durationMs: completed - this.started,
      items: this.items,
      observations: this.observations,
      screenshots: this.screenshots,
      ...(stop.harnessError ? { harnessError: stop.harnessError } : {}),
    };
    return funnel ? { core, funnel } : { core };
  }
}

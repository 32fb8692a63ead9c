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
import { type BrowserAction, type BrowserObservation, isBrowserControlError } from "../../browser-control/index.ts";
import { type ComputerCall, Conversation, type ParsedResponse, type SafetyCheck, textOnlyRequest } from "../../models/computer-use.ts";
import { type Frame, mapBatch } from "./actions.ts";
import { type ComputerUseOutcome, conversationBasics, DEFAULT_TURN_TIMEOUT_MS, type DebriefResult, LoopSeat, type LoopSeatOptions } from "./loop-seat.ts";
import { CLOSING_REPORT_FORMAT, parseClosingReport } from "./outcome.ts";
import { harnessStop as harness, type SeatStop as Stop } from "./seat-record.ts";

export { type ComputerUseOutcome, DEFAULT_TURN_TIMEOUT_MS, type DebriefResult, type LoopTurnUsage } from "./loop-seat.ts";

/** Longest closing-account request, ms. */
export const DEBRIEF_TIMEOUT_MS = 30_000;
/** Output ceiling of the closing-account request, tokens. */
export const DEBRIEF_MAX_OUTPUT_TOKENS = 1_024;
const DEBRIEF_HINT =
  "The session is over; do not act. Reply only with JSON {summary, frictionReports}: a short account of what you did and, as separate strings, anything in the product that confused, slowed or blocked you.";

/** Options of {@link runComputerUse}: the loops' shared options, and the computer tool's own. */
export interface ComputerUseOptions extends LoopSeatOptions {
  /** Per-response output ceiling, tokens (also bounds the admission estimate). */
  maxOutputTokens?: number;
  /** `false` (default): full replay; `true`: `previous_response_id` chaining. */
  store?: boolean;
  /** Safety-check codes the lab acknowledges; any other pending check blocks the seat. */
  acknowledgeSafetyChecks?: readonly string[];
}

/** Width and height from a PNG's header (the client admitted the PNG before handing it over). */
function frameOf(png: Uint8Array): Frame {
  const v = new DataView(png.buffer, png.byteOffset, png.byteLength);
  return { width: v.getUint32(16), height: v.getUint32(20) };
}

/** One seat of the loop; {@link runComputerUse} is the entry point. */
class Seat extends LoopSeat<ParsedResponse> {
  readonly conv: Conversation;
  hints: string[] = [];
  last: BrowserObservation | undefined;
  debrief: DebriefResult | undefined;

  constructor(override readonly o: ComputerUseOptions) {
    super(o, "HUMANISH_CUA_ABORTED", "HUMANISH_CUA_LOOP_FAILED");
    this.conv = new Conversation({
      ...conversationBasics(o),
      ...(o.maxOutputTokens ? { maxOutputTokens: o.maxOutputTokens } : {}),
      store: o.store ?? false,
      // The real size comes from the first frame (`Conversation.start`).
      display: { width: 0, height: 0 },
    });
  }

  protected read(res: { parsed: ParsedResponse }): ParsedResponse {
    return res.parsed;
  }
  async observe(): Promise<BrowserObservation> {
    const obs = await this.o.executor.observe(this.signal);
    this.recordObservation(obs);
    this.last = obs;
    return obs;
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
 * Runs one computer-use seat to a stop. Never throws for model, budget or desktop failures:
 * the outcome says what happened.
 */
export async function runComputerUse(o: ComputerUseOptions): Promise<ComputerUseOutcome> {
  const s = new Seat(o);
  return finish(s, await s.runToStop(() => drive(s), "loop"));
}

async function drive(s: Seat): Promise<Stop> {
  const start = await s.observe();
  s.conv.start(start.png, frameOf(start.png));
  const first = s.begin(start);
  if (first) return first;
  return await s.turns(
    async (parsed) => {
      const acks = s.safety(parsed.calls);
      if (!(acks instanceof Map)) return acks;
      if (parsed.calls.length === 0) return await s.ended(parsed);
      return await act(s, parsed.calls, acks);
    },
    () => {
      for (const h of s.hints) s.conv.addHint(h);
      s.hints = [];
    },
  );
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
  const end = await s.closeTurn(all, s.last as BrowserObservation, () => closingAccount(s));
  if (end.nudge) s.hints.push(end.nudge);
  return end.stop;
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
  return s.outcome(stop, {
    debrief: s.debrief,
    extraCounts: {},
    modelSettings: s.o.maxOutputTokens ? { maxOutputTokens: s.o.maxOutputTokens } : {},
  });
}

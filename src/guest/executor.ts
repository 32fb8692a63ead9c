/**
 * The guest desktop executor: implements browser control's
 * `BrowserExecutor` on one Xvfb display with Chromium.
 *
 * - observe: `xwd -root` (whole screen, browser chrome included) → PNG (pngjs) → `admitPng`
 *   → the header must equal the executor geometry → stateSignature + page facts (url, title,
 *   text, scrollY of the owner's page; omitted while any other tab is open).
 * - execute: validate the whole action and plan every native command first; then, immediately
 *   before each input, check the authority signal; dispatch through xdotool with the closed key
 *   table; text goes only through CDP `Input.insertText` into a focused editable element of the
 *   top-level document, or — right after an explicit Ctrl+L — printable ASCII into the address bar.
 * - ordering: an action is acknowledged only once its input has been applied, so the next one
 *   can never overtake it. Native input ends with the X fence (./xfence.ts): Chromium's UI thread
 *   has dispatched every event xdotool produced — into the renderer's input channel when the page
 *   is the target — before `execute` returns. Content text is acknowledged by CDP only after the
 *   renderer's main thread committed it (`Input.insertText` answers from the commit's callback,
 *   queued on that same input channel behind the fenced events). So an Enter pressed after typed
 *   text lands after that text and before any text typed after it, however starved the host is.
 *   Address-bar text is typed only once Ctrl+L has moved the keyboard focus out of the page
 *   (Chromium offers the chord to the page first), else it is refused after the Ctrl+L.
 *   An Enter right after address-bar text is acknowledged only once the navigation it started
 *   committed, loaded and gave the page the keyboard focus (at most {@link NAVIGATION_SETTLE_MS}),
 *   so the next input reaches the new page, not the replaced one or the address bar.
 *   The focus probe before content text reads the page over a different channel (DevTools), so
 *   after native input it re-reads a not-yet-editable focus for up to {@link FOCUS_SETTLE_MS}
 *   while the renderer catches up with a click; a refusal is still `not_dispatched`.
 * - failures: `action_rejected`/`not_dispatched` for refusals; `session_revoked`/`not_dispatched`
 *   when authority is gone before the first input; anything after an input is
 *   `outcome_uncertain` and ends the session (`onTerminal` runs once).
 */
import {
  abortableSleep,
  type BrowserAction,
  type BrowserExecutor,
  type BrowserObservation,
  browserControlError,
  captureFailure,
  type ExecuteProgress,
  ExecutorSession,
  settleFailedExecute,
} from "../browser-control/index.ts";
import { admitPng } from "../png/index.ts";
import { pollUntil } from "../poll.ts";
import { decodeXwd, encodePng, perceptualSignature } from "./frame.ts";
import { planSteps, type SleepStep } from "./host-guest.ts";
import { MODIFIER_KEYSYMS } from "./keys.ts";
import { captureXwd, type NativeEnv, xdotool } from "./native.ts";
import type { FocusVerdict, GuestPage } from "./page.ts";
import { xdotoolArgsForChord } from "./plan.ts";

export { MAX_WHEEL_STEPS, WHEEL_STEP_PX } from "./host-guest.ts";

/** How long the focus probe waits for the page to apply earlier native input (a click on a field), ms. */
export const FOCUS_SETTLE_MS = 3_000;
/** Pause between two focus probes while it settles, ms. */
const FOCUS_SETTLE_POLL_MS = 50;
/**
 * How long an Enter after address-bar text waits for the navigation it starts to commit, load
 * and hand the keyboard focus to the page before it is acknowledged, ms.
 */
export const NAVIGATION_SETTLE_MS = 10_000;
/** How long address-bar text waits for Ctrl+L to move the keyboard focus out of the page, ms. */
export const ADDRESS_BAR_FOCUS_MS = 5_000;

/** One native step of a plan. */
export type NativeStep =
  | { kind: "xdotool"; args: string[]; keydown?: string }
  | { kind: "content_text"; text: string }
  | { kind: "chrome_text"; text: string }
  | SleepStep;

/** Options of {@link createGuestExecutor}. */
export interface GuestExecutorOptions {
  /** Screen geometry in px; every frame must have exactly this size. */
  width: number;
  height: number;
  native: NativeEnv;
  page: GuestPage;
  /**
   * Resolve once the browser has dispatched every native input event sent so far (the X fence
   * of ./xfence.ts); reject when it cannot confirm that.
   */
  fence: () => Promise<void>;
  /** Called once when the session becomes terminal (the owner stops browser and display). */
  onTerminal?: () => void;
}

/** The executor plus introspection used by the owner and tests. */
export interface GuestExecutor extends BrowserExecutor {
  /** True once an outcome-uncertain failure ended the session. */
  readonly terminal: boolean;
  /** Number of native input commands sent so far (tests prove refusals send none). */
  readonly dispatchedCount: number;
}

/**
 * Plan every native step of `action` before any is sent.
 * @param armed whether the previous native input was exactly Ctrl+L (address-bar text allowed).
 * @throws BrowserControlError `action_rejected`/`not_dispatched` for any refusal.
 */
export function planAction(action: BrowserAction, geometry: { width: number; height: number }, armed: boolean): NativeStep[] {
  return planSteps<NativeStep>(action, geometry, {
    pointer: (input) => {
      const move: NativeStep = { kind: "xdotool", args: ["mousemove", ...input.at] };
      if (!input.click) return [move];
      const click = input.click.double ? ["click", "--repeat", "2", "--delay", "100", input.click.button] : ["click", input.click.button];
      return [move, { kind: "xdotool", args: click }];
    },
    keys: (input) => [{ kind: "xdotool", args: xdotoolArgsForChord(input.keys) }],
    wheel: (input) => {
      const steps: NativeStep[] = [{ kind: "xdotool", args: ["mousemove", ...input.at] }];
      for (const axis of [input.horizontal, input.vertical]) {
        for (let i = 0; i < (axis?.steps ?? 0); i++) steps.push({ kind: "xdotool", args: ["click", axis!.button] });
      }
      return steps;
    },
    drag: (input) => {
      const steps: NativeStep[] = [
        { kind: "xdotool", args: ["mousemove", ...input.path[0]!] },
        { kind: "xdotool", args: ["mousedown", "1"], keydown: "mouse1" },
      ];
      for (const p of input.path.slice(1)) steps.push({ kind: "xdotool", args: ["mousemove", ...p] });
      steps.push({ kind: "xdotool", args: ["mouseup", "1"] });
      return steps;
    },
    type: (input) => {
      if (!armed) return [{ kind: "content_text", text: input.text }];
      if (!/^[\x20-\x7e]+$/.test(input.text)) throw browserControlError("action_rejected", "not_dispatched", "type: address-bar text must be printable ASCII");
      return [{ kind: "chrome_text", text: input.text }];
    },
  });
}

/** What one guest executor keeps between calls. */
interface GuestSession {
  readonly opts: GuestExecutorOptions;
  readonly flags: ExecutorSession;
  /** The previous native input was exactly Ctrl+L: address-bar text is allowed. */
  armed: boolean;
  /** The last action typed into the address bar: an Enter now starts a navigation. */
  addressBarTyped: boolean;
  dispatchedCount: number;
  /** Native input was sent since the page last confirmed it had caught up (see {@link focusAfterInput}). */
  nativeSinceCheck: boolean;
}

/** One `execute` call in flight: its signal, and whether input went out or a button is held. */
type GuestCall = ExecuteProgress;

/** Create the executor for one desktop. See the module comment for the contract. */
export function createGuestExecutor(opts: GuestExecutorOptions): GuestExecutor {
  const s: GuestSession = {
    opts,
    flags: new ExecutorSession(opts.onTerminal),
    armed: false,
    addressBarTyped: false,
    dispatchedCount: 0,
    nativeSinceCheck: false,
  };
  return {
    observe: (signal) => observeDesktop(s, signal),
    execute: (action, signal) => executeAction(s, action, signal),
    get terminal() {
      return s.flags.terminal;
    },
    get dispatchedCount() {
      return s.dispatchedCount;
    },
  };
}

/**
 * One observation: the whole screen (xwd → PNG, admitted, exactly the geometry) and, while the
 * owner's page is the only tab, its facts read over CDP meanwhile.
 * @throws BrowserControlError `session_revoked`/`not_dispatched` when `signal` aborts,
 *   `invalid_response`/`not_dispatched` for a frame that fails admission or the geometry,
 *   `execution_failed`/`not_dispatched` for any other failure; every failure ends the session.
 */
async function observeDesktop(s: GuestSession, signal: AbortSignal): Promise<BrowserObservation> {
  const { width, height, native, page } = s.opts;
  s.flags.enter();
  try {
    if (signal.aborted) throw browserControlError("session_revoked", "not_dispatched", "aborted before capture");
    // Page facts are read over CDP while the frame is captured and encoded. They describe the
    // owner's page only, so while another tab is open (it may be the one on screen) the frame
    // alone is the observation: text the participant cannot see never reaches a check.
    const factsP = page.sole
      ? page.facts().then(
          (f) => f,
          () => undefined, // page mid-navigation or blocked by a dialog: the frame alone is the observation
        )
      : Promise.resolve(undefined);
    const dump = await captureXwd(native);
    const frame = decodeXwd(dump.stdout, { width, height });
    const png = encodePng(frame);
    const verdict = admitPng(png);
    if (!verdict.ok) throw browserControlError("invalid_response", "not_dispatched", `capture failed PNG admission (${verdict.code})`);
    if (verdict.width !== width || verdict.height !== height)
      throw browserControlError("invalid_response", "not_dispatched", "capture size differs from the geometry");
    const stateSignature = perceptualSignature(frame);
    const read = await factsP;
    const facts = read && page.sole ? read : undefined;
    if (signal.aborted) throw browserControlError("session_revoked", "not_dispatched", "aborted during capture");
    return { png, stateSignature, ...(facts ? { url: facts.url, title: facts.title, text: facts.text, scrollY: facts.scrollY } : {}) };
  } catch (e) {
    s.flags.end();
    throw captureFailure(e);
  } finally {
    s.flags.busy = false;
  }
}

/**
 * Apply one action in order (see the module comment): plan it whole, then content text over
 * CDP, or the native steps followed by the X fence and, for an Enter that submits the address
 * bar, the settling of the navigation it started.
 * @throws BrowserControlError as settled by `settleFailedExecute`: refusals keep the session,
 *   anything else ends it.
 */
async function executeAction(s: GuestSession, action: BrowserAction, signal: AbortSignal): Promise<void> {
  const { width, height, native, page } = s.opts;
  s.flags.enter();
  const call: GuestCall = { signal, dispatched: false, heldMouse: false };
  const afterAddressText = s.addressBarTyped;
  s.addressBarTyped = false;
  const commitsBefore = page.topCommits;
  try {
    const steps = planAction(action, { width, height }, s.armed);
    const chord = action.kind === "keypress" && steps.length === 1 && steps[0]!.kind === "xdotool" ? steps[0]!.args.join(" ") : undefined;
    const isCtrlL = chord === "key --clearmodifiers ctrl+l";
    const submitsAddress = afterAddressText && chord === "key --clearmodifiers Return";
    if (action.kind === "type" && steps[0]?.kind === "content_text") {
      await typeContentText(s, call, steps[0].text);
      s.armed = false;
      return;
    }
    await runNativeSteps(s, call, steps);
    if (call.dispatched) {
      // Not acknowledged until the browser has dispatched all of it: the next action (CDP text
      // above all) can never overtake this one.
      await s.opts.fence();
    }
    // An Enter that submits the address bar is applied once the new page is there: before
    // that, text would land in the document being replaced and keys in the address bar. A
    // navigation that never settles is left to the participant's own check of the page.
    if (submitsAddress && call.dispatched) await page.settleNavigation(commitsBefore, NAVIGATION_SETTLE_MS);
    if (steps.some((st) => st.kind === "chrome_text")) s.addressBarTyped = true;
    if (steps.some((st) => st.kind === "xdotool")) s.armed = isCtrlL;
    if (signal.aborted && call.dispatched) throw browserControlError("session_revoked", "outcome_uncertain", "authority withdrawn during the action");
  } catch (e) {
    const { error, endsSession } = await settleFailedExecute(e, call, () => xdotool(native, ["mouseup", "1"]));
    if (endsSession) s.flags.end();
    throw error;
  } finally {
    s.flags.busy = false;
  }
}

/**
 * Send one native input command through xdotool (`stdin` for typed text, whose stderr must stay
 * empty), checking the authority signal immediately before.
 * @throws BrowserControlError `session_revoked` (`not_dispatched` before the call's first input,
 *   else `outcome_uncertain`) when the signal aborted; whatever xdotool throws.
 */
async function sendNative(s: GuestSession, call: GuestCall, args: string[], stdin?: Uint8Array): Promise<void> {
  if (call.signal.aborted)
    throw browserControlError("session_revoked", call.dispatched ? "outcome_uncertain" : "not_dispatched", "authority withdrawn before input");
  call.dispatched = true;
  s.dispatchedCount++;
  s.nativeSinceCheck = true;
  await xdotool(s.opts.native, args, stdin ? { stdin, forbidStderr: true } : {});
}

/**
 * Read the focus verdict; after native input, a verdict that is not yet `ok` is read again
 * (every {@link FOCUS_SETTLE_POLL_MS}) until the page shows the input's effect, the signal
 * aborts or {@link FOCUS_SETTLE_MS} pass. Returns the last verdict; a failed read throws.
 */
async function focusAfterInput(s: GuestSession, signal: AbortSignal): Promise<FocusVerdict> {
  let verdict = "unreadable" as FocusVerdict;
  await pollUntil(
    async () => {
      verdict = await s.opts.page.focusVerdict();
      return verdict === "ok" || !s.nativeSinceCheck;
    },
    { timeoutMs: FOCUS_SETTLE_MS, intervalMs: FOCUS_SETTLE_POLL_MS, signal },
  );
  if (verdict === "ok") s.nativeSinceCheck = false;
  return verdict;
}

/**
 * Content text: refused before any input unless the top-level document's focused element is
 * editable (read twice, the page unchanged between), then `Input.insertText`, answered only
 * after the renderer committed the text (see the module comment).
 * @throws BrowserControlError `action_rejected`/`not_dispatched` for a refusal,
 *   `session_revoked`/`not_dispatched` when the signal aborted before the text was sent.
 */
async function typeContentText(s: GuestSession, call: GuestCall, text: string): Promise<void> {
  const { page } = s.opts;
  const { signal } = call;
  if (!page.sole) throw browserControlError("action_rejected", "not_dispatched", "type: another tab is open");
  if (page.dialogSeen) throw browserControlError("action_rejected", "not_dispatched", "type: a dialog was opened");
  const generation = page.generation;
  const verdict = await focusAfterInput(s, signal);
  if (verdict !== "ok") throw browserControlError("action_rejected", "not_dispatched", `type: focus is not an editable element of the page (${verdict})`);
  if (page.generation !== generation || !page.sole || page.dialogSeen) throw browserControlError("action_rejected", "not_dispatched", "type: the page changed");
  if (signal.aborted) throw browserControlError("session_revoked", "not_dispatched", "authority withdrawn before input");
  const again = await page.focusVerdict();
  if (again !== "ok" || page.generation !== generation || !page.sole || page.dialogSeen)
    throw browserControlError("action_rejected", "not_dispatched", "type: the page changed");
  if (signal.aborted) throw browserControlError("session_revoked", "not_dispatched", "authority withdrawn before input");
  call.dispatched = true;
  s.dispatchedCount++;
  await page.insertText(text);
}

/**
 * Send the planned native steps one by one: waits, xdotool commands (tracking a held mouse
 * button) and address-bar text (see {@link typeAddressBar}).
 * @throws as {@link sendNative} and {@link typeAddressBar}; `abortableSleep`'s revocation.
 */
async function runNativeSteps(s: GuestSession, call: GuestCall, steps: readonly NativeStep[]): Promise<void> {
  for (const step of steps) {
    if (step.kind === "sleep") {
      await abortableSleep(step.ms, call.signal);
    } else if (step.kind === "chrome_text") {
      await typeAddressBar(s, call, step.text);
    } else if (step.kind === "xdotool") {
      await sendNative(s, call, step.args);
      if (step.keydown) call.heldMouse = true;
      if (step.args[0] === "mouseup") call.heldMouse = false;
    }
  }
}

/**
 * Address-bar text: re-send Ctrl+L natively, fence it, wait until the address bar holds the
 * keyboard focus (at most {@link ADDRESS_BAR_FOCUS_MS}), then type the ASCII text from stdin.
 * Typed before the address bar holds the focus, the URL would land in the page.
 * @throws BrowserControlError `action_rejected`/`outcome_uncertain` when the page changed after
 *   Ctrl+L or the focus did not move in time; as {@link sendNative}.
 */
async function typeAddressBar(s: GuestSession, call: GuestCall, text: string): Promise<void> {
  const { page } = s.opts;
  s.armed = false;
  await sendNative(s, call, ["key", "--clearmodifiers", "ctrl+l"]);
  if (!page.sole || page.dialogSeen) throw browserControlError("action_rejected", "outcome_uncertain", "type: the page changed after Ctrl+L");
  await s.opts.fence();
  if (!(await page.waitForAddressBarFocus(ADDRESS_BAR_FOCUS_MS)))
    throw browserControlError(
      "action_rejected",
      "outcome_uncertain",
      `type: the address bar did not take the keyboard focus within ${ADDRESS_BAR_FOCUS_MS} ms of Ctrl+L`,
    );
  await sendNative(s, call, ["type", "--clearmodifiers", "--delay", "0", "--file", "-"], new TextEncoder().encode(text));
}

export { MODIFIER_KEYSYMS };

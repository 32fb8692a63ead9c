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
  type BrowserControlErrorCode,
  type BrowserExecutor,
  type BrowserObservation,
  browserControlError,
  isBrowserControlError,
} from "../browser-control/index.ts";
import { admitPng } from "../png/index.ts";
import { decodeXwd, encodePng, perceptualSignature } from "./frame.ts";
import { planInput, unplanned } from "./host-guest.ts";
import { MODIFIER_KEYSYMS } from "./keys.ts";
import { captureXwd, type NativeEnv, xdotool } from "./native.ts";
import type { GuestPage } from "./page.ts";
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
  | { kind: "sleep"; ms: number };

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
  const input = planInput(action, geometry);
  switch (input.kind) {
    case "pointer": {
      const move: NativeStep = { kind: "xdotool", args: ["mousemove", ...input.at] };
      if (!input.click) return [move];
      const click = input.click.double ? ["click", "--repeat", "2", "--delay", "100", input.click.button] : ["click", input.click.button];
      return [move, { kind: "xdotool", args: click }];
    }
    case "keys":
      return [{ kind: "xdotool", args: xdotoolArgsForChord(input.keys) }];
    case "wheel": {
      const steps: NativeStep[] = [{ kind: "xdotool", args: ["mousemove", ...input.at] }];
      for (const axis of [input.horizontal, input.vertical]) {
        for (let i = 0; i < (axis?.steps ?? 0); i++) steps.push({ kind: "xdotool", args: ["click", axis!.button] });
      }
      return steps;
    }
    case "drag": {
      const steps: NativeStep[] = [
        { kind: "xdotool", args: ["mousemove", ...input.path[0]!] },
        { kind: "xdotool", args: ["mousedown", "1"], keydown: "mouse1" },
      ];
      for (const p of input.path.slice(1)) steps.push({ kind: "xdotool", args: ["mousemove", ...p] });
      steps.push({ kind: "xdotool", args: ["mouseup", "1"] });
      return steps;
    }
    case "type":
      if (armed) {
        if (!/^[\x20-\x7e]+$/.test(input.text))
          throw browserControlError("action_rejected", "not_dispatched", "type: address-bar text must be printable ASCII");
        return [{ kind: "chrome_text", text: input.text }];
      }
      return [{ kind: "content_text", text: input.text }];
    case "sleep":
      return [{ kind: "sleep", ms: input.ms }];
    case "none":
      return [];
    default:
      return unplanned(input);
  }
}

/** Create the executor for one desktop. See the module comment for the contract. */
export function createGuestExecutor(opts: GuestExecutorOptions): GuestExecutor {
  const { width, height, native, page } = opts;
  let busy = false;
  let terminal = false;
  let armed = false;
  // The last action typed into the address bar: an Enter now starts a navigation.
  let addressBarTyped = false;
  let dispatchedCount = 0;
  // Native input was sent since the page last confirmed it had caught up (see focusAfterInput).
  let nativeSinceCheck = false;

  const endSession = () => {
    if (terminal) return;
    terminal = true;
    opts.onTerminal?.();
  };
  const enter = () => {
    if (terminal) throw browserControlError("executor_closed", "not_dispatched", "session ended");
    if (busy) throw browserControlError("executor_busy", "not_dispatched", "another call is in flight");
    busy = true;
  };

  async function observe(signal: AbortSignal): Promise<BrowserObservation> {
    enter();
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
      endSession();
      if (isBrowserControlError(e)) throw e;
      throw browserControlError("execution_failed", "not_dispatched", "capture failed", e);
    } finally {
      busy = false;
    }
  }

  async function execute(action: BrowserAction, signal: AbortSignal): Promise<void> {
    enter();
    let dispatched = false;
    let heldMouse = false;
    const send = async (args: string[], stdin?: Uint8Array) => {
      if (signal.aborted) throw browserControlError("session_revoked", dispatched ? "outcome_uncertain" : "not_dispatched", "authority withdrawn before input");
      dispatched = true;
      dispatchedCount++;
      nativeSinceCheck = true;
      await xdotool(native, args, stdin ? { stdin, forbidStderr: true } : {});
    };
    // Read the focus verdict; after native input, a verdict that is not yet `ok` is read again
    // until the page shows the input's effect or FOCUS_SETTLE_MS pass.
    const focusAfterInput = async () => {
      const deadline = Date.now() + FOCUS_SETTLE_MS;
      for (;;) {
        const verdict = await page.focusVerdict();
        if (verdict === "ok" || !nativeSinceCheck || Date.now() >= deadline || signal.aborted) {
          if (verdict === "ok") nativeSinceCheck = false;
          return verdict;
        }
        await Bun.sleep(FOCUS_SETTLE_POLL_MS);
      }
    };
    const afterAddressText = addressBarTyped;
    addressBarTyped = false;
    const commitsBefore = page.topCommits;
    try {
      const steps = planAction(action, { width, height }, armed);
      const chord = action.kind === "keypress" && steps.length === 1 && steps[0]!.kind === "xdotool" ? steps[0]!.args.join(" ") : undefined;
      const isCtrlL = chord === "key --clearmodifiers ctrl+l";
      const submitsAddress = afterAddressText && chord === "key --clearmodifiers Return";
      if (action.kind === "type" && steps[0]?.kind === "content_text") {
        // Content text: refuse before any input unless the top-level document's focused element is editable.
        if (!page.sole) throw browserControlError("action_rejected", "not_dispatched", "type: another tab is open");
        if (page.dialogSeen) throw browserControlError("action_rejected", "not_dispatched", "type: a dialog was opened");
        const generation = page.generation;
        const verdict = await focusAfterInput();
        if (verdict !== "ok") throw browserControlError("action_rejected", "not_dispatched", `type: focus is not an editable element of the page (${verdict})`);
        if (page.generation !== generation || !page.sole || page.dialogSeen)
          throw browserControlError("action_rejected", "not_dispatched", "type: the page changed");
        if (signal.aborted) throw browserControlError("session_revoked", "not_dispatched", "authority withdrawn before input");
        const again = await page.focusVerdict();
        if (again !== "ok" || page.generation !== generation || !page.sole || page.dialogSeen)
          throw browserControlError("action_rejected", "not_dispatched", "type: the page changed");
        if (signal.aborted) throw browserControlError("session_revoked", "not_dispatched", "authority withdrawn before input");
        dispatched = true;
        dispatchedCount++;
        // Answered only after the renderer committed the text (see the module comment).
        await page.insertText(steps[0].text);
        armed = false;
        return;
      }
      for (const step of steps) {
        if (step.kind === "sleep") {
          await abortableSleep(step.ms, signal);
        } else if (step.kind === "chrome_text") {
          // Address bar: re-send Ctrl+L natively, then type the ASCII text from stdin.
          armed = false;
          await send(["key", "--clearmodifiers", "ctrl+l"]);
          if (!page.sole || page.dialogSeen) throw browserControlError("action_rejected", "outcome_uncertain", "type: the page changed after Ctrl+L");
          // Typed before the address bar holds the focus, the URL would land in the page.
          await opts.fence();
          if (!(await page.waitForAddressBarFocus(ADDRESS_BAR_FOCUS_MS)))
            throw browserControlError(
              "action_rejected",
              "outcome_uncertain",
              `type: the address bar did not take the keyboard focus within ${ADDRESS_BAR_FOCUS_MS} ms of Ctrl+L`,
            );
          await send(["type", "--clearmodifiers", "--delay", "0", "--file", "-"], new TextEncoder().encode(step.text));
        } else if (step.kind === "xdotool") {
          await send(step.args);
          if (step.keydown) heldMouse = true;
          if (step.args[0] === "mouseup") heldMouse = false;
        }
      }
      if (dispatched) {
        // Not acknowledged until the browser has dispatched all of it: the next action (CDP text
        // above all) can never overtake this one.
        await opts.fence();
      }
      // An Enter that submits the address bar is applied once the new page is there: before
      // that, text would land in the document being replaced and keys in the address bar. A
      // navigation that never settles is left to the participant's own check of the page.
      if (submitsAddress && dispatched) await page.settleNavigation(commitsBefore, NAVIGATION_SETTLE_MS);
      if (steps.some((s) => s.kind === "chrome_text")) addressBarTyped = true;
      if (steps.some((s) => s.kind === "xdotool")) armed = isCtrlL;
      if (signal.aborted && dispatched) throw browserControlError("session_revoked", "outcome_uncertain", "authority withdrawn during the action");
    } catch (e) {
      // Never release a held mouse button after revocation: a release can click or drop.
      if (heldMouse && !signal.aborted) {
        try {
          await xdotool(native, ["mouseup", "1"]);
        } catch {
          /* the session ends below either way */
        }
      }
      if (!dispatched) {
        if (isBrowserControlError(e)) {
          if (!(e.errorCode === "action_rejected" && e.disposition === "not_dispatched")) endSession();
          throw e;
        }
        if (signal.aborted) throw browserControlError("session_revoked", "not_dispatched", "aborted", e);
        endSession();
        throw browserControlError("execution_failed", "not_dispatched", "could not prepare the action", e);
      }
      endSession();
      const code: BrowserControlErrorCode = isBrowserControlError(e) ? e.errorCode : "execution_failed";
      throw browserControlError(code, "outcome_uncertain", "failed after input was dispatched", e);
    } finally {
      busy = false;
    }
  }

  return {
    observe,
    execute,
    get terminal() {
      return terminal;
    },
    get dispatchedCount() {
      return dispatchedCount;
    },
  };
}

export { MODIFIER_KEYSYMS };

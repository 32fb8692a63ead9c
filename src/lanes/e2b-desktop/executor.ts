/**
 * The E2B desktop's browser-control executor: the same `BrowserControlExecutor` the local guest
 * hands the computer-use loop, over E2B's process and file APIs.
 *
 * - observe: `scrot` of the whole screen (browser chrome included) into the sandbox's private
 *   directory, then the page facts (./chromium.ts), then the PNG is read back and passes the PNG
 *   gate (`admitPng`) and must have exactly the desktop's geometry; its perceptual signature is
 *   the progress key. Facts are omitted while another tab is open or when the read fails.
 * - execute: the whole action is planned first (./plan.ts: refusals send nothing); immediately
 *   before each native step the authority signal is checked; each step is one shell-quoted argv.
 * - failures: `action_rejected`/`not_dispatched` for refusals (the session stays usable);
 *   `session_revoked`/`not_dispatched` when authority is gone before the first input; anything
 *   after an input is `outcome_uncertain` and ends the session. A drag that failed while the
 *   button was down gets one `mouseup` — unless authority was revoked (a release can drop).
 * - ordering: text, keys and pointer all go through xdotool (one road into Chromium: the X
 *   server), one command at a time; each command's xdotool has exited — its Xlib close is a
 *   round trip, so the server has queued every event on Chromium's connection — before the next
 *   is started, and Chromium reads that connection in order. No input here travels over CDP, so
 *   nothing can overtake it.
 * - the address bar: Chromium offers Ctrl+L to the page first and moves the focus only once the
 *   renderer answers, so Ctrl+L is acknowledged once the page no longer holds the keyboard focus
 *   (the launcher's probe; else the session ends as outcome-uncertain); and an Enter after text
 *   typed there is acknowledged once a new document (a new `performance.timeOrigin`) has loaded
 *   and holds the focus, or {@link NAVIGATION_SETTLE_MS} passed — before that, keys would reach
 *   the address bar and text the page being replaced.
 */
import type { BrowserAction, BrowserControlExecutor, BrowserObservation, ExecuteProgress } from "../../browser-control/index.ts";
import { abortableSleep, browserControlError, captureFailure, ExecutorSession, settleFailedExecute } from "../../browser-control/index.ts";
import { admitPng, perceptualSignature } from "../../png/index.ts";
import { pollUntil } from "../../poll.ts";
import { type PageProbe, parseFacts, parseProbe } from "./chromium.ts";
import { e2bChord } from "./keys.ts";
import { type DesktopStep, planDesktopAction, shellCommand, TYPE_DELAY_MS } from "./plan.ts";

/** The chord that hands the keyboard to the address bar. */
const CTRL_L = e2bChord(["ctrl", "l"]);

/** What the executor needs of the sandbox: one shell command, one file read. */
export interface DesktopShell {
  /**
   * Run `cmd` through the sandbox's shell within `timeoutMs`.
   * @throws on a non-zero exit, a deadline or a transport failure.
   */
  run(cmd: string, timeoutMs: number): Promise<{ stdout: string }>;
  /** The bytes of `path`, at most `maxBytes`. */
  read(path: string, maxBytes: number): Promise<Uint8Array>;
}

/** Where the executor's helpers live in the sandbox. */
export interface DesktopPaths {
  /** Private directory (0700) of the seat. */
  dir: string;
  /** The launcher's facts socket. */
  socket: string;
  /** The facts client program. */
  factsPy: string;
}

/** Deadline of one capture (scrot + facts), ms. */
const CAPTURE_TIMEOUT_MS = 20_000;
/** Deadline of one input command, ms (typed text adds its own typing time). */
const INPUT_TIMEOUT_MS = 15_000;
/** How long Ctrl+L may take to move the keyboard focus out of the page, ms. */
export const ADDRESS_BAR_FOCUS_MS = 5_000;
/** How long an Enter after address-bar text waits for the new page to load and take the focus, ms. */
export const NAVIGATION_SETTLE_MS = 10_000;
/** Pause between two probes of the page, ms. */
const PROBE_POLL_MS = 50;
/** Deadline of one probe, ms. */
const PROBE_TIMEOUT_MS = 10_000;
/** Largest frame read back, bytes (the PNG gate's own ceiling). */
const MAX_FRAME_BYTES = 8 * 1024 * 1024;

/** The executor plus the counters its owner and tests read. */
export interface E2BDesktopExecutor extends BrowserControlExecutor {
  readonly terminal: boolean;
  /** Native input commands sent so far. */
  readonly dispatchedCount: number;
}

/** Options of {@link createE2BDesktopExecutor}: the sandbox, its helper paths and the geometry (px). */
interface E2BDesktopOptions {
  shell: DesktopShell;
  paths: DesktopPaths;
  width: number;
  height: number;
}

/** What one E2B desktop executor keeps between calls. */
interface E2BSession extends E2BDesktopOptions {
  readonly flags: ExecutorSession;
  /** Where the screenshot goes in the sandbox. */
  readonly frame: string;
  /** The capture command: scrot, then the page facts (which may fail alone). */
  readonly capture: string;
  /** The probe command; it never fails (an unreadable page prints nothing usable). */
  readonly probeCmd: string;
  dispatchedCount: number;
  /**
   * Where the last actions left the keyboard: after Ctrl+L, text goes to the address bar; after
   * that text, an Enter starts a navigation.
   */
  address: "none" | "focused" | "typed";
}

/** Create the executor of one E2B desktop of `width`×`height` px. */
export function createE2BDesktopExecutor(o: E2BDesktopOptions): E2BDesktopExecutor {
  const { paths } = o;
  const frame = `${paths.dir}/frame.png`;
  const s: E2BSession = {
    ...o,
    flags: new ExecutorSession(),
    frame,
    capture: `${shellCommand(["scrot", "--overwrite", "--pointer", frame])} && { ${shellCommand(["python3", "-I", paths.factsPy, paths.socket])} || true; }`,
    probeCmd: `${shellCommand(["python3", "-I", paths.factsPy, paths.socket, "probe"])} || true`,
    dispatchedCount: 0,
    address: "none",
  };
  return {
    stallRecovery: "fail_closed",
    observe: (signal = new AbortController().signal) => observeDesktop(s, signal),
    execute: (action, signal = new AbortController().signal) => executeAction(s, action, signal),
    get terminal() {
      return s.flags.terminal;
    },
    get dispatchedCount() {
      return s.dispatchedCount;
    },
  };
}

/**
 * One observation: scrot + facts in one command, the frame read back, admitted and exactly the
 * geometry; facts omitted while another tab is open or when they could not be read.
 * @throws BrowserControlError `session_revoked`/`not_dispatched` when `signal` aborts,
 *   `invalid_response`/`not_dispatched` for a frame that fails admission or the geometry,
 *   `execution_failed`/`not_dispatched` for any other failure; every failure ends the session.
 */
async function observeDesktop(s: E2BSession, signal: AbortSignal): Promise<BrowserObservation> {
  const { shell, width, height } = s;
  s.flags.enter();
  try {
    if (signal.aborted) throw browserControlError("session_revoked", "not_dispatched", "aborted before capture");
    const out = await shell.run(s.capture, CAPTURE_TIMEOUT_MS);
    const png = await shell.read(s.frame, MAX_FRAME_BYTES);
    const verdict = admitPng(png, { includePixels: true });
    if (!verdict.ok) throw browserControlError("invalid_response", "not_dispatched", `capture failed PNG admission (${verdict.code})`);
    if (verdict.width !== width || verdict.height !== height)
      throw browserControlError("invalid_response", "not_dispatched", "capture size differs from the geometry");
    const stateSignature = perceptualSignature({ width, height, rgba: verdict.pixels! });
    const facts = parseFacts(out.stdout);
    if (signal.aborted) throw browserControlError("session_revoked", "not_dispatched", "aborted during capture");
    return { png, stateSignature, ...(facts && facts !== "other-tabs" ? facts : {}) };
  } catch (e) {
    s.flags.end();
    throw captureFailure(e);
  } finally {
    s.flags.busy = false;
  }
}

/** Probe the page once; never throws: a page it cannot read (mid-navigation, a dialog) is `undefined`. */
async function probePage(s: E2BSession): Promise<PageProbe | undefined> {
  try {
    return parseProbe((await s.shell.run(s.probeCmd, PROBE_TIMEOUT_MS)).stdout);
  } catch {
    return undefined;
  }
}

/** Probe every {@link PROBE_POLL_MS} until `done` holds, `ms` pass or `signal` aborts; whether it held. */
function probeUntil(s: E2BSession, done: (p: PageProbe) => boolean, ms: number, signal: AbortSignal): Promise<boolean> {
  return pollUntil(
    async () => {
      const p = await probePage(s);
      return p !== undefined && done(p);
    },
    { timeoutMs: ms, intervalMs: PROBE_POLL_MS, signal },
  );
}

/**
 * Apply one action in order (see the module comment): plan it whole, run its steps one command
 * at a time, then follow the keyboard into and out of the address bar.
 * @throws BrowserControlError as settled by `settleFailedExecute`: refusals keep the session,
 *   anything else ends it.
 */
async function executeAction(s: E2BSession, action: BrowserAction, signal: AbortSignal): Promise<void> {
  s.flags.enter();
  const call: ExecuteProgress = { signal, dispatched: false, heldMouse: false };
  const was = s.address;
  s.address = "none";
  try {
    const steps = planDesktopAction(action, { width: s.width, height: s.height });
    const chord = action.kind === "keypress" && steps.length === 1 && steps[0]!.kind === "run" ? steps[0]!.argv.at(-1) : undefined;
    const ctrlL = chord === CTRL_L;
    const submits = was === "typed" && chord === "Return";
    const before = submits ? (await probePage(s))?.timeOrigin : undefined;
    await runDesktopSteps(s, call, steps, action.kind === "type" ? action.text.length * TYPE_DELAY_MS * 2 : 0);
    if (signal.aborted && call.dispatched) throw browserControlError("session_revoked", "outcome_uncertain", "authority withdrawn during the action");
    if (ctrlL) {
      if (!(await probeUntil(s, (p) => !p.focused, ADDRESS_BAR_FOCUS_MS, signal)))
        throw browserControlError(
          "action_rejected",
          "outcome_uncertain",
          `the address bar did not take the keyboard focus within ${ADDRESS_BAR_FOCUS_MS} ms of Ctrl+L`,
        );
      s.address = "focused";
    } else if (was === "focused" && action.kind === "type") {
      s.address = "typed";
    } else if (submits) {
      // A navigation that never settles is left to the participant's own check of the page.
      await probeUntil(s, (p) => p.timeOrigin !== before && p.readyState === "complete" && p.focused, NAVIGATION_SETTLE_MS, signal);
    }
  } catch (e) {
    const { error, endsSession } = await settleFailedExecute(e, call, () => s.shell.run(shellCommand(["xdotool", "mouseup", "1"]), INPUT_TIMEOUT_MS));
    if (endsSession) s.flags.end();
    throw error;
  } finally {
    s.flags.busy = false;
  }
}

/**
 * Run the planned steps one command at a time, checking the authority signal immediately before
 * each input; `typingMs` is added to each command's deadline for typed text.
 * @throws BrowserControlError `session_revoked` (`not_dispatched` before the first input, else
 *   `outcome_uncertain`) when the signal aborted; whatever the shell throws.
 */
async function runDesktopSteps(s: E2BSession, call: ExecuteProgress, steps: readonly DesktopStep[], typingMs: number): Promise<void> {
  for (const step of steps) {
    if (step.kind === "sleep") {
      await abortableSleep(step.ms, call.signal);
      continue;
    }
    if (call.signal.aborted)
      throw browserControlError("session_revoked", call.dispatched ? "outcome_uncertain" : "not_dispatched", "authority withdrawn before input");
    call.dispatched = true;
    s.dispatchedCount++;
    call.heldMouse = step.holdsMouse === true;
    await s.shell.run(shellCommand(step.argv), INPUT_TIMEOUT_MS + typingMs);
    call.heldMouse = false;
  }
}

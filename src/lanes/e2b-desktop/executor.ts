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
 */
import type { BrowserControlExecutor, CuaAction, CuaExecutorErrorCode, CuaObservation } from "../../browser-control/index.ts";
import { abortableSleep, cuaError, isCuaExecutorError } from "../../browser-control/index.ts";
import { admitPng, perceptualSignature } from "../../png/index.ts";
import { parseFacts } from "./chromium.ts";
import { planDesktopAction, shellCommand, TYPE_DELAY_MS } from "./plan.ts";

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
/** Largest frame read back, bytes (the PNG gate's own ceiling). */
const MAX_FRAME_BYTES = 8 * 1024 * 1024;

/** The executor plus the counters its owner and tests read. */
export interface E2BDesktopExecutor extends BrowserControlExecutor {
  readonly terminal: boolean;
  /** Native input commands sent so far. */
  readonly dispatchedCount: number;
}

/** Create the executor of one E2B desktop of `width`×`height` px. */
export function createE2BDesktopExecutor(o: { shell: DesktopShell; paths: DesktopPaths; width: number; height: number }): E2BDesktopExecutor {
  const { shell, paths, width, height } = o;
  const frame = `${paths.dir}/frame.png`;
  const capture = `${shellCommand(["scrot", "--overwrite", "--pointer", frame])} && { ${shellCommand(["python3", "-I", paths.factsPy, paths.socket])} || true; }`;
  let busy = false;
  let terminal = false;
  let dispatchedCount = 0;
  const enter = () => {
    if (terminal) throw cuaError("executor_closed", "not_dispatched", "session ended");
    if (busy) throw cuaError("executor_busy", "not_dispatched", "another call is in flight");
    busy = true;
  };

  async function observe(signal: AbortSignal = new AbortController().signal): Promise<CuaObservation> {
    enter();
    try {
      if (signal.aborted) throw cuaError("session_revoked", "not_dispatched", "aborted before capture");
      const out = await shell.run(capture, CAPTURE_TIMEOUT_MS);
      const png = await shell.read(frame, MAX_FRAME_BYTES);
      const verdict = admitPng(png, { includePixels: true });
      if (!verdict.ok) throw cuaError("invalid_response", "not_dispatched", `capture failed PNG admission (${verdict.code})`);
      if (verdict.width !== width || verdict.height !== height) throw cuaError("invalid_response", "not_dispatched", "capture size differs from the geometry");
      const stateSignature = perceptualSignature({ width, height, rgba: verdict.pixels! });
      const facts = parseFacts(out.stdout);
      if (signal.aborted) throw cuaError("session_revoked", "not_dispatched", "aborted during capture");
      return { png, stateSignature, ...(facts && facts !== "other-tabs" ? facts : {}) };
    } catch (e) {
      terminal = true;
      if (isCuaExecutorError(e)) throw e;
      throw cuaError("execution_failed", "not_dispatched", "capture failed", e);
    } finally {
      busy = false;
    }
  }

  async function execute(action: CuaAction, signal: AbortSignal = new AbortController().signal): Promise<void> {
    enter();
    let dispatched = false;
    let heldMouse = false;
    try {
      const steps = planDesktopAction(action, { width, height });
      for (const step of steps) {
        if (step.kind === "sleep") {
          await abortableSleep(step.ms, signal);
          continue;
        }
        if (signal.aborted) throw cuaError("session_revoked", dispatched ? "outcome_uncertain" : "not_dispatched", "authority withdrawn before input");
        const typing = action.kind === "type" ? action.text.length * TYPE_DELAY_MS * 2 : 0;
        dispatched = true;
        dispatchedCount++;
        heldMouse = step.holdsMouse === true;
        await shell.run(shellCommand(step.argv), INPUT_TIMEOUT_MS + typing);
        heldMouse = false;
      }
      if (signal.aborted && dispatched) throw cuaError("session_revoked", "outcome_uncertain", "authority withdrawn during the action");
    } catch (e) {
      if (heldMouse && !signal.aborted) {
        try {
          await shell.run(shellCommand(["xdotool", "mouseup", "1"]), INPUT_TIMEOUT_MS);
        } catch {
          /* the session ends below either way */
        }
      }
      if (!dispatched) {
        if (isCuaExecutorError(e)) {
          if (!(e.errorCode === "action_rejected" && e.disposition === "not_dispatched")) terminal = true;
          throw e;
        }
        terminal = true;
        if (signal.aborted) throw cuaError("session_revoked", "not_dispatched", "aborted", e);
        throw cuaError("execution_failed", "not_dispatched", "could not prepare the action", e);
      }
      terminal = true;
      const code: CuaExecutorErrorCode = isCuaExecutorError(e) ? e.errorCode : "execution_failed";
      throw cuaError(code, "outcome_uncertain", "failed after input was dispatched", e);
    } finally {
      busy = false;
    }
  }

  return {
    stallRecovery: "fail_closed",
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

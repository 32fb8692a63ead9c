/**
 * Browser actions → the exact xdotool argv the E2B desktop runs, and argv → the one shell string
 * E2B's process API accepts. Pure: planning validates the whole action before anything is sent.
 *
 * Why not the SDK's helpers: `leftClick(x, y)` skips the move when a coordinate is 0 (`if (x &&
 * y)`), `press()` passes unknown key names through to xdotool (which ignores them), `write()`
 * builds its own shell string in 25-character chunks, and `drag()` knows two points only. So
 * every pointer action here starts with an explicit `mousemove --sync`, keys go through the
 * closed table of ./keys.ts, typed text is one argv element after `--`, and a drag walks every
 * point of its path in one xdotool chain.
 *
 * E2B runs every command as `bash -l -c <string>`; {@link shellCommand} single-quotes each
 * argument so bash hands xdotool exactly the argv planned here (no expansion, no word splitting).
 */

import { browserControlError } from "../../browser-control/errors.ts";
import type { BrowserAction } from "../../browser-control/index.ts";
import { planSteps, type SleepStep } from "../../guest/host-guest.ts";
import { e2bChord } from "./keys.ts";

export { MAX_WHEEL_STEPS, WHEEL_STEP_PX } from "../../guest/host-guest.ts";
/** Delay between typed characters, ms (xdotool's own default of 12 ms). */
export const TYPE_DELAY_MS = 12;

/** One native step: an argv to run, or a wait. */
export type DesktopStep = { kind: "run"; argv: string[]; holdsMouse?: boolean } | SleepStep;

/**
 * Plan every native step of `action` on a `width`×`height` screen (px) before any is sent: the
 * shared planner of guest/host-guest.ts validates it, this turns it into E2B's argv. Pointer
 * actions are one xdotool chain each, always starting with `mousemove --sync X Y`.
 * @throws BrowserControlError `action_rejected`/`not_dispatched` for any refusal (off-screen point,
 *   unknown or repeated key, inadmissible text, over 100 wheel steps, a drag of fewer than 2 points).
 */
export function planDesktopAction(action: BrowserAction, geometry: { width: number; height: number }): DesktopStep[] {
  return planSteps<DesktopStep>(action, geometry, {
    pointer: (input) => {
      const argv = ["xdotool", "mousemove", "--sync", ...input.at];
      if (input.click) argv.push(...(input.click.double ? ["click", "--repeat", "2", "--delay", "100", input.click.button] : ["click", input.click.button]));
      return [{ kind: "run", argv }];
    },
    keys: (input) => [{ kind: "run", argv: ["xdotool", "key", "--clearmodifiers", e2bChord(input.keys)] }],
    wheel: (input) => {
      const argv = ["xdotool", "mousemove", "--sync", ...input.at];
      for (const axis of [input.horizontal, input.vertical]) if (axis) argv.push("click", "--repeat", String(axis.steps), axis.button);
      return [{ kind: "run", argv }];
    },
    drag: (input) => {
      const argv = ["xdotool", "mousemove", "--sync", ...input.path[0]!, "mousedown", "1"];
      for (const p of input.path.slice(1)) argv.push("mousemove", "--sync", ...p);
      argv.push("mouseup", "1");
      return [{ kind: "run", argv, holdsMouse: true }];
    },
    type: (input) => [{ kind: "run", argv: ["xdotool", "type", "--clearmodifiers", "--delay", String(TYPE_DELAY_MS), "--", input.text] }],
  });
}

/** POSIX single-quoting of one argument (`'` becomes `'\''`); plain tokens stay as they are. */
export function shellQuote(arg: string): string {
  if (/^[A-Za-z0-9_@%+=:,./-]+$/.test(arg)) return arg;
  return `'${arg.replaceAll("'", `'\\''`)}'`;
}

/**
 * The shell string that makes `bash -c` run exactly `argv`.
 * @throws BrowserControlError `action_rejected`/`not_dispatched` for an empty argv or a NUL byte
 *   (a shell string cannot carry one).
 */
export function shellCommand(argv: readonly string[]): string {
  if (argv.length === 0) throw browserControlError("action_rejected", "not_dispatched", "empty command");
  if (argv.some((a) => a.includes("\u0000"))) throw browserControlError("action_rejected", "not_dispatched", "NUL in a command argument");
  return argv.map(shellQuote).join(" ");
}

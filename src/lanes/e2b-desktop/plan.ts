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

import { cuaError } from "../../browser-control/errors.ts";
import type { CuaAction } from "../../browser-control/index.ts";
import { admitTypedText, screenPoint as point } from "../../guest/contract.ts";
import { e2bChord } from "./keys.ts";

/** Max wheel steps (horizontal + vertical) one scroll may send. */
export const MAX_WHEEL_STEPS = 100;
/** Pixels of scroll delta per wheel step. */
export const WHEEL_STEP_PX = 120;
/** Delay between typed characters, ms (xdotool's own default of 12 ms). */
export const TYPE_DELAY_MS = 12;

/** One native step: an argv to run, or a wait. */
export type DesktopStep = { kind: "run"; argv: string[]; holdsMouse?: boolean } | { kind: "sleep"; ms: number };

/**
 * Plan every native step of `action` on a `width`×`height` screen (px) before any is sent.
 * Pointer actions are one xdotool chain each, always starting with `mousemove --sync X Y`.
 * @throws CuaExecutorError `action_rejected`/`not_dispatched` for any refusal (off-screen point,
 *   unknown or repeated key, inadmissible text, over 100 wheel steps, a drag of fewer than 2 points).
 */
export function planDesktopAction(action: CuaAction, geometry: { width: number; height: number }): DesktopStep[] {
  const { width, height } = geometry;
  switch (action.kind) {
    case "move":
      return [{ kind: "run", argv: ["xdotool", "mousemove", "--sync", ...point(action.x, action.y, width, height)] }];
    case "click": {
      const button = action.button === "middle" ? "2" : action.button === "right" ? "3" : "1";
      return [{ kind: "run", argv: ["xdotool", "mousemove", "--sync", ...point(action.x, action.y, width, height), "click", button] }];
    }
    case "double_click":
      return [
        { kind: "run", argv: ["xdotool", "mousemove", "--sync", ...point(action.x, action.y, width, height), "click", "--repeat", "2", "--delay", "100", "1"] },
      ];
    case "keypress":
      return [{ kind: "run", argv: ["xdotool", "key", "--clearmodifiers", e2bChord(action.keys)] }];
    case "scroll": {
      const at = point(action.x, action.y, width, height);
      if (!Number.isFinite(action.dx) || !Number.isFinite(action.dy)) throw cuaError("action_rejected", "not_dispatched", "scroll: delta not finite");
      const h = Math.ceil(Math.abs(action.dx) / WHEEL_STEP_PX);
      const v = Math.ceil(Math.abs(action.dy) / WHEEL_STEP_PX);
      if (h + v > MAX_WHEEL_STEPS) throw cuaError("action_rejected", "not_dispatched", "scroll: more than 100 wheel steps");
      if (h + v === 0) return [];
      const argv = ["xdotool", "mousemove", "--sync", ...at];
      if (h > 0) argv.push("click", "--repeat", String(h), action.dx > 0 ? "7" : "6");
      if (v > 0) argv.push("click", "--repeat", String(v), action.dy > 0 ? "5" : "4");
      return [{ kind: "run", argv }];
    }
    case "drag": {
      if (action.path.length < 2) throw cuaError("action_rejected", "not_dispatched", "drag: fewer than 2 points");
      const pts = action.path.map((p) => point(p.x, p.y, width, height));
      const argv = ["xdotool", "mousemove", "--sync", ...pts[0]!, "mousedown", "1"];
      for (const p of pts.slice(1)) argv.push("mousemove", "--sync", ...p);
      argv.push("mouseup", "1");
      return [{ kind: "run", argv, holdsMouse: true }];
    }
    case "type":
      admitTypedText(action.text);
      return [{ kind: "run", argv: ["xdotool", "type", "--clearmodifiers", "--delay", String(TYPE_DELAY_MS), "--", action.text] }];
    case "wait":
      return [{ kind: "sleep", ms: action.ms ?? 250 }];
    case "screenshot":
      return [];
    default:
      throw cuaError("action_rejected", "not_dispatched", "unsupported action kind");
  }
}

/** POSIX single-quoting of one argument (`'` becomes `'\''`); plain tokens stay as they are. */
export function shellQuote(arg: string): string {
  if (/^[A-Za-z0-9_@%+=:,./-]+$/.test(arg)) return arg;
  return `'${arg.replaceAll("'", `'\\''`)}'`;
}

/**
 * The shell string that makes `bash -c` run exactly `argv`.
 * @throws CuaExecutorError `action_rejected`/`not_dispatched` for an empty argv or a NUL byte
 *   (a shell string cannot carry one).
 */
export function shellCommand(argv: readonly string[]): string {
  if (argv.length === 0) throw cuaError("action_rejected", "not_dispatched", "empty command");
  if (argv.some((a) => a.includes("\u0000"))) throw cuaError("action_rejected", "not_dispatched", "NUL in a command argument");
  return argv.map(shellQuote).join(" ");
}

/**
 * The E2B desktop's closed key table: participant key names → X keysym names for `xdotool key`.
 *
 * `@e2b/desktop`'s own `press()` lower-cases any name it does not know and hands it to xdotool,
 * which silently ignores a name that is no keysym — a keypress the model believes it made and the
 * desktop never saw. So this lane never uses `press()`: every name is looked up here
 * (case-insensitively) and anything outside the table is refused before any input is sent.
 * Pure data and lookups; no I/O.
 */
import { cuaError } from "../../browser-control/errors.ts";

/** Named keys (upper-cased lookup name → X keysym). */
const NAMED: Readonly<Record<string, string>> = Object.freeze({
  CTRL: "Control_L",
  CONTROL: "Control_L",
  ALT: "Alt_L",
  SHIFT: "Shift_L",
  META: "Super_L",
  SUPER: "Super_L",
  CMD: "Super_L",
  ENTER: "Return",
  RETURN: "Return",
  TAB: "Tab",
  ESC: "Escape",
  ESCAPE: "Escape",
  SPACE: "space",
  " ": "space",
  BACKSPACE: "BackSpace",
  DELETE: "Delete",
  INSERT: "Insert",
  HOME: "Home",
  END: "End",
  PAGEUP: "Prior",
  PAGEDOWN: "Next",
  ARROWUP: "Up",
  UP: "Up",
  ARROWDOWN: "Down",
  DOWN: "Down",
  ARROWLEFT: "Left",
  LEFT: "Left",
  ARROWRIGHT: "Right",
  RIGHT: "Right",
  "+": "plus",
  "-": "minus",
  "=": "equal",
  ",": "comma",
  ".": "period",
  "/": "slash",
  "\\": "backslash",
  ";": "semicolon",
  "'": "apostrophe",
  "[": "bracketleft",
  "]": "bracketright",
  "`": "grave",
});

/** The keysyms of the four modifiers (the only keys a pointer action may hold). */
export const MODIFIER_KEYSYMS: ReadonlySet<string> = new Set(["Control_L", "Alt_L", "Shift_L", "Super_L"]);

/**
 * One participant key name → its X keysym, or `undefined` when the name is not in the closed
 * table. A single letter or digit maps to itself lower-cased; `F1`–`F12` upper-cased.
 */
export function e2bKeysym(name: string): string | undefined {
  const upper = name.toUpperCase();
  if (/^[A-Z0-9]$/.test(upper)) return upper.toLowerCase();
  if (/^F([1-9]|1[0-2])$/.test(upper)) return upper;
  return Object.hasOwn(NAMED, upper) ? NAMED[upper] : undefined;
}

/**
 * A keypress's key list → one xdotool chord (`Control_L+l`, `Return`).
 * @throws CuaExecutorError `action_rejected`/`not_dispatched` for an empty list, a name outside
 *   the table, or a key repeated within the chord.
 */
export function e2bChord(keys: readonly string[]): string {
  if (keys.length === 0) throw cuaError("action_rejected", "not_dispatched", "keypress: no keys");
  const out: string[] = [];
  for (const k of keys) {
    const sym = e2bKeysym(k);
    if (sym === undefined) throw cuaError("action_rejected", "not_dispatched", "keypress: a key name is not in the closed key table");
    if (out.includes(sym)) throw cuaError("action_rejected", "not_dispatched", "keypress: a key is repeated within the chord");
    out.push(sym);
  }
  return out.join("+");
}

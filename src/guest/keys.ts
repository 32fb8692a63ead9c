/**
 * The closed key-name table of the guest driver.
 *
 * Participant key names are looked up case-insensitively in a fixed table and mapped to
 * xdotool keysym names; nothing else ever reaches xdotool's argument syntax. Anything outside
 * the table, or a key repeated within one chord, is refused as `action_rejected` /
 * `not_dispatched` before any input is sent.
 */
import { cuaError } from "../browser-control/errors.ts";

const NAMED: Readonly<Record<string, string>> = Object.freeze({
  CTRL: "ctrl",
  CONTROL: "ctrl",
  ALT: "alt",
  SHIFT: "shift",
  META: "super",
  SUPER: "super",
  CMD: "super",
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

/** The modifier sub-table (ctrl/alt/shift/super). */
export const MODIFIER_KEYSYMS: ReadonlySet<string> = new Set(["ctrl", "alt", "shift", "super"]);

/**
 * Map one participant key name to its xdotool keysym, or `undefined` when it is not in the
 * closed table. Single `[a-z0-9]` letters map to themselves (lower-cased), `F1`–`F12` upper-cased.
 */
export function keysymFor(name: string): string | undefined {
  const upper = name.toUpperCase();
  if (/^[A-Z0-9]$/.test(upper)) return upper.toLowerCase();
  if (/^F([1-9]|1[0-2])$/.test(upper)) return upper;
  return Object.hasOwn(NAMED, upper) ? NAMED[upper] : undefined;
}

/**
 * Turn a keypress's key list into one xdotool chord (`ctrl+l`, `Return`).
 *
 * @throws CuaExecutorError `action_rejected`/`not_dispatched` for an empty list, an unknown
 *   name, or a key repeated within the chord.
 */
export function xdotoolChord(keys: readonly string[]): string {
  if (keys.length === 0) throw cuaError("action_rejected", "not_dispatched", "keypress: no keys");
  const out: string[] = [];
  for (const k of keys) {
    const sym = keysymFor(k);
    if (sym === undefined) throw cuaError("action_rejected", "not_dispatched", "keypress: a key name is not in the closed key table");
    if (out.includes(sym)) throw cuaError("action_rejected", "not_dispatched", "keypress: a key is repeated within the chord");
    out.push(sym);
  }
  return out.join("+");
}

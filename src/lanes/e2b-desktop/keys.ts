/**
 * The E2B desktop's closed key table: participant key names → X keysym names for `xdotool key`.
 *
 * `@e2b/desktop`'s own `press()` lower-cases any name it does not know and hands it to xdotool,
 * which silently ignores a name that is no keysym — a keypress the model believes it made and the
 * desktop never saw. So this lane never uses `press()`: every name is looked up (case-insensitively)
 * in the same closed table the local guest uses, from the host ↔ guest module (guest/host-guest.ts), with the modifiers
 * spelled as X keysyms, and anything outside the table is refused before any input is sent.
 * Pure data and lookups; no I/O.
 */
import { keyChord, keysymFor, modifierKeysyms } from "../../guest/host-guest.ts";

/** The keysyms of the four modifiers (the only keys a pointer action may hold). */
export const MODIFIER_KEYSYMS: ReadonlySet<string> = modifierKeysyms("keysym");

/**
 * One participant key name → its X keysym, or `undefined` when the name is not in the closed
 * table. A single letter or digit maps to itself lower-cased; `F1`–`F12` upper-cased.
 */
export function e2bKeysym(name: string): string | undefined {
  return keysymFor(name, "keysym");
}

/**
 * A keypress's key list → one xdotool chord (`Control_L+l`, `Return`).
 * @throws BrowserControlError `action_rejected`/`not_dispatched` for an empty list, a name outside
 *   the table, or a key repeated within the chord.
 */
export function e2bChord(keys: readonly string[]): string {
  return keyChord(keys, "keysym");
}

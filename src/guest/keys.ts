/**
 * The closed key-name table of the guest driver.
 *
 * Participant key names are looked up case-insensitively in a fixed table and mapped to
 * xdotool keysym names; nothing else ever reaches xdotool's argument syntax. Anything outside
 * the table, or a key repeated within one chord, is refused as `action_rejected` /
 * `not_dispatched` before any input is sent. The table lives in the host ↔ guest module (host-guest.ts).
 */
import { keyChord } from "./host-guest.ts";

export { keysymFor, MODIFIER_KEYSYMS } from "./host-guest.ts";

/**
 * Turn a keypress's key list into one xdotool chord (`ctrl+l`, `Return`).
 *
 * @throws BrowserControlError `action_rejected`/`not_dispatched` for an empty list, an unknown
 *   name, or a key repeated within the chord.
 */
export function xdotoolChord(keys: readonly string[]): string {
  return keyChord(keys, "alias");
}

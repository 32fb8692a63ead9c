/**
 * xdotool argument builders that only ever contain table-checked tokens: the closed
 * key table and bounded pointer paths, so no lab or model text reaches xdotool as an argument.
 */
import { xdotoolChord } from "./keys.ts";

/**
 * `key --clearmodifiers <chord>` for a keypress action's key list.
 * @throws BrowserControlError `action_rejected`/`not_dispatched` for a key outside the closed table.
 */
export function xdotoolArgsForChord(keys: readonly string[]): string[] {
  return ["key", "--clearmodifiers", xdotoolChord(keys)];
}

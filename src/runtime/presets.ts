/**
 * Screen geometry of a local guest for a device preset (presets themselves live in the lab
 * schema). The guest floors the screen width at
 * {@link MIN_SCREEN_WIDTH} because Chromium's window cannot be narrower; the bundle then records
 * the declared size as `requested` and the floored one as `verified`, with a warning.
 */

/** Narrowest screen the local guest runs (Chromium's minimum window width), px. */
export const MIN_SCREEN_WIDTH = 500;

/** The screen the guest actually runs for a declared size. */
export function guestScreen(declared: { width: number; height: number }): { width: number; height: number; floored: boolean } {
  return declared.width < MIN_SCREEN_WIDTH
    ? { width: MIN_SCREEN_WIDTH, height: declared.height, floored: true }
    : { width: declared.width, height: declared.height, floored: false };
}

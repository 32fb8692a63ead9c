/**
 * Device presets of browser studies (reference contracts.md §1.4): name → screen size in px.
 * The local guest floors the screen width at {@link MIN_SCREEN_WIDTH} because Chromium's
 * window cannot be narrower; the geometry then records the declared size and a warning.
 */
import { HumanishError } from "../errors.ts";

/** A device preset: CSS px and device pixel ratio as declared by the reference. */
export interface DevicePreset {
  name: string;
  width: number;
  height: number;
  dpr: number;
}

/** The closed preset table. */
export const DEVICE_PRESETS: Readonly<Record<string, DevicePreset>> = Object.freeze({
  mobile: { name: "mobile", width: 414, height: 896, dpr: 3 },
  "small-mobile": { name: "small-mobile", width: 360, height: 740, dpr: 3 },
  "narrow-mobile": { name: "narrow-mobile", width: 320, height: 700, dpr: 2 },
  tablet: { name: "tablet", width: 820, height: 1180, dpr: 2 },
  desktop: { name: "desktop", width: 1440, height: 950, dpr: 1 },
  wide: { name: "wide", width: 1920, height: 1080, dpr: 1 },
});

/** Narrowest screen the local guest runs (Chromium's minimum window width), px. */
export const MIN_SCREEN_WIDTH = 500;

/** Presets per participant count: 1 → desktop; 2 → desktop + mobile; more alternate. */
export function presetsForCount(count: number): DevicePreset[] {
  const out: DevicePreset[] = [];
  for (let i = 0; i < count; i++) out.push(i % 2 === 0 ? DEVICE_PRESETS.desktop! : DEVICE_PRESETS.mobile!);
  return out;
}

/**
 * Look up a preset by name.
 * @throws HumanishError `HUMANISH_LAB_INVALID` naming the unknown preset.
 */
export function devicePreset(name: string): DevicePreset {
  const p = Object.hasOwn(DEVICE_PRESETS, name) ? DEVICE_PRESETS[name] : undefined;
  if (!p) {
    throw new HumanishError("HUMANISH_LAB_INVALID", `device preset ${JSON.stringify(name)} is unknown`, { next: `use one of: ${Object.keys(DEVICE_PRESETS).join(", ")}` });
  }
  return p;
}

/** The screen the guest actually runs for a preset (width floored at {@link MIN_SCREEN_WIDTH}). */
export function guestScreen(p: DevicePreset): { width: number; height: number; floored: boolean } {
  return p.width < MIN_SCREEN_WIDTH ? { width: MIN_SCREEN_WIDTH, height: p.height, floored: true } : { width: p.width, height: p.height, floored: false };
}

/**
 * The bundle's seam to the PNG admission validator (`src/png`).
 * Every screenshot is admitted when written and re-admitted by `verifyRun`. A validator that
 * throws or returns something unexpected is a rejection — never "assume ok".
 */
import { admitPng } from "../png/index.ts";

/** Result of admitting one PNG (header facts, or a stable rejection code and detail). */
export type PngAdmission = { ok: true; width: number; height: number; colorType: number } | { ok: false; code: string; detail: string };

/** Admit `bytes` as a screenshot PNG through `admitPng`. Never throws. */
export async function admitPngBytes(bytes: Uint8Array): Promise<PngAdmission> {
  try {
    const r = admitPng(bytes);
    if (r.ok === true) return { ok: true, width: r.width, height: r.height, colorType: r.colorType };
    if (r.ok === false) return { ok: false, code: r.code, detail: r.detail };
    return { ok: false, code: "PNG_VALIDATOR_INVALID_RESULT", detail: "admitPng returned an unexpected value" };
  } catch (e) {
    return { ok: false, code: "PNG_VALIDATOR_THREW", detail: e instanceof Error ? e.message.slice(0, 200) : "admitPng threw" };
  }
}

/**
 * PNG admission: `admitPng(bytes, limits?)` decides whether a
 * screenshot may enter a bundle or a model, returning `{ok:true, width, height, colorType, pixels?}`
 * or `{ok:false, code, detail}` with a stable `HUMANISH_PNG_*` code. See ./admit.ts.
 */

export {
  admitPng,
  PNG_MAX_BYTES,
  PNG_MAX_PIXELS,
  PNG_MAX_SIDE,
  PNG_MIN_BYTES,
  PNG_REJECTION_CODES,
  type PngAdmission,
  type PngAdmissionLimits,
  type PngColorType,
  type PngRejectionCode,
} from "./admit.ts";
export { perceptualSignature, type SignatureFrame } from "./signature.ts";

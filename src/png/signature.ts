/**
 * The coarse perceptual `stateSignature` of a decoded frame: a progress key for the computer-use
 * loop's backstop, the same for every desktop (the local guest and the E2B desktop). Pure.
 */

/** Decoded pixels: `width × height`, RGBA 8-bit, row-major (what `admitPng(…, {includePixels})` returns). */
export interface SignatureFrame {
  width: number;
  height: number;
  rgba: Uint8Array;
}

/**
 * Coarse perceptual signature of a frame: mean grey of a 32×32 grid, contrast-stretched between
 * the 2nd and 98th percentile, quantised to 16 levels, packed as 1024 hex digits and prefixed by
 * one hex digit of overall brightness. Equal pages give equal signatures; it is a progress key,
 * not a hash.
 */
export function perceptualSignature(frame: SignatureFrame): string {
  const n = 32;
  const sums = new Float64Array(n * n);
  const counts = new Uint32Array(n * n);
  const { width, height, rgba } = frame;
  for (let y = 0; y < height; y++) {
    const gy = Math.min(n - 1, Math.floor((y * n) / height));
    for (let x = 0; x < width; x++) {
      const gx = Math.min(n - 1, Math.floor((x * n) / width));
      const i = (y * width + x) * 4;
      sums[gy * n + gx] = sums[gy * n + gx]! + 0.299 * rgba[i]! + 0.587 * rgba[i + 1]! + 0.114 * rgba[i + 2]!;
      counts[gy * n + gx] = counts[gy * n + gx]! + 1;
    }
  }
  const cells = Array.from(sums, (s, i) => (counts[i] ? s / counts[i]! : 0));
  const sorted = [...cells].sort((a, b) => a - b);
  const lo = sorted[Math.floor(0.02 * (sorted.length - 1))]!;
  const hi = sorted[Math.ceil(0.98 * (sorted.length - 1))]!;
  const mean = cells.reduce((a, b) => a + b, 0) / cells.length;
  const anchor = Math.min(15, Math.floor(mean / 16)).toString(16);
  const span = hi - lo;
  let out = anchor;
  for (const c of cells) {
    const v = span <= 0 ? 0 : Math.max(0, Math.min(15, Math.floor(((c - lo) / span) * 16)));
    out += v.toString(16);
  }
  return out;
}

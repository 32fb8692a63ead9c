/**
 * Downscaling a screenshot for the analysis packet — pure (bytes in, bytes out). The PNG is
 * decoded by the admission decoder (src/png: one bounded inflate, pngjs's unfilter stages, any
 * colour type normalised to RGBA), reduced by area averaging (each output pixel is the mean of
 * the source pixels it covers, so text stays legible rather than aliased) to fit a box,
 * composited on white, and encoded as opaque 8-bit RGB with the Sub row filter and fast zlib:
 * the minimal file (IHDR, one IDAT, IEND), so no ancillary chunk (a text chunk) of the original
 * reaches the model. The model is billed by pixels, not bytes, so the fastest deflate level is
 * used. pngjs's own encoder is not used: its per-row JavaScript packing cost more than the
 * whole downscale.
 */
import { crc32, deflateSync } from "node:zlib";
import { admitPng } from "../png/index.ts";

/** A downscaled frame: PNG bytes and its size, plus the size it was captured at (pixels). */
export interface DownscaledPng {
  png: Uint8Array;
  width: number;
  height: number;
  originalWidth: number;
  originalHeight: number;
}

/** The size `w`×`h` scaled (never up) to fit `maxW`×`maxH`, at least 1×1. */
export function fitInside(w: number, h: number, maxW: number, maxH: number): { width: number; height: number } {
  const k = Math.min(1, maxW / w, maxH / h);
  return { width: Math.max(1, Math.round(w * k)), height: Math.max(1, Math.round(h * k)) };
}

/** Area-average RGBA `src` (sw×sh) into Sub-filtered PNG scanlines of RGB on white, `dw`×`dh`. */
function areaAverageRows(src: Uint8Array, sw: number, sh: number, dw: number, dh: number): Uint8Array {
  const stride = 1 + dw * 3;
  const out = new Uint8Array(stride * dh);
  const fx = sw / dw;
  const fy = sh / dh;
  const x0s = new Int32Array(dw);
  const x1s = new Int32Array(dw);
  for (let x = 0; x < dw; x++) {
    x0s[x] = Math.floor(x * fx);
    x1s[x] = Math.max(x0s[x]! + 1, Math.floor((x + 1) * fx));
  }
  for (let y = 0; y < dh; y++) {
    const y0 = Math.floor(y * fy);
    const y1 = Math.max(y0 + 1, Math.floor((y + 1) * fy));
    const row = y * stride;
    out[row] = 1; // Sub: each byte stored as the difference from the same channel one pixel left
    let pr = 0;
    let pg = 0;
    let pb = 0;
    for (let x = 0; x < dw; x++) {
      const x0 = x0s[x]!;
      const x1 = x1s[x]!;
      // Integer sums of each channel composited on white, scaled by 255: c·a + 255·(255 − a), so
      // a transparent pixel reads as the page background, not black, and no division is needed
      // until the mean.
      let r = 0;
      let g = 0;
      let b = 0;
      for (let yy = y0; yy < y1; yy++) {
        let i = yy * sw * 4 + x0 * 4;
        for (let xx = x0; xx < x1; xx++, i += 4) {
          const a = src[i + 3]!;
          const white = 65025 - 255 * a;
          r += src[i]! * a + white;
          g += src[i + 1]! * a + white;
          b += src[i + 2]! * a + white;
        }
      }
      const n = (x1 - x0) * (y1 - y0) * 255;
      const half = n >> 1;
      const cr = ((r + half) / n) | 0;
      const cg = ((g + half) / n) | 0;
      const cb = ((b + half) / n) | 0;
      const o = row + 1 + x * 3;
      out[o] = (cr - pr) & 0xff;
      out[o + 1] = (cg - pg) & 0xff;
      out[o + 2] = (cb - pb) & 0xff;
      pr = cr;
      pg = cg;
      pb = cb;
    }
  }
  return out;
}

/** One PNG chunk: length, type, data and the CRC-32 over type + data (bytes). */
export function pngChunk(type: string, data: Uint8Array): Uint8Array {
  const out = new Uint8Array(12 + data.length);
  const v = new DataView(out.buffer);
  v.setUint32(0, data.length);
  for (let i = 0; i < 4; i++) out[4 + i] = type.charCodeAt(i);
  out.set(data, 8);
  v.setUint32(8 + data.length, crc32(out.subarray(4, 8 + data.length)));
  return out;
}

/** An 8-bit RGB, non-interlaced PNG of already filtered scanlines. */
function encodeRgb(width: number, height: number, rows: Uint8Array): Uint8Array {
  const ihdr = new Uint8Array(13);
  const v = new DataView(ihdr.buffer);
  v.setUint32(0, width);
  v.setUint32(4, height);
  ihdr.set([8, 2, 0, 0, 0], 8);
  const parts = [
    new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    pngChunk("IHDR", ihdr),
    pngChunk("IDAT", deflateSync(rows, { level: 1 })),
    pngChunk("IEND", new Uint8Array(0)),
  ];
  return new Uint8Array(Buffer.concat(parts));
}

/**
 * Decode `bytes`, fit them inside `maxW`×`maxH` pixels, re-encode.
 * @throws Error naming the admission code when the bytes are not an admissible PNG (the caller
 *   lists the frame as unreadable)
 */
export function downscalePng(bytes: Uint8Array, maxW: number, maxH: number): DownscaledPng {
  const adm = admitPng(bytes, { includePixels: true });
  if (!adm.ok || !adm.pixels) throw new Error(`not an admissible PNG: ${adm.ok ? "no pixels" : `${adm.code} ${adm.detail}`}`);
  const { width, height } = fitInside(adm.width, adm.height, maxW, maxH);
  const rows = areaAverageRows(adm.pixels, adm.width, adm.height, width, height);
  return { png: encodeRgb(width, height, rows), width, height, originalWidth: adm.width, originalHeight: adm.height };
}

/**
 * Frame conversion for the guest driver: X Window Dump (`xwd -root`) bytes → RGBA pixels → PNG,
 * and (re-exported from png/) the coarse perceptual `stateSignature` of a frame.
 *
 * XWD layout facts used here: a 100-byte header of 25 big-endian CARD32 fields (header size,
 * version 7, pixmap format 2 = ZPixmap, depth, width, height, x offset, byte order, bitmap
 * unit, bit order, pad, bits per pixel, bytes per line, visual class, red/green/blue masks,
 * bits per rgb, colormap entries, ncolors, window geometry), the window name up to
 * `headerSize`, `ncolors` 12-byte colour entries, then `bytesPerLine × height` pixel bytes.
 */
import { crc32, deflateSync } from "node:zlib";
import { HumanishError } from "../errors.ts";

/** Decoded frame: `width × height` pixels, RGBA 8-bit, row-major. */
export interface RgbaFrame {
  width: number;
  height: number;
  rgba: Uint8Array;
}

function bad(detail: string): HumanishError {
  return new HumanishError("HUMANISH_GUEST_CAPTURE_INVALID", `xwd capture: ${detail}`, {
    next: "check that Xvfb runs at 24-bit depth (-screen 0 WxHx24) and that xwd is the x11-apps build",
  });
}

function maskShift(mask: number): { shift: number; max: number } {
  if (mask === 0) throw bad("a colour mask is zero");
  let shift = 0;
  while (((mask >>> shift) & 1) === 0) shift++;
  const max = mask >>> shift;
  return { shift, max };
}

/**
 * Decode a 24/32-bit TrueColor ZPixmap XWD dump.
 *
 * @throws HumanishError `HUMANISH_GUEST_CAPTURE_INVALID` for any other format, a truncated
 *   dump, or dimensions that differ from `expect` when given.
 */
export function decodeXwd(bytes: Uint8Array, expect?: { width: number; height: number }): RgbaFrame {
  if (bytes.length < 100) throw bad("shorter than the 100-byte header");
  const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const f = (i: number) => dv.getUint32(i * 4, false);
  const headerSize = f(0);
  if (f(1) !== 7) throw bad("file version is not 7");
  if (f(2) !== 2) throw bad("pixmap format is not ZPixmap");
  const width = f(4);
  const height = f(5);
  const byteOrder = f(7);
  const bpp = f(11);
  const bpl = f(12);
  const visualClass = f(13);
  const ncolors = f(19);
  if (bpp !== 32) throw bad(`bits per pixel is ${bpp}, expected 32`);
  if (visualClass !== 4 && visualClass !== 5) throw bad("visual is not TrueColor/DirectColor");
  if (width === 0 || height === 0 || width > 4096 || height > 4096) throw bad("dimensions out of range");
  if (expect && (width !== expect.width || height !== expect.height)) {
    throw bad(`frame is ${width}x${height}, expected ${expect.width}x${expect.height}`);
  }
  if (bpl < width * 4) throw bad("bytes per line too small");
  const start = headerSize + ncolors * 12;
  if (headerSize < 100 || start + bpl * height > bytes.length) throw bad("truncated pixel data");
  const r = maskShift(f(14));
  const g = maskShift(f(15));
  const b = maskShift(f(16));
  const little = byteOrder === 0;
  const rgba = new Uint8Array(width * height * 4);
  if (little && f(14) === 0xff0000 && f(15) === 0xff00 && f(16) === 0xff) {
    // Fast path (the Xvfb 24-bit default): bytes B, G, R, pad per pixel.
    for (let y = 0; y < height; y++) {
      let src = start + y * bpl;
      let dst = y * width * 4;
      for (let x = 0; x < width; x++, src += 4, dst += 4) {
        rgba[dst] = bytes[src + 2]!;
        rgba[dst + 1] = bytes[src + 1]!;
        rgba[dst + 2] = bytes[src]!;
        rgba[dst + 3] = 255;
      }
    }
    return { width, height, rgba };
  }
  for (let y = 0; y < height; y++) {
    let src = start + y * bpl;
    let dst = y * width * 4;
    for (let x = 0; x < width; x++, src += 4, dst += 4) {
      const px = dv.getUint32(src, little);
      rgba[dst] = Math.round((((px >>> r.shift) & r.max) * 255) / r.max);
      rgba[dst + 1] = Math.round((((px >>> g.shift) & g.max) * 255) / g.max);
      rgba[dst + 2] = Math.round((((px >>> b.shift) & b.max) * 255) / b.max);
      rgba[dst + 3] = 255;
    }
  }
  return { width, height, rgba };
}

const PNG_SIGNATURE = Uint8Array.of(0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a);

/** One PNG chunk: length, type, data, CRC-32 over type + data. */
function chunk(type: string, data: Uint8Array): Uint8Array {
  const out = new Uint8Array(12 + data.length);
  const dv = new DataView(out.buffer);
  dv.setUint32(0, data.length, false);
  for (let i = 0; i < 4; i++) out[4 + i] = type.charCodeAt(i);
  out.set(data, 8);
  dv.setUint32(8 + data.length, crc32(out.subarray(4, 8 + data.length)), false);
  return out;
}

/**
 * Encode an RGBA frame as an 8-bit RGB, non-interlaced PNG: every scanline with the Sub filter,
 * deflated by zlib at level 3 with its default strategy, in one IDAT. Written here rather than
 * with pngjs, whose per-pixel filter and colour conversion cost ~4× the whole encode for the
 * same bytes (about 200 KB for TodoMVC at 1440×950; adaptive filtering costs ~3× more for no
 * gain on screen frames, run-length-only deflate leaves it ~8× larger), and every observation
 * pays it. The alpha channel is dropped (frames are opaque).
 */
export function encodePng(frame: RgbaFrame): Uint8Array {
  const { width, height, rgba } = frame;
  const stride = width * 3 + 1;
  const raw = new Uint8Array(stride * height);
  for (let y = 0; y < height; y++) {
    let d = y * stride;
    let s = y * width * 4;
    raw[d++] = 1; // Sub: each byte minus the same channel of the pixel to its left
    let pr = 0;
    let pg = 0;
    let pb = 0;
    for (let x = 0; x < width; x++, s += 4) {
      const r = rgba[s]!;
      const g = rgba[s + 1]!;
      const b = rgba[s + 2]!;
      raw[d++] = (r - pr) & 255;
      raw[d++] = (g - pg) & 255;
      raw[d++] = (b - pb) & 255;
      pr = r;
      pg = g;
      pb = b;
    }
  }
  const ihdr = new Uint8Array(13);
  const dv = new DataView(ihdr.buffer);
  dv.setUint32(0, width, false);
  dv.setUint32(4, height, false);
  ihdr.set([8, 2, 0, 0, 0], 8); // 8-bit, RGB, deflate, adaptive filtering method 0, no interlace
  const parts = [PNG_SIGNATURE, chunk("IHDR", ihdr), chunk("IDAT", deflateSync(raw, { level: 3, strategy: 0 })), chunk("IEND", new Uint8Array(0))];
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let off = 0;
  for (const p of parts) {
    out.set(p, off);
    off += p.length;
  }
  return out;
}

/** The frame's coarse perceptual signature (shared with the E2B desktop, so it lives in png/). */
export { perceptualSignature } from "../png/signature.ts";

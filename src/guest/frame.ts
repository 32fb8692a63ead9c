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
import { PNG } from "pngjs";
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

/**
 * Encode an RGBA frame as an 8-bit RGB, non-interlaced PNG (pngjs; fixed Sub filter, deflate
 * level 3 with zlib's default strategy — pngjs's adaptive filter choice costs ~3× the time for
 * no gain on screen frames, and its default run-length-only strategy leaves a textured page
 * about 8× larger: 1.6 MB instead of ~200 KB for TodoMVC at 1440×950, and every byte is
 * re-admitted on the host and sent to the model).
 */
export function encodePng(frame: RgbaFrame): Uint8Array {
  const png = new PNG({ width: frame.width, height: frame.height });
  png.data = Buffer.from(frame.rgba.buffer, frame.rgba.byteOffset, frame.rgba.byteLength);
  const out = PNG.sync.write(png, { colorType: 2, inputColorType: 6, inputHasAlpha: true, deflateLevel: 3, deflateStrategy: 0, filterType: 1 });
  return new Uint8Array(out.buffer, out.byteOffset, out.byteLength);
}

/** The frame's coarse perceptual signature (shared with the E2B desktop, so it lives in png/). */
export { perceptualSignature } from "../png/signature.ts";

/** PNG construction helpers for tests and benchmarks: chunks with real CRCs, real zlib data. */
import { crc32, deflateSync } from "node:zlib";

export const SIGNATURE = Uint8Array.of(0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a);

/** One chunk: length, type, data, CRC over type+data. */
export function chunk(type: string, data: Uint8Array = new Uint8Array(0)): Uint8Array {
  const out = new Uint8Array(12 + data.length);
  const dv = new DataView(out.buffer);
  dv.setUint32(0, data.length);
  for (let i = 0; i < 4; i++) out[4 + i] = type.charCodeAt(i);
  out.set(data, 8);
  dv.setUint32(8 + data.length, crc32(out.subarray(4, 8 + data.length)) >>> 0);
  return out;
}

/** IHDR data: width, height, bit depth, colour type, compression, filter, interlace. */
export function ihdr(width: number, height: number, bitDepth = 8, colorType = 6, compression = 0, filter = 0, interlace = 0): Uint8Array {
  const d = new Uint8Array(13);
  const dv = new DataView(d.buffer);
  dv.setUint32(0, width);
  dv.setUint32(4, height);
  d.set([bitDepth, colorType, compression, filter, interlace], 8);
  return chunk("IHDR", d);
}

/** Raw scanlines (filter byte 0 + pixels) for an 8-bit image, filled with a pattern. */
export function scanlines(width: number, height: number, channels: number, filterByte = 0): Uint8Array {
  const row = 1 + width * channels;
  const out = new Uint8Array(row * height);
  for (let y = 0; y < height; y++) {
    out[y * row] = filterByte;
    for (let i = 1; i < row; i++) out[y * row + i] = (i * 31 + y * 7) & 0xff;
  }
  return out;
}

/** Concatenate parts. */
export function join(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let o = 0;
  for (const p of parts) {
    out.set(p, o);
    o += p.length;
  }
  return out;
}

/** A complete 8-bit PNG from chunks between IHDR and IEND. */
export function png(width: number, height: number, colorType: number, middle: Uint8Array[]): Uint8Array {
  return join([SIGNATURE, ihdr(width, height, 8, colorType), ...middle, chunk("IEND")]);
}

/** IDAT holding the zlib-compressed `raw` bytes. */
export function idat(raw: Uint8Array): Uint8Array {
  return chunk("IDAT", new Uint8Array(deflateSync(raw)));
}

/** Recompute the CRC of every chunk after the signature (to push mutations past CRC checks). */
export function fixCrcs(bytes: Uint8Array): Uint8Array {
  const out = Uint8Array.from(bytes);
  const dv = new DataView(out.buffer);
  let off = 8;
  while (off + 12 <= out.length) {
    const len = dv.getUint32(off);
    if (len > out.length - off - 12) break;
    dv.setUint32(off + 8 + len, crc32(out.subarray(off + 4, off + 8 + len)) >>> 0);
    off += 12 + len;
  }
  return out;
}

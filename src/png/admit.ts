/**
 * PNG admission: the one strict gate every screenshot passes before it enters a bundle or a
 * model (the admission policy and its handed cases: test/fixtures/cases/README.md).
 *
 * Checks run in order and the first failure decides; nothing is allocated in proportion to the
 * image before the header has been validated, and nothing is inflated beyond the size the
 * header implies. `pngjs` (its sync decoder only) runs last, after our own checks decided the
 * file is well-formed — it alone would accept files with no IDAT, bad checksums or trailing data.
 * pngjs's chunk parser and inflate are not used: this module walks the chunks and inflates once,
 * under its own bound, and hands the result to pngjs's post-inflate stages (./pngjs-stages.ts).
 */
import { crc32, inflateSync } from "node:zlib";
import { type PngjsBitmapInfo, pngjsDecodeInflated, pngjsUnfilter } from "./pngjs-stages.ts";

/** Default and maximum size of an admitted file: 8 MiB. */
export const PNG_MAX_BYTES = 8 * 1024 * 1024;
/** Smallest size considered at all (signature + IHDR + chunk headers): 45 bytes. */
export const PNG_MIN_BYTES = 45;
/** Default and maximum width or height: 4096 px. */
export const PNG_MAX_SIDE = 4096;
/** Default and maximum width × height: 16,000,000 px. */
export const PNG_MAX_PIXELS = 16_000_000;

/** Stable rejection codes, one per kind of fault. */
export const PNG_REJECTION_CODES = [
  "HUMANISH_PNG_TOO_SMALL",
  "HUMANISH_PNG_TOO_LARGE",
  "HUMANISH_PNG_SIGNATURE",
  "HUMANISH_PNG_IHDR_MISSING",
  "HUMANISH_PNG_IHDR_CRC",
  "HUMANISH_PNG_ZERO_DIMENSION",
  "HUMANISH_PNG_DIMENSION_TOO_LARGE",
  "HUMANISH_PNG_TOO_MANY_PIXELS",
  "HUMANISH_PNG_BIT_DEPTH",
  "HUMANISH_PNG_COLOR_TYPE",
  "HUMANISH_PNG_COMPRESSION_METHOD",
  "HUMANISH_PNG_FILTER_METHOD",
  "HUMANISH_PNG_INTERLACED",
  "HUMANISH_PNG_CHUNK_TRUNCATED",
  "HUMANISH_PNG_CHUNK_TYPE",
  "HUMANISH_PNG_CHUNK_CRC",
  "HUMANISH_PNG_CHUNK_ORDER",
  "HUMANISH_PNG_UNKNOWN_CRITICAL_CHUNK",
  "HUMANISH_PNG_IDAT_NOT_CONTIGUOUS",
  "HUMANISH_PNG_PALETTE",
  "HUMANISH_PNG_NO_IDAT",
  "HUMANISH_PNG_NO_IEND",
  "HUMANISH_PNG_IEND_LENGTH",
  "HUMANISH_PNG_TRAILING_BYTES",
  "HUMANISH_PNG_ZLIB_CORRUPT",
  "HUMANISH_PNG_ZLIB_CHECKSUM",
  "HUMANISH_PNG_ZLIB_TRUNCATED",
  "HUMANISH_PNG_ZLIB_TRAILING",
  "HUMANISH_PNG_DATA_SHORT",
  "HUMANISH_PNG_DATA_LONG",
  "HUMANISH_PNG_ROW_FILTER",
  "HUMANISH_PNG_DECODE_FAILED",
] as const;

/** One rejection code. */
export type PngRejectionCode = (typeof PNG_REJECTION_CODES)[number];

/** PNG colour types admitted at bit depth 8: grey, RGB, palette, grey+alpha, RGBA. */
export type PngColorType = 0 | 2 | 3 | 4 | 6;

/**
 * Optional tighter limits. Each value can only lower the default (a larger one is clamped to
 * the default). `includePixels` returns the decoded RGBA pixels (width·height·4 bytes).
 */
export interface PngAdmissionLimits {
  /** Largest file in bytes (≤ 8 MiB). */
  maxBytes?: number;
  /** Largest width and height in px (≤ 4096). */
  maxSide?: number;
  /** Largest width × height (≤ 16,000,000). */
  maxPixels?: number;
  /** Return decoded RGBA pixels on success. */
  includePixels?: boolean;
}

/** Result of {@link admitPng}: admitted with its header facts, or rejected with a code. */
export type PngAdmission =
  | { ok: true; width: number; height: number; colorType: PngColorType; pixels?: Uint8Array }
  | { ok: false; code: PngRejectionCode; detail: string };

const SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a] as const;
const CHANNELS: Record<number, number> = { 0: 1, 2: 3, 3: 1, 4: 2, 6: 4 };
/** A chunk type as the u32 its four ASCII letters spell big-endian (`IHDR` → 0x49484452). */
const chunkType = (name: string): number => [...name].reduce((n, c) => n * 256 + c.charCodeAt(0), 0);
const IHDR = chunkType("IHDR");
const PLTE = chunkType("PLTE");
const IDAT = chunkType("IDAT");
const IEND = chunkType("IEND");
const TRNS = chunkType("tRNS");
const GAMA = chunkType("gAMA");

function reject(code: PngRejectionCode, detail: string): PngAdmission {
  return { ok: false, code, detail };
}

function u32(b: Uint8Array, o: number): number {
  return ((b[o]! << 24) >>> 0) + (b[o + 1]! << 16) + (b[o + 2]! << 8) + b[o + 3]!;
}

function typeName(t: number): string {
  return String.fromCharCode((t >>> 24) & 0xff, (t >>> 16) & 0xff, (t >>> 8) & 0xff, t & 0xff).replace(/[^A-Za-z]/g, "?");
}

function isLetter(c: number): boolean {
  return (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a);
}

function clamp(value: number | undefined, max: number): number {
  return value === undefined || !Number.isFinite(value) || value > max ? max : Math.max(0, Math.floor(value));
}

/**
 * Decide whether `bytes` is an admissible screenshot PNG.
 *
 * Order (first failure wins): size 45 B … 8 MiB; signature; IHDR first with length 13 and a
 * valid CRC; width/height non-zero, ≤ 4096 each and ≤ 16,000,000 pixels (before any
 * allocation); bit depth 8, colour type 0/2/3/4/6, compression 0, filter 0, not interlaced;
 * chunk walk (lengths fit, letter types, every CRC, IHDR once, PLTE once before IDAT and only
 * where allowed, no unknown critical chunk, IDATs consecutive, IEND empty and last, no bytes
 * after it); at least one IDAT; palette present for colour type 3; bounded inflate that must
 * yield exactly height × (1 + width × channels) bytes with a valid Adler-32 and no trailing
 * compressed bytes; row filter types 0–4; then pngjs's sync unfilter/bitmap/normalise stages
 * on that same inflated data (one inflate in total), whose output must be width × height × 4
 * (without `includePixels`, a non-palette image stops after unfiltering: the same verdict).
 *
 * Never throws for any input; returns `{ok:false, code, detail}` with a
 * {@link PngRejectionCode}. `detail` names the failing field and offset.
 */
export function admitPng(bytes: Uint8Array, limits: PngAdmissionLimits = {}): PngAdmission {
  const maxBytes = clamp(limits.maxBytes, PNG_MAX_BYTES);
  const maxSide = clamp(limits.maxSide, PNG_MAX_SIDE);
  const maxPixels = clamp(limits.maxPixels, PNG_MAX_PIXELS);
  const n = bytes.byteLength;

  // 1. Size bounds.
  if (n < PNG_MIN_BYTES) return reject("HUMANISH_PNG_TOO_SMALL", `file is ${n} bytes; a PNG needs at least ${PNG_MIN_BYTES}`);
  if (n > maxBytes) return reject("HUMANISH_PNG_TOO_LARGE", `file is ${n} bytes; the limit is ${maxBytes}`);

  // 2. Signature.
  for (let i = 0; i < 8; i++) if (bytes[i] !== SIGNATURE[i]) return reject("HUMANISH_PNG_SIGNATURE", `byte ${i} of the PNG signature is wrong`);

  // 3. IHDR first, 13 bytes, valid CRC.
  if (u32(bytes, 8) !== 13 || u32(bytes, 12) !== IHDR) return reject("HUMANISH_PNG_IHDR_MISSING", "the first chunk at offset 8 is not a 13-byte IHDR");
  if (crc32(bytes.subarray(12, 29)) >>> 0 !== u32(bytes, 29)) return reject("HUMANISH_PNG_IHDR_CRC", "IHDR CRC at offset 29 does not match");

  // 4. Dimensions, from the header alone.
  const width = u32(bytes, 16);
  const height = u32(bytes, 20);
  if (width === 0 || height === 0) return reject("HUMANISH_PNG_ZERO_DIMENSION", `IHDR width ${width} × height ${height} has a zero dimension`);
  if (width > maxSide || height > maxSide)
    return reject("HUMANISH_PNG_DIMENSION_TOO_LARGE", `IHDR width ${width} × height ${height} exceeds ${maxSide} px per side`);
  if (width * height > maxPixels) return reject("HUMANISH_PNG_TOO_MANY_PIXELS", `IHDR ${width} × ${height} = ${width * height} pixels exceeds ${maxPixels}`);

  // 5. IHDR fields.
  const bitDepth = bytes[24]!;
  const colorType = bytes[25]!;
  if (bitDepth !== 8) return reject("HUMANISH_PNG_BIT_DEPTH", `IHDR bit depth is ${bitDepth}; only 8 is admitted`);
  const channels = CHANNELS[colorType];
  if (channels === undefined) return reject("HUMANISH_PNG_COLOR_TYPE", `IHDR colour type is ${colorType}; admitted: 0, 2, 3, 4, 6`);
  if (bytes[26] !== 0) return reject("HUMANISH_PNG_COMPRESSION_METHOD", `IHDR compression method is ${bytes[26]}; only 0 exists`);
  if (bytes[27] !== 0) return reject("HUMANISH_PNG_FILTER_METHOD", `IHDR filter method is ${bytes[27]}; only 0 exists`);
  if (bytes[28] !== 0) return reject("HUMANISH_PNG_INTERLACED", `IHDR interlace method is ${bytes[28]}; only non-interlaced (0) is admitted`);

  // 6. Chunk walk.
  const idat: Uint8Array[] = [];
  let idatBytes = 0;
  let idatState: "none" | "in" | "after" = "none";
  let sawPlte = false;
  let sawIend = false;
  // What pngjs's own chunk parser would record (it never sees the file): palette entries,
  // tRNS effects in file order, and the first chunk it would refuse to read.
  const palette: number[][] = [];
  let transColor: number[] | undefined;
  let sawTrns = false;
  let decoderRefusal: string | null = null;
  let off = 33;
  while (off < n) {
    if (n - off < 12) return reject("HUMANISH_PNG_CHUNK_TRUNCATED", `${n - off} stray bytes at offset ${off} cannot hold a chunk`);
    const len = u32(bytes, off);
    const type = u32(bytes, off + 4);
    if (len > n - off - 12) return reject("HUMANISH_PNG_CHUNK_TRUNCATED", `chunk at offset ${off} declares ${len} bytes but only ${n - off - 12} remain`);
    for (let i = 4; i < 8; i++)
      if (!isLetter(bytes[off + i]!)) return reject("HUMANISH_PNG_CHUNK_TYPE", `chunk type at offset ${off + 4} is not four ASCII letters`);
    const name = typeName(type);
    if (crc32(bytes.subarray(off + 4, off + 8 + len)) >>> 0 !== u32(bytes, off + 8 + len))
      return reject("HUMANISH_PNG_CHUNK_CRC", `${name} chunk at offset ${off}: CRC does not match`);
    if (type === IDAT) {
      if (idatState === "after") return reject("HUMANISH_PNG_IDAT_NOT_CONTIGUOUS", `IDAT chunk at offset ${off} follows a non-IDAT chunk after earlier IDATs`);
      idatState = "in";
      idat.push(bytes.subarray(off + 8, off + 8 + len));
      idatBytes += len;
    } else {
      if (idatState === "in") idatState = "after";
      if (type === IHDR) return reject("HUMANISH_PNG_CHUNK_ORDER", `second IHDR chunk at offset ${off}`);
      if (type === PLTE) {
        if (sawPlte) return reject("HUMANISH_PNG_CHUNK_ORDER", `second PLTE chunk at offset ${off}`);
        if (idatState !== "none") return reject("HUMANISH_PNG_CHUNK_ORDER", `PLTE chunk at offset ${off} comes after IDAT`);
        if (colorType === 0 || colorType === 4)
          return reject("HUMANISH_PNG_PALETTE", `PLTE chunk at offset ${off} is not allowed for colour type ${colorType}`);
        if (len === 0 || len % 3 !== 0 || len > 256 * 3)
          return reject("HUMANISH_PNG_PALETTE", `PLTE chunk at offset ${off} has ${len} bytes; needs 3…768 and a multiple of 3`);
        sawPlte = true;
        for (let i = off + 8; i < off + 8 + len; i += 3) palette.push([bytes[i]!, bytes[i + 1]!, bytes[i + 2]!, 0xff]);
      } else if (type === TRNS) {
        if (idatState !== "none") return reject("HUMANISH_PNG_CHUNK_ORDER", `tRNS chunk at offset ${off} comes after IDAT`);
        if (colorType === 4 || colorType === 6)
          return reject("HUMANISH_PNG_CHUNK_ORDER", `tRNS chunk at offset ${off} is not allowed for colour type ${colorType}`);
        const need = colorType === 0 ? len === 2 : colorType === 2 ? len === 6 : sawPlte && len <= 256;
        if (!need) return reject("HUMANISH_PNG_CHUNK_ORDER", `tRNS chunk at offset ${off} has a length (${len}) invalid for colour type ${colorType}`);
        sawTrns = true;
        const d = off + 8;
        if (colorType === 3) {
          if (len > palette.length) decoderRefusal ??= `tRNS chunk at offset ${off} has ${len} entries for a ${palette.length}-entry palette`;
          else for (let i = 0; i < len; i++) palette[i]![3] = bytes[d + i]!;
        } else
          transColor =
            colorType === 0
              ? [(bytes[d]! << 8) | bytes[d + 1]!]
              : [(bytes[d]! << 8) | bytes[d + 1]!, (bytes[d + 2]! << 8) | bytes[d + 3]!, (bytes[d + 4]! << 8) | bytes[d + 5]!];
      } else if (type === GAMA) {
        if (len < 4) decoderRefusal ??= `gAMA chunk at offset ${off} has ${len} bytes; needs 4`;
      } else if (type === IEND) {
        if (len !== 0) return reject("HUMANISH_PNG_IEND_LENGTH", `IEND chunk at offset ${off} has ${len} data bytes; must be 0`);
        if (off + 12 !== n) return reject("HUMANISH_PNG_TRAILING_BYTES", `${n - off - 12} bytes follow IEND at offset ${off}`);
        sawIend = true;
        off += 12;
        break;
      } else if ((type & 0x20000000) === 0) {
        return reject("HUMANISH_PNG_UNKNOWN_CRITICAL_CHUNK", `unknown critical chunk ${name} at offset ${off}`);
      }
    }
    off += 12 + len;
  }

  // 7. Must have image data and reach IEND.
  if (idat.length === 0) return reject("HUMANISH_PNG_NO_IDAT", "no IDAT chunk: the file has no image data");
  if (!sawIend) return reject("HUMANISH_PNG_NO_IEND", "the file ends without an IEND chunk (truncated)");
  if (colorType === 3 && !sawPlte) return reject("HUMANISH_PNG_PALETTE", "colour type 3 needs a PLTE chunk before IDAT");

  // 8. Bounded inflate: never more output than the header implies.
  const rowBytes = 1 + width * channels;
  const expected = rowBytes * height;
  const compressed = idat.length === 1 ? idat[0]! : Buffer.concat(idat, idatBytes);
  let inflated: Buffer;
  try {
    const opts = { maxOutputLength: expected, chunkSize: Math.max(64, Math.min(expected, 1 << 24)), info: true };
    const res = inflateSync(compressed, opts as Parameters<typeof inflateSync>[1]) as unknown as {
      buffer: Buffer;
      engine: { bytesWritten: number };
    };
    inflated = res.buffer;
    if (res.engine.bytesWritten !== compressed.byteLength)
      return reject("HUMANISH_PNG_ZLIB_TRAILING", `${compressed.byteLength - res.engine.bytesWritten} bytes follow the end of the zlib stream in IDAT`);
  } catch (e) {
    const code = (e as { code?: unknown }).code;
    const msg = e instanceof Error ? e.message : "";
    if (code === "ERR_BUFFER_TOO_LARGE" || e instanceof RangeError)
      return reject("HUMANISH_PNG_DATA_LONG", `image data inflates past the ${expected} bytes the header implies`);
    if (code === "Z_BUF_ERROR") return reject("HUMANISH_PNG_ZLIB_TRUNCATED", "the zlib stream in IDAT ends before its end marker");
    if (/incorrect data check/i.test(msg)) return reject("HUMANISH_PNG_ZLIB_CHECKSUM", "the zlib Adler-32 checksum of IDAT does not match");
    return reject("HUMANISH_PNG_ZLIB_CORRUPT", "the zlib stream in IDAT is corrupt");
  }
  if (inflated.byteLength !== expected)
    return reject(
      inflated.byteLength < expected ? "HUMANISH_PNG_DATA_SHORT" : "HUMANISH_PNG_DATA_LONG",
      `image data inflates to ${inflated.byteLength} bytes; the header implies ${expected}`,
    );
  for (let row = 0, o = 0; row < height; row++, o += rowBytes)
    if (inflated[o]! > 4) return reject("HUMANISH_PNG_ROW_FILTER", `row ${row} uses filter type ${inflated[o]}; only 0–4 exist`);

  // 9. Full decode with pngjs's sync stages (row unfiltering, RGBA mapping, palette and
  // transparency), fed the image data inflated and size-checked above, so the IDAT stream is
  // inflated once. Every chunk CRC was verified natively in the walk, and the chunk facts pngjs's
  // parser would derive (palette, tRNS, refusals) were recorded there.
  if (decoderRefusal !== null) return reject("HUMANISH_PNG_DECODE_FAILED", `the PNG decoder refuses the file: ${decoderRefusal}`);
  const info: PngjsBitmapInfo = {
    width,
    height,
    depth: 8,
    interlace: false,
    palette: sawPlte ? palette : (colorType & 1) !== 0,
    color: (colorType & 2) !== 0,
    alpha: (colorType & 4) !== 0 || sawTrns,
    bpp: channels,
    colorType,
  };
  if (transColor !== undefined) info.transColor = transColor;
  // For every colour type but the palette, mapping unfiltered samples to RGBA is a copy that
  // cannot refuse data of the exact size checked above; only the palette lookup can. So when
  // nobody asked for pixels, those types stop after unfiltering, the step that can refuse: the
  // same verdict as a full decode, for about half its CPU and none of its 4·w·h bytes.
  if (!limits.includePixels && colorType !== 3) return admitUnfiltered(inflated, info);
  let decoded: Buffer;
  try {
    decoded = pngjsDecodeInflated(inflated, info);
  } catch {
    return reject("HUMANISH_PNG_DECODE_FAILED", "the PNG decoder refused the image data");
  }
  if (decoded.byteLength !== width * height * 4)
    return reject("HUMANISH_PNG_DECODE_FAILED", `decoded ${decoded.byteLength} bytes; ${width} × ${height} RGBA needs ${width * height * 4}`);
  const result: PngAdmission = { ok: true, width, height, colorType: colorType as PngColorType };
  if (limits.includePixels) result.pixels = new Uint8Array(decoded.buffer, decoded.byteOffset, decoded.byteLength);
  return result;
}

/** The verdict of unfiltering `inflated` alone (no palette): admitted with its header facts, or a decoder refusal. */
function admitUnfiltered(inflated: Buffer, info: PngjsBitmapInfo): PngAdmission {
  const { width, height, bpp } = info;
  let samples: Buffer;
  try {
    samples = pngjsUnfilter(inflated, info);
  } catch {
    return reject("HUMANISH_PNG_DECODE_FAILED", "the PNG decoder refused the image data");
  }
  if (samples.byteLength !== width * height * bpp)
    return reject("HUMANISH_PNG_DECODE_FAILED", `unfiltered ${samples.byteLength} bytes; ${width} × ${height} × ${bpp} samples need ${width * height * bpp}`);
  return { ok: true, width, height, colorType: info.colorType as PngColorType };
}

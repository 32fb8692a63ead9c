/**
 * Typed access to the synchronous decode stages of `pngjs` 7 that run after inflate
 * (`lib/filter-parse-sync.js`, `lib/bitmapper.js`, `lib/format-normaliser.js`), so that
 * {@link admitPng} can hand pngjs the image data it has already inflated under its own bound
 * instead of letting `PNG.sync.read` inflate the same IDAT stream a second time.
 *
 * Only these sync stages are used: no stream, no async parser, no inflate of pngjs.
 */

/** The image description the pngjs stages read (the object pngjs's own parser builds from IHDR/PLTE/tRNS). */
export interface PngjsBitmapInfo {
  /** Width in px. */
  width: number;
  /** Height in px. */
  height: number;
  /** Bits per sample (admission only lets 8 through). */
  depth: number;
  /** Always false here: admission refuses interlaced files. */
  interlace: boolean;
  /** Palette entries `[r, g, b, a]` (colour type 3), or whether IHDR's palette bit is set before PLTE is seen. */
  palette: boolean | number[][];
  /** IHDR colour bit (2). */
  color: boolean;
  /** IHDR alpha bit (4), also set by a tRNS chunk. */
  alpha: boolean;
  /** Samples per pixel: 1 (grey, palette), 2 (grey+alpha), 3 (RGB), 4 (RGBA). */
  bpp: number;
  /** IHDR colour type 0, 2, 3, 4 or 6. */
  colorType: number;
  /** tRNS key colour: `[grey]` (type 0) or `[r, g, b]` (type 2), 16-bit sample values. */
  transColor?: number[];
}

interface FilterParseSync {
  process(inflated: Buffer, info: PngjsBitmapInfo): Buffer;
}
interface Bitmapper {
  dataToBitMap(unfiltered: Buffer, info: PngjsBitmapInfo): Buffer;
}
type FormatNormaliser = (bitmap: Buffer, info: PngjsBitmapInfo, skipRescale?: boolean) => Buffer;

// Plain `require` with literal paths, so `bun build --compile` bundles these modules into the
// single binary (a `createRequire(...)` call is invisible to the bundler).
const filterParseSync = require("pngjs/lib/filter-parse-sync.js") as FilterParseSync;
const bitmapper = require("pngjs/lib/bitmapper.js") as Bitmapper;
const formatNormaliser = require("pngjs/lib/format-normaliser.js") as FormatNormaliser;

/**
 * Run pngjs's row unfiltering alone on already inflated, already size-checked image data:
 * returns `height × width × bpp` samples. Throws on an unknown row filter type.
 */
export function pngjsUnfilter(inflated: Buffer, info: PngjsBitmapInfo): Buffer {
  return filterParseSync.process(inflated, info);
}

/**
 * Run pngjs's post-inflate pipeline — row unfiltering, bitmap mapping to RGBA, palette and
 * transparency normalisation — on already inflated, already size-checked image data.
 *
 * `inflated` must be exactly `height × (1 + width × bpp)` bytes (8-bit, non-interlaced).
 * Returns `width × height × 4` RGBA bytes. Throws whatever pngjs throws (e.g. a palette index
 * beyond the palette, an unknown row filter); the caller maps that to a rejection.
 */
export function pngjsDecodeInflated(inflated: Buffer, info: PngjsBitmapInfo): Buffer {
  const bitmap = bitmapper.dataToBitMap(pngjsUnfilter(inflated, info), info);
  return formatNormaliser(bitmap, info, false);
}

/**
 * Small real PNGs for tests, encoded by pngjs: the one maker every folder's tests share.
 * Deterministic per seed, and each seed gives other bytes (so frames that must differ do).
 * For frames the size and compressibility of real UI screenshots, see `screenshots.ts`.
 */
import { PNG } from "pngjs";
import { rng } from "./rng.ts";

/** How the pixels are filled. */
export type PngFill =
  /** Fast-varying bytes per pixel (compresses somewhat; a different pattern per seed). */
  | "pattern"
  /** Four vertical colour bands and a vertical gradient (compresses well). */
  | "bands"
  /** Every colour channel the seed's value (0–255): a flat grey. */
  | "flat"
  /** Seeded noise: incompressible, about 3 (RGB) or 4 (RGBA) bytes a pixel. */
  | "noise";

/** Options of {@link makePng}. */
export interface MakePngOptions {
  /** Default 1. */
  seed?: number;
  /** Default `pattern`. */
  fill?: PngFill;
  /** RGBA (colour type 6) instead of RGB (colour type 2). Default false. */
  alpha?: boolean;
}

/** The RGB value of pixel `i` (at column `x`, row `y`) for `fill`. */
function pixel(fill: PngFill, seed: number, i: number, x: number, y: number, width: number, height: number, noise: () => number): [number, number, number] {
  if (fill === "flat") return [seed & 0xff, seed & 0xff, seed & 0xff];
  if (fill === "noise") return [Math.floor(noise() * 256), Math.floor(noise() * 256), Math.floor(noise() * 256)];
  if (fill === "bands") {
    const band = Math.floor((x / width) * 4);
    return [(band * 60 + seed * 90) & 0xff, Math.floor((y * 255) / height), 200 - band * 40];
  }
  return [(i * 7 + seed) & 0xff, (i * 13 + seed * 3) & 0xff, ((i >> 3) + seed) & 0xff];
}

/** A real `width`×`height` PNG (RGB unless `alpha`), filled as `opts.fill` says. */
export function makePng(width = 4, height = 3, opts: MakePngOptions = {}): Uint8Array {
  const { seed = 1, fill = "pattern", alpha = false } = opts;
  const png = new PNG({ width, height });
  const noise = rng(seed);
  for (let y = 0, i = 0; y < height; y++) {
    for (let x = 0; x < width; x++, i++) {
      const [r, g, b] = pixel(fill, seed, i, x, y, width, height, noise);
      png.data[i * 4] = r;
      png.data[i * 4 + 1] = g;
      png.data[i * 4 + 2] = b;
      png.data[i * 4 + 3] = 255;
    }
  }
  return new Uint8Array(PNG.sync.write(png, { colorType: alpha ? 6 : 2 }));
}

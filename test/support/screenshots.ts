/**
 * Screenshot-like PNGs for tests that need the size of real frames, not 1×1 pixels: a page of
 * the given size with a coloured header, a soft background gradient, a text field and rows of
 * glyph-like dark strokes (anti-aliased edges, varying per row), so they compress the way UI
 * screenshots do (a few hundred KB at 1024×768), not like noise or a flat fill. Deterministic per
 * seed; encoded by pngjs.
 */
import { PNG } from "pngjs";
import { rng } from "./rng.ts";

/** One screenshot-like PNG, `width`×`height` pixels, different for each `seed`. */
export function screenshotPng(seed: number, width = 1024, height = 768): Uint8Array {
  const r = rng(seed);
  const png = new PNG({ width, height });
  const d = png.data;
  const hue = Math.floor(r() * 200);
  const set = (x: number, y: number, v: [number, number, number]) => {
    const i = (y * width + x) * 4;
    d[i] = v[0];
    d[i + 1] = v[1];
    d[i + 2] = v[2];
    d[i + 3] = 255;
  };
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const g = 245 - Math.floor((y / height) * 12);
      set(x, y, y < 64 ? [hue, 80, 160] : [g, g, 250 - Math.floor((x / width) * 8)]);
    }
  }
  // A text field, then rows of "words": runs of strokes with grey anti-aliased edges.
  for (let y = 100; y < 140; y++) for (let x = 120; x < width - 120; x++) set(x, y, y === 100 || y === 139 ? [180, 180, 180] : [255, 255, 255]);
  for (let row = 0; row < 28; row++) {
    const top = 170 + row * 21;
    if (top + 14 >= height) break;
    let x = 130 + Math.floor(r() * 20);
    const end = 300 + Math.floor(r() * (width - 450));
    while (x < end) {
      const word = 12 + Math.floor(r() * 60);
      for (let gx = x; gx < Math.min(x + word, width); gx++) {
        for (let gy = top; gy < top + 14; gy++) {
          const ink = r();
          if (ink < 0.45) continue;
          const v = ink > 0.8 ? 40 : 40 + Math.floor((0.8 - ink) * 500);
          set(gx, gy, [v, v, Math.min(255, v + 10)]);
        }
      }
      x += word + 8 + Math.floor(r() * 6);
    }
  }
  // One row filter (Sub) instead of trying all five per row: the same kind of file, much faster.
  return new Uint8Array(PNG.sync.write(png, { filterType: 1 }));
}

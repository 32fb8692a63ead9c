/**
 * Seeded mutation fuzzing of valid PNGs: admitPng never throws, never hangs, always returns a
 * typed result. Half of the mutations repair chunk CRCs afterwards so they reach the chunk walk,
 * the bounded inflate and the decoder instead of stopping at a checksum.
 */
import { expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join as joinPath } from "node:path";
import { admitPng, PNG_REJECTION_CODES } from "../../src/png/index.ts";
import { makePng } from "../support/png.ts";
import { rng } from "../support/rng.ts";
import { chunk, fixCrcs, idat, join, png, scanlines } from "./support.ts";

const SUITE = joinPath(import.meta.dir, "../fixtures/pngsuite");
const SEEDS: Uint8Array[] = [
  makePng(16, 9, { seed: 1, alpha: true }),
  makePng(3, 40, { seed: 2, alpha: true }),
  png(5, 4, 3, [
    chunk(
      "PLTE",
      new Uint8Array(12).map((_, i) => i * 20),
    ),
    chunk("tRNS", Uint8Array.of(0, 128)),
    idat(scanlines(5, 4, 1).map((v, i) => (i % 6 === 0 ? v & 3 : v & 3))),
  ]),
  png(7, 3, 0, [idat(scanlines(7, 3, 1))]),
  png(6, 6, 4, [idat(scanlines(6, 6, 2, 2))]),
  ...["basn2c08.png", "basn3p08.png", "basn6a08.png", "tbrn2c08.png", "f04n2c08.png"].map((f) => new Uint8Array(readFileSync(joinPath(SUITE, f)))),
];
const CODES = new Set<string>(PNG_REJECTION_CODES);

function mutate(src: Uint8Array, r: () => number): Uint8Array {
  let b: Uint8Array = Uint8Array.from(src);
  const ops = 1 + Math.floor(r() * 3);
  for (let k = 0; k < ops; k++) {
    const i = Math.floor(r() * b.length);
    const pick = Math.floor(r() * 7);
    if (pick <= 1) b[i] = Math.floor(r() * 256);
    else if (pick === 2) b[i]! ^= 1 << Math.floor(r() * 8);
    else if (pick === 3) b = b.subarray(0, i);
    else if (pick === 4) b = join([b.subarray(0, i), b.subarray(Math.min(b.length, i + 1 + Math.floor(r() * 16)))]);
    else if (pick === 5) b = join([b.subarray(0, i), new Uint8Array(1 + Math.floor(r() * 8)).map(() => Math.floor(r() * 256)), b.subarray(i)]);
    else if (b.length > 40) {
      // Header fields: width, height, depth, colour type, interlace.
      const field = [16 + Math.floor(r() * 8), 24, 25, 28][Math.floor(r() * 4)]!;
      b[field] = [0, 1, 2, 3, 4, 6, 8, 16, 255][Math.floor(r() * 9)]!;
    }
  }
  return r() < 0.5 ? fixCrcs(b) : b;
}

test("admitPng: 40,000 seeded mutations of valid PNGs, always a typed result", () => {
  const r = rng(0x9e3779b9);
  let admitted = 0;
  const seen = new Set<string>();
  for (let n = 0; n < 40_000; n++) {
    const bytes = mutate(SEEDS[n % SEEDS.length]!, r);
    const res = admitPng(bytes);
    if (res.ok) {
      admitted++;
      if (!(res.width > 0 && res.height > 0 && [0, 2, 3, 4, 6].includes(res.colorType))) throw new Error("admitted with impossible facts");
    } else {
      if (!CODES.has(res.code) || typeof res.detail !== "string") throw new Error(`untyped rejection ${JSON.stringify(res)}`);
      seen.add(res.code);
    }
  }
  // The mutations reach deep checks, not only the signature and CRCs.
  for (const c of ["HUMANISH_PNG_CHUNK_CRC", "HUMANISH_PNG_ZLIB_CORRUPT", "HUMANISH_PNG_DATA_SHORT", "HUMANISH_PNG_CHUNK_TRUNCATED"]) expect(seen).toContain(c);
  expect(admitted).toBeGreaterThan(0);
}, 60_000);

test("admitPng: the verdict without pixels is the full decode's, over PngSuite and 20,000 mutations", () => {
  // Admission skips the RGBA mapping when nobody asks for pixels; that must never change a verdict.
  const verdict = (b: Uint8Array, includePixels: boolean) => {
    const res = admitPng(b, { includePixels });
    return res.ok ? { ok: true, width: res.width, height: res.height, colorType: res.colorType } : { ok: false, code: res.code };
  };
  const suite = readdirSync(SUITE)
    .filter((f) => f.endsWith(".png"))
    .map((f) => new Uint8Array(readFileSync(joinPath(SUITE, f))));
  const r = rng(0x85ebca6b);
  const inputs = [...suite, ...Array.from({ length: 20_000 }, (_, n) => mutate(SEEDS[n % SEEDS.length]!, r))];
  let admitted = 0;
  for (const b of inputs) {
    const full = verdict(b, true);
    expect(verdict(b, false)).toEqual(full);
    if (full.ok) admitted++;
  }
  expect(admitted).toBeGreaterThan(53);
}, 60_000);

import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join as joinPath } from "node:path";
import { deflateSync } from "node:zlib";
import { PNG } from "pngjs";
import { admitPng, PNG_MAX_BYTES, PNG_REJECTION_CODES, type PngAdmission, type PngRejectionCode } from "../../src/png/index.ts";
import { chunk, fixCrcs, idat, ihdr, join, png, SIGNATURE, scanlines } from "./support.ts";

const FIXTURES = joinPath(import.meta.dir, "../fixtures");
const SUITE = joinPath(FIXTURES, "pngsuite");
const CASES = joinPath(FIXTURES, "cases/png");

function rejected(r: PngAdmission): PngRejectionCode | "admitted" {
  return r.ok ? "admitted" : r.code;
}

describe("PngSuite: every file gets its expected verdict with a specific code", () => {
  const rows = readFileSync(joinPath(SUITE, "expected-verdicts.tsv"), "utf8")
    .trim()
    .split("\n")
    .slice(1)
    .map((l) => l.split("\t") as [string, string, string]);
  // Corrupt files: the specific code each must get (two have an allowed alternative; see the suite README).
  const corrupt: Record<string, PngRejectionCode[]> = {
    "xc1n0g08.png": ["HUMANISH_PNG_COLOR_TYPE"],
    "xc9n2c08.png": ["HUMANISH_PNG_COLOR_TYPE"],
    "xcrn0g04.png": ["HUMANISH_PNG_SIGNATURE"],
    "xlfn0g04.png": ["HUMANISH_PNG_SIGNATURE"],
    "xcsn0g01.png": ["HUMANISH_PNG_BIT_DEPTH", "HUMANISH_PNG_CHUNK_CRC"],
    "xdtn0g01.png": ["HUMANISH_PNG_BIT_DEPTH", "HUMANISH_PNG_NO_IDAT"],
    "xd0n2c08.png": ["HUMANISH_PNG_BIT_DEPTH"],
    "xd3n2c08.png": ["HUMANISH_PNG_BIT_DEPTH"],
    "xd9n2c08.png": ["HUMANISH_PNG_BIT_DEPTH"],
    "xhdn0g08.png": ["HUMANISH_PNG_IHDR_CRC"],
    "xs1n0g01.png": ["HUMANISH_PNG_SIGNATURE"],
    "xs2n0g01.png": ["HUMANISH_PNG_SIGNATURE"],
    "xs4n0g01.png": ["HUMANISH_PNG_SIGNATURE"],
    "xs7n0g01.png": ["HUMANISH_PNG_SIGNATURE"],
  };

  test("the table lists all 175 files: 53 admitted, 122 rejected", () => {
    const files = readdirSync(SUITE).filter((f) => f.endsWith(".png"));
    expect(files.length).toBe(175);
    expect(rows.map((r) => r[0]).sort()).toEqual(files.sort());
    expect(rows.filter((r) => r[1] === "admit").length).toBe(53);
    expect(rows.filter((r) => r[1] === "reject").length).toBe(122);
  });

  test.each(rows)("%s → %s (%s)", (file, verdict, why) => {
    const bytes = new Uint8Array(readFileSync(joinPath(SUITE, file)));
    const r = admitPng(bytes, { includePixels: true });
    if (verdict === "admit") {
      expect(rejected(r)).toBe("admitted");
      if (r.ok) {
        expect(r.width).toBe(new DataView(bytes.buffer).getUint32(16));
        expect(r.pixels?.length).toBe(r.width * r.height * 4);
        expect([0, 2, 3, 4, 6]).toContain(r.colorType);
      }
      return;
    }
    let expected: PngRejectionCode[];
    if (why === "corrupt") expected = corrupt[file]!;
    else if (why.includes("bit depth")) expected = ["HUMANISH_PNG_BIT_DEPTH"];
    else if (why === "interlaced") expected = ["HUMANISH_PNG_INTERLACED"];
    else throw new Error(`unknown reason ${why}`);
    expect(expected).toContain(rejected(r) as PngRejectionCode);
  });
});

describe("handed cases (test/fixtures/cases/png)", () => {
  const table: Array<[string, PngRejectionCode | "admitted"]> = [
    ["good.png", "admitted"],
    ["no_IDAT.png", "HUMANISH_PNG_NO_IDAT"],
    ["trailing_1byte.png", "HUMANISH_PNG_TRAILING_BYTES"],
    ["trailing_chunk_after_IEND.png", "HUMANISH_PNG_TRAILING_BYTES"],
    ["adler_corrupt.png", "HUMANISH_PNG_ZLIB_CHECKSUM"],
    ["zlib_stream_truncated.png", "HUMANISH_PNG_ZLIB_TRUNCATED"],
    ["short_inflated_data.png", "HUMANISH_PNG_DATA_SHORT"],
    ["extra_inflated_data.png", "HUMANISH_PNG_DATA_LONG"],
    ["huge_dims_tiny_idat.png", "HUMANISH_PNG_DIMENSION_TOO_LARGE"],
    ["zero_width.png", "HUMANISH_PNG_ZERO_DIMENSION"],
    ["w4097.png", "HUMANISH_PNG_DIMENSION_TOO_LARGE"],
    ["w4096_h3907.png", "HUMANISH_PNG_TOO_MANY_PIXELS"],
    ["w4096_h3906.png", "admitted"],
  ];
  test("every file of the folder is covered", () => {
    expect(readdirSync(CASES).sort()).toEqual(table.map((t) => t[0]).sort());
  });
  test.each(table)("%s → %s", (file, want) => {
    expect(rejected(admitPng(new Uint8Array(readFileSync(joinPath(CASES, file)))))).toBe(want);
  });
  test("good.png facts: 2×2 grey 8-bit", () => {
    const r = admitPng(new Uint8Array(readFileSync(joinPath(CASES, "good.png"))));
    expect(r).toEqual({ ok: true, width: 2, height: 2, colorType: 0 });
  });
  test("huge_dims_tiny_idat.png is decided from the header alone (no IDAT bytes needed)", () => {
    const bytes = new Uint8Array(readFileSync(joinPath(CASES, "huge_dims_tiny_idat.png")));
    // Replace everything after IHDR by a lone IEND: the verdict must not change.
    const headerOnly = join([bytes.subarray(0, 33), chunk("IEND")]);
    expect(rejected(admitPng(headerOnly))).toBe("HUMANISH_PNG_DIMENSION_TOO_LARGE");
  });
});

describe("every check, one crafted file each", () => {
  const raw = scanlines(3, 2, 4);
  const good = png(3, 2, 6, [idat(raw)]);
  test("the crafted baseline is admitted with pixels equal to pngjs's decode", () => {
    const r = admitPng(good, { includePixels: true });
    expect(r.ok).toBe(true);
    if (r.ok) expect(Array.from(r.pixels!)).toEqual(Array.from(PNG.sync.read(Buffer.from(good)).data));
  });
  const crafted: Array<[string, Uint8Array, PngRejectionCode]> = [
    ["44 bytes", good.subarray(0, 44), "HUMANISH_PNG_TOO_SMALL"],
    ["empty", new Uint8Array(0), "HUMANISH_PNG_TOO_SMALL"],
    ["bad signature", join([Uint8Array.of(0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x00), good.subarray(8)]), "HUMANISH_PNG_SIGNATURE"],
    ["IHDR not first", join([SIGNATURE, chunk("tEXt", new TextEncoder().encode("a\0b")), good.subarray(8)]), "HUMANISH_PNG_IHDR_MISSING"],
    ["IHDR length 14", fixCrcs(join([SIGNATURE, chunk("IHDR", new Uint8Array(14)), good.subarray(33)])), "HUMANISH_PNG_IHDR_MISSING"],
    [
      "IHDR CRC",
      (() => {
        const b = Uint8Array.from(good);
        b[30]! ^= 1;
        return b;
      })(),
      "HUMANISH_PNG_IHDR_CRC",
    ],
    ["zero height", png(3, 0, 6, [idat(raw)]), "HUMANISH_PNG_ZERO_DIMENSION"],
    ["height 4097", png(1, 4097, 6, [idat(raw)]), "HUMANISH_PNG_DIMENSION_TOO_LARGE"],
    ["bit depth 16", join([SIGNATURE, ihdr(3, 2, 16, 6), idat(raw), chunk("IEND")]), "HUMANISH_PNG_BIT_DEPTH"],
    ["colour type 5", join([SIGNATURE, ihdr(3, 2, 8, 5), idat(raw), chunk("IEND")]), "HUMANISH_PNG_COLOR_TYPE"],
    ["compression 1", join([SIGNATURE, ihdr(3, 2, 8, 6, 1), idat(raw), chunk("IEND")]), "HUMANISH_PNG_COMPRESSION_METHOD"],
    ["filter method 1", join([SIGNATURE, ihdr(3, 2, 8, 6, 0, 1), idat(raw), chunk("IEND")]), "HUMANISH_PNG_FILTER_METHOD"],
    ["interlaced", join([SIGNATURE, ihdr(3, 2, 8, 6, 0, 0, 1), idat(raw), chunk("IEND")]), "HUMANISH_PNG_INTERLACED"],
    ["chunk longer than the file", good.subarray(0, good.length - 13), "HUMANISH_PNG_CHUNK_TRUNCATED"],
    ["stray bytes where a chunk should be", join([good.subarray(0, good.length - 12), Uint8Array.of(0, 0, 0)]), "HUMANISH_PNG_CHUNK_TRUNCATED"],
    ["chunk type with a digit", png(3, 2, 6, [chunk("tE1t", Uint8Array.of(1)), idat(raw)]), "HUMANISH_PNG_CHUNK_TYPE"],
    [
      "ancillary chunk CRC",
      (() => {
        const c = chunk("tEXt", new TextEncoder().encode("k\0v"));
        c[c.length - 1]! ^= 1;
        return png(3, 2, 6, [c, idat(raw)]);
      })(),
      "HUMANISH_PNG_CHUNK_CRC",
    ],
    [
      "IDAT CRC",
      (() => {
        const c = idat(raw);
        c[c.length - 1]! ^= 1;
        return png(3, 2, 6, [c]);
      })(),
      "HUMANISH_PNG_CHUNK_CRC",
    ],
    ["second IHDR", png(3, 2, 6, [ihdr(3, 2), idat(raw)]), "HUMANISH_PNG_CHUNK_ORDER"],
    ["PLTE after IDAT", png(3, 2, 2, [idat(scanlines(3, 2, 3)), chunk("PLTE", new Uint8Array(3))]), "HUMANISH_PNG_CHUNK_ORDER"],
    ["two PLTE", png(3, 2, 3, [chunk("PLTE", new Uint8Array(3)), chunk("PLTE", new Uint8Array(3)), idat(scanlines(3, 2, 1))]), "HUMANISH_PNG_CHUNK_ORDER"],
    ["tRNS after IDAT", png(3, 2, 2, [idat(scanlines(3, 2, 3)), chunk("tRNS", new Uint8Array(6))]), "HUMANISH_PNG_CHUNK_ORDER"],
    ["tRNS on RGBA", png(3, 2, 6, [chunk("tRNS", new Uint8Array(6)), idat(raw)]), "HUMANISH_PNG_CHUNK_ORDER"],
    ["PLTE on grey", png(3, 2, 0, [chunk("PLTE", new Uint8Array(3)), idat(scanlines(3, 2, 1))]), "HUMANISH_PNG_PALETTE"],
    ["PLTE of 4 bytes", png(3, 2, 3, [chunk("PLTE", new Uint8Array(4)), idat(scanlines(3, 2, 1))]), "HUMANISH_PNG_PALETTE"],
    ["palette image without PLTE", png(3, 2, 3, [idat(scanlines(3, 2, 1))]), "HUMANISH_PNG_PALETTE"],
    ["unknown critical chunk", png(3, 2, 6, [chunk("ABCD", Uint8Array.of(1)), idat(raw)]), "HUMANISH_PNG_UNKNOWN_CRITICAL_CHUNK"],
    [
      "IDATs not consecutive",
      (() => {
        const z = new Uint8Array(deflateSync(raw));
        return png(3, 2, 6, [chunk("IDAT", z.subarray(0, 5)), chunk("tEXt", new TextEncoder().encode("k\0v")), chunk("IDAT", z.subarray(5))]);
      })(),
      "HUMANISH_PNG_IDAT_NOT_CONTIGUOUS",
    ],
    ["no IDAT", png(3, 2, 6, []), "HUMANISH_PNG_NO_IDAT"],
    ["no IEND", join([SIGNATURE, ihdr(3, 2), idat(raw)]), "HUMANISH_PNG_NO_IEND"],
    ["IEND with data", join([SIGNATURE, ihdr(3, 2), idat(raw), chunk("IEND", Uint8Array.of(0))]), "HUMANISH_PNG_IEND_LENGTH"],
    ["bytes after IEND", join([good, Uint8Array.of(0)]), "HUMANISH_PNG_TRAILING_BYTES"],
    ["garbage zlib header", png(3, 2, 6, [chunk("IDAT", Uint8Array.of(1, 2, 3, 4, 5, 6))]), "HUMANISH_PNG_ZLIB_CORRUPT"],
    ["bytes after the zlib stream", png(3, 2, 6, [chunk("IDAT", join([new Uint8Array(deflateSync(raw)), Uint8Array.of(0, 0)]))]), "HUMANISH_PNG_ZLIB_TRAILING"],
    ["one row short", png(3, 2, 6, [idat(raw.subarray(0, raw.length - 13))]), "HUMANISH_PNG_DATA_SHORT"],
    ["one byte long", png(3, 2, 6, [idat(join([raw, Uint8Array.of(0)]))]), "HUMANISH_PNG_DATA_LONG"],
    ["row filter 5", png(3, 2, 6, [idat(scanlines(3, 2, 4, 5))]), "HUMANISH_PNG_ROW_FILTER"],
  ];
  test.each(crafted)("%s → %s", (_name, bytes, code) => {
    expect(rejected(admitPng(bytes))).toBe(code);
  });
  test("tRNS and ancillary chunks in the right places are admitted", () => {
    expect(
      rejected(
        admitPng(
          png(3, 2, 2, [
            chunk("tRNS", new Uint8Array(6)),
            chunk("tEXt", new TextEncoder().encode("k\0v")),
            idat(scanlines(3, 2, 3)),
            chunk("tIME", new Uint8Array(7)),
          ]),
        ),
      ),
    ).toBe("admitted");
    expect(
      rejected(
        admitPng(
          png(3, 2, 3, [
            chunk("PLTE", new Uint8Array(6)),
            chunk("tRNS", Uint8Array.of(0, 255)),
            idat(scanlines(3, 2, 1).map((v, i) => (i % 4 === 0 ? 0 : v & 1))),
          ]),
        ),
      ),
    ).toBe("admitted");
    // Split IDAT (consecutive) is fine.
    const z = new Uint8Array(deflateSync(raw));
    expect(rejected(admitPng(png(3, 2, 6, [chunk("IDAT", z.subarray(0, 3)), chunk("IDAT", z.subarray(3))])))).toBe("admitted");
  });
  test("palette indices beyond the palette are refused by the decoder step", () => {
    const r = admitPng(png(3, 2, 3, [chunk("PLTE", new Uint8Array(3)), idat(scanlines(3, 2, 1))]));
    expect(rejected(r)).toBe("HUMANISH_PNG_DECODE_FAILED");
  });
  test("over 8 MiB is refused before anything else, even with a valid signature", () => {
    const big = new Uint8Array(PNG_MAX_BYTES + 1);
    big.set(good);
    expect(rejected(admitPng(big))).toBe("HUMANISH_PNG_TOO_LARGE");
  });
  test("limits can only tighten", () => {
    expect(rejected(admitPng(good, { maxSide: 2 }))).toBe("HUMANISH_PNG_DIMENSION_TOO_LARGE");
    expect(rejected(admitPng(good, { maxPixels: 5 }))).toBe("HUMANISH_PNG_TOO_MANY_PIXELS");
    expect(rejected(admitPng(good, { maxBytes: 50 }))).toBe("HUMANISH_PNG_TOO_LARGE");
    const huge = png(4097, 1, 0, [idat(scanlines(4097, 1, 1))]);
    expect(rejected(admitPng(huge, { maxSide: 1e9, maxPixels: 1e12 }))).toBe("HUMANISH_PNG_DIMENSION_TOO_LARGE");
  });
  test("a decompression bomb is rejected as too long (1000×1000 grey declared, 64 MiB of zeros inflated)", () => {
    const bomb = new Uint8Array(deflateSync(new Uint8Array(64 * 1024 * 1024), { level: 9 }));
    expect(bomb.length).toBeLessThan(PNG_MAX_BYTES);
    expect(rejected(admitPng(png(1000, 1000, 0, [chunk("IDAT", bomb)])))).toBe("HUMANISH_PNG_DATA_LONG");
  });
  test("every code is in the exported list", () => {
    for (const [, , code] of crafted) expect(PNG_REJECTION_CODES).toContain(code);
  });
});

describe("one inflate: pngjs's post-inflate stages fed our bounded inflate output", () => {
  const rows = readFileSync(joinPath(SUITE, "expected-verdicts.tsv"), "utf8")
    .trim()
    .split("\n")
    .slice(1)
    .map((l) => l.split("\t") as [string, string, string])
    .filter((r) => r[1] === "admit");
  test.each(rows)("%s: pixels identical to PNG.sync.read", (file) => {
    const bytes = readFileSync(joinPath(SUITE, file));
    const r = admitPng(new Uint8Array(bytes), { includePixels: true });
    expect(r.ok).toBe(true);
    if (r.ok) expect(Buffer.from(r.pixels!).equals(PNG.sync.read(bytes).data)).toBe(true);
  });

  const pal = (entries: number) => {
    const p = new Uint8Array(entries * 3);
    for (let i = 0; i < p.length; i++) p[i] = (i * 37) & 0xff;
    return p;
  };
  // 3×2 palette image whose indices are 0, 1, 2 (filter byte 0 per row).
  const indices = Uint8Array.of(0, 0, 1, 2, 0, 2, 1, 0);
  const agreeing: Array<[string, Uint8Array]> = [
    ["palette with partial tRNS", png(3, 2, 3, [chunk("PLTE", pal(3)), chunk("tRNS", Uint8Array.of(10, 20)), idat(indices)])],
    ["palette with full tRNS", png(3, 2, 3, [chunk("PLTE", pal(3)), chunk("tRNS", Uint8Array.of(10, 20, 30)), idat(indices)])],
    ["grey with tRNS key", png(3, 2, 0, [chunk("tRNS", Uint8Array.of(0, 7)), idat(Uint8Array.of(0, 7, 8, 7, 0, 9, 7, 7))])],
    ["RGB with tRNS key", png(2, 1, 2, [chunk("tRNS", Uint8Array.of(0, 1, 0, 2, 0, 3)), idat(Uint8Array.of(0, 1, 2, 3, 1, 2, 4))])],
    [
      "RGB with a suggested palette and gAMA",
      png(2, 1, 2, [chunk("gAMA", Uint8Array.of(0, 0, 0xb1, 0x8f)), chunk("PLTE", pal(2)), idat(Uint8Array.of(0, 1, 2, 3, 1, 2, 4))]),
    ],
    ["grey+alpha, every row filter", png(2, 5, 4, [idat(Uint8Array.of(0, 1, 2, 3, 4, 1, 5, 6, 7, 8, 2, 9, 10, 11, 12, 3, 13, 14, 15, 16, 4, 17, 18, 19, 20))])],
  ];
  test.each(agreeing)("%s: admitted with pixels identical to PNG.sync.read", (_name, bytes) => {
    const r = admitPng(bytes, { includePixels: true });
    expect(rejected(r)).toBe("admitted");
    if (r.ok) expect(Buffer.from(r.pixels!).equals(PNG.sync.read(Buffer.from(bytes)).data)).toBe(true);
  });

  const refused: Array<[string, Uint8Array]> = [
    [
      "tRNS with more entries than the palette",
      png(3, 2, 3, [chunk("PLTE", pal(2)), chunk("tRNS", Uint8Array.of(1, 2, 3)), idat(Uint8Array.of(0, 0, 1, 1, 0, 1, 0, 0))]),
    ],
    ["gAMA shorter than 4 bytes", png(3, 2, 6, [chunk("gAMA", Uint8Array.of(0, 1)), idat(scanlines(3, 2, 4))])],
  ];
  test.each(refused)("%s: DECODE_FAILED, as pngjs's own parser refuses it", (_name, bytes) => {
    expect(rejected(admitPng(bytes))).toBe("HUMANISH_PNG_DECODE_FAILED");
    expect(() => PNG.sync.read(Buffer.from(bytes))).toThrow();
  });
});

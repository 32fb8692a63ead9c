/**
 * The escaped-bytes encoding of participant output: lossless for any bytes (round-trip property
 * over random byte strings and random chunkings), inert (no control character survives), and
 * valid bundle text.
 */
import { describe, expect, test } from "bun:test";
import { createOutputEncoder, decodeOutputText, encodeOutputBytes, outputSegments } from "../../src/bundle/output-codec.ts";

/** Deterministic PRNG (mulberry32) so a failure reproduces. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Random bytes biased towards the interesting ones: controls, backslash, `x`, UTF-8 lead/continuation bytes. */
function randomBytes(r: () => number, n: number): Uint8Array {
  const pool = [0x00, 0x07, 0x08, 0x0a, 0x09, 0x0d, 0x1b, 0x5c, 0x78, 0x7f, 0x80, 0x9b, 0xc2, 0xc3, 0xe2, 0xed, 0xf0, 0xf4, 0xff, 0xfe, 0xa0, 0xbf, 0x41];
  const out = new Uint8Array(n);
  for (let i = 0; i < n; i++) out[i] = r() < 0.5 ? pool[Math.floor(r() * pool.length)]! : Math.floor(r() * 256);
  return out;
}

/** What the bundle's text rule rejects, plus ESC, C1 and bidi controls (inertness). */
const ACTIVE = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/;

describe("output codec", () => {
  test("round-trips random bytes, whole and through the streaming encoder at random cuts", () => {
    const r = rng(7);
    for (let round = 0; round < 400; round++) {
      const bytes = randomBytes(r, Math.floor(r() * 200));
      const whole = encodeOutputBytes(bytes);
      expect(Array.from(decodeOutputText(whole))).toEqual(Array.from(bytes));
      expect(ACTIVE.test(whole)).toBe(false);
      // Valid UTF-8 by construction (a JS string encodes to UTF-8); check the fatal decoder agrees.
      expect(new TextDecoder("utf-8", { fatal: true }).decode(new TextEncoder().encode(whole))).toBe(whole);
      const enc = createOutputEncoder();
      let streamed = "";
      let i = 0;
      while (i < bytes.length) {
        const n = 1 + Math.floor(r() * 5);
        streamed += enc.write(bytes.subarray(i, i + n));
        i += n;
      }
      streamed += enc.end();
      expect(streamed).toBe(whole);
    }
  });

  test("documented forms: backslash, controls, invalid bytes, C1, bidi; UTF-8 text stays", () => {
    const b = (...x: number[]) => Uint8Array.from(x);
    expect(encodeOutputBytes(new TextEncoder().encode("a\\b\tc\nd café ✓"))).toBe("a\\\\b\tc\nd café ✓");
    expect(encodeOutputBytes(b(0x07, 0x08, 0x00, 0x0d, 0x1b, 0x7f))).toBe("\\x07\\x08\\x00\\x0d\\x1b\\x7f");
    expect(encodeOutputBytes(b(0xff, 0xfe, 0xc3))).toBe("\\xff\\xfe\\xc3");
    expect(encodeOutputBytes(b(0xc2, 0x9b))).toBe("\\xc2\\x9b"); // U+009B CSI
    expect(encodeOutputBytes(new TextEncoder().encode("\u202e"))).toBe("\\xe2\\x80\\xae");
    // A literal backslash-x in the output is not confused with an escape.
    const lit = new TextEncoder().encode("\\x41");
    expect(encodeOutputBytes(lit)).toBe("\\\\x41");
    expect(new TextDecoder().decode(decodeOutputText("\\\\x41"))).toBe("\\x41");
  });

  test("a split UTF-8 sequence is encoded whole by the streaming encoder", () => {
    const enc = createOutputEncoder();
    const e = new TextEncoder().encode("é");
    expect(enc.write(e.subarray(0, 1))).toBe("");
    expect(enc.write(e.subarray(1))).toBe("é");
    expect(enc.write(Uint8Array.of(0xe2, 0x9c))).toBe("");
    expect(enc.end()).toBe("\\xe2\\x9c");
  });

  test("display segments show the text and mark each raw byte", () => {
    expect(outputSegments("a\\\\b\\x07c")).toEqual([
      { text: "a\\b", escaped: false },
      { text: "\\x07", escaped: true },
      { text: "c", escaped: false },
    ]);
  });
});

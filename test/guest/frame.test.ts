import { describe, expect, test } from "bun:test";
import { PNG } from "pngjs";
import { decodeXwd, encodePng, perceptualSignature } from "../../src/guest/frame.ts";
import { admitPng } from "../../src/png/index.ts";

/** Build an XWD dump the way `xwd` writes one: big-endian header, LSB-first 32-bit pixels. */
function xwd(width: number, height: number, pixel: (x: number, y: number) => [number, number, number], name = "root\0"): Uint8Array {
  const nameBytes = new TextEncoder().encode(name);
  const headerSize = 100 + nameBytes.length;
  const bpl = width * 4;
  const buf = new Uint8Array(headerSize + bpl * height);
  const dv = new DataView(buf.buffer);
  const fields = [headerSize, 7, 2, 24, width, height, 0, 0, 32, 0, 32, 32, bpl, 4, 0xff0000, 0xff00, 0xff, 8, 256, 0, width, height, 0, 0, 0];
  fields.forEach((v, i) => dv.setUint32(i * 4, v, false));
  buf.set(nameBytes, 100);
  for (let y = 0; y < height; y++)
    for (let x = 0; x < width; x++) {
      const [r, g, b] = pixel(x, y);
      dv.setUint32(headerSize + y * bpl + x * 4, (r << 16) | (g << 8) | b, true);
    }
  return buf;
}

describe("frame conversion", () => {
  test("XWD → RGBA → PNG keeps every pixel and passes admission", () => {
    const dump = xwd(64, 48, (x, y) => [x * 4, y * 5, (x + y) % 256]);
    const frame = decodeXwd(dump, { width: 64, height: 48 });
    const png = encodePng(frame);
    const verdict = admitPng(png);
    expect(verdict.ok).toBe(true);
    const back = PNG.sync.read(Buffer.from(png));
    expect([back.width, back.height]).toEqual([64, 48]);
    for (const [x, y] of [
      [0, 0],
      [63, 47],
      [10, 20],
    ] as const) {
      const i = (y * 64 + x) * 4;
      expect([back.data[i], back.data[i + 1], back.data[i + 2]]).toEqual([x * 4, y * 5, (x + y) % 256]);
    }
  });

  test("the general path decodes other masks and MSB-first pixels", () => {
    const dump = xwd(4, 2, (x, y) => [x * 60, y * 100, 7]);
    const dv = new DataView(dump.buffer);
    const headerSize = dv.getUint32(0, false);
    dv.setUint32(7 * 4, 1, false); // MSBFirst pixels
    dv.setUint32(14 * 4, 0xff, false); // red in the low byte
    dv.setUint32(16 * 4, 0xff0000, false); // blue in the high byte
    for (let i = 0; i < 8; i++) {
      const x = i % 4;
      const y = Math.floor(i / 4);
      dv.setUint32(headerSize + i * 4, (7 << 16) | ((y * 100) << 8) | (x * 60), false);
    }
    const frame = decodeXwd(dump);
    expect(Array.from(frame.rgba.subarray(4 * 5, 4 * 6))).toEqual([60, 100, 7, 255]);
  });

  test("a dump of the wrong size, truncated or in another format is refused", () => {
    const dump = xwd(8, 8, () => [1, 2, 3]);
    expect(() => decodeXwd(dump, { width: 9, height: 8 })).toThrow(/expected 9x8/);
    expect(() => decodeXwd(dump.subarray(0, dump.length - 1))).toThrow(/truncated/);
    const bad = dump.slice();
    new DataView(bad.buffer).setUint32(11 * 4, 16, false);
    expect(() => decodeXwd(bad)).toThrow(/bits per pixel/);
  });

  test("state signature: equal frames equal, different layouts differ", () => {
    const a = decodeXwd(xwd(64, 64, (x) => (x < 32 ? [0, 0, 0] : [255, 255, 255])));
    const b = decodeXwd(xwd(64, 64, (x) => (x < 32 ? [0, 0, 0] : [255, 255, 255])));
    const c = decodeXwd(xwd(64, 64, (_x, y) => (y < 32 ? [0, 0, 0] : [255, 255, 255])));
    expect(perceptualSignature(a)).toBe(perceptualSignature(b));
    expect(perceptualSignature(a)).not.toBe(perceptualSignature(c));
    expect(perceptualSignature(a)).toHaveLength(1025);
  });
});

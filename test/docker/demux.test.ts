import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { concatBytes, demuxBody, isHumanishErrorLike, MultiplexedStreamDecoder } from "./helpers.ts";

const CASE = join(import.meta.dir, "../fixtures/cases/docker/logs-multiplexed-body.bin");
const body = new Uint8Array(readFileSync(CASE));
const enc = new TextEncoder();

function decodeChunks(chunks: Uint8Array[]): { stdout: Uint8Array; stderr: Uint8Array } {
  const out: Uint8Array[] = [];
  const err: Uint8Array[] = [];
  const d = new MultiplexedStreamDecoder((s, c) => (s === "stdout" ? out : err).push(c.slice()));
  for (const c of chunks) d.push(c);
  d.end();
  return { stdout: concatBytes(out), stderr: concatBytes(err) };
}

function chunked(bytes: Uint8Array, size: number): Uint8Array[] {
  const out: Uint8Array[] = [];
  for (let i = 0; i < bytes.length; i += size) out.push(bytes.slice(i, i + size));
  return out;
}

const wantOut = enc.encode("hello stdout\ncafé\n");
const wantErr = enc.encode("oops stderr\n");

function frame(stream: number, payload: Uint8Array): Uint8Array {
  const h = new Uint8Array(8);
  h[0] = stream;
  new DataView(h.buffer).setUint32(4, payload.length);
  return concatBytes([h, payload]);
}

describe("handed case cases/docker/logs-multiplexed-body.bin", () => {
  test("the file is the 63-byte body the README describes", () => {
    expect(body.length).toBe(63);
  });

  for (const size of [3, 10, 50, 63, 1]) {
    test(`delivered in ${size}-byte chunks`, () => {
      const r = decodeChunks(chunked(body, size));
      expect(r.stdout).toEqual(wantOut);
      expect(r.stderr).toEqual(wantErr);
    });
  }

  test("split at every offset (two pieces) and every pair of offsets", () => {
    for (let i = 0; i <= body.length; i++) {
      const r = decodeChunks([body.slice(0, i), body.slice(i)]);
      expect(r.stdout).toEqual(wantOut);
      expect(r.stderr).toEqual(wantErr);
      for (let j = i; j <= body.length; j++) {
        const r3 = decodeChunks([body.slice(0, i), body.slice(i, j), body.slice(j)]);
        expect(r3.stdout).toEqual(wantOut);
        expect(r3.stderr).toEqual(wantErr);
      }
    }
  });

  test("through demuxBody from a ReadableStream in 3/10/50-byte chunks; text decoded only after joining", async () => {
    for (const size of [3, 10, 50]) {
      const chunks = chunked(body, size);
      const stream = new ReadableStream<Uint8Array>({
        pull(c) {
          const next = chunks.shift();
          if (next) c.enqueue(next);
          else c.close();
        },
      });
      const seen: string[] = [];
      const r = await demuxBody(stream, { onStdout: (c) => seen.push(`o${c.length}`), onStderr: (c) => seen.push(`e${c.length}`) });
      expect(new TextDecoder("utf-8", { fatal: true }).decode(r.stdout)).toBe("hello stdout\ncafé\n");
      expect(new TextDecoder("utf-8", { fatal: true }).decode(r.stderr)).toBe("oops stderr\n");
      expect(seen.length).toBeGreaterThan(0);
    }
  });
});

describe("demultiplexer rules", () => {
  test("binary payload with every byte value and stream 0/1/2/3 frames, at every chunk size", () => {
    const bin = new Uint8Array(256 * 3);
    for (let i = 0; i < bin.length; i++) bin[i] = i % 256;
    const parts = [
      frame(1, bin),
      frame(2, enc.encode("e1")),
      frame(0, enc.encode("in")),
      frame(1, new Uint8Array(0)),
      frame(3, enc.encode("sys")),
      frame(2, bin.slice(7, 300)),
    ];
    const all = concatBytes(parts);
    for (const size of [1, 2, 7, 8, 9, 64, 511, all.length]) {
      const r = decodeChunks(chunked(all, size));
      expect(r.stdout).toEqual(concatBytes([bin, enc.encode("in")]));
      expect(r.stderr).toEqual(concatBytes([enc.encode("e1sys"), bin.slice(7, 300)]));
    }
  });

  test("a frame header with an unknown stream or nonzero padding is rejected", () => {
    for (const bad of [
      [4, 0, 0, 0, 0, 0, 0, 1, 65],
      [1, 1, 0, 0, 0, 0, 0, 1, 65],
      [1, 0, 0, 9, 0, 0, 0, 1, 65],
    ]) {
      const d = new MultiplexedStreamDecoder(() => {});
      let caught: unknown;
      try {
        d.push(new Uint8Array(bad));
      } catch (e) {
        caught = e;
      }
      expect(isHumanishErrorLike(caught, "HUMANISH_DOCKER_STREAM_INVALID")).toBe(true);
    }
  });

  test("a body cut inside a header or a payload is rejected at end()", () => {
    for (const cut of [3, 8 + 5]) {
      const d = new MultiplexedStreamDecoder(() => {});
      d.push(body.slice(0, cut));
      expect(() => d.end()).toThrow(/ended/);
    }
  });

  test("a 4 GiB-1 length header is accepted as a length (big-endian, unsigned)", () => {
    let got = 0;
    const d = new MultiplexedStreamDecoder((_, c) => (got += c.length));
    d.push(new Uint8Array([2, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 1, 2, 3]));
    expect(got).toBe(3);
    expect(() => d.end()).toThrow(/4294967292 bytes short/);
  });

  test("random frames at random chunk boundaries (seeded) reproduce both streams exactly", () => {
    let seed = 12345;
    const rand = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed % n;
    };
    for (let round = 0; round < 200; round++) {
      const frames: Uint8Array[] = [];
      const wantO: Uint8Array[] = [];
      const wantE: Uint8Array[] = [];
      for (let f = rand(8); f >= 0; f--) {
        const payload = new Uint8Array(rand(40)).map(() => rand(256));
        const stream = 1 + rand(2);
        frames.push(frame(stream, payload));
        (stream === 1 ? wantO : wantE).push(payload);
      }
      const all = concatBytes(frames);
      const chunks: Uint8Array[] = [];
      for (let at = 0; at < all.length; ) {
        const n = 1 + rand(20);
        chunks.push(all.slice(at, at + n));
        at += n;
      }
      const r = decodeChunks(chunks);
      expect(r.stdout).toEqual(concatBytes(wantO));
      expect(r.stderr).toEqual(concatBytes(wantE));
    }
  });
});

describe("bounded buffering (a participant printing gigabytes cannot exhaust memory)", () => {
  const bodyOf = (parts: Uint8Array[]) =>
    new ReadableStream<Uint8Array>({
      start(c) {
        for (const p of parts) c.enqueue(p);
        c.close();
      },
    });
  test("keeps the tail of each stream, counts the dropped bytes; callbacks see every byte", async () => {
    const enc = new TextEncoder();
    const parts = [
      frame(1, enc.encode("aaaaaaaaaa")),
      frame(2, enc.encode("EE")),
      frame(1, enc.encode("bbbbb")),
      frame(1, enc.encode("12345")),
      frame(2, enc.encode("RR")),
    ];
    let seen = 0;
    const out = await demuxBody(bodyOf(parts), { maxBufferedBytes: 8, onStdout: (c) => void (seen += c.length), onStderr: (c) => void (seen += c.length) });
    expect(new TextDecoder().decode(out.stdout)).toBe("bbb12345");
    expect(out.stdoutDroppedBytes).toBe(12);
    expect(new TextDecoder().decode(out.stderr)).toBe("EERR");
    expect(out.stderrDroppedBytes).toBe(0);
    expect(seen).toBe(24);
  });
  test("under the bound nothing is dropped", async () => {
    const out = await demuxBody(bodyOf([frame(1, new Uint8Array([1, 2, 3]))]), { maxBufferedBytes: 3 });
    expect(Array.from(out.stdout)).toEqual([1, 2, 3]);
    expect(out.stdoutDroppedBytes).toBe(0);
  });
});

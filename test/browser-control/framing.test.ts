import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { encodeFrame, FrameDecoder, isBrowserControlError, MAX_FRAME_BYTES } from "../../src/browser-control/index.ts";
import { rng } from "../support/rng.ts";
import { concat } from "./support.ts";

/**
 * Runs `check` while every `Buffer.allocUnsafeSlow` call is recorded: `sizes` (bytes) grows as
 * the decoder allocates payload buffers. The real allocator is restored afterwards, always.
 */
function watchingAllocations(check: (sizes: readonly number[]) => void): void {
  const original = Buffer.allocUnsafeSlow;
  const sizes: number[] = [];
  Buffer.allocUnsafeSlow = ((n: number) => {
    sizes.push(n);
    return original(n);
  }) as typeof Buffer.allocUnsafeSlow;
  try {
    check(sizes);
  } finally {
    Buffer.allocUnsafeSlow = original;
  }
}

const CASES = join(import.meta.dir, "../fixtures/cases/frames");

function frameOf(payload: Uint8Array): Uint8Array {
  const out = new Uint8Array(4 + payload.byteLength);
  new DataView(out.buffer).setUint32(0, payload.byteLength, false);
  out.set(payload, 4);
  return out;
}

describe("encodeFrame", () => {
  test("4-byte big-endian length then UTF-8 JSON", () => {
    const f = encodeFrame({ a: "é" });
    const json = new TextEncoder().encode(JSON.stringify({ a: "é" }));
    expect(Array.from(f.subarray(0, 4))).toEqual([0, 0, 0, json.byteLength]);
    expect(Array.from(f.subarray(4))).toEqual(Array.from(json));
  });

  test("unserialisable and oversize messages are refused invalid_request/not_dispatched", () => {
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    for (const bad of [cyclic, undefined, { n: 10n }, { s: "x".repeat(MAX_FRAME_BYTES) }]) {
      try {
        encodeFrame(bad);
        throw new Error("expected a refusal");
      } catch (e) {
        expect(isBrowserControlError(e)).toBe(true);
        if (isBrowserControlError(e)) {
          expect(e.errorCode).toBe("invalid_request");
          expect(e.disposition).toBe("not_dispatched");
          expect(e.code).toBe("HUMANISH_BROWSER_CONTROL_INVALID_REQUEST");
        }
      }
    }
  });

  test("a payload of exactly 12 MiB is encoded and decoded", () => {
    const s = "y".repeat(MAX_FRAME_BYTES - 2);
    const f = encodeFrame(s);
    expect(f.byteLength).toBe(4 + MAX_FRAME_BYTES);
    const { messages, fault } = new FrameDecoder().push(f);
    expect(fault).toBeNull();
    expect(messages).toEqual([s]);
  });
});

describe("FrameDecoder", () => {
  const msgs = [{ v: 1 }, { kind: "x", s: "héllo ✓ 𝄞" }, [1, 2, 3], "str", 42, null];
  const stream = concat(msgs.map((m) => encodeFrame(m)));

  test("coalesced: many frames in one chunk", () => {
    const { messages, fault } = new FrameDecoder().push(stream);
    expect(fault).toBeNull();
    expect(messages).toEqual(msgs);
  });

  test("fragmented: 1-byte chunks", () => {
    const d = new FrameDecoder();
    const out: unknown[] = [];
    for (let i = 0; i < stream.byteLength; i++) {
      const r = d.push(stream.subarray(i, i + 1));
      expect(r.fault).toBeNull();
      out.push(...r.messages);
    }
    expect(out).toEqual(msgs);
    expect(d.midFrame).toBe(false);
  });

  test("split at every offset into two chunks", () => {
    for (let cut = 0; cut <= stream.byteLength; cut++) {
      const d = new FrameDecoder();
      const a = d.push(stream.subarray(0, cut));
      const b = d.push(stream.subarray(cut));
      expect(a.fault ?? b.fault).toBeNull();
      expect([...a.messages, ...b.messages]).toEqual(msgs);
    }
  });

  test("handed case two-frames-coalesced.bin at every split and as a 1-byte drip", () => {
    const bytes = new Uint8Array(readFileSync(join(CASES, "two-frames-coalesced.bin")));
    for (let cut = 0; cut <= bytes.byteLength; cut++) {
      const d = new FrameDecoder();
      const r1 = d.push(bytes.subarray(0, cut));
      const r2 = d.push(bytes.subarray(cut));
      expect([...r1.messages, ...r2.messages]).toEqual([{ v: 1 }, { v: 2 }]);
      expect(r1.fault ?? r2.fault).toBeNull();
    }
    const d = new FrameDecoder();
    const out: unknown[] = [];
    for (const b of bytes) out.push(...d.push(Uint8Array.of(b)).messages);
    expect(out).toEqual([{ v: 1 }, { v: 2 }]);
  });

  test.each([
    ["overlong-C0AF.frame", "bad_utf8"],
    ["surrogate-EDA080.frame", "bad_utf8"],
    ["truncated-E0FF.frame", "bad_utf8"],
    ["lone-continuation-81.frame", "bad_utf8"],
    ["above-10FFFF-F4908080.frame", "bad_utf8"],
    ["bom-prefixed.frame", "bom"],
  ])("handed case %s is rejected (%s), whole and as a drip", (file, kind) => {
    const bytes = new Uint8Array(readFileSync(join(CASES, file)));
    const whole = new FrameDecoder().push(bytes);
    expect(whole.messages).toEqual([]);
    expect(whole.fault?.kind).toBe(kind as "bad_utf8" | "bom");
    const d = new FrameDecoder();
    let fault = null;
    for (const b of bytes) fault = d.push(Uint8Array.of(b)).fault ?? fault;
    expect(fault?.kind).toBe(kind as "bad_utf8" | "bom");
  });

  test.each([
    ["overlong 2-byte", [0x22, 0xc0, 0xaf, 0x22]],
    ["overlong 3-byte", [0x22, 0xe0, 0x80, 0xaf, 0x22]],
    ["surrogate", [0x22, 0xed, 0xa0, 0x80, 0x22]],
    ["truncated at end", [0x22, 0x22, 0xe2, 0x82]],
    ["lone continuation", [0x22, 0x80, 0x22]],
    ["above U+10FFFF", [0x22, 0xf4, 0x90, 0x80, 0x80, 0x22]],
    ["0xFF byte", [0x22, 0xff, 0x22]],
  ])("invalid UTF-8 (%s) is a fault", (_name, bytes) => {
    const r = new FrameDecoder().push(frameOf(Uint8Array.from(bytes)));
    expect(r.fault?.kind).toBe("bad_utf8");
  });

  test("large payloads (validated by the bulk path) refuse the same invalid UTF-8 and accept valid multi-byte text", () => {
    const pad = new Uint8Array(6000).fill(0x61);
    for (const bad of [[0xc0, 0xaf], [0xe0, 0x80, 0xaf], [0xed, 0xa0, 0x80], [0xe2, 0x82], [0x80], [0xf4, 0x90, 0x80, 0x80], [0xff]]) {
      const r = new FrameDecoder().push(frameOf(concat([Uint8Array.of(0x22), pad, Uint8Array.from(bad), pad, Uint8Array.of(0x22)])));
      expect(r.fault?.kind).toBe("bad_utf8");
      const raw = new FrameDecoder({ raw: true }).push(frameOf(concat([Uint8Array.of(0x22), pad, Uint8Array.from(bad), Uint8Array.of(0x22)])));
      expect(raw.fault?.kind).toBe("bad_utf8");
    }
    const text = "é✓𝄞".repeat(2000);
    expect(new FrameDecoder().push(encodeFrame(text)).messages).toEqual([text]);
    const ascii = "q".repeat(9000);
    expect(new FrameDecoder().push(encodeFrame(ascii)).messages).toEqual([ascii]);
  });

  test("trailing bytes after the JSON value, two values, empty JSON are faults", () => {
    for (const text of ['{"a":1} x', '{"a":1}{"b":2}', " ", "{", "[1,]", "NaN"]) {
      const r = new FrameDecoder().push(frameOf(new TextEncoder().encode(text)));
      expect(r.fault?.kind).toBe("bad_json");
    }
    // Whitespace around a single value is valid JSON.
    expect(new FrameDecoder().push(frameOf(new TextEncoder().encode(' {"a":1}\n'))).messages).toEqual([{ a: 1 }]);
  });

  test("length 0 and length over 12 MiB are rejected from the header alone, before allocation", () => {
    for (const len of [0, MAX_FRAME_BYTES + 1, 0xffffffff]) {
      const d = new FrameDecoder();
      const header = new Uint8Array(4);
      new DataView(header.buffer).setUint32(0, len, false);
      // Only the 4 header bytes are given: the fault is decided without any payload, and a
      // 4 GiB length would crash the process if it were allocated.
      const r = d.push(header);
      expect(r.fault?.kind).toBe("bad_length");
      expect(d.midFrame).toBe(false);
      // Faulted decoders stay faulted.
      expect(d.push(encodeFrame({ ok: 1 })).messages).toEqual([]);
    }
    // Header split across chunks is checked the same way.
    const d = new FrameDecoder();
    expect(d.push(Uint8Array.of(0xff, 0xff)).fault).toBeNull();
    expect(d.push(Uint8Array.of(0xff, 0xff)).fault?.kind).toBe("bad_length");
  });

  test("the payload buffer is allocated once, after the length check, at exactly the declared size", () => {
    watchingAllocations((sizes) => {
      const over = new Uint8Array(4);
      new DataView(over.buffer).setUint32(0, MAX_FRAME_BYTES + 1, false);
      expect(new FrameDecoder().push(over).fault?.kind).toBe("bad_length");
      expect(sizes).toEqual([]);
      const frame = encodeFrame({ s: "z".repeat(200) });
      const d = new FrameDecoder();
      for (let i = 0; i < frame.length; i += 7) d.push(frame.subarray(i, i + 7));
      expect(sizes).toEqual([frame.length - 4]);
    });
  });

  test("a valid frame before a bad one in the same chunk is still delivered", () => {
    const r = new FrameDecoder().push(concat([encodeFrame({ a: 1 }), frameOf(Uint8Array.of(0xc0, 0xaf))]));
    expect(r.messages).toEqual([{ a: 1 }]);
    expect(r.fault?.kind).toBe("bad_utf8");
  });

  test("maxPayloadBytes lowers the bound and is validated", () => {
    const d = new FrameDecoder({ maxPayloadBytes: 8 });
    expect(d.push(encodeFrame("123456")).messages).toEqual(["123456"]);
    expect(d.push(encodeFrame("1234567")).fault?.kind).toBe("bad_length");
    expect(() => new FrameDecoder({ maxPayloadBytes: MAX_FRAME_BYTES + 1 })).toThrow();
    expect(() => new FrameDecoder({ maxPayloadBytes: 0 })).toThrow();
  });

  test("raw mode yields the validated payload bytes", () => {
    const r = new FrameDecoder({ raw: true }).push(concat([encodeFrame({ v: 1 }), encodeFrame({ v: 2 })]));
    expect(r.messages.map((m) => new TextDecoder().decode(m as Uint8Array))).toEqual(['{"v":1}', '{"v":2}']);
  });
});

/** Reference decoder: one frame at a time with the fatal TextDecoder, no batching, no views. */
function reference(stream: Uint8Array): { payloads: Uint8Array[]; fault: string | null } {
  const fatal = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
  const payloads: Uint8Array[] = [];
  let o = 0;
  while (o < stream.length) {
    if (stream.length - o < 4) return { payloads, fault: null };
    const len = new DataView(stream.buffer, stream.byteOffset + o).getUint32(0, false);
    if (len === 0 || len > MAX_FRAME_BYTES) return { payloads, fault: "bad_length" };
    if (stream.length - o - 4 < len) return { payloads, fault: null };
    const body = stream.slice(o + 4, o + 4 + len);
    if (body[0] === 0xef && body[1] === 0xbb && body[2] === 0xbf) return { payloads, fault: "bom" };
    try {
      fatal.decode(body);
    } catch {
      return { payloads, fault: "bad_utf8" };
    }
    payloads.push(body);
    o += 4 + len;
  }
  return { payloads, fault: null };
}

/** A copy of `bytes` backed by a SharedArrayBuffer (the decoder must never write into it). */
function shared(bytes: Uint8Array): Uint8Array {
  const out = new Uint8Array(new SharedArrayBuffer(bytes.length));
  out.set(bytes);
  return out;
}

/** Run a stream through pushSpans in the given chunk sizes; payloads are copied out immediately. */
function viaSpans(stream: Uint8Array, sizes: number[]): { payloads: Uint8Array[]; fault: string | null; unchanged: boolean } {
  const before = Uint8Array.from(stream);
  const d = new FrameDecoder({ raw: true });
  const payloads: Uint8Array[] = [];
  let fault: string | null = null;
  let off = 0;
  for (let k = 0; off < stream.length; k++) {
    const chunk = stream.subarray(off, off + sizes[k % sizes.length]!);
    off += chunk.length;
    const s = d.pushSpans(chunk);
    for (let i = 0; i < s.count; i++) payloads.push((i === 0 && s.assembled ? s.assembled : s.chunk).slice(s.starts[i]!, s.ends[i]!));
    if (s.fault) {
      fault = s.fault.kind;
      break;
    }
  }
  return { payloads, fault, unchanged: Buffer.compare(Buffer.from(before), Buffer.from(stream.buffer, stream.byteOffset, stream.byteLength)) === 0 };
}

describe("batched validation of coalesced frames and zero-copy spans", () => {
  const text = (v: unknown) => new TextEncoder().encode(JSON.stringify(v));
  const mixed = [{ a: 1 }, { s: "héllo ✓ 𝄞 \ufeff in the middle" }, "x".repeat(300), { t: "é".repeat(5000) }, [1, 2, 3], { deep: { k: "v" } }];
  const stream = concat(mixed.map((m) => encodeFrame(m)));

  test("frames whole in one chunk and split across chunks give identical results (JSON, raw and spans)", () => {
    const chunkings: number[][] = [[stream.length], [1], [3], [7, 1, 50], [64], [4096], [5, 5000, 2]];
    for (const sizes of chunkings) {
      const json = new FrameDecoder();
      const raw = new FrameDecoder({ raw: true });
      const msgs: unknown[] = [];
      const payloads: Uint8Array[] = [];
      for (let off = 0, k = 0; off < stream.length; k++) {
        const chunk = stream.subarray(off, off + sizes[k % sizes.length]!);
        off += chunk.length;
        const a = json.push(chunk);
        const b = raw.push(chunk);
        expect(a.fault).toBeNull();
        expect(b.fault).toBeNull();
        msgs.push(...a.messages);
        payloads.push(...b.messages.map((m) => Uint8Array.from(m as Uint8Array)));
      }
      expect(msgs).toEqual(mixed);
      expect(payloads.map((p) => Array.from(p))).toEqual(mixed.map((m) => Array.from(text(m))));
      const spans = viaSpans(stream, sizes);
      expect(spans.fault).toBeNull();
      expect(spans.payloads.map((p) => Array.from(p))).toEqual(mixed.map((m) => Array.from(text(m))));
      expect(spans.unchanged).toBe(true);
    }
  });

  test("the pushed chunk is byte-identical after every push, also when a fault stops a batch", () => {
    const good = concat([encodeFrame({ a: 1 }), encodeFrame({ b: "✓" }), encodeFrame({ c: 3 })]);
    const cases = [
      good,
      concat([good, frameOf(Uint8Array.of(0x22, 0xc0, 0xaf, 0x22)), encodeFrame({ d: 4 })]),
      concat([good, frameOf(Uint8Array.of(0xef, 0xbb, 0xbf, 0x31)), encodeFrame({ d: 4 })]),
      concat([good, Uint8Array.of(0xff, 0xff, 0xff, 0xff), encodeFrame({ d: 4 })]),
      concat([good, encodeFrame({ partial: "y".repeat(100) }).subarray(0, 50)]),
    ];
    for (const bytes of cases) {
      const before = Uint8Array.from(bytes);
      new FrameDecoder().push(bytes);
      expect(Array.from(bytes)).toEqual(Array.from(before));
      new FrameDecoder({ raw: true }).pushSpans(bytes);
      expect(Array.from(bytes)).toEqual(Array.from(before));
    }
  });

  test("batching never lets a multi-byte sequence straddle two payloads", () => {
    // Frame 1 ends with the first two bytes of "✓" (E2 9C 93); frame 2 starts with the last one.
    // Concatenated, the payloads would be valid UTF-8; each alone is not.
    const cut = concat([frameOf(Uint8Array.of(0x22, 0x61, 0xe2, 0x9c)), frameOf(Uint8Array.of(0x93, 0x22))]);
    for (const bytes of [concat([encodeFrame({ ok: 0 }), cut]), shared(concat([encodeFrame({ ok: 0 }), cut]))]) {
      const r = new FrameDecoder().push(bytes);
      expect(r.messages).toEqual([{ ok: 0 }]);
      expect(r.fault?.kind).toBe("bad_utf8");
      const s = viaSpans(bytes, [bytes.length]);
      expect(s.payloads.length).toBe(1);
      expect(s.fault).toBe("bad_utf8");
      expect(s.unchanged).toBe(true);
    }
    // A lone continuation byte opening frame 2 after a valid frame 1.
    const lone = concat([encodeFrame({ ok: 0 }), encodeFrame({ ok: 1 }), frameOf(Uint8Array.of(0x80, 0x31))]);
    const r = new FrameDecoder().push(lone);
    expect(r.messages).toEqual([{ ok: 0 }, { ok: 1 }]);
    expect(r.fault?.kind).toBe("bad_utf8");
  });

  test("seeded random frames: batched decoder (writable and SharedArrayBuffer chunks) agrees with a one-frame-at-a-time fatal TextDecoder", () => {
    const r = rng(0xf4a3e5);
    const alphabet = [0x20, 0x41, 0x7a, 0x22, 0xc3, 0xa9, 0xe2, 0x9c, 0x93, 0xf0, 0x9d, 0x84, 0x9e, 0x80, 0xbf, 0xc0, 0xed, 0xa0, 0xef, 0xbb, 0xff, 0xf4, 0x90];
    let faults = 0;
    let clean = 0;
    for (let n = 0; n < 3000; n++) {
      const frames: Uint8Array[] = [];
      const count = 1 + Math.floor(r() * 12);
      for (let f = 0; f < count; f++) {
        const len = 1 + Math.floor(r() * (r() < 0.1 ? 400 : 12));
        const body = new Uint8Array(len);
        const dirty = r() < 0.15;
        for (let i = 0; i < len; i++) body[i] = dirty ? alphabet[Math.floor(r() * alphabet.length)]! : 0x61 + Math.floor(r() * 26);
        // Some clean frames carry valid multi-byte text.
        frames.push(!dirty && r() < 0.3 ? new TextEncoder().encode(`é✓𝄞${"q".repeat(len)}`) : body);
      }
      const bytes = concat(frames.map(frameOf));
      const want = reference(bytes);
      if (want.fault) faults++;
      else clean++;
      for (const input of [bytes, shared(bytes)]) {
        for (const sizes of [[input.length], [1 + Math.floor(r() * 40)], [1]]) {
          const got = viaSpans(input, sizes);
          expect(got.fault).toBe(want.fault);
          expect(got.payloads.map((p) => Buffer.from(p).toString("hex"))).toEqual(want.payloads.map((p) => Buffer.from(p).toString("hex")));
          expect(got.unchanged).toBe(true);
        }
      }
    }
    expect(faults).toBeGreaterThan(100);
    expect(clean).toBeGreaterThan(100);
  });

  test("spans: a frame assembled across chunks is frame 0 and owns its buffer; the rest are ranges of the chunk", () => {
    const a = encodeFrame({ a: "first" });
    const b = encodeFrame({ b: 2 });
    const c = encodeFrame({ c: 3 });
    const d = new FrameDecoder({ raw: true });
    expect(d.pushSpans(a.subarray(0, 6)).count).toBe(0);
    const tail = concat([a.subarray(6), b, c]);
    const s = d.pushSpans(tail);
    expect(s.count).toBe(3);
    expect(s.assembled).not.toBeNull();
    expect(s.chunk).toBe(tail);
    expect(new TextDecoder().decode(s.assembled!.subarray(s.starts[0]!, s.ends[0]!))).toBe('{"a":"first"}');
    expect(new TextDecoder().decode(tail.subarray(s.starts[1]!, s.ends[1]!))).toBe('{"b":2}');
    expect(new TextDecoder().decode(tail.subarray(s.starts[2]!, s.ends[2]!))).toBe('{"c":3}');
    expect(s.assembled!.buffer).not.toBe(tail.buffer);
  });

  test("raw views: an assembled frame survives the caller reusing its chunk buffer; a whole-in-chunk frame aliases the chunk (documented)", () => {
    const frame = encodeFrame({ v: "assembled" });
    const reused = new Uint8Array(frame.length); // one read buffer the caller refills
    const d = new FrameDecoder({ raw: true });
    reused.set(frame.subarray(0, 9));
    expect(d.push(reused.subarray(0, 9)).messages).toEqual([]);
    reused.set(frame.subarray(9));
    const [view] = d.push(reused.subarray(0, frame.length - 9)).messages as Uint8Array[];
    reused.fill(0x7a); // the caller's next read lands in the same buffer
    expect(new TextDecoder().decode(view)).toBe('{"v":"assembled"}');

    const whole = encodeFrame({ v: "whole" });
    const [alias] = new FrameDecoder({ raw: true }).push(whole).messages as Uint8Array[];
    const kept = alias!.slice(); // what a caller that reuses buffers must do
    whole.fill(0x7a, 4);
    expect(new TextDecoder().decode(alias)).toBe("z".repeat(alias!.length));
    expect(new TextDecoder().decode(kept)).toBe('{"v":"whole"}');
    // The JSON mode returns values, which never alias the chunk.
    const again = encodeFrame({ v: "json" });
    const [value] = new FrameDecoder().push(again).messages;
    again.fill(0x7a, 4);
    expect(value).toEqual({ v: "json" });
  });

  test("the assembly deadline's midFrame flag and the length check before allocation hold on the batched path", () => {
    const d = new FrameDecoder();
    const next = encodeFrame({ n: 2 });
    const r = d.push(concat([encodeFrame({ n: 1 }), next.subarray(0, 5)]));
    expect(r.messages).toEqual([{ n: 1 }]);
    expect(d.midFrame).toBe(true);
    expect(d.push(next.subarray(5)).messages).toEqual([{ n: 2 }]);
    expect(d.midFrame).toBe(false);
    const over = new Uint8Array(4);
    new DataView(over.buffer).setUint32(0, MAX_FRAME_BYTES + 1, false);
    watchingAllocations((sizes) => {
      const f = new FrameDecoder().push(concat([encodeFrame({ n: 1 }), encodeFrame({ n: 2 }), over, new Uint8Array(100)]));
      expect(f.messages).toEqual([{ n: 1 }, { n: 2 }]);
      expect(f.fault?.kind).toBe("bad_length");
      expect(sizes).toEqual([]);
    });
  });
});

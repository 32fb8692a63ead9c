import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { encodeFrame, FrameDecoder, isCuaExecutorError, MAX_FRAME_BYTES } from "../../src/browser-control/index.ts";
import { concat } from "./support.ts";

const CASES = join(import.meta.dir, "../../../shared/cases/frames");

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
        expect(isCuaExecutorError(e)).toBe(true);
        if (isCuaExecutorError(e)) {
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
    const original = Buffer.allocUnsafeSlow;
    const sizes: number[] = [];
    Buffer.allocUnsafeSlow = ((n: number) => {
      sizes.push(n);
      return original(n);
    }) as typeof Buffer.allocUnsafeSlow;
    try {
      const over = new Uint8Array(4);
      new DataView(over.buffer).setUint32(0, MAX_FRAME_BYTES + 1, false);
      expect(new FrameDecoder().push(over).fault?.kind).toBe("bad_length");
      expect(sizes).toEqual([]);
      const frame = encodeFrame({ s: "z".repeat(200) });
      const d = new FrameDecoder();
      for (let i = 0; i < frame.length; i += 7) d.push(frame.subarray(i, i + 7));
      expect(sizes).toEqual([frame.length - 4]);
    } finally {
      Buffer.allocUnsafeSlow = original;
    }
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

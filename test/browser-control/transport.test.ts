import { describe, expect, test } from "bun:test";
import { Duplex, PassThrough } from "node:stream";
import { type BrowserControlErrorCode, BrowserControlTransport, encodeFrame, isBrowserControlError } from "../../src/browser-control/index.ts";
import { sleep, streamPair } from "./support.ts";

function watch(t: BrowserControlTransport) {
  const seen: { messages: unknown[]; closed: BrowserControlErrorCode[] } = { messages: [], closed: [] };
  t.start({ onMessage: (m) => seen.messages.push(m), onClose: (c) => seen.closed.push(c) });
  return seen;
}

describe("BrowserControlTransport close codes", () => {
  test("frames in, then end between frames → transport_failed (once)", async () => {
    const { host, guest } = streamPair();
    const seen = watch(new BrowserControlTransport(guest));
    host.write(Buffer.concat([encodeFrame({ a: 1 }), encodeFrame({ b: 2 })]));
    host.end();
    await sleep(10);
    expect(seen.messages).toEqual([{ a: 1 }, { b: 2 }]);
    expect(seen.closed).toEqual(["transport_failed"]);
  });

  test("end mid-frame → invalid_response", async () => {
    const { host, guest } = streamPair();
    const seen = watch(new BrowserControlTransport(guest));
    host.write(encodeFrame({ a: 1 }).subarray(0, 6));
    host.end();
    await sleep(10);
    expect(seen.closed).toEqual(["invalid_response"]);
  });

  test("stream error → transport_failed, and the error does not escape", async () => {
    const s = new PassThrough();
    const seen = watch(new BrowserControlTransport(s));
    s.destroy(new Error("boom"));
    await sleep(10);
    expect(seen.closed).toEqual(["transport_failed"]);
  });

  test("object-mode chunk → invalid_response", async () => {
    const s = new Duplex({
      objectMode: false,
      read() {},
      write(_c, _e, cb) {
        cb();
      },
    });
    const seen = watch(new BrowserControlTransport(s));
    // Force a non-byte chunk through a byte-mode stream, as a misbehaving source would.
    s.emit("data", { not: "bytes" });
    await sleep(1);
    expect(seen.closed).toEqual(["invalid_response"]);
  });

  test("a stream already destroyed, ended or in object mode → transport_failed at start", async () => {
    const destroyed = new PassThrough();
    destroyed.destroy();
    const ended = new PassThrough();
    ended.end();
    const objectMode = new PassThrough({ objectMode: true });
    for (const s of [destroyed, ended, objectMode]) {
      const t = new BrowserControlTransport(s);
      expect(t.closed).toBe(true);
      const seen = watch(t);
      await sleep(1);
      expect(seen.closed).toEqual(["transport_failed"]);
    }
  });

  test("malformed frame → invalid_response; nothing after it is delivered", async () => {
    const { host, guest } = streamPair();
    const seen = watch(new BrowserControlTransport(guest));
    host.write(Buffer.concat([encodeFrame({ a: 1 }), Buffer.from([0, 0, 0, 2, 0xef, 0xbb]), encodeFrame({ c: 3 })]));
    await sleep(5);
    expect(seen.messages).toEqual([{ a: 1 }]);
    expect(seen.closed).toEqual(["invalid_response"]);
  });

  test("send: refused locally without writing when oversize or closed; write error closes transport_failed", async () => {
    const { host } = streamPair();
    const t = new BrowserControlTransport(host);
    watch(t);
    let before = 0;
    expect(() => t.send({ s: "x".repeat(13 * 1024 * 1024) }, () => before++)).toThrow();
    expect(before).toBe(0);
    expect(host.bytesWritten).toBe(0);
    host.writeMode = "fail";
    await t.send({ a: 1 }).then(
      () => {
        throw new Error("expected failure");
      },
      (e) => expect(isBrowserControlError(e) && e.errorCode === "transport_failed" && e.disposition === "outcome_uncertain").toBe(true),
    );
    expect(t.closeCode).toBe("transport_failed");
    try {
      t.send({ a: 1 });
      throw new Error("expected refusal");
    } catch (e) {
      expect(isBrowserControlError(e) && e.errorCode === "executor_closed").toBe(true);
    }
  });

  test("start() twice is refused", () => {
    const t = new BrowserControlTransport(new PassThrough());
    watch(t);
    expect(() => watch(t)).toThrow();
  });
});

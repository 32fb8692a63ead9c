/** The ledger tap reads model, usage and final status out of bodies split anywhere, with bounded memory. */
import { describe, expect, test } from "bun:test";
import { EDGE_BYTES, JsonTap, MAX_KEPT_BYTES, MAX_LINE_CARRY, SseTap } from "../../src/models/gateway/tap.ts";

const enc = new TextEncoder();
const usage = { input_tokens: 11, input_tokens_details: { cached_tokens: 2 }, output_tokens: 7, output_tokens_details: { reasoning_tokens: 3 } };

function sse(events: { type: string; [k: string]: unknown }[]): Uint8Array {
  return enc.encode(events.map((e) => `event: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`).join(""));
}

const stream = sse([
  { type: "response.created", response: { model: "gpt-5.1-codex", status: "in_progress", usage: null } },
  { type: "response.output_text.delta", delta: "héllo ✓" },
  { type: "response.completed", response: { model: "gpt-5.1-codex-2025-11-13", status: "completed", usage } },
]);

describe("SseTap", () => {
  test("the same facts whatever the chunking (every split point, then single bytes)", () => {
    for (let cut = 0; cut <= stream.length; cut += 7) {
      const t = new SseTap();
      t.push(stream.subarray(0, cut));
      t.push(stream.subarray(cut));
      expect(t.end()).toEqual({
        model: "gpt-5.1-codex-2025-11-13",
        usage: { input: 11, cached: 2, cacheWrite: 0, output: 7, reasoning: 3 },
        final: "completed",
        incompleteReason: null,
      });
    }
    const t = new SseTap();
    for (const b of stream) t.push(new Uint8Array([b]));
    expect(t.end().final).toBe("completed");
  });
  test("CRLF line endings and a missing final blank line still parse", () => {
    const text = new TextDecoder()
      .decode(stream)
      .replaceAll("\n", "\r\n")
      .replace(/\r\n\r\n$/, "");
    const t = new SseTap();
    t.push(enc.encode(text));
    expect(t.end().usage?.input).toBe(11);
  });
  test("no final event: final stays null (the gateway calls that a cut)", () => {
    const t = new SseTap();
    t.push(sse([{ type: "response.created", response: { model: "m", status: "in_progress" } }]));
    expect(t.end()).toMatchObject({ final: null, usage: null, model: "m" });
  });
  test("an oversized final event keeps only its edges, and still yields model and usage", () => {
    const huge = "y".repeat(MAX_KEPT_BYTES + 10);
    const body = sse([{ type: "response.completed", response: { model: "gpt-5.1", status: "completed", output: [{ text: huge }], usage } }]);
    const t = new SseTap();
    for (let i = 0; i < body.length; i += 65536) t.push(body.subarray(i, i + 65536));
    expect(t.end()).toMatchObject({ model: "gpt-5.1", final: "completed", usage: { input: 11, output: 7 } });
    expect(EDGE_BYTES).toBeLessThan(MAX_KEPT_BYTES);
  });
  test("response.incomplete carries its reason", () => {
    const t = new SseTap();
    t.push(sse([{ type: "response.incomplete", response: { model: "m", status: "incomplete", incomplete_details: { reason: "max_output_tokens" }, usage } }]));
    expect(t.end()).toMatchObject({ final: "incomplete", incompleteReason: "max_output_tokens" });
  });
});

const completed = {
  model: "gpt-5.1-codex-2025-11-13",
  usage: { input: 11, cached: 2, cacheWrite: 0, output: 7, reasoning: 3 },
  final: "completed",
  incompleteReason: null,
};

/** Every way to cut `body` in two and in three (second cut a fixed distance on), read by a fresh tap each. */
function everySplit(body: Uint8Array, check: (t: SseTap) => void): void {
  for (let a = 0; a <= body.length; a++) {
    for (const gap of [0, 1, 5, 13]) {
      const b = Math.min(body.length, a + gap);
      const t = new SseTap();
      t.push(body.subarray(0, a));
      t.push(body.subarray(a, b));
      t.push(body.subarray(b));
      check(t);
    }
  }
}

describe("SseTap incremental parsing", () => {
  const withNoise = enc.encode(
    [
      ": keep-alive comment\n\n",
      "retry: 1000\nid: 7\n",
      `event: response.created\ndata: ${JSON.stringify({ type: "response.created", response: { model: "m0", status: "in_progress" } })}\n\n`,
      ": a comment inside the stream\n",
      `event: response.output_text.delta\ndata: ${JSON.stringify({ type: "response.output_text.delta", delta: "data: not a field ✓" })}\n\n`,
      // One event's JSON spread over two data lines (joined by a newline, as the format says).
      `event: response.completed\ndata: {"type":"response.completed","response":{"model":"gpt-5.1-codex-2025-11-13",\n`,
      `data: "status":"completed","usage":${JSON.stringify(usage)}}}\n\n`,
    ].join(""),
  );

  test("every split point (two and three pieces) with comments, retry/id fields and multi-line data", () => {
    everySplit(withNoise, (t) => expect(t.end()).toEqual(completed));
  });
  test("CRLF line endings split at every byte offset", () => {
    const crlf = enc.encode(new TextDecoder().decode(withNoise).replaceAll("\n", "\r\n"));
    everySplit(crlf, (t) => expect(t.end()).toEqual(completed));
  });
  test("a comment or event name far longer than the carry is dropped, memory stays bounded, facts intact", () => {
    const t = new SseTap();
    t.push(enc.encode(": "));
    let peak = 0;
    const piece = new Uint8Array(64 * 1024).fill(0x78);
    for (let i = 0; i < 160; i++) {
      t.push(piece); // 10 MiB of one comment line
      peak = Math.max(peak, t.heldBytes);
    }
    t.push(enc.encode(`\nevent: ${"n".repeat(3 * MAX_LINE_CARRY)}`));
    peak = Math.max(peak, t.heldBytes);
    t.push(enc.encode(`\ndata: {"type":"x","response":{"model":"m-long","status":"in_progress"}}\n\n`));
    t.push(stream);
    expect(peak).toBeLessThanOrEqual(MAX_LINE_CARRY);
    expect(t.end()).toEqual(completed);
  });
  test("an unread event's data (text deltas) is never held, however large", () => {
    const t = new SseTap();
    t.push(enc.encode("event: response.output_text.delta\ndata: "));
    const piece = new Uint8Array(64 * 1024).fill(0x61);
    let peak = 0;
    for (let i = 0; i < 160; i++) {
      t.push(piece);
      peak = Math.max(peak, t.heldBytes);
    }
    t.push(enc.encode("\n\n"));
    t.push(stream);
    expect(peak).toBe(0);
    expect(t.end()).toEqual(completed);
  });
  test("an oversized read event is held only to its bound and metered from its edges, or as unknown usage", () => {
    const huge = "z".repeat(MAX_KEPT_BYTES * 2);
    const body = sse([{ type: "response.completed", response: { model: "gpt-5.1", status: "completed", output: [{ text: huge }], usage } }]);
    const t = new SseTap();
    let peak = 0;
    for (let i = 0; i < body.length; i += 100_003) {
      t.push(body.subarray(i, i + 100_003));
      peak = Math.max(peak, t.heldBytes);
    }
    expect(peak).toBeLessThanOrEqual(MAX_KEPT_BYTES + EDGE_BYTES + 100_003);
    expect(t.end()).toMatchObject({ model: "gpt-5.1", final: "completed", usage: { input: 11, output: 7 } });
    // Its usage cut off in the middle (no closing brace within the tail): usage stays unknown, never a guess.
    const broken = enc.encode(
      `event: response.completed\ndata: {"response":{"model":"gpt-5.1","status":"completed","x":"${huge}","usage":{"input_tokens":11,\n\n`,
    );
    const b = new SseTap();
    for (let i = 0; i < broken.length; i += 65536) b.push(broken.subarray(i, i + 65536));
    expect(b.end().usage).toBeNull();
  });
});

describe("JsonTap", () => {
  test("a Response object split anywhere; an error body yields nothing", () => {
    const body = enc.encode(JSON.stringify({ object: "response", model: "gpt-5-mini", status: "completed", usage }));
    const t = new JsonTap();
    t.push(body.subarray(0, 10));
    t.push(body.subarray(10));
    expect(t.end()).toMatchObject({ model: "gpt-5-mini", final: "completed", usage: { input: 11 } });
    const e = new JsonTap();
    e.push(enc.encode('{"error":{"type":"x","code":"y","message":"z"}}'));
    expect(e.end()).toEqual({ model: null, usage: null, final: null, incompleteReason: null });
  });
});

/** The ledger tap reads model, usage and final status out of bodies split anywhere, with bounded memory. */
import { describe, expect, test } from "bun:test";
import { EDGE_BYTES, JsonTap, MAX_KEPT_BYTES, SseTap } from "../../src/models/gateway/tap.ts";

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

import { describe, expect, test } from "bun:test";
import { JsonObjectSplitter, readProgress } from "../../src/docker/index.ts";

const enc = new TextEncoder();

function split(text: string, size: number): unknown[] {
  const out: unknown[] = [];
  const s = new JsonObjectSplitter((v) => out.push(v));
  const bytes = enc.encode(text);
  for (let i = 0; i < bytes.length; i += size) s.push(bytes.slice(i, i + size));
  s.end();
  return out;
}

describe("JSON progress stream", () => {
  const text = '{"stream":"Step 1/2 : FROM x\\n"}\r\n{"stream":"é {braces} \\"q\\" ]"}{"aux":{"ID":"sha256:ab"}}\n\n{"status":"ok","a":[1,{"b":2}]}\r\n';
  const want = [{ stream: "Step 1/2 : FROM x\n" }, { stream: 'é {braces} "q" ]' }, { aux: { ID: "sha256:ab" } }, { status: "ok", a: [1, { b: 2 }] }];

  test("objects split at any chunk size, with or without line breaks, UTF-8 split across chunks", () => {
    for (let size = 1; size <= 20; size++) expect(split(text, size)).toEqual(want);
  });

  test("errorDetail is reported as the stream's error", async () => {
    const body = new Response('{"stream":"Loading"}\n{"errorDetail":{"message":"invalid tar header"},"error":"invalid tar header"}\n').body!;
    const r = await readProgress(body);
    expect(r.error).toBe("invalid tar header");
    expect(r.messages.length).toBe(2);
  });

  test("a bare error field also counts", async () => {
    expect((await readProgress(new Response('{"error":"boom"}').body!)).error).toBe("boom");
  });

  test("garbage between messages, a cut message and bad UTF-8 are rejected", () => {
    expect(() => split('{"a":1} x {"b":2}', 4)).toThrow(/unexpected character/);
    expect(() => split('{"a":"1', 3)).toThrow(/ends inside/);
    const s = new JsonObjectSplitter(() => {});
    expect(() => {
      s.push(new Uint8Array([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xc0, 0xaf, 0x22, 0x7d]));
      s.end();
    }).toThrow(/UTF-8/);
  });
});

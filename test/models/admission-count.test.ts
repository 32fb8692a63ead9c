/** Admission counts the text once and remembers long strings' counts without changing any count. */
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { countTokens } from "gpt-tokenizer/encoding/o200k_base";
import { admissionEstimate, outputGrant, tokensOf, withOutputTokens } from "../../src/models/admission.ts";

const codex = JSON.parse(readFileSync(join(import.meta.dir, "../fixtures/models/codex-0.171.0-request.json"), "utf8")) as Record<string, unknown>;

/** A deterministic generator, so a failure names a reproducible string. */
function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}
const alphabet = ["a", "Z", " ", "\n", "{", '"', "é", "✓", "日本", "🙂", "0", "_", ".", "\t", "fn ", "the "];

describe("tokensOf", () => {
  test("equals the tokenizer's count for random and realistic strings, first call, cached and after eviction", () => {
    const r = rng(7);
    const texts: string[] = [JSON.stringify(codex.tools), String(codex.instructions ?? ""), readFileSync(join(import.meta.dir, "../../README.md"), "utf8")];
    for (let i = 0; i < 200; i++) {
      const n = Math.floor(r() * 3000);
      texts.push(Array.from({ length: n }, () => alphabet[Math.floor(r() * alphabet.length)]).join(""));
    }
    for (const t of texts) expect(tokensOf(t)).toBe(countTokens(t));
    for (const t of texts) expect(tokensOf(t)).toBe(countTokens(t));
    // Push the early strings out of the bounded cache, then count them again.
    for (let i = 0; i < 40; i++) tokensOf(`${i} ${"x y ".repeat(250_000)}`);
    for (const t of texts.slice(0, 20)) expect(tokensOf(t)).toBe(countTokens(t));
  });
});

describe("special-token text", () => {
  test("a request whose text shows <|endoftext|> is admitted and counted as that text, not refused by the tokenizer", () => {
    const body = { model: "gpt-5.1", input: [{ role: "user", content: [{ type: "input_text", text: "the page says <|endoftext|> and <|im_start|>" }] }] };
    const plain = { model: "gpt-5.1", input: [{ role: "user", content: [{ type: "input_text", text: "the page says" }] }] };
    const e = admissionEstimate(body);
    expect(e.inputTokens).toBeGreaterThan(admissionEstimate(plain).inputTokens);
    expect(tokensOf("<|endoftext|>")).toBe(countTokens("<|endoftext|>", { disallowedSpecial: new Set() }));
  });
});

describe("one count per request", () => {
  test("withOutputTokens gives exactly what admissionEstimate gives for the body with that max_output_tokens", () => {
    const body = { ...codex, max_output_tokens: undefined };
    const counted = admissionEstimate(body);
    const grant = outputGrant(body, 0.5, undefined, counted);
    expect(grant).toBeGreaterThan(0);
    expect(outputGrant(body, 0.5)).toBe(grant as number);
    expect(withOutputTokens(counted, grant)).toEqual(admissionEstimate({ ...body, max_output_tokens: grant }));
    expect(withOutputTokens(counted, undefined)).toEqual(counted);
  });
});

/** The admission estimate (pure): never below what the fake bills for the same request, and the cap rule. */
import { describe, expect, test } from "bun:test";
import { assertWithinCap, estimateRequest, outputAllowance } from "../../src/analysis/admission.ts";
import type { AnalysisPrompt } from "../../src/analysis/provider.ts";
import { HumanishError } from "../../src/errors.ts";

import { fakeInputTokens } from "../support/fake-openai/server.ts";
import { makePng } from "../support/png.ts";
import { rng } from "../support/rng.ts";

/** The body the openai provider sends for `p` (what the fake bills). */
function bodyOf(p: AnalysisPrompt): Record<string, unknown> {
  const content = p.content.map((c) =>
    c.type === "text" ? { type: "input_text", text: c.text } : { type: "input_image", image_url: `data:image/png;base64,${c.pngBase64}`, detail: "high" },
  );
  return { model: "gpt-5.1", instructions: p.instructions, input: [{ role: "user", content }] };
}

const words = ["jq", "--filter", "select(.a)", "données", "🙂", "\n", "{", "}", "Usage:", "  ", "0x1f", "تحقق"];

describe("estimateRequest", () => {
  test("is never below the fake's input tokens, over random prompts with text and images", () => {
    const r = rng(7);
    const shots = [
      makePng(1024, 676, { seed: 1, fill: "bands" }),
      makePng(120, 260, { seed: 2, fill: "bands" }),
      makePng(768, 768, { seed: 3, fill: "bands" }),
    ].map((png) => ({ b64: Buffer.from(png).toString("base64"), png }));
    const sizes = [
      [1024, 676],
      [120, 260],
      [768, 768],
    ] as const;
    for (let n = 0; n < 40; n++) {
      const content: AnalysisPrompt["content"] = [];
      for (let k = 0; k < 1 + Math.floor(r() * 8); k++) {
        if (r() < 0.3) {
          const i = Math.floor(r() * 3);
          content.push({ type: "image", evidenceId: `p1/screenshot/000${k}`, pngBase64: shots[i]!.b64, width: sizes[i]![0], height: sizes[i]![1] });
        } else content.push({ type: "text", text: Array.from({ length: Math.floor(r() * 400) }, () => words[Math.floor(r() * words.length)]).join(" ") });
      }
      const prompt: AnalysisPrompt = { instructions: "rules", content, output: { name: "x", jsonSchema: { type: "object" } } };
      const est = estimateRequest(prompt, "gpt-5.1", 1000);
      expect(est.inputTokens).toBeGreaterThanOrEqual(fakeInputTokens(bodyOf(prompt)));
    }
  });

  test("prices the full output allowance at the highest input rate; unpriced models get no number", () => {
    const prompt: AnalysisPrompt = { instructions: "rules", content: [{ type: "text", text: "hello" }], output: { name: "x", jsonSchema: {} } };
    const e = estimateRequest(prompt, "gpt-5.1", 10_000);
    expect(e.usd).toBe(Math.ceil(e.inputTokens * 1.25 + 10_000 * 10) / 1e6);
    expect(e.ratesAsOf).toBe("2025-11-20");
    expect(estimateRequest(prompt, "no-such-model", 10_000).usd).toBeNull();
    expect(outputAllowance(prompt, "gpt-5.1", null, 1)).toBe(32_768);
    expect(outputAllowance(prompt, "gpt-5.1", null, 0.2)).toBe(16_384);
    expect(outputAllowance(prompt, "gpt-5.1", 1000, null)).toBe(1000);
    expect(() => outputAllowance(prompt, "gpt-5.1", 100, 1)).toThrow(HumanishError);
    expect(() => assertWithinCap(e, 0.05)).toThrow(/over --max-cost \$0\.05/);
    expect(() => assertWithinCap(e, 1)).not.toThrow();
    expect(() => assertWithinCap({ ...e, usd: null }, 0)).not.toThrow();
  });
});

/** Dollar-cost estimates: dated and sourced, or null with a reason — never 0 for unknown. */
import { describe, expect, test } from "bun:test";
import { CODEX_RATE_TABLE, estimateCodexCost, isModelPriced } from "../../../src/actors/codex-exec/pricing.ts";

const usage = (input: number, cachedInput: number, output: number) => ({
  input,
  cachedInput,
  output,
  total: input + output,
  turns: [{ input, cachedInput, output }],
});

describe("estimateCodexCost", () => {
  test("priced model: (input − cached) × in + cached × cached + output × out, dated and sourced", () => {
    const r = estimateCodexCost(usage(1_000_000, 400_000, 100_000), "gpt-5.1-codex");
    // 600k × 1.25/M + 400k × 0.125/M + 100k × 10/M = 0.75 + 0.05 + 1.0
    expect(r.estimate.estimatedCostUsd).toBe(1.8);
    expect(r.breakdown).toEqual({ inputUsd: 0.75, cachedInputUsd: 0.05, outputUsd: 1 });
    expect(r.estimate.ratesAsOf).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    expect(r.estimate.source).toMatch(/^https:\/\//);
    expect(r.estimate.reason).toBeNull();
    expect(r.basis).toBe("aggregated_turns_base_rate");
  });

  test("rounds to 6 decimals", () => {
    expect(estimateCodexCost(usage(24_763, 24_448, 122), "gpt-5-codex").estimate.estimatedCostUsd).toBe(0.00467); // 0.00039375 + 0.003056 + 0.00122
  });

  test("unknown model → null with a reason, never 0", () => {
    const r = estimateCodexCost(usage(1000, 0, 10), "some-future-model");
    expect(r.estimate).toEqual({
      schema: "humanish.actor-estimated-cost.v1",
      estimatedCostUsd: null,
      reason: "no_rate_for_model",
      ratesAsOf: null,
      source: null,
      modelId: "some-future-model",
    });
    expect(estimateCodexCost(usage(1000, 0, 10), undefined).estimate.estimatedCostUsd).toBeNull();
  });

  test("no usage (no turn completed) → null with no_token_usage", () => {
    const r = estimateCodexCost(undefined, "gpt-5.1-codex");
    expect(r.estimate.estimatedCostUsd).toBeNull();
    expect(r.estimate.reason).toBe("no_token_usage");
  });

  test("a real zero-token turn is a measured zero", () => {
    expect(estimateCodexCost(usage(0, 0, 0), "gpt-5-mini").estimate.estimatedCostUsd).toBe(0);
  });

  test("every table entry is dated and sourced; prototype keys are not models", () => {
    for (const [m, r] of Object.entries(CODEX_RATE_TABLE.models)) {
      expect(r.ratesAsOf, m).toMatch(/^\d{4}-\d{2}-\d{2}$/);
      expect(r.source, m).toMatch(/^https:\/\//);
      expect(r.inputPerMTok).toBeGreaterThan(0);
    }
    expect(isModelPriced("toString")).toBe(false);
    expect(isModelPriced("__proto__")).toBe(false);
    expect(isModelPriced(undefined)).toBe(false);
    expect(isModelPriced("gpt-5.1-codex")).toBe(true);
  });
});

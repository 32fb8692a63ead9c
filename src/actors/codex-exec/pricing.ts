/**
 * Dollar-cost estimate of a Codex participant from its per-turn token usage and a dated rate
 * table (`humanish.pricing.v1`). The table is data: each model carries the date its rates were
 * read and the public page they come from. A model not in the table, or a model that was not
 * declared (Codex then uses its own default, which the JSONL stream does not report), gives
 * `estimatedCostUsd: null` with a reason — never 0 (ARCHITECTURE.md invariant 5).
 *
 * Basis `aggregated_turns_base_rate`: a Codex turn aggregates every model request it made, so
 * the estimate uses base (non-long-context, non-batch) rates on the turn sums.
 */
import type { EstimatedCost, TokenUsage } from "../types.ts";

/** One model's rates in USD per 1,000,000 tokens. */
export interface ModelRate {
  inputPerMTok: number;
  cachedInputPerMTok: number;
  outputPerMTok: number;
  /** ISO date the rates were read from `source`. */
  ratesAsOf: string;
  /** Public page the rates come from. */
  source: string;
}

/** `humanish.pricing.v1`: model id → rates. */
export interface RateTable {
  schema: "humanish.pricing.v1";
  models: Record<string, ModelRate>;
}

const OPENAI_PRICING = "https://platform.openai.com/docs/pricing";
const AS_OF = "2025-11-20";

/** The built-in table (OpenAI standard-tier text-token rates for the models Codex runs). */
export const CODEX_RATE_TABLE: RateTable = {
  schema: "humanish.pricing.v1",
  models: {
    "gpt-5": { inputPerMTok: 1.25, cachedInputPerMTok: 0.125, outputPerMTok: 10, ratesAsOf: AS_OF, source: OPENAI_PRICING },
    "gpt-5-codex": { inputPerMTok: 1.25, cachedInputPerMTok: 0.125, outputPerMTok: 10, ratesAsOf: AS_OF, source: OPENAI_PRICING },
    "gpt-5.1": { inputPerMTok: 1.25, cachedInputPerMTok: 0.125, outputPerMTok: 10, ratesAsOf: AS_OF, source: OPENAI_PRICING },
    "gpt-5.1-codex": { inputPerMTok: 1.25, cachedInputPerMTok: 0.125, outputPerMTok: 10, ratesAsOf: AS_OF, source: OPENAI_PRICING },
    "gpt-5-mini": { inputPerMTok: 0.25, cachedInputPerMTok: 0.025, outputPerMTok: 2, ratesAsOf: AS_OF, source: OPENAI_PRICING },
    "gpt-5.1-codex-mini": { inputPerMTok: 0.25, cachedInputPerMTok: 0.025, outputPerMTok: 2, ratesAsOf: AS_OF, source: OPENAI_PRICING },
    "gpt-5-nano": { inputPerMTok: 0.05, cachedInputPerMTok: 0.005, outputPerMTok: 0.4, ratesAsOf: AS_OF, source: OPENAI_PRICING },
  },
};

/** True when `model` has a rate in `table` (used by preflight: a positive `maxUsd` needs a priced model). */
export function isModelPriced(model: string | undefined, table: RateTable = CODEX_RATE_TABLE): boolean {
  return model !== undefined && Object.hasOwn(table.models, model);
}

function round6(n: number): number {
  return Math.round(n * 1e6) / 1e6;
}

/** An estimate plus how it was computed (for the run's cost line note). */
export interface CodexCostEstimate {
  estimate: EstimatedCost;
  /** USD per token class, or null when no rate was used. */
  breakdown: { inputUsd: number; cachedInputUsd: number; outputUsd: number } | null;
  /** `aggregated_turns_base_rate`. */
  basis: string;
}

/**
 * Estimates the cost of `usage` on `model`.
 * - no usage (no turn completed) → null, `no_token_usage`;
 * - model undeclared or not in the table → null, `no_rate_for_model`;
 * - else input (minus cached) × input rate + cached × cached rate + output × output rate.
 * Cached tokens are a subset of input tokens (OpenAI usage semantics); reasoning tokens are
 * already part of output.
 */
export function estimateCodexCost(usage: TokenUsage | undefined, model: string | undefined, table: RateTable = CODEX_RATE_TABLE): CodexCostEstimate {
  const basis = "aggregated_turns_base_rate";
  const modelId = model ?? null;
  const none = (reason: string): CodexCostEstimate => ({
    estimate: { schema: "humanish.actor-estimated-cost.v1", estimatedCostUsd: null, reason, ratesAsOf: null, source: null, modelId },
    breakdown: null,
    basis,
  });
  if (!usage) return none("no_token_usage");
  const rate = model !== undefined && Object.hasOwn(table.models, model) ? table.models[model] : undefined;
  if (!rate) return none("no_rate_for_model");
  const cached = Math.min(usage.cachedInput, usage.input);
  const inputUsd = round6(((usage.input - cached) * rate.inputPerMTok) / 1e6);
  const cachedInputUsd = round6((cached * rate.cachedInputPerMTok) / 1e6);
  const outputUsd = round6((usage.output * rate.outputPerMTok) / 1e6);
  return {
    estimate: {
      schema: "humanish.actor-estimated-cost.v1",
      estimatedCostUsd: round6(inputUsd + cachedInputUsd + outputUsd),
      reason: null,
      ratesAsOf: rate.ratesAsOf,
      source: rate.source,
      modelId,
    },
    breakdown: { inputUsd, cachedInputUsd, outputUsd },
    basis,
  };
}

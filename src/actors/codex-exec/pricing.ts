/**
 * Dollar-cost cross-check of a Codex participant from its per-turn token usage and the dated rate
 * table in src/models. The bundle's costs come from the model gateway's ledger (per request, per
 * observed model); this estimate from Codex's turn sums is kept to compare against it. A model
 * not in the table, or a model that was not declared (Codex then uses its own default, which the
 * JSONL stream does not report: `runtime_default_unobserved`), gives `estimatedCostUsd: null` with a reason — never 0 (an
 * unknown cost is not a measured zero).
 *
 * Basis `aggregated_turns_base_rate`: a Codex turn aggregates every model request it made, so
 * the estimate uses base (non-long-context, non-batch) rates on the turn sums.
 */

import type { EstimatedCost, TokenUsage } from "../../actor-registry/types.ts";
import { isPriced, RATE_TABLE, type RateTable, rateFor } from "../../models/rates.ts";

export type { ModelRate, RateTable } from "../../models/rates.ts";

/** The rate table Codex turn sums are priced with (the one in src/models). */
export const CODEX_RATE_TABLE: RateTable = RATE_TABLE;

/** True when `model` has a rate in `table` (used by preflight: a positive `maxUsd` needs a priced model). */
export function isModelPriced(model: string | undefined, table: RateTable = CODEX_RATE_TABLE): boolean {
  return isPriced(model, table);
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
 * - model undeclared → null, `runtime_default_unobserved` (Codex chose its own model, which
 *   its turn stream does not name; only the responses, in the ledger, say which one served);
 * - model not in the table → null, `no_rate_for_model`;
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
  if (model === undefined) return none("runtime_default_unobserved");
  const rate = rateFor(model, table);
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

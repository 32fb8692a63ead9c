/**
 * Usage as the Responses API reports it, and its cost. Pure.
 *
 * The service reports `usage: {input_tokens, input_tokens_details.cached_tokens, output_tokens,
 * output_tokens_details.reasoning_tokens}`; cached tokens are a subset of input and reasoning a
 * subset of output. A cost is `null` with a reason when the model or the usage is unknown —
 * never 0.
 */
import { RATE_TABLE, type RateTable, rateFor } from "./rates.ts";

/** Token counts of one request (null = the response did not say). */
export interface RequestUsage {
  input: number;
  cached: number;
  cacheWrite: number;
  output: number;
  reasoning: number;
}

/** A priced request: USD (6 decimals) with the rate's provenance, or null with a reason. */
export type UsageCost =
  | { usd: number; ratesAsOf: string; source: string; reason: null }
  | { usd: null; ratesAsOf: null; source: null; reason: "no_token_usage" | "no_rate_for_model" | "no_model_reported" };

type Json = Record<string, unknown>;

function count(v: unknown): number | undefined {
  return typeof v === "number" && Number.isInteger(v) && v >= 0 ? v : undefined;
}

/**
 * Reads a Responses `usage` object.
 * @returns the counts, or null when `usage` is missing or its required counts are not
 *   non-negative integers.
 */
export function parseUsage(usage: unknown): RequestUsage | null {
  if (!usage || typeof usage !== "object") return null;
  const u = usage as Json;
  const input = count(u.input_tokens);
  const output = count(u.output_tokens);
  if (input === undefined || output === undefined) return null;
  const inDetails = (u.input_tokens_details && typeof u.input_tokens_details === "object" ? u.input_tokens_details : {}) as Json;
  const outDetails = (u.output_tokens_details && typeof u.output_tokens_details === "object" ? u.output_tokens_details : {}) as Json;
  const cached = Math.min(count(inDetails.cached_tokens) ?? 0, input);
  const cacheWrite = Math.min(count(inDetails.cache_write_tokens) ?? count(inDetails.cache_creation_tokens) ?? 0, input - cached);
  return { input, cached, cacheWrite, output, reasoning: Math.min(count(outDetails.reasoning_tokens) ?? 0, output) };
}

function round6(n: number): number {
  return Math.round(n * 1e6) / 1e6;
}

/** The cost of one request's usage on `model`. */
export function costOf(model: string | null, usage: RequestUsage | null, table: RateTable = RATE_TABLE): UsageCost {
  if (!usage) return { usd: null, ratesAsOf: null, source: null, reason: "no_token_usage" };
  if (!model) return { usd: null, ratesAsOf: null, source: null, reason: "no_model_reported" };
  const r = rateFor(model, table);
  if (!r) return { usd: null, ratesAsOf: null, source: null, reason: "no_rate_for_model" };
  const plain = usage.input - usage.cached - usage.cacheWrite;
  const usd = (plain * r.inputPerMTok + usage.cached * r.cachedInputPerMTok + usage.cacheWrite * r.cacheWritePerMTok + usage.output * r.outputPerMTok) / 1e6;
  return { usd: round6(usd), ratesAsOf: r.ratesAsOf, source: r.source, reason: null };
}

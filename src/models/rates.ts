/**
 * The dated rate table (`humanish.pricing.v1`) for the models humanish prices. Data, not code:
 * every entry carries the date its rates were read and the public page they come from. A model
 * that is not here is unpriced: its cost is `null` with its token counts, never 0.
 *
 * Rates are USD per 1,000,000 tokens at the standard (non-batch, non-priority, base-context)
 * tier. `maxOutputTokens` is the model's documented output ceiling, used as the worst case of a
 * request that sets no `max_output_tokens`.
 */

/** One model's rates. */
export interface ModelRate {
  /** USD per 1M uncached input tokens. */
  inputPerMTok: number;
  /** USD per 1M cached input tokens. */
  cachedInputPerMTok: number;
  /** USD per 1M cache-write input tokens (OpenAI bills them as plain input). */
  cacheWritePerMTok: number;
  /** USD per 1M output tokens (reasoning tokens are output). */
  outputPerMTok: number;
  /** Most output tokens one request can produce. */
  maxOutputTokens: number;
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
/** The date the built-in rates were read (ISO). */
export const BUILTIN_RATES_AS_OF = "2025-11-20";
const AS_OF = BUILTIN_RATES_AS_OF;

function rate(input: number, cached: number, output: number, maxOutputTokens: number): ModelRate {
  return {
    inputPerMTok: input,
    cachedInputPerMTok: cached,
    cacheWritePerMTok: input,
    outputPerMTok: output,
    maxOutputTokens,
    ratesAsOf: AS_OF,
    source: OPENAI_PRICING,
  };
}

/**
 * The table every pricing call reads by default: OpenAI standard-tier text-token rates of the
 * models our participants run, as built in — and, once a command starts, with the user's rate
 * file (rate-file.ts) merged over it. Models newer than the built-in date (e.g. gpt-5.4,
 * gpt-5.5) are not here: they are priced only by a user rate file.
 */
export const RATE_TABLE: RateTable = {
  schema: "humanish.pricing.v1",
  models: {
    "gpt-5": rate(1.25, 0.125, 10, 128_000),
    "gpt-5-codex": rate(1.25, 0.125, 10, 128_000),
    "gpt-5.1": rate(1.25, 0.125, 10, 128_000),
    "gpt-5.1-codex": rate(1.25, 0.125, 10, 128_000),
    "gpt-5-mini": rate(0.25, 0.025, 2, 128_000),
    "gpt-5.1-codex-mini": rate(0.25, 0.025, 2, 128_000),
    "gpt-5-nano": rate(0.05, 0.005, 0.4, 128_000),
    "computer-use-preview": rate(3, 3, 12, 1_024),
  },
};

/**
 * The rate of `model`, or undefined when it is unpriced. A dated snapshot id the service reports
 * (`gpt-5.1-codex-2025-11-13`) is priced as its base id.
 */
export function rateFor(model: string | undefined | null, table: RateTable = RATE_TABLE): ModelRate | undefined {
  if (!model) return undefined;
  if (Object.hasOwn(table.models, model)) return table.models[model];
  const base = /^(.*)-\d{4}-\d{2}-\d{2}$/.exec(model)?.[1];
  return base && Object.hasOwn(table.models, base) ? table.models[base] : undefined;
}

/** True when `model` has a rate in `table`. */
export function isPriced(model: string | undefined | null, table: RateTable = RATE_TABLE): boolean {
  return rateFor(model, table) !== undefined;
}

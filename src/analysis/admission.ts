/**
 * The admission estimate of one analysis request — pure, provider-blind, computed before
 * anything is sent. Conservative on every term:
 * - text: o200k_base tokens (the real tokenizer) of the instructions, every text part and the
 *   output schema, plus framing per part and per request, then 10% more for what the service
 *   adds that we do not see;
 * - images: by their size in pixels with the high-detail tile rule (`imageTokensFor`);
 * - output: the full allowance (`maxOutputTokens`), never an expected length;
 * - price: every input token at the model's highest input rate (uncached or cache-write), every
 *   output token at its output rate, rounded up to the micro-dollar.
 * A request is refused when that worst case exceeds `--max-cost`.
 */
import { HumanishError } from "../errors.ts";
import { imageTokensFor } from "../models/admission.ts";
import { RATE_TABLE, type RateTable, rateFor } from "../models/rates.ts";
import { countTokens } from "../models/tokens.ts";
import type { AnalysisEstimate, AnalysisPrompt } from "./provider.ts";

/** Framing allowed per content part and once per request (tokens). */
const PART_FRAMING_TOKENS = 8;
const REQUEST_FRAMING_TOKENS = 64;
/** Output allowance when the operator sets none: the larger when it fits the cap, else the smaller (tokens). */
export const DEFAULT_OUTPUT_TOKENS = [32_768, 16_384] as const;
/** Bounds of `--max-output-tokens`. */
export const OUTPUT_TOKENS_RANGE = [256, 32_768] as const;

/** The estimate plus the terms it is made of. Units: tokens, USD. */
export interface AdmissionDetail extends AnalysisEstimate {
  textTokens: number;
  imageTokens: number;
  /** The model's rates date and source, when priced. */
  ratesAsOf: string | null;
  rateSource: string | null;
}

/** Input tokens of `prompt` (text and images), conservatively. */
export function inputTokensOf(prompt: AnalysisPrompt): { text: number; image: number; images: number } {
  let text = countTokens(prompt.instructions) + countTokens(JSON.stringify(prompt.output.jsonSchema)) + REQUEST_FRAMING_TOKENS;
  let image = 0;
  let images = 0;
  for (const part of prompt.content) {
    text += PART_FRAMING_TOKENS;
    if (part.type === "text") text += countTokens(part.text);
    else {
      images++;
      image += imageTokensFor(part.width, part.height);
    }
  }
  return { text: Math.ceil(text * 1.1), image, images };
}

/** The worst-case estimate of sending `prompt` to `model` with an output allowance of `maxOutputTokens` (null: no numeric allowance). */
export function estimateRequest(prompt: AnalysisPrompt, model: string | null, maxOutputTokens: number | null, table: RateTable = RATE_TABLE): AdmissionDetail {
  const t = inputTokensOf(prompt);
  const inputTokens = t.text + t.image;
  const rate = rateFor(model, table);
  const usd =
    rate && maxOutputTokens !== null
      ? Math.ceil(inputTokens * Math.max(rate.inputPerMTok, rate.cacheWritePerMTok) + maxOutputTokens * rate.outputPerMTok) / 1e6
      : null;
  return {
    inputTokens,
    maxOutputTokens,
    imageCount: t.images,
    usd,
    textTokens: t.text,
    imageTokens: t.image,
    ratesAsOf: rate?.ratesAsOf ?? null,
    rateSource: rate?.source ?? null,
  };
}

/**
 * The output allowance: the operator's, else the larger default when its worst case fits
 * `maxCostUsd`, else the smaller one.
 * @throws HumanishError HUMANISH_ANALYSIS_CONFIG_INVALID when `requested` is outside 256–32,768
 */
export function outputAllowance(
  prompt: AnalysisPrompt,
  model: string | null,
  requested: number | null,
  maxCostUsd: number | null,
  table: RateTable = RATE_TABLE,
): number {
  if (requested !== null) {
    if (!Number.isInteger(requested) || requested < OUTPUT_TOKENS_RANGE[0] || requested > OUTPUT_TOKENS_RANGE[1])
      throw new HumanishError(
        "HUMANISH_ANALYSIS_CONFIG_INVALID",
        `--max-output-tokens must be a whole number from ${OUTPUT_TOKENS_RANGE[0]} to ${OUTPUT_TOKENS_RANGE[1]}, got ${requested}`,
        {
          next: "pass e.g. --max-output-tokens 16384, or omit it",
        },
      );
    return requested;
  }
  const large = estimateRequest(prompt, model, DEFAULT_OUTPUT_TOKENS[0], table);
  return maxCostUsd !== null && large.usd !== null && large.usd <= maxCostUsd ? DEFAULT_OUTPUT_TOKENS[0] : DEFAULT_OUTPUT_TOKENS[1];
}

/**
 * Refuse a request whose worst case exceeds the cap, before anything is sent.
 * @throws HumanishError HUMANISH_ANALYSIS_BUDGET_EXCEEDED naming the estimate, the cap and the cap that would admit it
 */
export function assertWithinCap(estimate: AnalysisEstimate, maxCostUsd: number | null): void {
  if (estimate.usd === null || maxCostUsd === null || estimate.usd <= maxCostUsd) return;
  const suggest = Math.max(1, Math.ceil(estimate.usd));
  throw new HumanishError(
    "HUMANISH_ANALYSIS_BUDGET_EXCEEDED",
    `the analysis request could cost up to $${estimate.usd.toFixed(6)} (${estimate.inputTokens} input tokens, ${estimate.maxOutputTokens} output tokens at most), over --max-cost $${maxCostUsd}; nothing was sent`,
    {
      next: `raise the cap (e.g. --max-cost ${suggest}), lower --max-output-tokens, or check the estimate first with --dry-run`,
      details: { estimateUsd: estimate.usd, maxCostUsd },
    },
  );
}

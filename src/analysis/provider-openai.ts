/**
 * The `openai` analysis provider: one structured-output request through the Responses API
 * (src/models/structured.ts), metered from the dated rate table. The client never retries: a
 * 429 or any other HTTP error is a `failed` outcome after exactly one request. The key comes from
 * the environment (`CODEX_API_KEY` or `OPENAI_API_KEY`; only its name is ever recorded) and the
 * endpoint from `OPENAI_BASE_URL` (default the public API). The response body is read bounded
 * (`HUMANISH_MODEL_RESPONSE_TOO_LARGE` past the bound), and a cost is priced only from the
 * model the response names.
 */
import { AnalysisOutputSchema } from "../bundle/index.ts";
import { HumanishError } from "../errors.ts";
import { MODEL_KEY_NAMES, resolveEndpoint, resolveModelKey } from "../models/endpoint.ts";
import { rateFor } from "../models/rates.ts";
import { requestStructured, type StructuredInputPart, type StructuredOutcome, structuredInput } from "../models/structured.ts";
import { costOf } from "../models/usage.ts";
import type { AnalysisEstimate, AnalysisPrompt, AnalysisProvider, AnalysisProviderResult, AnalysisRunOptions } from "./provider.ts";

/** The model analysed with when `--model` is not given (priced in the rate table). */
export const DEFAULT_ANALYSIS_MODEL = "gpt-5.1";

function modelOf(options: AnalysisRunOptions): string {
  return options.model ?? DEFAULT_ANALYSIS_MODEL;
}

function inputOf(prompt: AnalysisPrompt): StructuredInputPart[] {
  return structuredInput(prompt.content);
}

/** The provider result of one structured outcome: the ledger facts and what the answer was. Units: ms. */
function resultOf(out: StructuredOutcome<unknown>, model: string, durationMs: number): AnalysisProviderResult {
  if (out.kind === "http_error") {
    return {
      outcome: { status: "failed", code: out.code, message: out.message, ...(out.status !== null ? { httpStatus: out.status } : {}) },
      request: {
        provider: "openai",
        model,
        responseId: null,
        usage: { inputTokens: null, outputTokens: null },
        costUsd: null,
        costLabel: "unpriced-token-usage",
        costReason: "no_token_usage",
        ratesAsOf: null,
        rateSource: null,
        durationMs,
      },
    };
  }
  // Priced only as the model the service says answered (a dated snapshot is priced as its base
  // id): a response naming none has an unknown cost (`no_model_reported`), never the asked-for
  // model's price. The record then names the model that was asked for.
  const cost = costOf(out.model, out.usage);
  const request = {
    provider: "openai",
    model: out.model ?? model,
    responseId: out.responseId,
    usage: { inputTokens: out.usage?.input ?? null, outputTokens: out.usage?.output ?? null },
    costUsd: cost.usd,
    costLabel: cost.usd !== null ? ("priced" as const) : ("unpriced-token-usage" as const),
    costReason: cost.reason,
    ratesAsOf: cost.ratesAsOf,
    rateSource: cost.source,
    durationMs,
  };
  if (out.refusal !== null) return { outcome: { status: "refused", refusal: out.refusal }, request };
  if (out.status === "incomplete")
    return {
      outcome: { status: "incomplete", reason: out.incompleteReason ?? "unknown", ...(out.outputText !== null ? { outputText: out.outputText } : {}) },
      request,
    };
  if (out.status !== "completed")
    return { outcome: { status: "failed", code: `response_${out.status}`, message: `the response ended ${out.status}` }, request };
  if (out.outputText === null) return { outcome: { status: "failed", code: "invalid_response", message: "the response carried no output text" }, request };
  // A reply the SDK's parser refused still goes to the shared validator, which says exactly why.
  return { outcome: { status: "completed", outputText: out.outputText }, request };
}

/**
 * The provider over `env` (read for the key name and the endpoint; the key value stays in
 * memory). `maxResponseBytes` bounds the response body read (default the structured request's).
 */
export function createOpenAIAnalysisProvider(env: Record<string, string | undefined>, opts: { maxResponseBytes?: number } = {}): AnalysisProvider {
  return {
    name: "openai",
    billing: "metered",
    async identity(options) {
      const endpoint = resolveEndpoint(env);
      return {
        transport: "responses-api",
        endpointHost: endpoint.host,
        model: modelOf(options),
        billing: "metered",
        reasoningEffort: "high",
        structuredOutput: "zod-text-format",
      };
    },
    admit(options: AnalysisRunOptions, estimate: AnalysisEstimate) {
      if (options.maxCostUsd === null)
        throw new HumanishError(
          "HUMANISH_ANALYSIS_MAX_COST_REQUIRED",
          "--max-cost is required for the openai provider (the most this analysis may cost, in USD)",
          {
            next: "pass --max-cost 1 (see the estimate first with --dry-run --max-cost 1)",
          },
        );
      if (!rateFor(modelOf(options)) || estimate.usd === null)
        throw new HumanishError("HUMANISH_ANALYSIS_MODEL_UNPRICED", `model ${modelOf(options)} has no rate in the rate table, so no cost cap can admit it`, {
          next: `pick a priced model (e.g. --model ${DEFAULT_ANALYSIS_MODEL})`,
        });
    },
    async preflight() {
      resolveEndpoint(env);
      if (!resolveModelKey(env))
        throw new HumanishError("HUMANISH_ANALYSIS_KEY_MISSING", `no model key: set one of ${MODEL_KEY_NAMES.join(", ")}`, {
          next: "export OPENAI_API_KEY (or pass --env-file FILE), or check the estimate with --dry-run, which needs no key",
        });
    },
    async run(prompt, options): Promise<AnalysisProviderResult> {
      const model = modelOf(options);
      const endpoint = resolveEndpoint(env);
      const key = resolveModelKey(env);
      const started = Date.now();
      if (!key)
        throw new HumanishError("HUMANISH_ANALYSIS_KEY_MISSING", `no model key: set one of ${MODEL_KEY_NAMES.join(", ")}`, { next: "export OPENAI_API_KEY" });
      const out = await requestStructured(endpoint, key, {
        model,
        instructions: prompt.instructions,
        input: inputOf(prompt),
        schema: AnalysisOutputSchema,
        name: prompt.output.name,
        maxOutputTokens: options.maxOutputTokens,
        reasoningEffort: "high",
        timeoutMs: options.timeoutMs,
        signal: options.signal,
        ...(opts.maxResponseBytes !== undefined ? { maxResponseBytes: opts.maxResponseBytes } : {}),
      });
      return resultOf(out, model, Date.now() - started);
    },
  };
}

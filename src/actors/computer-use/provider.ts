/**
 * One Responses request of the computer-use participant, made in the host process through the
 * `openai` SDK (`maxRetries: 0`; the key never leaves the host). Every request is admitted
 * against the seat's and the study's spend budgets with the same worst-case estimate the model
 * gateway uses, before it leaves; every request (sent, refused or failed) becomes one ledger
 * line in the gateway's `humanish.model-ledger-line.v1` shape, so cost lines come from the same
 * code ({@link ledgerCostLines}).
 *
 * Nothing is retried: a 429, a 5xx, a timeout or a dropped connection ends the seat with a
 * named code, because a resent POST can bill twice and its first copy may still be running.
 */
import { HumanishError } from "../../errors.ts";
import { OpenAI } from "../../models/client.ts";
import { type ParsedResponse, parseResponse } from "../../models/computer-use.ts";
import {
  admissionEstimate,
  admitAll,
  costOf,
  type GatewayLedgerLine,
  pendingLedgerLine,
  RATE_TABLE,
  type RateTable,
  type RefusalReason,
  type RequestUsage,
  type SpendBudget,
} from "../../models/index.ts";

type Json = Record<string, unknown>;

/** How a request ended. */
export type RequestResult =
  | { kind: "response"; parsed: ParsedResponse; raw: unknown; usd: number | null; line: GatewayLedgerLine }
  | { kind: "refused"; reason: RefusalReason; budget: string; message: string; line: GatewayLedgerLine }
  | { kind: "error"; code: string; message: string; line: GatewayLedgerLine };

/** Options of {@link sendRequest}. */
export interface SendOptions {
  client: OpenAI;
  body: Json;
  /** Seat budget first, then the study's (either may be absent). */
  budgets: readonly SpendBudget[];
  /**
   * Token budgets (`scenario.caps.maxTokens`, `maxTotalTokens`: a {@link SpendBudget} counting
   * tokens), admitted with the request's worst-case input + output tokens and settled with the
   * tokens the response reports (unreported: unknown, nothing more is admitted).
   */
  tokenBudgets?: readonly SpendBudget[];
  ordinal: number;
  /** Per-request deadline, ms. */
  timeoutMs: number;
  signal?: AbortSignal;
  rates?: RateTable;
}

/** Error codes an error body may carry that are safe to show (never a message or a body). */
const SHOWN_CODES = new Set([
  "rate_limit_exceeded",
  "insufficient_quota",
  "server_error",
  "invalid_prompt",
  "invalid_request_error",
  "context_length_exceeded",
  "model_not_found",
  "invalid_api_key",
  "misalignment_policy_violation",
]);

function shownCode(c: unknown): string {
  return typeof c === "string" && SHOWN_CODES.has(c) ? ` (${c})` : "";
}

function refusalText(reason: RefusalReason, budget: string, model: string | null, known: number, est: number | null, cap: number, unit = "USD"): string {
  const what = unit === "USD" ? "spend" : "token use";
  switch (reason) {
    case "cap_zero":
      return `${budget} is 0 ${unit}, so no model request may leave`;
    case "spend_unknown":
      return `an earlier request's ${unit === "USD" ? "cost" : "token use"} is unknown, so ${budget} (${cap} ${unit}) cannot be guaranteed`;
    case "unpriced":
      return `model ${model ?? "(none)"} has no price in the rate table, so ${budget} (${cap} ${unit}) cannot be enforced`;
    default:
      return `known ${what} ${known} ${unit} plus this request's worst case ${est} ${unit} would pass ${budget} (${cap} ${unit})`;
  }
}

/** The SDK failure → a stable code and a message with only the status and an allowlisted code. */
export function classifyError(e: unknown, aborted: boolean): { code: string; message: string; status: number; sent: boolean } {
  const err = e as { status?: unknown; code?: unknown };
  if (aborted || e instanceof OpenAI.APIUserAbortError)
    return { code: "HUMANISH_CUA_PROVIDER_CANCELLED", message: "the model request was cancelled (the seat was stopped)", status: 0, sent: true };
  if (e instanceof OpenAI.APIConnectionTimeoutError)
    return { code: "HUMANISH_CUA_PROVIDER_TIMEOUT", message: "the model request got no complete response within its deadline", status: 0, sent: true };
  if (e instanceof OpenAI.APIConnectionError)
    return { code: "HUMANISH_CUA_PROVIDER_UNREACHABLE", message: "the model endpoint could not be reached or dropped the connection", status: 0, sent: true };
  const status = typeof err?.status === "number" ? err.status : 0;
  if (status === 429)
    return {
      code: "HUMANISH_CUA_PROVIDER_RATE_LIMITED",
      message: `the model endpoint answered HTTP 429${shownCode(err.code)}; not retried`,
      status,
      sent: true,
    };
  if (status >= 500)
    return {
      code: "HUMANISH_CUA_PROVIDER_SERVER_ERROR",
      message: `the model endpoint answered HTTP ${status}${shownCode(err.code)}; not retried`,
      status,
      sent: true,
    };
  if (status === 401 || status === 403)
    return { code: "HUMANISH_CUA_PROVIDER_UNAUTHORIZED", message: `the model endpoint answered HTTP ${status}${shownCode(err.code)}`, status, sent: true };
  if (status === 400 && err.code === "invalid_prompt")
    return { code: "HUMANISH_CUA_PROVIDER_REFUSED_PROMPT", message: "the model endpoint refused the prompt (invalid_prompt)", status, sent: true };
  if (status >= 400)
    return { code: "HUMANISH_CUA_PROVIDER_BAD_REQUEST", message: `the model endpoint answered HTTP ${status}${shownCode(err.code)}`, status, sent: true };
  return { code: "HUMANISH_CUA_PROVIDER_FAILED", message: "the model request failed unexpectedly", status: 0, sent: true };
}

function usageFields(u: RequestUsage | null): Partial<GatewayLedgerLine> {
  return u ? { input: u.input, cached: u.cached, cacheWrite: u.cacheWrite, output: u.output, reasoning: u.reasoning } : {};
}

/**
 * Admits, sends and settles one request. Never throws for provider or budget failures: the
 * result says what happened. A request that left and got no usable answer is settled as
 * unknown spend (it may be billed), so no later request of the seat is admitted under a cap.
 */
export async function sendRequest(o: SendOptions): Promise<RequestResult> {
  const rates = o.rates ?? RATE_TABLE;
  const est = admissionEstimate(o.body, rates);
  const line = pendingLedgerLine(o.ordinal, "/v1/responses", est.model, "humanish computer-use loop: the request never left");
  Object.assign(line, { estimateUsd: est.usd, estimateInputTokens: est.inputTokens + est.imageTokens });
  const tokenBudgets = o.tokenBudgets ?? [];
  const worstTokens = est.inputTokens + est.imageTokens + est.outputTokens;
  // Checked before either kind reserves, so a refusal of one leaves the other untouched.
  for (const b of tokenBudgets) {
    const c = b.check(worstTokens);
    if (!c.ok && "reason" in c) {
      const message = refusalText(c.reason, c.budget, est.model, c.knownUsd, c.estimateUsd, c.capUsd, "tokens");
      Object.assign(line, { outcome: "refused_cap", detail: `${c.reason}: ${message}` });
      return { kind: "refused", reason: c.reason, budget: c.budget, message, line };
    }
  }
  const admitted = admitAll(o.budgets, est.usd);
  if (!admitted.ok) {
    const message = refusalText(admitted.reason, admitted.budget, est.model, admitted.knownUsd, admitted.estimateUsd, admitted.capUsd);
    Object.assign(line, { outcome: "refused_cap", detail: `${admitted.reason}: ${message}` });
    return { kind: "refused", reason: admitted.reason, budget: admitted.budget, message, line };
  }
  const tokenTickets = tokenBudgets.map((b) => b.reserve(worstTokens));
  const settle = (usd: number | null, tokens: number | null = usd === 0 ? 0 : null) => {
    for (const [i, b] of o.budgets.entries()) b.settle(admitted.tickets[i] as number, usd);
    for (const [i, b] of tokenBudgets.entries()) b.settle(tokenTickets[i] as number, tokens);
  };
  const started = performance.now();
  const ms = () => Math.round(performance.now() - started);
  let resp: unknown;
  try {
    resp = await o.client.responses.create(o.body as never, { signal: o.signal, timeout: o.timeoutMs, maxRetries: 0 });
  } catch (e) {
    const c = classifyError(e, o.signal?.aborted === true);
    // An HTTP error answer is not billed; anything that left without an answer may be.
    const billedUnknown = c.status === 0;
    settle(billedUnknown ? null : 0);
    Object.assign(line, {
      status: c.status,
      outcome: billedUnknown ? "upstream_timeout" : "upstream_error",
      detail: c.message,
      ms: ms(),
      ...(billedUnknown
        ? { usd: null, costSource: null, costReason: "no_token_usage" }
        : { costSource: `the endpoint answered HTTP ${c.status}; an error response is not billed` }),
    });
    return { kind: "error", code: c.code, message: c.message, line };
  }
  const parsed = parseResponse(resp);
  // Priced only from the model the response names: the requested model is what we asked for,
  // not what was served (and billed), so a response that names none has an unknown cost.
  const cost = costOf(parsed.model, parsed.usage, rates);
  settle(cost.usd, parsed.usage ? parsed.usage.input + parsed.usage.output : null);
  Object.assign(line, {
    status: 200,
    model: parsed.model,
    ...usageFields(parsed.usage),
    usd: cost.usd,
    ratesAsOf: cost.ratesAsOf,
    costSource: cost.source,
    costReason: cost.reason,
    outcome: parsed.status === "completed" ? "completed" : parsed.status === "incomplete" ? "incomplete" : "failed",
    detail: parsed.status === "incomplete" ? `incomplete: ${parsed.incompleteReason ?? "no reason given"}` : null,
    ms: ms(),
  });
  return { kind: "response", parsed, raw: resp, usd: cost.usd, line };
}

/**
 * Preflight of a computer-use seat: a positive `maxUsd` (or `maxTotalUsd`) needs the model
 * priced, or the cap could not be enforced.
 * @throws HumanishError `HUMANISH_CUA_MODEL_UNPRICED` naming the model.
 */
export function assertPricedForCaps(model: string, caps: { maxUsd?: number | null; maxTotalUsd?: number | null }, rates: RateTable = RATE_TABLE): void {
  const positive = [caps.maxUsd, caps.maxTotalUsd].some((c) => typeof c === "number" && c > 0);
  if (!positive) return;
  const known = Object.hasOwn(rates.models, model) || admissionEstimate({ model }, rates).usd !== null;
  if (known) return;
  throw new HumanishError(
    "HUMANISH_CUA_MODEL_UNPRICED",
    `actors[0].model ${model} has no rate in the humanish rate table, so scenario.caps (maxUsd ${caps.maxUsd ?? "unset"}, maxTotalUsd ${caps.maxTotalUsd ?? "unset"}) cannot be enforced for it.`,
    { next: `Use a priced model (${Object.keys(rates.models).join(", ")}) or set scenario.caps.maxUsd to 0 for a dry rehearsal.` },
  );
}

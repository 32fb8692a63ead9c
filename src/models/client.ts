/**
 * The `openai` SDK client humanish uses, configured for money-safe calls: `maxRetries: 0` (a
 * retried POST can bill twice; a failure is surfaced, never silently repeated) and an explicit
 * timeout. The endpoint is the one {@link resolveEndpoint} resolved.
 */
import OpenAI from "openai";
import type { ModelEndpoint, ModelKey } from "./endpoint.ts";

/** Default whole-request timeout, ms. */
export const DEFAULT_MODEL_TIMEOUT_MS = 120_000;

/**
 * Creates the SDK client. `timeoutMs` bounds each request end to end (ms); `fetch` replaces the
 * transport (e.g. to keep the raw body of a reply the SDK's parser then refuses).
 */
export function createModelClient(endpoint: ModelEndpoint, key: ModelKey, opts: { timeoutMs?: number; fetch?: typeof globalThis.fetch } = {}): OpenAI {
  return new OpenAI({
    apiKey: key.value,
    baseURL: endpoint.baseURL,
    maxRetries: 0,
    timeout: opts.timeoutMs ?? DEFAULT_MODEL_TIMEOUT_MS,
    ...(opts.fetch ? { fetch: opts.fetch } : {}),
  });
}

export { OpenAI };

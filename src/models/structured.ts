/**
 * One structured-output request through the Responses API: the SDK's zod helper
 * (`zodTextFormat`) turns a zod schema into the strict JSON Schema the model must follow, and
 * `responses.parse` sends the request once (the client never retries) and parses the answer with
 * the same schema. The only place in humanish that calls the zod helper.
 *
 * Every outcome is returned, never thrown: an HTTP error (a 429 included) is `http_error` with
 * its status; a reply the parser refuses (invalid JSON, a schema violation) is still a
 * `response`, with `parseError` set and the raw text and usage kept — the caller keeps a
 * rejected output as diagnostics, so it must have the bytes and the bill. A response body is
 * read through a byte-bounded fetch: past the bound the request fails with
 * {@link RESPONSE_TOO_LARGE_CODE} instead of filling memory.
 */
import { zodTextFormat } from "openai/helpers/zod";
import type { z } from "zod";
import { errorMessage } from "../errors.ts";
import { type BoundedFetchState, boundedFetch } from "./bounded-fetch.ts";
import { createModelClient, OpenAI } from "./client.ts";
import type { ModelEndpoint, ModelKey } from "./endpoint.ts";
import { parseUsage, type RequestUsage } from "./usage.ts";

/** One input part of the user message. Images are PNG data URLs. */
export type StructuredInputPart = { type: "input_text"; text: string } | { type: "input_image"; image_url: string; detail: "high" | "low" | "auto" };

/** Text and PNG parts (base64) as Responses input parts; every image at `high` detail. */
export function structuredInput(parts: readonly ({ type: "text"; text: string } | { type: "image"; pngBase64: string })[]): StructuredInputPart[] {
  return parts.map((c) =>
    c.type === "text" ? { type: "input_text", text: c.text } : { type: "input_image", image_url: `data:image/png;base64,${c.pngBase64}`, detail: "high" },
  );
}

/** A structured request. Units: tokens, ms. */
export interface StructuredRequest<T> {
  model: string;
  instructions: string;
  input: StructuredInputPart[];
  /** The answer's schema (zod); its strict JSON Schema is what the model is held to. */
  schema: z.ZodType<T>;
  /** Model-visible name of the format (letters, digits, `_`, `-`). */
  name: string;
  /** `max_output_tokens`, or null to leave it to the model's ceiling. */
  maxOutputTokens: number | null;
  /** e.g. `high`; omitted when null. */
  reasoningEffort: "low" | "medium" | "high" | null;
  /** Whole request, headers and body (ms). */
  timeoutMs: number;
  signal: AbortSignal;
  /** Most bytes of a response body read (default {@link STRUCTURED_RESPONSE_MAX_BYTES}); past it the request fails. */
  maxResponseBytes?: number;
}

/**
 * Default bound on a structured reply's body, bytes. A non-streamed Responses body is the output
 * (at most `max_output_tokens`, a few bytes each even JSON-escaped) plus a small envelope, so a
 * legitimate answer is far below this; a body past it is a broken or hostile endpoint.
 */
export const STRUCTURED_RESPONSE_MAX_BYTES = 16 * 1024 * 1024;

/** The `code` of an outcome whose response body passed its byte limit. */
export const RESPONSE_TOO_LARGE_CODE = "HUMANISH_MODEL_RESPONSE_TOO_LARGE";

/** What came back. `responseId`/`model` are the service's; usage null when it reported none. */
export type StructuredOutcome<T> =
  | {
      kind: "response";
      responseId: string | null;
      model: string | null;
      /** The response status (`completed`, `incomplete`, `failed`, …). */
      status: string;
      incompleteReason: string | null;
      /** The model's refusal text, when it refused. */
      refusal: string | null;
      /** The concatenated output text, when there was any. */
      outputText: string | null;
      /** The parsed answer (a completed, valid reply only). */
      parsed: T | null;
      /** Why the SDK's parser refused the text (invalid JSON, a schema violation). */
      parseError: string | null;
      usage: RequestUsage | null;
    }
  | { kind: "http_error"; status: number | null; code: string; message: string };

type Json = Record<string, unknown>;

/** The strict JSON Schema the helper derives from `schema` (what a non-OpenAI provider is given too). */
export function strictJsonSchemaOf(schema: z.ZodType, name: string): Record<string, unknown> {
  return zodTextFormat(schema, name).schema as Record<string, unknown>;
}

function textOf(output: unknown): { text: string | null; refusal: string | null } {
  const texts: string[] = [];
  const refusals: string[] = [];
  for (const item of Array.isArray(output) ? (output as Json[]) : []) {
    if (item?.type !== "message" || !Array.isArray(item.content)) continue;
    for (const c of item.content as Json[]) {
      if (c?.type === "output_text" && typeof c.text === "string") texts.push(c.text);
      if (c?.type === "refusal" && typeof c.refusal === "string") refusals.push(c.refusal);
    }
  }
  return { text: texts.length ? texts.join("") : null, refusal: refusals.length ? refusals.join("\n") : null };
}

function fromResponse<T>(r: Json, parsed: T | null, parseError: string | null): StructuredOutcome<T> {
  const { text, refusal } = textOf(r.output);
  const details = r.incomplete_details as Json | null | undefined;
  return {
    kind: "response",
    responseId: typeof r.id === "string" ? r.id : null,
    model: typeof r.model === "string" ? r.model : null,
    status: typeof r.status === "string" ? r.status : "unknown",
    incompleteReason: details && typeof details.reason === "string" ? details.reason : null,
    refusal,
    outputText: text,
    parsed,
    parseError,
    usage: parseUsage(r.usage),
  };
}

function errorOutcome<T>(e: unknown): StructuredOutcome<T> {
  if (e instanceof OpenAI.APIUserAbortError) return { kind: "http_error", status: null, code: "cancelled", message: "the request was cancelled" };
  if (e instanceof OpenAI.APIConnectionTimeoutError) return { kind: "http_error", status: null, code: "timeout", message: "the request timed out" };
  if (e instanceof OpenAI.APIConnectionError) return { kind: "http_error", status: null, code: "connection", message: e.message };
  if (e instanceof OpenAI.APIError) {
    const code = typeof e.code === "string" && e.code ? e.code : typeof e.type === "string" && e.type ? e.type : `http_${e.status ?? "error"}`;
    return { kind: "http_error", status: typeof e.status === "number" ? e.status : null, code, message: e.message };
  }
  return { kind: "http_error", status: null, code: "client_error", message: errorMessage(e) };
}

/**
 * Sends `req` once and returns what came back (see the module doc).
 * Never throws for a service-side or parse failure.
 */
export async function requestStructured<T>(endpoint: ModelEndpoint, key: ModelKey, req: StructuredRequest<T>): Promise<StructuredOutcome<T>> {
  // The body is read once, bounded, and kept: when the SDK's parser throws, the text and the
  // usage of what was billed are still known; a body past the limit is never held whole.
  const limit = req.maxResponseBytes ?? STRUCTURED_RESPONSE_MAX_BYTES;
  const seen: BoundedFetchState = { lastOkBody: null, tooLarge: null };
  const client = createModelClient(endpoint, key, { timeoutMs: req.timeoutMs, fetch: boundedFetch(limit, seen) });
  const body = {
    model: req.model,
    instructions: req.instructions,
    input: [{ role: "user" as const, content: req.input }],
    text: { format: zodTextFormat(req.schema, req.name) },
    store: false,
    ...(req.maxOutputTokens !== null ? { max_output_tokens: req.maxOutputTokens } : {}),
    ...(req.reasoningEffort ? { reasoning: { effort: req.reasoningEffort } } : {}),
  };
  try {
    const r = await client.responses.parse(body, { signal: req.signal });
    return fromResponse<T>(r as unknown as Json, (r.output_parsed as T | null) ?? null, null);
  } catch (e) {
    if (seen.tooLarge)
      return {
        kind: "http_error",
        status: null,
        code: RESPONSE_TOO_LARGE_CODE,
        message: `the model endpoint's response passed ${limit} bytes and was not read further (the request was sent and may be billed)`,
      };
    if (e instanceof OpenAI.APIError) return errorOutcome(e);
    // The request succeeded and the parser refused its text: report the reply as it was.
    const raw: string | null = seen.lastOkBody;
    if (raw !== null) {
      try {
        const j = JSON.parse(raw) as Json;
        const why = e instanceof SyntaxError ? `invalid JSON: ${e.message}` : `schema violation: ${errorMessage(e)}`;
        return fromResponse<T>(j, null, why.slice(0, 4000));
      } catch {
        /* the body itself is not JSON: a client-side failure */
      }
    }
    return errorOutcome(e);
  }
}

/**
 * What the gateway lets through to the endpoint. Pure.
 *
 * The spend cap can only bound what the gateway sees. A request field that makes the service use
 * context the gateway cannot count (a stored response, a conversation, a stored prompt, an
 * uploaded file), or bill something beyond tokens (hosted tools), would let a request cost far
 * more than its admission estimate. So:
 * - body fields: an allow-list of Responses fields whose cost the estimate bounds; any other
 *   field — `previous_response_id`, `conversation`, `prompt` and every field not listed — is
 *   refused, as are `store: true`, `background: true`, a priority service tier, input items that
 *   reference stored items (`item_reference`) and content parts that name a file (`file_id`,
 *   `file_url`). A request without `store` is sent with `store: false` (the service's default is
 *   to store, which would make context for a later request);
 * - tools: definitions the model calls back through the client (function, custom, namespace,
 *   local shell, computer) pass; hosted tools the service runs and bills itself (web search,
 *   file search, code interpreter, image generation, remote MCP, …) are removed from the request
 *   and the removal recorded, so the agent keeps working without them;
 * - headers: an allow-list of descriptive client headers; the key, and the organization and
 *   project it bills, come from the host only — never from the sandbox.
 */
import type { ModelEndpoint } from "../endpoint.ts";

type Json = Record<string, unknown>;

/** Responses request fields the gateway forwards (their cost is bounded by the admission estimate). */
export const FORWARDED_FIELDS: ReadonlySet<string> = new Set([
  "model",
  "input",
  "instructions",
  "tools",
  "tool_choice",
  "parallel_tool_calls",
  "max_tool_calls",
  "reasoning",
  "text",
  "include",
  "stream",
  "stream_options",
  "store",
  "background",
  "service_tier",
  "max_output_tokens",
  "temperature",
  "top_p",
  "top_logprobs",
  "truncation",
  "metadata",
  "client_metadata",
  "user",
  "safety_identifier",
  "prompt_cache_key",
  "prompt_cache_retention",
]);

/** Fields named in the refusal as context stored at the service, which the gateway cannot see. */
const STORED_CONTEXT_FIELDS = new Set(["previous_response_id", "conversation", "prompt"]);

/** Tool types whose calls come back to the client; the service bills them as tokens only. */
const CLIENT_TOOL_TYPES = new Set(["function", "custom", "namespace", "local_shell", "shell", "apply_patch", "computer", "computer_use_preview"]);

/** Service tiers billed at (or below) the standard rates the rate table holds. */
const STANDARD_TIERS = new Set(["default", "flex"]);

/** A refused request: the field and why, in words. */
export interface FieldRefusal {
  ok: false;
  /** The body field (or input path) refused. */
  field: string;
  message: string;
}

/** A request the gateway may forward: the body to send and what the gateway changed. */
export interface ShapedRequest {
  ok: true;
  body: Json;
  /** Types of the hosted tools removed from `tools` (empty: none). */
  toolsRemoved: string[];
  /** True when the request named no `store` and the gateway sent `store: false`. */
  storeSet: boolean;
}

function refuse(field: string, why: string): FieldRefusal {
  return {
    ok: false,
    field,
    message: `The humanish model gateway does not forward \`${field}\`: ${why} Send the whole context in \`input\` with \`store: false\`.`,
  };
}

/** The first input item or content part that points at something stored at the service, as a path. */
function storedReference(v: unknown, path: string): string | undefined {
  if (Array.isArray(v)) {
    for (const [i, x] of v.entries()) {
      const hit = storedReference(x, `${path}[${i}]`);
      if (hit) return hit;
    }
    return undefined;
  }
  if (!v || typeof v !== "object") return undefined;
  const o = v as Json;
  if (o.type === "item_reference") return `${path}.type`;
  for (const k of ["file_id", "file_url"]) if (typeof o[k] === "string") return `${path}.${k}`;
  for (const [k, x] of Object.entries(o)) {
    const hit = storedReference(x, `${path}.${k}`);
    if (hit) return hit;
  }
  return undefined;
}

/** Checks a parsed Responses request body against the allow-list; returns the body to forward or the refusal. */
export function shapeRequest(body: Json): ShapedRequest | FieldRefusal {
  for (const k of Object.keys(body)) {
    if (STORED_CONTEXT_FIELDS.has(k))
      return refuse(k, "it makes the service add stored context the gateway cannot see, so the request's cost cannot be bounded.");
    if (!FORWARDED_FIELDS.has(k)) return refuse(k, "it is not a field whose cost the gateway can bound.");
  }
  if (body.store !== undefined && body.store !== false) return refuse("store", "a stored response is context a later request could use unseen.");
  if (body.background !== undefined && body.background !== false) return refuse("background", "a background response runs (and bills) after the request ends.");
  if (body.service_tier !== undefined && !(typeof body.service_tier === "string" && STANDARD_TIERS.has(body.service_tier)))
    return refuse("service_tier", `only ${[...STANDARD_TIERS].join(" or ")} are priced by the rate table.`);
  const ref = storedReference(body.input, "input");
  if (ref) return refuse(ref, "it refers to an item or file stored at the service.");
  const out: Json = { ...body };
  const toolsRemoved: string[] = [];
  if (Array.isArray(body.tools)) {
    out.tools = body.tools.filter((t) => {
      const type = t && typeof t === "object" ? String((t as Json).type) : String(t);
      if (CLIENT_TOOL_TYPES.has(type)) return true;
      toolsRemoved.push(type);
      return false;
    });
  }
  const storeSet = body.store === undefined;
  if (storeSet) out.store = false;
  return { ok: true, body: out, toolsRemoved, storeSet };
}

/** Client headers passed on: descriptive only (what the client is, which session), never billing. */
const FORWARDED_HEADER =
  /^(accept|user-agent|originator|session[-_]id|thread-id|conversation[-_]id|x-client-request-id|idempotency-key|x-codex-[a-z0-9-]+|x-stainless-[a-z0-9-]+)$/i;

/**
 * The headers sent upstream: the allow-listed ones from the sandbox, then the host's key, and the
 * organization and project from the host's endpoint settings (if any), JSON, no compression.
 */
export function upstreamHeaders(incoming: Headers, endpoint: ModelEndpoint, keyValue: string): Headers {
  const headers = new Headers();
  incoming.forEach((v, k) => {
    if (FORWARDED_HEADER.test(k)) headers.set(k, v);
  });
  headers.set("content-type", "application/json");
  headers.set("authorization", `Bearer ${keyValue}`);
  headers.set("accept-encoding", "identity");
  if (endpoint.organization) headers.set("openai-organization", endpoint.organization);
  if (endpoint.project) headers.set("openai-project", endpoint.project);
  return headers;
}

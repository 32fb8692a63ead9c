/**
 * A local fake of the OpenAI Responses API, faked only at the wire: the real `openai` SDK and the
 * real Codex CLI talk to it over HTTP exactly as they would to the real endpoint.
 *
 * `POST /v1/responses` answers with a JSON Response object, or (body `stream: true`) with the SSE
 * event sequence `response.created`, `response.in_progress`, per output item
 * `response.output_item.added` … `response.output_item.done`, then `response.completed` (or
 * `response.incomplete`) carrying `usage` — `incomplete` (reason max_output_tokens, output billed
 * at the limit) whenever the output would pass the request's `max_output_tokens`. Errors are `{error: {type, code, message}}`. Every
 * other path is 404. What each request gets is decided by a scripted scenario (see
 * scenarios.ts); every request is recorded for the test to inspect.
 *
 * Usage is counted the way the real service counts text: o200k_base tokens of the request's text
 * (instructions, input, tool definitions) plus the chat format's framing (4 tokens per input
 * item for its start, role and end markers, 3 that prime the reply), images by the published
 * high-detail tile rule, and o200k_base tokens of the generated output.
 */
import { countTokens } from "gpt-tokenizer/encoding/o200k_base";

/** One output item the fake returns (Responses API shapes). */
export type FakeOutputItem =
  | { type: "message"; text: string }
  | { type: "function_call"; name: string; arguments: string; callId?: string }
  | { type: "reasoning"; summary: string }
  /** An assistant message whose only content is a refusal (what a model that declines returns). */
  | { type: "refusal"; refusal: string }
  /**
   * A computer-use call: the GA tool's batched `actions`, or the preview tool's single `action`
   * (either may be set, both for a deliberately odd reply), plus `pending_safety_checks`.
   */
  | {
      type: "computer_call";
      callId?: string;
      actions?: unknown[];
      action?: unknown;
      pendingSafetyChecks?: { id: string; code: string; message: string }[];
    };

/** Usage as the Responses API reports it. */
export interface FakeUsage {
  input_tokens: number;
  input_tokens_details: { cached_tokens: number };
  output_tokens: number;
  output_tokens_details: { reasoning_tokens: number };
  total_tokens: number;
}

/** What the scenario decides for one request. */
export type FakeReply =
  /** A normal response. `usage: null` omits usage entirely; undefined computes it. */
  | {
      kind: "response";
      /** The model the response names; `null` names none (the field is left out). */
      model?: string | null;
      output: FakeOutputItem[];
      usage?: FakeUsage | null;
      incomplete?: "max_output_tokens" | "content_filter";
      /** A terminal status other than completed/incomplete (e.g. `failed`, `cancelled`). */
      status?: "failed" | "cancelled";
      firstByteDelayMs?: number;
      eventGapMs?: number;
      /** Held until this settles before the first byte (a test's gate: "the request is in flight"). */
      firstByteAfter?: Promise<unknown>;
      /** Streamed: after the first event, the rest is held until this settles. */
      restAfter?: Promise<unknown>;
    }
  /** An HTTP error with an OpenAI-shaped body. */
  | { kind: "error"; status: number; type: string; code: string | null; message: string }
  /** SSE headers and `response.created` plus half a text delta, then the connection is dropped. */
  | { kind: "cut"; model?: string }
  /** Accepts the request and never sends a byte (until the client goes away or the fake closes). */
  | { kind: "hang" }
  /** A streamed message of about `bytes` bytes of text, sent in `chunkBytes` deltas. */
  | { kind: "big"; bytes: number; chunkBytes?: number; model?: string }
  /**
   * A non-streamed JSON Response whose one message holds about `bytes` bytes of text, produced
   * as the client reads it (never whole in the fake's memory); what left is in `jsonBytesSent`.
   */
  | { kind: "big-json"; bytes: number; model?: string };

/** One request the fake received. */
export interface FakeRequest {
  ordinal: number;
  method: string;
  path: string;
  authorization: string | null;
  /** Every request header, names lower-case. */
  headers: Record<string, string>;
  /** Parsed JSON body (undefined when it was not JSON). */
  body: Record<string, unknown> | undefined;
  /** Raw body bytes length. */
  bodyBytes: number;
}

/** Decides the reply to request number `ordinal` (1-based, counting only `POST /v1/responses`). */
export type FakeScenario = (req: FakeRequest, history: readonly FakeRequest[]) => FakeReply;

export interface FakeOpenAIOptions {
  scenario: FakeScenario;
  /** Bearer token the fake accepts; any other is 401 `invalid_api_key`. */
  apiKey: string;
  /** Default model reported in responses. */
  model?: string;
}

export interface FakeOpenAI {
  /** Base URL including `/v1`, e.g. `http://127.0.0.1:43111/v1`. */
  readonly baseURL: string;
  readonly port: number;
  /** Every request received, in order (all paths). */
  readonly requests: FakeRequest[];
  /** Requests refused with 400 because a computer call lacked its output (or an output its call). */
  readonly rejectedForCallOutputs: FakeRequest[];
  /**
   * What the fake billed, one entry per response it generated — whether or not the client was
   * still there to read it (the real service bills a request that runs after its client left).
   * Input includes the stored context a `previous_response_id` continues.
   */
  readonly billed: { ordinal: number; model: string | null; usage: FakeUsage | null }[];
  /** Bytes of `big-json` bodies handed to the connection so far (what the client let through). */
  readonly jsonBytesSent: number;
  close(): Promise<void>;
}

type Json = Record<string, unknown>;

const enc = new TextEncoder();

/** The text of a Responses request the service would tokenise (instructions, input, tools). */
export function requestText(body: Json | undefined): string {
  if (!body) return "";
  const parts: string[] = [];
  const walk = (v: unknown): void => {
    if (typeof v === "string") parts.push(v);
    else if (Array.isArray(v)) for (const x of v) walk(x);
    else if (v && typeof v === "object") {
      for (const [k, x] of Object.entries(v as Json)) {
        // Image payloads are not text; the service bills them by size, not by their base64.
        if (k === "image_url" && typeof x === "string" && x.startsWith("data:")) continue;
        walk(x);
      }
    }
  };
  walk(body.instructions);
  walk(body.input);
  if (body.tools) parts.push(JSON.stringify(body.tools));
  return parts.join("\n");
}

/** High-detail image tokens the way the service documents them, from a PNG data URL's header. */
export function fakeImageTokens(url: string): number {
  const b64 = /^data:image\/png;base64,(.{32})/.exec(url)?.[1];
  if (!b64) return 765; // a remote or non-PNG image: the fake bills a 1024×1024 image
  const head = Buffer.from(b64, "base64");
  let w = head.readUInt32BE(16);
  let h = head.readUInt32BE(20);
  const fit = Math.min(1, 2048 / Math.max(w, h));
  w *= fit;
  h *= fit;
  const short = Math.min(1, 768 / Math.min(w, h));
  w *= short;
  h *= short;
  return 85 + 170 * Math.ceil(w / 512) * Math.ceil(h / 512);
}

/** Input tokens of a request as the fake bills it: o200k tokens of its text plus each image's tiles. */
export function fakeInputTokens(body: Json | undefined): number {
  let images = 0;
  const walk = (v: unknown): void => {
    if (Array.isArray(v)) for (const x of v) walk(x);
    else if (v && typeof v === "object") {
      const o = v as Json;
      if (o.type === "input_image" || o.type === "computer_screenshot") images += fakeImageTokens(typeof o.image_url === "string" ? o.image_url : "");
      else for (const x of Object.values(o)) walk(x);
    }
  };
  walk(body?.input);
  const input = body?.input;
  const items = Array.isArray(input) ? input.length : 1;
  return countTokens(requestText(body)) + images + 4 * items + 3;
}

function usageFor(body: Json | undefined, output: FakeOutputItem[]): FakeUsage {
  const input = fakeInputTokens(body);
  let out = 0;
  let reasoning = 0;
  for (const o of output) {
    if (o.type === "message") out += countTokens(o.text);
    else if (o.type === "function_call") out += countTokens(o.name + o.arguments) + 4;
    else if (o.type === "computer_call") out += countTokens(JSON.stringify(o.actions ?? o.action ?? null)) + 4;
    else if (o.type === "refusal") out += countTokens(o.refusal);
    else {
      const r = countTokens(o.summary) + 16;
      out += r;
      reasoning += r;
    }
  }
  return {
    input_tokens: input,
    input_tokens_details: { cached_tokens: 0 },
    output_tokens: out,
    output_tokens_details: { reasoning_tokens: reasoning },
    total_tokens: input + out,
  };
}

function outputObject(o: FakeOutputItem, i: number, respId: string): Json {
  const prefix = { message: "msg", refusal: "msg", function_call: "fc", reasoning: "rs", computer_call: "cu" }[o.type];
  const id = `${prefix}_${respId}_${i}`;
  if (o.type === "computer_call") {
    return {
      type: "computer_call",
      id,
      status: "completed",
      call_id: o.callId ?? `call_${respId}_${i}`,
      ...(o.actions !== undefined ? { actions: o.actions } : {}),
      ...(o.action !== undefined ? { action: o.action } : {}),
      pending_safety_checks: o.pendingSafetyChecks ?? [],
    };
  }
  if (o.type === "message") {
    return { type: "message", id, status: "completed", role: "assistant", content: [{ type: "output_text", text: o.text, annotations: [] }] };
  }
  if (o.type === "refusal") return { type: "message", id, status: "completed", role: "assistant", content: [{ type: "refusal", refusal: o.refusal }] };
  if (o.type === "function_call") {
    return { type: "function_call", id, status: "completed", call_id: o.callId ?? `call_${respId}_${i}`, name: o.name, arguments: o.arguments };
  }
  // The encrypted content is opaque to clients; a stateless client must replay it verbatim.
  return { type: "reasoning", id, summary: [{ type: "summary_text", text: o.summary }], encrypted_content: `enc_${id}` };
}

/**
 * The service's computer-call rule: every `computer_call` in the conversation (the stored
 * chain plus this input) needs exactly one `computer_call_output` with its `call_id`, and every
 * output must answer a call. Returns the 400 message, or null.
 */
export function callOutputProblem(items: readonly Json[]): string | null {
  const calls = new Map<string, number>();
  for (const it of items) {
    if (it?.type === "computer_call" && typeof it.call_id === "string") calls.set(it.call_id, 0);
    if (it?.type === "computer_call_output") {
      const id = String(it.call_id);
      const n = calls.get(id);
      if (n === undefined) return `No tool call found for computer_call_output with call_id ${id}.`;
      if (n > 0) return `Duplicate computer_call_output for call_id ${id}.`;
      calls.set(id, 1);
    }
  }
  for (const [id, n] of calls) if (n === 0) return `No tool output found for computer call ${id}.`;
  return null;
}

function responseObject(respId: string, model: string | null, status: string, output: Json[], usage: FakeUsage | null, incomplete?: string): Json {
  return {
    id: respId,
    object: "response",
    created_at: Math.floor(Date.now() / 1000),
    status,
    ...(model !== null ? { model } : {}),
    output,
    parallel_tool_calls: false,
    tool_choice: "auto",
    tools: [],
    error: null,
    incomplete_details: incomplete ? { reason: incomplete } : null,
    usage,
  };
}

function errorResponse(status: number, type: string, code: string | null, message: string): Response {
  return Response.json({ error: { type, code, message, param: null } }, { status });
}

function sseFrame(seq: { n: number }, type: string, payload: Json): Uint8Array {
  return enc.encode(`event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: seq.n++, ...payload })}\n\n`);
}

/** The whole SSE event sequence of a normal response, one frame per event. */
function sseFrames(respId: string, model: string | null, output: FakeOutputItem[], usage: FakeUsage | null, incomplete?: string): Uint8Array[] {
  const seq = { n: 0 };
  const frames: Uint8Array[] = [];
  frames.push(sseFrame(seq, "response.created", { response: responseObject(respId, model, "in_progress", [], null) }));
  frames.push(sseFrame(seq, "response.in_progress", { response: responseObject(respId, model, "in_progress", [], null) }));
  const done: Json[] = [];
  output.forEach((o, i) => {
    const item = outputObject(o, i, respId);
    const added = o.type === "message" ? { ...item, status: "in_progress", content: [] } : { ...item };
    frames.push(sseFrame(seq, "response.output_item.added", { output_index: i, item: added }));
    if (o.type === "message") {
      const part = { type: "output_text", text: "", annotations: [] };
      frames.push(sseFrame(seq, "response.content_part.added", { item_id: item.id, output_index: i, content_index: 0, part }));
      frames.push(sseFrame(seq, "response.output_text.delta", { item_id: item.id, output_index: i, content_index: 0, delta: o.text }));
      frames.push(sseFrame(seq, "response.output_text.done", { item_id: item.id, output_index: i, content_index: 0, text: o.text }));
      frames.push(sseFrame(seq, "response.content_part.done", { item_id: item.id, output_index: i, content_index: 0, part: { ...part, text: o.text } }));
    } else if (o.type === "function_call") {
      frames.push(sseFrame(seq, "response.function_call_arguments.delta", { item_id: item.id, output_index: i, delta: o.arguments }));
      frames.push(sseFrame(seq, "response.function_call_arguments.done", { item_id: item.id, output_index: i, arguments: o.arguments }));
    }
    frames.push(sseFrame(seq, "response.output_item.done", { output_index: i, item }));
    done.push(item);
  });
  const final = incomplete ? "response.incomplete" : "response.completed";
  frames.push(sseFrame(seq, final, { response: responseObject(respId, model, incomplete ? "incomplete" : "completed", done, usage, incomplete) }));
  return frames;
}

function sseResponse(body: ReadableStream<Uint8Array>): Response {
  return new Response(body, {
    status: 200,
    headers: { "content-type": "text/event-stream", "cache-control": "no-cache", "x-request-id": crypto.randomUUID() },
  });
}

/** Starts the fake on 127.0.0.1 (a free port). */
export function startFakeOpenAI(opts: FakeOpenAIOptions): FakeOpenAI {
  const requests: FakeRequest[] = [];
  const responsesSeen: FakeRequest[] = [];
  const rejected: FakeRequest[] = [];
  const billed: FakeOpenAI["billed"] = [];
  const stored = new Map<string, Json[]>();
  const hanging = new Set<(r: Response) => void>();
  const defaultModel = opts.model ?? "gpt-5.1-codex-mini";
  let bigJsonSent = 0;
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    idleTimeout: 0,
    async fetch(req) {
      const url = new URL(req.url);
      const raw = new Uint8Array(await req.arrayBuffer());
      let body: Json | undefined;
      try {
        const parsed = JSON.parse(new TextDecoder().decode(raw));
        if (parsed && typeof parsed === "object" && !Array.isArray(parsed)) body = parsed as Json;
      } catch {
        body = undefined;
      }
      const rec: FakeRequest = {
        ordinal: requests.length + 1,
        method: req.method,
        path: url.pathname,
        authorization: req.headers.get("authorization"),
        headers: Object.fromEntries(req.headers.entries()),
        body,
        bodyBytes: raw.byteLength,
      };
      requests.push(rec);
      if (req.method !== "POST" || url.pathname !== "/v1/responses")
        return errorResponse(404, "invalid_request_error", "not_found", `no route ${req.method} ${url.pathname}`);
      if (rec.authorization !== `Bearer ${opts.apiKey}`) return errorResponse(401, "invalid_request_error", "invalid_api_key", "Incorrect API key provided.");
      if (!body) return errorResponse(400, "invalid_request_error", "invalid_json", "The body is not a JSON object.");
      // The stored chain a `previous_response_id` continues (only responses made with store: true).
      const prevId = typeof body.previous_response_id === "string" ? body.previous_response_id : undefined;
      const chain = prevId === undefined ? [] : stored.get(prevId);
      if (chain === undefined)
        return errorResponse(400, "invalid_request_error", "previous_response_not_found", `Previous response with id '${prevId}' not found.`);
      const conversation = [...chain, ...(Array.isArray(body.input) ? (body.input as Json[]) : [])];
      const pairing = callOutputProblem(conversation);
      if (pairing) {
        rejected.push(rec);
        return errorResponse(400, "invalid_request_error", null, pairing);
      }
      responsesSeen.push(rec);
      const seen = responsesSeen.length;
      const reply = opts.scenario({ ...rec, ordinal: seen }, responsesSeen.slice(0, -1));
      const respId = `resp_${seen}_${crypto.randomUUID().slice(0, 8)}`;
      if (reply.kind === "response" && body.store === true) stored.set(respId, [...conversation, ...reply.output.map((o, i) => outputObject(o, i, respId))]);
      const stream = body.stream === true;
      if (reply.kind === "error") return errorResponse(reply.status, reply.type, reply.code, reply.message);
      if (reply.kind === "hang") {
        // No status line, no header, no byte: the request simply waits until the fake closes.
        return new Promise<Response>((resolve) => hanging.add(resolve));
      }
      const model =
        reply.kind === "response" && reply.model === null
          ? null
          : ("model" in reply && reply.model) || (typeof body.model === "string" ? body.model : defaultModel);
      if (reply.kind === "cut") {
        const seq = { n: 0 };
        return sseResponse(
          new ReadableStream<Uint8Array>({
            async start(c) {
              c.enqueue(sseFrame(seq, "response.created", { response: responseObject(respId, model, "in_progress", [], null) }));
              c.enqueue(enc.encode('event: response.output_text.delta\ndata: {"type":"response.output_text.delta","delta":"hal'));
              await Bun.sleep(20);
              c.error(new Error("fake: the scripted cut scenario dropped the connection mid-response"));
            },
          }),
        );
      }
      if (reply.kind === "big-json") {
        const head = JSON.stringify(responseObject(respId, model ?? defaultModel, "completed", [], null)).slice(0, -1);
        const open = enc.encode(
          `${head},"output":[{"type":"message","id":"msg_big","status":"completed","role":"assistant","content":[{"type":"output_text","annotations":[],"text":"`,
        );
        const piece = enc.encode("x".repeat(64 * 1024));
        const close = enc.encode('"}]}]}');
        let sent = 0;
        let stage: "open" | "body" | "done" = "open";
        return new Response(
          new ReadableStream<Uint8Array>({
            pull(c) {
              const push = (b: Uint8Array) => {
                bigJsonSent += b.byteLength;
                c.enqueue(b);
              };
              if (stage === "open") {
                stage = "body";
                return push(open);
              }
              if (stage === "body" && sent < reply.bytes) {
                sent += piece.byteLength;
                return push(piece);
              }
              if (stage === "body") {
                stage = "done";
                push(close);
              }
              c.close();
            },
          }),
          { status: 200, headers: { "content-type": "application/json", "x-request-id": crypto.randomUUID() } },
        );
      }
      if (reply.kind === "big") {
        const chunk = reply.chunkBytes ?? 16 * 1024;
        const seq = { n: 0 };
        const piece = "x".repeat(chunk);
        let sent = 0;
        let started = false;
        return sseResponse(
          new ReadableStream<Uint8Array>({
            pull(c) {
              if (!started) {
                started = true;
                c.enqueue(sseFrame(seq, "response.created", { response: responseObject(respId, model, "in_progress", [], null) }));
                return;
              }
              if (sent < reply.bytes) {
                c.enqueue(sseFrame(seq, "response.output_text.delta", { item_id: "msg_big", output_index: 0, content_index: 0, delta: piece }));
                sent += chunk;
                return;
              }
              const usage: FakeUsage = {
                input_tokens: fakeInputTokens(body),
                input_tokens_details: { cached_tokens: 0 },
                output_tokens: Math.ceil(sent / 8),
                output_tokens_details: { reasoning_tokens: 0 },
                total_tokens: fakeInputTokens(body) + Math.ceil(sent / 8),
              };
              c.enqueue(sseFrame(seq, "response.completed", { response: responseObject(respId, model, "completed", [], usage) }));
              c.close();
            },
          }),
        );
      }
      // The service bills the whole conversation: a stored chain's items count as input too.
      const asked = reply.usage === undefined ? usageFor(prevId === undefined ? body : { ...body, input: conversation }, reply.output) : reply.usage;
      // The service never generates (or bills) more than max_output_tokens: it stops there and
      // answers `incomplete` with reason max_output_tokens.
      const limit = typeof body.max_output_tokens === "number" ? body.max_output_tokens : Number.POSITIVE_INFINITY;
      const clipped = asked !== null && asked.output_tokens > limit;
      const usage: FakeUsage | null =
        asked && clipped
          ? {
              ...asked,
              output_tokens: limit,
              output_tokens_details: { reasoning_tokens: Math.min(asked.output_tokens_details.reasoning_tokens, limit) },
              total_tokens: asked.input_tokens + limit,
            }
          : asked;
      const incomplete = reply.incomplete ?? (clipped ? "max_output_tokens" : undefined);
      // A real model thinks before its first byte; the bench sets this to measure against that.
      if (reply.firstByteDelayMs) await Bun.sleep(reply.firstByteDelayMs);
      if (reply.firstByteAfter) await reply.firstByteAfter;
      billed.push({ ordinal: seen, model, usage });
      if (!stream) {
        const out = reply.output.map((o, i) => outputObject(o, i, respId));
        return Response.json(responseObject(respId, model, reply.status ?? (incomplete ? "incomplete" : "completed"), out, usage, incomplete), {
          headers: { "x-request-id": crypto.randomUUID() },
        });
      }
      const frames = sseFrames(respId, model, reply.output, usage, incomplete);
      const gap = reply.eventGapMs ?? 0;
      return sseResponse(
        new ReadableStream<Uint8Array>({
          async start(c) {
            for (const [i, f] of frames.entries()) {
              c.enqueue(f);
              if (i === 0 && reply.restAfter) await reply.restAfter;
              if (gap > 0) await Bun.sleep(gap);
            }
            c.close();
          },
        }),
      );
    },
  });
  const port = server.port as number;
  return {
    baseURL: `http://127.0.0.1:${port}/v1`,
    port,
    requests,
    rejectedForCallOutputs: rejected,
    billed,
    get jsonBytesSent() {
      return bigJsonSent;
    },
    async close() {
      for (const resolve of hanging) resolve(errorResponse(503, "server_error", null, "fake closed"));
      await server.stop(true);
    },
  };
}

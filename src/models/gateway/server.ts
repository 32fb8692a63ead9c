/**
 * The model gateway: an HTTP server in the humanish process, on a Unix socket, through which one
 * model-driven seat reaches its model. It
 * - forwards only `POST /v1/responses` to the configured endpoint, and of its body only the
 *   fields whose cost it can bound (see request-policy.ts: stored context, hosted tools and
 *   unknown fields are refused or removed, `store` is always false) and of its headers only
 *   descriptive ones; the answer (JSON or SSE) passes back as it arrives — nothing is buffered on
 *   the way back; any other path is 404;
 * - authenticates the sandbox by a per-seat random token and sends the real key instead (and the
 *   host's organization and project, never the sandbox's), so with `openai-egress` the key never
 *   enters the sandbox;
 * - sets `max_output_tokens` on a request that sets none, to what the budget grants one request
 *   (recorded as `maxOutputTokensSetByGateway`), so a request is not admitted at the model's
 *   whole output ceiling;
 * - refuses, before anything leaves, a request whose worst case would pass a spend cap
 *   (OpenAI-shaped error `insufficient_quota` / `humanish_spend_limit`, HTTP 429);
 * - meters every request into a ledger line (model as the response reports it, tokens, USD,
 *   status, ms). Once any byte of a request may have left, a failure is not "nothing was sent":
 *   its cost is unknown (`usd: null`), its worst case stays reserved and nothing more is admitted.
 */
import { randomBytes, timingSafeEqual } from "node:crypto";
import { chmodSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { scratchWindow } from "../../bytes/scratch.ts";
import { errorMessage, HumanishError } from "../../errors.ts";
import { type AdmissionEstimate, admissionEstimate, outputGrant, withOutputTokens } from "../admission.ts";
import type { ModelEndpoint, ModelKey } from "../endpoint.ts";
import { RATE_TABLE, type RateTable } from "../rates.ts";
import { costOf } from "../usage.ts";
import { admitAll, grantableUsd, type RefusalReason, type SpendBudget } from "./budget.ts";
import { shapeRequest, upstreamHeaders } from "./request-policy.ts";
import { JsonTap, SseTap, type TapFacts } from "./tap.ts";

/** `humanish.model-ledger-line.v1`: one request through the gateway. */
export interface GatewayLedgerLine {
  schema: "humanish.model-ledger-line.v1";
  ordinal: number;
  /** ISO time the request arrived. */
  at: string;
  /** Request path as the sandbox sent it. */
  path: string;
  /** Model named in the request body (what the agent asked for), or null. */
  requestedModel: string | null;
  /** Model as the response reports it (`observed`), or null when none was reported. */
  model: string | null;
  stream: boolean;
  input: number | null;
  cached: number | null;
  cacheWrite: number | null;
  output: number | null;
  reasoning: number | null;
  /** USD of this request; null when unknown (with `costReason`). 0 only when nothing was billed. */
  usd: number | null;
  ratesAsOf: string | null;
  costSource: string | null;
  costReason: string | null;
  /** Worst case computed at admission, USD (null when unpriced or not reached). */
  estimateUsd: number | null;
  estimateInputTokens: number | null;
  /** HTTP status the sandbox got. */
  status: number;
  /**
   * `completed`, `incomplete` (e.g. max_output_tokens), `failed` (the response said so),
   * `upstream_error` (non-2xx from the endpoint), `refused_cap`, `unauthorized`, `not_found`,
   * `bad_request` (incl. a refused field), `sandbox_gone` (cancelled before it was sent),
   * `upstream_unreachable` (failed before any byte left: nothing billed), `upstream_timeout`, `sandbox_aborted` (the sandbox went away after the
   * request started to leave), `upstream_broken` (the connection failed after that), `cut` (the
   * stream broke). The last four have an unknown cost.
   */
  outcome: string;
  /** Why, in words (refusals, faults). */
  detail: string | null;
  /** Arrival → last byte sent to the sandbox, ms. */
  ms: number;
  /** The `max_output_tokens` the gateway set because the request set none (absent: it set none). */
  maxOutputTokensSetByGateway?: number;
  /** Hosted tool types the gateway removed from the request's `tools` (absent: none). */
  toolsRemovedByGateway?: string[];
}

/**
 * A ledger line for a request that has not left yet: every measured field unknown (`null`),
 * spend 0 until the outcome says otherwise. `costSource` names who kept the line.
 */
export function pendingLedgerLine(ordinal: number, path: string, requestedModel: string | null, costSource: string): GatewayLedgerLine {
  return {
    schema: "humanish.model-ledger-line.v1",
    ordinal,
    at: new Date().toISOString(),
    path,
    requestedModel,
    model: null,
    stream: false,
    input: null,
    cached: null,
    cacheWrite: null,
    output: null,
    reasoning: null,
    usd: 0,
    ratesAsOf: null,
    costSource,
    costReason: null,
    estimateUsd: null,
    estimateInputTokens: null,
    status: 0,
    outcome: "",
    detail: null,
    ms: 0,
  };
}

/** Options of {@link startGateway}. */
export interface GatewayOptions {
  /** Where the requests go. */
  endpoint: ModelEndpoint;
  /** The real key, sent upstream only. */
  key: ModelKey;
  /** Budgets every request must fit (the seat's `maxUsd`, the study's `maxTotalUsd`). */
  budgets: SpendBudget[];
  /** Rate table for admission and cost (default the built-in one). */
  rates?: RateTable;
  /** Upstream must send its response headers within this many ms (default 120 000). */
  firstByteMs?: number;
  /** Largest request body accepted, bytes (default 32 MiB). */
  maxBodyBytes?: number;
  /** Directory for the socket (default: a new private temp dir, removed on close). */
  socketDir?: string;
  /** Called with each ledger line as it is settled. */
  onLine?: (line: GatewayLedgerLine) => void;
  /** Injected fetch (tests); default global fetch. */
  fetch?: typeof fetch;
}

/** A running gateway. */
export interface Gateway {
  /** Directory holding the socket (mounted into the sandbox). */
  readonly socketDir: string;
  /** Socket file name inside {@link socketDir}. */
  readonly socketName: string;
  /** The per-seat token the sandbox must present as `Authorization: Bearer <token>`. */
  readonly token: string;
  /** Settled ledger lines, in order. */
  readonly lines: readonly GatewayLedgerLine[];
  /** Requests still in flight. */
  readonly inFlight: number;
  /** Stops accepting, waits for nothing, removes its own socket dir. */
  close(): Promise<void>;
}

/** Socket file name inside the gateway's directory. */
export const GATEWAY_SOCKET_NAME = "model.sock";

/**
 * Streamed bytes every gateway of this process lets pile up before it collects. Each chunk the
 * tap reads lives outside the JavaScript heap, so the collector barely notices a long stream and
 * lets several MiB of spent chunks stand per stream; one full collection per MiB passed keeps a
 * seat's memory at what a bare pipe holds. Ordinary answers (tens of KiB) never fill a window.
 */
export const STREAM_WINDOW_BYTES = 1024 * 1024;
const streamed = scratchWindow(STREAM_WINDOW_BYTES);

const PASS_BACK = /^(content-type|cache-control|x-request-id|openai-.*|x-ratelimit-.*|retry-after)$/i;

function openaiError(status: number, type: string, code: string, message: string, param: string | null = null): Response {
  return Response.json({ error: { type, code, message, param } }, { status });
}

function refusalMessage(
  r: { reason: RefusalReason; budget: string; capUsd: number; knownUsd: number; estimateUsd: number | null },
  model: string | null,
): string {
  switch (r.reason) {
    case "cap_zero":
      return `humanish spend limit: ${r.budget} is 0 USD, so no model request may leave this sandbox.`;
    case "spend_unknown":
      return `humanish spend limit: an earlier request's cost is unknown, so ${r.budget} (${r.capUsd} USD) cannot be guaranteed; no further request is sent.`;
    case "unpriced":
      return `humanish spend limit: model ${model ?? "(none named)"} has no price in the rate table, so ${r.budget} (${r.capUsd} USD) cannot be enforced for it.`;
    default:
      return `humanish spend limit: known spend ${r.knownUsd} USD plus this request's worst case ${r.estimateUsd} USD would pass ${r.budget} (${r.capUsd} USD).`;
  }
}

function tokenMatches(header: string | null, token: string): boolean {
  const want = Buffer.from(`Bearer ${token}`);
  const got = Buffer.from(header ?? "");
  return got.length === want.length && timingSafeEqual(got, want);
}

async function readBody(req: Request, max: number): Promise<Uint8Array | "too_large"> {
  const length = req.headers.get("content-length");
  const declared = Number(length ?? "0");
  if (declared > max) return "too_large";
  // A declared length within the limit is read in one piece (the server holds the body to that length).
  if (length !== null && Number.isSafeInteger(declared)) return new Uint8Array(await req.arrayBuffer());
  const chunks: Uint8Array[] = [];
  let total = 0;
  if (!req.body) return new Uint8Array(0);
  for await (const c of req.body as unknown as AsyncIterable<Uint8Array>) {
    total += c.length;
    if (total > max) return "too_large";
    chunks.push(c);
  }
  return Buffer.concat(chunks);
}

/** Shared state of one running gateway (what every request handler needs). */
interface GatewayState {
  opts: GatewayOptions;
  rates: RateTable;
  firstByteMs: number;
  maxBody: number;
  doFetch: typeof fetch;
  token: string;
  upstreamUrl: string;
  lines: GatewayLedgerLine[];
  ordinal: number;
  inFlight: number;
}

/** One request's ledger line in the making; `done` settles it exactly once. */
class Meter {
  readonly line: GatewayLedgerLine;
  private readonly started = performance.now();
  private settled = false;

  constructor(
    private readonly st: GatewayState,
    path: string,
  ) {
    this.line = pendingLedgerLine(++st.ordinal, path, null, "humanish gateway: the request never left");
  }

  done(status: number, outcome: string, detail: string | null, extra: Partial<GatewayLedgerLine> = {}): void {
    if (this.settled) return;
    this.settled = true;
    const line = { ...this.line, ...extra, status, outcome, detail, ms: Math.round(performance.now() - this.started) };
    this.st.lines.push(line);
    try {
      this.st.opts.onLine?.(line);
    } catch {
      // a failing sink never breaks the agent's request; the line stays in `lines`
    }
  }
}

/** What admission decided: a local answer (already metered), or a request to forward. */
type Admitted = { local: Response } | { raw: Uint8Array; release: (usd: number | null) => void };

/** Path, token, body and spend cap: everything checked before a byte leaves. */
async function admit(st: GatewayState, req: Request, m: Meter): Promise<Admitted> {
  const path = m.line.path;
  if (req.method !== "POST" || path !== "/v1/responses") {
    m.done(404, "not_found", `${req.method} ${path} is not forwarded (only POST /v1/responses)`);
    const msg = `The humanish model gateway forwards only POST /v1/responses (got ${req.method} ${path}).`;
    return { local: openaiError(404, "invalid_request_error", "humanish_not_forwarded", msg) };
  }
  if (!tokenMatches(req.headers.get("authorization"), st.token)) {
    m.done(401, "unauthorized", "missing or wrong gateway token");
    return { local: openaiError(401, "invalid_request_error", "invalid_api_key", "The humanish model gateway did not recognise this sandbox's token.") };
  }
  const raw = await readBody(req, st.maxBody);
  if (raw === "too_large") {
    m.done(413, "bad_request", `request body over ${st.maxBody} bytes`);
    return { local: openaiError(413, "invalid_request_error", "humanish_body_too_large", `The request body is larger than ${st.maxBody} bytes.`) };
  }
  let body: Record<string, unknown>;
  try {
    const parsed = JSON.parse(new TextDecoder().decode(raw));
    if (!parsed || typeof parsed !== "object" || Array.isArray(parsed)) throw new Error("not an object");
    body = parsed as Record<string, unknown>;
  } catch {
    m.done(400, "bad_request", "the request body is not a JSON object");
    return { local: openaiError(400, "invalid_request_error", "invalid_json", "The request body is not a JSON object.") };
  }
  const shaped = shapeRequest(body);
  if (!shaped.ok) {
    m.done(400, "bad_request", `field refused: ${shaped.field}`);
    return { local: openaiError(400, "invalid_request_error", "HUMANISH_MODEL_GATEWAY_FIELD_REFUSED", shaped.message, shaped.field) };
  }
  const send = shaped.body;
  // The text is counted once: the grant and the admitted worst case share one estimate.
  const counted = admissionEstimate(send, st.rates);
  const grant = outputGrant(send, grantableUsd(st.opts.budgets), st.rates, counted);
  if (grant !== undefined) send.max_output_tokens = grant;
  const est: AdmissionEstimate = grant === undefined ? counted : withOutputTokens(counted, grant, st.rates);
  Object.assign(m.line, {
    requestedModel: est.model,
    stream: send.stream === true,
    estimateUsd: est.usd,
    estimateInputTokens: est.inputTokens + est.imageTokens,
    ...(grant !== undefined ? { maxOutputTokensSetByGateway: grant } : {}),
    ...(shaped.toolsRemoved.length ? { toolsRemovedByGateway: shaped.toolsRemoved } : {}),
  });
  const admitted = admitAll(st.opts.budgets, est.usd);
  if (!admitted.ok) {
    const message = refusalMessage(admitted, est.model);
    m.done(429, "refused_cap", `${admitted.reason}: ${message}`);
    return { local: openaiError(429, "insufficient_quota", "humanish_spend_limit", message) };
  }
  const release = (usd: number | null): void => {
    for (const [i, b] of st.opts.budgets.entries()) b.settle(admitted.tickets[i] as number, usd);
  };
  return { raw: new TextEncoder().encode(JSON.stringify(send)), release };
}

/**
 * Errors of a connection that never carried a request byte: the name did not resolve, the
 * connection was refused or unroutable, or TLS failed before the request could be written.
 */
const BEFORE_ANY_BYTE = new Set([
  "ECONNREFUSED",
  "ConnectionRefused",
  "ENOTFOUND",
  "EAI_AGAIN",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "FailedToOpenSocket",
  "UNABLE_TO_GET_ISSUER_CERT_LOCALLY",
  "UNABLE_TO_VERIFY_LEAF_SIGNATURE",
  "SELF_SIGNED_CERT_IN_CHAIN",
  "DEPTH_ZERO_SELF_SIGNED_CERT",
  "CERT_HAS_EXPIRED",
  "ERR_TLS_CERT_ALTNAME_INVALID",
]);

/** True when `e` proves the request never left (see {@link BEFORE_ANY_BYTE}). */
function failedBeforeAnyByte(e: unknown): boolean {
  const code = e && typeof e === "object" ? (e as { code?: unknown }).code : undefined;
  return typeof code === "string" && BEFORE_ANY_BYTE.has(code);
}

/** Sends the admitted bytes upstream with the real key; a failure to get headers is answered here. */
async function sendUpstream(
  st: GatewayState,
  req: Request,
  m: Meter,
  raw: Uint8Array,
  release: (usd: number | null) => void,
): Promise<Response | { local: Response }> {
  const host = st.opts.endpoint.host;
  const headers = upstreamHeaders(req.headers, st.opts.endpoint, st.opts.key.value);
  if (req.signal.aborted) {
    release(0);
    m.done(499, "sandbox_gone", "the sandbox went away before the request was sent");
    return { local: openaiError(499, "server_error", "humanish_client_gone", "The request was cancelled before it was sent.") };
  }
  const ctl = new AbortController();
  const firstByte = setTimeout(() => ctl.abort(new Error("first-byte deadline")), st.firstByteMs);
  req.signal.addEventListener("abort", () => ctl.abort(new Error("the sandbox went away")));
  try {
    return await st.doFetch(st.upstreamUrl, { method: "POST", headers, body: raw, signal: ctl.signal, decompress: false } as RequestInit);
  } catch (e) {
    const reason = ctl.signal.aborted ? String((ctl.signal.reason as Error)?.message) : null;
    const msg = errorMessage(e);
    if (reason === null && failedBeforeAnyByte(e)) {
      release(0);
      m.done(502, "upstream_unreachable", `${host}: ${msg}`, { costSource: "humanish gateway: the connection failed before any request byte was sent" });
      return { local: openaiError(502, "server_error", "humanish_upstream_unreachable", `The model endpoint ${host} could not be reached (${msg}).`) };
    }
    // Bytes may have left: the endpoint may run (and bill) the request whatever happens to the
    // connection, so its cost is unknown, its worst case stays reserved and the cap stops here.
    release(null);
    const unknown = { usd: null, costSource: null, costReason: "no_token_usage" } as const;
    if (reason === "first-byte deadline") {
      m.done(504, "upstream_timeout", `no response headers from ${host} within ${st.firstByteMs} ms`, unknown);
      return { local: openaiError(504, "server_error", "humanish_upstream_timeout", `The model endpoint ${host} sent nothing within ${st.firstByteMs} ms.`) };
    }
    if (reason !== null) {
      m.done(499, "sandbox_aborted", `the sandbox went away before ${host} answered; the request may still be billed`, unknown);
      return { local: openaiError(499, "server_error", "humanish_client_gone", "The request was cancelled after it was sent; its cost is unknown.") };
    }
    m.done(502, "upstream_broken", `${host}: ${msg} (after the request started to leave; it may still be billed)`, unknown);
    return {
      local: openaiError(
        502,
        "server_error",
        "humanish_upstream_broken",
        `The connection to ${host} broke before it answered (${msg}); the request's cost is unknown.`,
      ),
    };
  } finally {
    clearTimeout(firstByte);
  }
}

/** Settles a forwarded request from what its body showed (`cut`: why it broke, else null). */
function settleForwarded(
  st: GatewayState,
  m: Meter,
  upstream: Response,
  facts: TapFacts,
  isSse: boolean,
  cut: string | null,
  release: (usd: number | null) => void,
): void {
  const host = st.opts.endpoint.host;
  if (!upstream.ok) {
    release(0);
    m.done(upstream.status, "upstream_error", `${host} answered HTTP ${upstream.status}`, {
      costSource: `humanish gateway: ${host} answered HTTP ${upstream.status}; an error response is not billed`,
    });
    return;
  }
  const cost = costOf(facts.model, facts.usage, st.rates);
  release(cut ? null : cost.usd);
  const u = facts.usage;
  const outcome = cut ? "cut" : (facts.final ?? (isSse ? "cut" : "completed"));
  m.done(upstream.status, outcome, cut ?? (facts.incompleteReason ? `incomplete: ${facts.incompleteReason}` : null), {
    model: facts.model,
    input: u?.input ?? null,
    cached: u?.cached ?? null,
    cacheWrite: u?.cacheWrite ?? null,
    output: u?.output ?? null,
    reasoning: u?.reasoning ?? null,
    usd: cut ? null : cost.usd,
    ratesAsOf: cut ? null : cost.ratesAsOf,
    costSource: cut ? null : cost.source,
    costReason: cut ? "no_token_usage" : cost.reason,
  });
}

/** Answers the sandbox with the upstream body as it arrives, metering it on the way. */
function passThrough(st: GatewayState, req: Request, m: Meter, upstream: Response, release: (usd: number | null) => void): Response {
  const back = new Headers();
  upstream.headers.forEach((v, k) => {
    if (PASS_BACK.test(k)) back.set(k, v);
  });
  const isSse = (upstream.headers.get("content-type") ?? "").includes("text/event-stream");
  const tap = isSse ? new SseTap() : new JsonTap();
  let finished = false;
  const finish = (cut: string | null): void => {
    if (finished) return;
    finished = true;
    st.inFlight--;
    settleForwarded(st, m, upstream, tap.end(), isSse, cut, release);
  };
  if (!upstream.body) {
    finish(null);
    return new Response(null, { status: upstream.status, headers: back });
  }
  // Each chunk is looked at and handed on as it is, never copied: the sandbox's reads pull the
  // upstream's, so backpressure reaches the endpoint and nothing accumulates here however long
  // the stream is.
  const upstreamReader = upstream.body.getReader();
  const body = new ReadableStream<Uint8Array>(
    {
      async pull(c) {
        let r: Awaited<ReturnType<typeof upstreamReader.read>>;
        try {
          r = await upstreamReader.read();
        } catch (e) {
          finish(req.signal.aborted ? "the sandbox closed the stream early" : `the upstream stream broke: ${errorMessage(e)}`);
          c.error(e);
          return;
        }
        if (r.done) {
          // An SSE stream that closes without a final response event was cut upstream.
          const final = isSse ? tap.end().final : "json";
          finish(isSse && upstream.ok && final === null ? "the stream ended before a final response event" : null);
          c.close();
          return;
        }
        // Handed on first: the sandbox's bytes do not wait for the tap's parsing.
        c.enqueue(r.value);
        tap.push(r.value);
        streamed.add(r.value.length);
      },
      cancel(reason) {
        finish("the sandbox closed the stream early");
        return upstreamReader.cancel(reason);
      },
    },
    { highWaterMark: 0 },
  );
  return new Response(body, { status: upstream.status, headers: back });
}

async function handle(st: GatewayState, req: Request): Promise<Response> {
  const m = new Meter(st, new URL(req.url).pathname);
  const a = await admit(st, req, m);
  if ("local" in a) return a.local;
  st.inFlight++;
  const upstream = await sendUpstream(st, req, m, a.raw, a.release);
  if ("local" in upstream) {
    st.inFlight--;
    return upstream.local;
  }
  return passThrough(st, req, m, upstream, a.release);
}

/**
 * Starts a gateway for one seat on a Unix socket.
 * @throws HumanishError `HUMANISH_MODEL_GATEWAY_LISTEN_FAILED` when the socket cannot be bound
 *   (e.g. the path is taken).
 */
export function startGateway(opts: GatewayOptions): Gateway {
  const ownDir = opts.socketDir === undefined;
  const socketDir = opts.socketDir ?? mkdtempSync(join(tmpdir(), "humanish-gw-"));
  // The sandbox's user must reach the socket through the mount: the directory is traversable,
  // the socket writable; the token, not the file mode, is the access control.
  chmodSync(socketDir, 0o755);
  const socketPath = join(socketDir, GATEWAY_SOCKET_NAME);
  const st: GatewayState = {
    opts,
    rates: opts.rates ?? RATE_TABLE,
    firstByteMs: opts.firstByteMs ?? 120_000,
    maxBody: opts.maxBodyBytes ?? 32 * 1024 * 1024,
    doFetch: opts.fetch ?? fetch,
    token: randomBytes(32).toString("base64url"),
    upstreamUrl: `${opts.endpoint.baseURL}/responses`,
    lines: [],
    ordinal: 0,
    inFlight: 0,
  };
  // Every budget this gateway checks counts it as a sharer, so a shared budget's grant per
  // request leaves room for the other seats.
  const detach = opts.budgets.map((b) => b.attach());
  let server: ReturnType<typeof Bun.serve>;
  try {
    server = Bun.serve({
      unix: socketPath,
      fetch: (req, srv) => {
        // A model may think for minutes before its first byte: no idle cut on the sandbox side.
        srv.timeout(req, 0);
        return handle(st, req);
      },
    });
  } catch (e) {
    for (const d of detach) d();
    if (ownDir) rmSync(socketDir, { recursive: true, force: true });
    throw new HumanishError("HUMANISH_MODEL_GATEWAY_LISTEN_FAILED", `the model gateway cannot listen on ${socketPath} (${errorMessage(e)})`, {
      next: "Remove the stale socket file or choose another socket directory.",
    });
  }
  chmodSync(socketPath, 0o666);
  return {
    socketDir,
    socketName: GATEWAY_SOCKET_NAME,
    token: st.token,
    lines: st.lines,
    get inFlight() {
      return st.inFlight;
    },
    async close() {
      await server.stop(true);
      for (const d of detach) d();
      if (ownDir) rmSync(socketDir, { recursive: true, force: true });
    },
  };
}

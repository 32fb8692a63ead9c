/**
 * Guest side of browser control.
 */
import { type ActionDisposition, type BrowserControlErrorCode, browserControlError, isBrowserControlError } from "./errors.ts";
import type { BrowserExecutor } from "./executor.ts";
import { encodeObservation } from "./observation.ts";
import { type BrowserControlIdentity, type BrowserControlOperation, identitySchema, OPERATIONS, requestSchema, sameIdentity } from "./schemas.ts";
import type { BrowserControlTransport } from "./transport.ts";

/** Dispatcher per-request deadline: 35 s, including writing the reply. */
export const DISPATCHER_DEADLINE_MS = 35_000;

/** Options of {@link attachBrowserControlDispatcher}. */
export interface BrowserControlDispatcherOptions {
  /** Transport over the owned byte stream (see `createSocketTransport`); not yet started. */
  transport: BrowserControlTransport;
  /** This desktop's identity; every request must carry exactly this. */
  identity: BrowserControlIdentity;
  /** The desktop driver (src/guest/). */
  executor: BrowserExecutor;
  /** Checked immediately before every executor call; false (or a throw) → `session_revoked`. */
  isAuthorized: () => boolean;
  /** Mandatory: aborts when the owner withdraws authority; closes the channel `session_revoked`. */
  authoritySignal: AbortSignal;
  /** Per-request deadline in ms, 1…35,000 (default 35,000). Lower only in tests. */
  requestDeadlineMs?: number;
}

/** Handle of an attached dispatcher. */
export interface BrowserControlDispatcher {
  /** Close the channel (idempotent); aborts the request in flight. */
  close(): void;
}

/**
 * Serve browser-control requests from `transport` with `executor` (guest side).
 *
 * Throws `BrowserControlError("invalid_request", "not_dispatched")` synchronously for an invalid
 * identity, executor, `isAuthorized`, `authoritySignal` or deadline. Closes the channel at once
 * with `session_revoked` when the authority signal is already aborted or `isAuthorized()` is false.
 *
 * Rules: exactly one request in flight (a frame while busy closes `executor_busy`); `seq` must be
 * `lastSeq + 1`; HELLO only first with `seq 1`; identity mismatch, seq or HELLO-order violation →
 * `protocol_mismatch`; bad request → `invalid_request`. Authority is checked right before the
 * executor is invoked; the executor gets an AbortSignal combining revocation, channel loss and the
 * deadline. A typed executor error passes through; an untyped one becomes `action_rejected` with
 * `outcome_uncertain` (the executor had been invoked). After any failure reply other than EXECUTE
 * `action_rejected`/`not_dispatched` the channel closes with that code. A result arriving after
 * closure or revocation is dropped (no reply) and the channel closes `session_revoked`.
 */
export function attachBrowserControlDispatcher(opts: BrowserControlDispatcherOptions): BrowserControlDispatcher {
  const { identity, deadlineMs } = checkDispatcherOptions(opts);
  const d: DispatcherState = {
    transport: opts.transport,
    identity,
    executor: opts.executor,
    isAuthorized: opts.isAuthorized,
    authoritySignal: opts.authoritySignal,
    deadlineMs,
    ready: false,
    lastSeq: 0,
    inFlight: null,
    closed: false,
    current: null,
    onRevoked: () => shutdown(d, "session_revoked"),
  };
  d.authoritySignal.addEventListener("abort", d.onRevoked, { once: true });
  d.transport.start({
    onMessage: (raw) => onMessage(d, raw),
    onClose: (code) => {
      if (!d.closed) shutdown(d, code);
    },
  });
  if (!authorized(d)) shutdown(d, "session_revoked");

  return { close: () => shutdown(d, "executor_closed") };
}

/**
 * Validate the options of {@link attachBrowserControlDispatcher}.
 * @returns the parsed identity and the per-request deadline (ms).
 * @throws BrowserControlError `invalid_request`/`not_dispatched` naming the bad option.
 */
function checkDispatcherOptions(opts: BrowserControlDispatcherOptions): { identity: BrowserControlIdentity; deadlineMs: number } {
  const idParse = identitySchema.safeParse(opts.identity);
  if (!idParse.success)
    throw browserControlError(
      "invalid_request",
      "not_dispatched",
      "attachBrowserControlDispatcher: identity must be {generation, challenge, runtimeRevision} tokens",
    );
  const { executor, isAuthorized, authoritySignal } = opts;
  if (typeof executor?.observe !== "function" || typeof executor?.execute !== "function")
    throw browserControlError("invalid_request", "not_dispatched", "attachBrowserControlDispatcher: executor must have observe() and execute()");
  if (typeof isAuthorized !== "function")
    throw browserControlError("invalid_request", "not_dispatched", "attachBrowserControlDispatcher: isAuthorized must be a function");
  if (!(authoritySignal instanceof AbortSignal))
    throw browserControlError("invalid_request", "not_dispatched", "attachBrowserControlDispatcher: authoritySignal (an AbortSignal) is mandatory");
  const deadlineMs = opts.requestDeadlineMs ?? DISPATCHER_DEADLINE_MS;
  if (!Number.isInteger(deadlineMs) || deadlineMs < 1 || deadlineMs > DISPATCHER_DEADLINE_MS)
    throw browserControlError(
      "invalid_request",
      "not_dispatched",
      `attachBrowserControlDispatcher: requestDeadlineMs must be an integer in 1…${DISPATCHER_DEADLINE_MS}`,
    );
  return { identity: idParse.data, deadlineMs };
}

/** The state of one attached dispatcher. */
interface DispatcherState {
  readonly transport: BrowserControlTransport;
  readonly identity: BrowserControlIdentity;
  readonly executor: BrowserExecutor;
  readonly isAuthorized: () => boolean;
  readonly authoritySignal: AbortSignal;
  /** Per-request deadline, ms. */
  readonly deadlineMs: number;
  /** HELLO was answered. */
  ready: boolean;
  lastSeq: number;
  /** seq of the request being served, or null; released as the reply is handed to write. */
  inFlight: number | null;
  closed: boolean;
  /** The abort controller of the request in flight. */
  current: AbortController | null;
  /** The authority signal's listener (removed on shutdown). */
  readonly onRevoked: () => void;
}

function release(d: DispatcherState, seq: number): void {
  if (d.inFlight === seq) d.inFlight = null;
}

/** Whether the owner still grants authority (a throw from `isAuthorized` is a no). */
function authorized(d: DispatcherState): boolean {
  if (d.closed || d.authoritySignal.aborted) return false;
  try {
    return d.isAuthorized() === true;
  } catch {
    return false;
  }
}

/** Close the channel with `code`, aborting the request in flight. */
function shutdown(d: DispatcherState, code: BrowserControlErrorCode): void {
  if (!d.closed) {
    d.closed = true;
    d.authoritySignal.removeEventListener("abort", d.onRevoked);
  }
  d.current?.abort(browserControlError(code, "not_dispatched", `browser-control channel closed (${code})`));
  d.transport.close(code);
}

/** The fields every reply to `seq` carries. */
function envelope(d: DispatcherState, seq: number, operation: BrowserControlOperation): Record<string, unknown> {
  const m: Record<string, unknown> = { version: 1, type: "reply", identity: d.identity, seq, requestId: `request-${seq}`, operation };
  if (operation === "EXECUTE") m.actionId = `action-${seq}`;
  return m;
}

/**
 * Send a reply; resolves true once written (false if the channel is gone). The request is
 * released the moment its reply is handed to the stream: the peer may answer before our write
 * callback fires.
 */
async function send(d: DispatcherState, message: Record<string, unknown>, keepOpen = true): Promise<boolean> {
  if (d.closed) return false;
  try {
    await d.transport.send(message, () => {
      if (keepOpen) release(d, message.seq as number);
    });
    return true;
  } catch {
    shutdown(d, "transport_failed");
    return false;
  }
}

/** Reply with an error, then close unless it is EXECUTE action_rejected/ND. */
async function fail(d: DispatcherState, seq: number, operation: BrowserControlOperation, code: BrowserControlErrorCode, disposition: ActionDisposition) {
  const keepOpen = operation === "EXECUTE" && code === "action_rejected" && disposition === "not_dispatched";
  if (!keepOpen) d.transport.closing(code);
  const sent = await send(d, { ...envelope(d, seq, operation), ok: false, error: { code, disposition } }, keepOpen);
  if (!sent || !keepOpen) shutdown(d, code);
}

/** Fail a request that did not parse, replying only when it can be correlated. */
function refuseUnparsed(d: DispatcherState, raw: unknown, code: BrowserControlErrorCode): void {
  const r = raw as { seq?: unknown; operation?: unknown; identity?: unknown } | null;
  const id = identitySchema.safeParse(r?.identity);
  if (
    r !== null &&
    typeof r === "object" &&
    r.seq === d.lastSeq + 1 &&
    typeof r.operation === "string" &&
    (OPERATIONS as readonly string[]).includes(r.operation) &&
    id.success &&
    sameIdentity(id.data, d.identity)
  ) {
    d.inFlight = r.seq;
    d.lastSeq = r.seq;
    void fail(d, r.seq, r.operation as BrowserControlOperation, code, "not_dispatched");
  } else shutdown(d, code);
}

/**
 * Invoke the executor and wait for its result or for `controller` to abort, whichever comes
 * first. A thrown browser-control error gives its code and disposition; any other failure is
 * `action_rejected`/`outcome_uncertain` (the executor had been invoked).
 */
async function invokeUntilAborted(
  invoke: (signal: AbortSignal) => Promise<unknown>,
  controller: AbortController,
): Promise<{ result?: unknown; failure: { code: BrowserControlErrorCode; disposition: ActionDisposition } | null }> {
  try {
    let promise: Promise<unknown>;
    try {
      promise = invoke(controller.signal);
    } catch (e) {
      promise = Promise.reject(e);
    }
    const result = await Promise.race([
      promise,
      new Promise<never>((_, reject) => controller.signal.addEventListener("abort", () => reject(controller.signal.reason), { once: true })),
    ]);
    return { result, failure: null };
  } catch (e) {
    return {
      failure: isBrowserControlError(e) ? { code: e.errorCode, disposition: e.disposition } : { code: "action_rejected", disposition: "outcome_uncertain" },
    };
  }
}

/**
 * Serve one OBSERVE or EXECUTE: authority checked right before the executor is invoked, the
 * deadline covering the reply's write, a result after closure or revocation dropped.
 */
async function run(d: DispatcherState, seq: number, operation: "OBSERVE" | "EXECUTE", invoke: (signal: AbortSignal) => Promise<unknown>) {
  const controller = new AbortController();
  d.current = controller;
  let timedOut = false;
  let writingReply = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort(browserControlError("deadline_exceeded", "outcome_uncertain", `request-${seq} exceeded ${d.deadlineMs} ms`));
    // The deadline covers writing the reply: a write still pending now ends the channel.
    if (writingReply) shutdown(d, "deadline_exceeded");
  }, d.deadlineMs);
  timer.unref?.();
  try {
    if (!authorized(d)) return await fail(d, seq, operation, "session_revoked", "not_dispatched");
    const { result, failure } = await invokeUntilAborted(invoke, controller);
    if (d.closed) return;
    if (timedOut) return await fail(d, seq, operation, "deadline_exceeded", operation === "EXECUTE" ? "outcome_uncertain" : "not_dispatched");
    if (!authorized(d)) return shutdown(d, "session_revoked");
    if (failure) return await fail(d, seq, operation, failure.code, failure.disposition);
    const reply = envelope(d, seq, operation);
    reply.ok = true;
    if (operation === "OBSERVE") {
      try {
        reply.observation = encodeObservation(result as Parameters<typeof encodeObservation>[0]);
      } catch (e) {
        const disposition = isBrowserControlError(e) ? e.disposition : "not_dispatched";
        return await fail(d, seq, operation, "invalid_response", disposition);
      }
    }
    writingReply = true;
    if (!(await send(d, reply))) return;
    if (timedOut) return shutdown(d, "deadline_exceeded");
  } finally {
    clearTimeout(timer);
    if (d.current === controller) d.current = null;
  }
}

/** One frame from the host: checked for order, identity and sequence, then served. */
function onMessage(d: DispatcherState, raw: unknown) {
  if (d.closed) return;
  if (d.inFlight !== null) return shutdown(d, "executor_busy");
  const parsed = requestSchema.safeParse(raw);
  if (!parsed.success) return refuseUnparsed(d, raw, "invalid_request");
  const req = parsed.data;
  if (!sameIdentity(req.identity, d.identity)) return shutdown(d, "protocol_mismatch");
  if (req.seq !== d.lastSeq + 1) return shutdown(d, "protocol_mismatch");
  // Reserve before any async work so coalesced frames cannot race.
  d.inFlight = req.seq;
  d.lastSeq = req.seq;
  if (req.operation === "HELLO") {
    if (d.ready || req.seq !== 1) return void fail(d, req.seq, req.operation, "protocol_mismatch", "not_dispatched");
    d.ready = true;
    void send(d, { ...envelope(d, req.seq, "HELLO"), ok: true });
    return;
  }
  if (!d.ready) return void fail(d, req.seq, req.operation, "protocol_mismatch", "not_dispatched");
  if (req.operation === "OBSERVE") void run(d, req.seq, "OBSERVE", (signal) => d.executor.observe(signal));
  else {
    const action = req.action;
    void run(d, req.seq, "EXECUTE", (signal) => d.executor.execute(action, signal));
  }
}

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
  const idParse = identitySchema.safeParse(opts.identity);
  if (!idParse.success)
    throw browserControlError(
      "invalid_request",
      "not_dispatched",
      "attachBrowserControlDispatcher: identity must be {generation, challenge, runtimeRevision} tokens",
    );
  const identity = idParse.data;
  const { transport, executor, isAuthorized, authoritySignal } = opts;
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

  let ready = false;
  let lastSeq = 0;
  /** seq of the request being served, or null; released as the reply is handed to write. */
  let inFlight: number | null = null;
  const release = (seq: number) => {
    if (inFlight === seq) inFlight = null;
  };
  let closed = false;
  let current: AbortController | null = null;

  const authorized = (): boolean => {
    if (closed || authoritySignal.aborted) return false;
    try {
      return isAuthorized() === true;
    } catch {
      return false;
    }
  };

  const shutdown = (code: BrowserControlErrorCode) => {
    if (!closed) {
      closed = true;
      authoritySignal.removeEventListener("abort", onRevoked);
    }
    current?.abort(browserControlError(code, "not_dispatched", `browser-control channel closed (${code})`));
    transport.close(code);
  };
  const onRevoked = () => shutdown("session_revoked");

  const envelope = (seq: number, operation: BrowserControlOperation) => {
    const m: Record<string, unknown> = { version: 1, type: "reply", identity, seq, requestId: `request-${seq}`, operation };
    if (operation === "EXECUTE") m.actionId = `action-${seq}`;
    return m;
  };

  /**
   * Send a reply; resolves true once written (false if the channel is gone). The request is
   * released the moment its reply is handed to the stream: the peer may answer before our write
   * callback fires.
   */
  const send = async (message: Record<string, unknown>, keepOpen = true): Promise<boolean> => {
    if (closed) return false;
    try {
      await transport.send(message, () => {
        if (keepOpen) release(message.seq as number);
      });
      return true;
    } catch {
      shutdown("transport_failed");
      return false;
    }
  };

  /** Reply with an error, then close unless it is EXECUTE action_rejected/ND. */
  const fail = async (seq: number, operation: BrowserControlOperation, code: BrowserControlErrorCode, disposition: ActionDisposition) => {
    const keepOpen = operation === "EXECUTE" && code === "action_rejected" && disposition === "not_dispatched";
    if (!keepOpen) transport.closing(code);
    const sent = await send({ ...envelope(seq, operation), ok: false, error: { code, disposition } }, keepOpen);
    if (!sent || !keepOpen) shutdown(code);
  };

  /** Fail a request that did not parse, replying only when it can be correlated. */
  const refuseUnparsed = (raw: unknown, code: BrowserControlErrorCode) => {
    const r = raw as { seq?: unknown; operation?: unknown; identity?: unknown } | null;
    const id = identitySchema.safeParse(r?.identity);
    if (
      r !== null &&
      typeof r === "object" &&
      r.seq === lastSeq + 1 &&
      typeof r.operation === "string" &&
      (OPERATIONS as readonly string[]).includes(r.operation) &&
      id.success &&
      sameIdentity(id.data, identity)
    ) {
      inFlight = r.seq;
      lastSeq = r.seq;
      void fail(r.seq, r.operation as BrowserControlOperation, code, "not_dispatched");
    } else shutdown(code);
  };

  const run = async (seq: number, operation: "OBSERVE" | "EXECUTE", invoke: (signal: AbortSignal) => Promise<unknown>) => {
    const controller = new AbortController();
    current = controller;
    let timedOut = false;
    let writingReply = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort(browserControlError("deadline_exceeded", "outcome_uncertain", `request-${seq} exceeded ${deadlineMs} ms`));
      // The deadline covers writing the reply: a write still pending now ends the channel.
      if (writingReply) shutdown("deadline_exceeded");
    }, deadlineMs);
    timer.unref?.();
    try {
      if (!authorized()) return await fail(seq, operation, "session_revoked", "not_dispatched");
      let result: unknown;
      let failure: { code: BrowserControlErrorCode; disposition: ActionDisposition } | null = null;
      try {
        let promise: Promise<unknown>;
        try {
          promise = invoke(controller.signal);
        } catch (e) {
          promise = Promise.reject(e);
        }
        result = await Promise.race([
          promise,
          new Promise<never>((_, reject) => controller.signal.addEventListener("abort", () => reject(controller.signal.reason), { once: true })),
        ]);
      } catch (e) {
        failure = isBrowserControlError(e) ? { code: e.errorCode, disposition: e.disposition } : { code: "action_rejected", disposition: "outcome_uncertain" };
      }
      if (closed) return;
      if (timedOut) return await fail(seq, operation, "deadline_exceeded", operation === "EXECUTE" ? "outcome_uncertain" : "not_dispatched");
      if (!authorized()) return shutdown("session_revoked");
      if (failure) return await fail(seq, operation, failure.code, failure.disposition);
      const reply = envelope(seq, operation);
      reply.ok = true;
      if (operation === "OBSERVE") {
        try {
          reply.observation = encodeObservation(result as Parameters<typeof encodeObservation>[0]);
        } catch (e) {
          const d = isBrowserControlError(e) ? e.disposition : "not_dispatched";
          return await fail(seq, operation, "invalid_response", d);
        }
      }
      writingReply = true;
      if (!(await send(reply))) return;
      if (timedOut) return shutdown("deadline_exceeded");
    } finally {
      clearTimeout(timer);
      if (current === controller) current = null;
    }
  };

  const onMessage = (raw: unknown) => {
    if (closed) return;
    if (inFlight !== null) return shutdown("executor_busy");
    const parsed = requestSchema.safeParse(raw);
    if (!parsed.success) return refuseUnparsed(raw, "invalid_request");
    const req = parsed.data;
    if (!sameIdentity(req.identity, identity)) return shutdown("protocol_mismatch");
    if (req.seq !== lastSeq + 1) return shutdown("protocol_mismatch");
    // Reserve before any async work so coalesced frames cannot race.
    inFlight = req.seq;
    lastSeq = req.seq;
    if (req.operation === "HELLO") {
      if (ready || req.seq !== 1) return void fail(req.seq, req.operation, "protocol_mismatch", "not_dispatched");
      ready = true;
      void send({ ...envelope(req.seq, "HELLO"), ok: true });
      return;
    }
    if (!ready) return void fail(req.seq, req.operation, "protocol_mismatch", "not_dispatched");
    if (req.operation === "OBSERVE") void run(req.seq, "OBSERVE", (signal) => executor.observe(signal));
    else {
      const action = req.action;
      void run(req.seq, "EXECUTE", (signal) => executor.execute(action, signal));
    }
  };

  authoritySignal.addEventListener("abort", onRevoked, { once: true });
  transport.start({
    onMessage,
    onClose: (code) => {
      if (!closed) shutdown(code);
    },
  });
  if (!authorized()) shutdown("session_revoked");

  return { close: () => shutdown("executor_closed") };
}

/**
 * Host side of browser control.
 */
import { type BrowserControlError, type BrowserControlErrorCode, browserControlError, isBrowserControlError } from "./errors.ts";
import type { BrowserControlExecutor } from "./executor.ts";
import { decodeObservation } from "./observation.ts";
import {
  type BrowserAction,
  type BrowserControlIdentity,
  type BrowserControlOperation,
  type BrowserControlReply,
  type BrowserObservation,
  browserActionSchema,
  identitySchema,
  replySchema,
  sameIdentity,
} from "./schemas.ts";
import type { BrowserControlTransport } from "./transport.ts";

/** Default client request deadline: 35 s. */
export const DEFAULT_REQUEST_TIMEOUT_MS = 35_000;
/** Smallest and largest caller-chosen request deadline: 1 s … 60 s. */
export const MIN_REQUEST_TIMEOUT_MS = 1_000;
export const MAX_REQUEST_TIMEOUT_MS = 60_000;

/** Options of {@link createBrowserControlClient}. */
export interface BrowserControlClientOptions {
  /** A started-nowhere transport over the owned byte stream (see `createSocketTransport`). */
  transport: BrowserControlTransport;
  /** The desktop's identity; every frame must carry exactly this. */
  identity: BrowserControlIdentity;
  /** Per-request deadline in ms, 1,000…60,000 (default 35,000); covers write + reply. */
  requestTimeoutMs?: number;
}

/** What {@link createBrowserControlClient} returns. */
export interface BrowserControlClient {
  /** The executor the computer-use loop drives (`stallRecovery: "fail_closed"`). */
  executor: BrowserControlExecutor;
  /** Perform the HELLO handshake if not done yet (lazy, idempotent). */
  ready(): Promise<void>;
  /** Close the channel; every later call fails `executor_closed`/`not_dispatched`. */
  close(): void;
}

interface Pending {
  seq: number;
  operation: BrowserControlOperation;
  actionId: string | undefined;
  possiblyWritten: boolean;
  writeDone: boolean;
  reply: BrowserControlReply | undefined;
  resolve(reply: BrowserControlReply): void;
  reject(err: BrowserControlError): void;
}

/**
 * Create the host-side client on `transport`.
 *
 * Throws `BrowserControlError("invalid_request", "not_dispatched")` synchronously for an invalid
 * identity or `requestTimeoutMs`. HELLO is sent lazily by `ready()` or the first
 * `observe`/`execute`. One call at a time: a concurrent call is refused `executor_busy`/
 * `not_dispatched` and never queued. Errors:
 * - local pre-checks never write: bad action → `invalid_request`/ND; aborted signal →
 *   `cancelled`/ND; closed → `executor_closed`/ND; failed lazy HELLO inside `execute` → ND;
 * - an `EXECUTE` reply `action_rejected`/`not_dispatched` is returned and the channel stays open;
 * - everything else closes the channel: malformed frames or replies → `invalid_response`;
 *   identity/seq/requestId/operation/actionId mismatch → `protocol_mismatch`; deadline →
 *   `deadline_exceeded`; caller abort → `cancelled`; write failure → `transport_failed`; other
 *   error replies → their own code and disposition. A request that may have been written fails
 *   `outcome_uncertain`, one provably unwritten fails `not_dispatched`. Nothing is retried.
 */
export function createBrowserControlClient(opts: BrowserControlClientOptions): BrowserControlClient {
  const c: ClientState = {
    ...checkClientOptions(opts),
    transport: opts.transport,
    seq: 0,
    closedCode: null,
    pending: null,
    busy: false,
    helloDone: false,
    helloPromise: null,
  };
  c.transport.start({ onMessage: (raw) => onReply(c, raw), onClose: (code) => shutdown(c, code) });

  const executor: BrowserControlExecutor = {
    stallRecovery: "fail_closed",
    observe: (signal?: AbortSignal) => guard(c, () => observeOverChannel(c, signal)),
    execute: (action: BrowserAction, signal?: AbortSignal) => guard(c, () => executeOverChannel(c, action, signal)),
  };
  return {
    executor,
    ready: () => guard(c, () => hello(c)),
    close: () => {
      if (c.closedCode === null) shutdown(c, "executor_closed");
    },
  };
}

/**
 * Validate the options of {@link createBrowserControlClient}.
 * @returns the parsed identity and the request deadline (ms).
 * @throws BrowserControlError `invalid_request`/`not_dispatched` naming the bad option.
 */
function checkClientOptions(opts: BrowserControlClientOptions): { identity: BrowserControlIdentity; timeoutMs: number } {
  const idParse = identitySchema.safeParse(opts.identity);
  if (!idParse.success)
    throw browserControlError(
      "invalid_request",
      "not_dispatched",
      "createBrowserControlClient: identity must be {generation, challenge, runtimeRevision} tokens",
    );
  const timeoutMs = opts.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
  if (!Number.isInteger(timeoutMs) || timeoutMs < MIN_REQUEST_TIMEOUT_MS || timeoutMs > MAX_REQUEST_TIMEOUT_MS)
    throw browserControlError(
      "invalid_request",
      "not_dispatched",
      `createBrowserControlClient: requestTimeoutMs must be an integer in ${MIN_REQUEST_TIMEOUT_MS}…${MAX_REQUEST_TIMEOUT_MS}`,
    );
  return { identity: idParse.data, timeoutMs };
}

/** The state of one client. */
interface ClientState {
  readonly transport: BrowserControlTransport;
  readonly identity: BrowserControlIdentity;
  /** Per-request deadline, ms. */
  readonly timeoutMs: number;
  /** The last sequence number used. */
  seq: number;
  /** Why the channel closed, or null while it is open. */
  closedCode: BrowserControlErrorCode | null;
  /** The request awaiting its write and its reply. */
  pending: Pending | null;
  /** A call is in flight (calls are refused, never queued). */
  busy: boolean;
  helloDone: boolean;
  helloPromise: Promise<void> | null;
}

/** Close the channel with `code`, failing the pending request (with `failure` when given). */
function shutdown(c: ClientState, code: BrowserControlErrorCode, failure?: BrowserControlError): void {
  if (c.closedCode === null) c.closedCode = code;
  const p = c.pending;
  c.pending = null;
  if (p)
    p.reject(
      failure ??
        browserControlError(
          code,
          p.possiblyWritten ? "outcome_uncertain" : "not_dispatched",
          `browser control closed (${code}) during ${p.operation} request-${p.seq}`,
        ),
    );
  c.transport.close(code);
}

/** Resolve the pending request once both its write finished and its reply arrived. */
function settle(c: ClientState): void {
  const p = c.pending;
  if (!p?.writeDone || p.reply === undefined) return;
  c.pending = null;
  p.resolve(p.reply);
}

/** One frame from the guest: it must be the one reply of the pending request. */
function onReply(c: ClientState, raw: unknown) {
  const p = c.pending;
  if (!p || p.reply !== undefined) return shutdown(c, "invalid_response");
  const parsed = replySchema.safeParse(raw);
  if (!parsed.success) return shutdown(c, "invalid_response");
  const r = parsed.data;
  if (
    !sameIdentity(r.identity, c.identity) ||
    r.seq !== p.seq ||
    r.requestId !== `request-${p.seq}` ||
    r.operation !== p.operation ||
    r.actionId !== p.actionId
  )
    return shutdown(c, "protocol_mismatch");
  p.reply = r;
  settle(c);
}

/**
 * Send one request and wait for both its write callback and its matching reply.
 * @throws BrowserControlError as described at {@link createBrowserControlClient}.
 */
function exchange(
  c: ClientState,
  operation: BrowserControlOperation,
  action: BrowserAction | undefined,
  signal: AbortSignal | undefined,
): Promise<BrowserControlReply> {
  if (c.closedCode !== null) return Promise.reject(browserControlError("executor_closed", "not_dispatched", "browser control is closed"));
  if (signal?.aborted) return Promise.reject(browserControlError("cancelled", "not_dispatched", `${operation} cancelled before it was sent`));
  if (c.seq >= Number.MAX_SAFE_INTEGER) {
    shutdown(c, "protocol_mismatch");
    return Promise.reject(browserControlError("protocol_mismatch", "not_dispatched", "browser control sequence numbers are exhausted"));
  }
  const mySeq = c.seq + 1;
  const actionId = operation === "EXECUTE" ? `action-${mySeq}` : undefined;
  const message: Record<string, unknown> = { version: 1, type: "request", identity: c.identity, seq: mySeq, requestId: `request-${mySeq}`, operation };
  if (operation === "EXECUTE") {
    message.actionId = actionId;
    message.action = action;
  }
  return new Promise<BrowserControlReply>((resolve, reject) => {
    let timer: ReturnType<typeof setTimeout> | null = null;
    const onAbort = () => {
      if (c.pending === p) shutdown(c, "cancelled");
    };
    const cleanup = () => {
      if (timer !== null) clearTimeout(timer);
      signal?.removeEventListener("abort", onAbort);
    };
    const p: Pending = {
      seq: mySeq,
      operation,
      actionId,
      possiblyWritten: false,
      writeDone: false,
      reply: undefined,
      resolve: (r) => {
        cleanup();
        resolve(r);
      },
      reject: (e) => {
        cleanup();
        reject(e);
      },
    };
    if (!writeRequest(c, p, message, reject)) return;
    timer = setTimeout(() => {
      if (c.pending === p) shutdown(c, "deadline_exceeded");
    }, c.timeoutMs);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

/**
 * Reserve `p` as the pending request and hand `message` to the transport; the write's end
 * settles `p` (or closes the channel `transport_failed`).
 * @returns false when the request is already over: it could not be encoded (`reject` got the
 *   error and the sequence number is not consumed) or the channel closed during the write.
 */
function writeRequest(c: ClientState, p: Pending, message: Record<string, unknown>, reject: (e: BrowserControlError) => void): boolean {
  // Reserve before writing: a reply can arrive while write() is still on the stack.
  c.seq = p.seq;
  c.pending = p;
  let write: Promise<void>;
  try {
    write = c.transport.send(message, () => {
      p.possiblyWritten = true;
    });
  } catch (e) {
    // Nothing was written: the sequence number is not consumed.
    if (c.pending === p) c.pending = null;
    if (c.seq === p.seq) c.seq = p.seq - 1;
    reject(isBrowserControlError(e) ? e : browserControlError("invalid_request", "not_dispatched", `${p.operation} could not be encoded`, e));
    return false;
  }
  if (c.pending !== p) return false; // settled synchronously (closed during the write)
  write.then(
    () => {
      p.writeDone = true;
      if (c.pending === p) settle(c);
    },
    (e: unknown) => {
      if (c.pending === p) shutdown(c, "transport_failed", isBrowserControlError(e) ? e : undefined);
    },
  );
  return true;
}

/** Turn an error reply into the caller's failure; closes unless EXECUTE action_rejected/ND. */
function failFromReply(c: ClientState, r: BrowserControlReply & { ok: false }): BrowserControlError {
  const { code, disposition } = r.error;
  const err = browserControlError(code, disposition, `guest refused ${r.operation} request-${r.seq}: ${code} (${disposition})`);
  if (!(r.operation === "EXECUTE" && code === "action_rejected" && disposition === "not_dispatched")) shutdown(c, code);
  return err;
}

/** The HELLO handshake, once (a failed one may be tried again). */
function hello(c: ClientState): Promise<void> {
  if (c.helloDone) return Promise.resolve();
  if (c.helloPromise) return c.helloPromise;
  const promise = exchange(c, "HELLO", undefined, undefined).then((r) => {
    if (!r.ok) throw failFromReply(c, r);
    c.helloDone = true;
  });
  c.helloPromise = promise;
  promise
    .catch(() => undefined)
    .finally(() => {
      if (!c.helloDone) c.helloPromise = null;
    });
  return promise;
}

/**
 * Run one call while no other is in flight.
 * @throws BrowserControlError `executor_closed`/`not_dispatched` once closed,
 *   `executor_busy`/`not_dispatched` while another call is in flight.
 */
async function guard<T>(c: ClientState, run: () => Promise<T>): Promise<T> {
  if (c.closedCode !== null) throw browserControlError("executor_closed", "not_dispatched", "browser control is closed");
  if (c.busy) throw browserControlError("executor_busy", "not_dispatched", "another browser-control request is in flight; requests are never queued");
  c.busy = true;
  try {
    return await run();
  } finally {
    c.busy = false;
  }
}

/** OBSERVE over the channel; any failure but a local pre-check closes it. */
async function observeOverChannel(c: ClientState, signal: AbortSignal | undefined): Promise<BrowserObservation> {
  if (signal?.aborted) throw browserControlError("cancelled", "not_dispatched", "observe cancelled before it was sent");
  await hello(c);
  const r = await exchange(c, "OBSERVE", undefined, signal);
  if (!r.ok) {
    shutdown(c, "invalid_response");
    throw browserControlError("invalid_response", "outcome_uncertain", `guest failed OBSERVE request-${r.seq}: ${r.error.code}`);
  }
  try {
    return decodeObservation(r.observation);
  } catch (e) {
    shutdown(c, "invalid_response");
    throw e;
  }
}

/** EXECUTE over the channel: the action checked and the lazy HELLO done before anything is sent. */
async function executeOverChannel(c: ClientState, action: BrowserAction, signal: AbortSignal | undefined): Promise<void> {
  const parsed = browserActionSchema.safeParse(action);
  if (!parsed.success)
    throw browserControlError("invalid_request", "not_dispatched", `action field ${parsed.error.issues[0]?.path.join(".") || "kind"} is invalid`);
  if (signal?.aborted) throw browserControlError("cancelled", "not_dispatched", "execute cancelled before it was sent");
  try {
    await hello(c);
  } catch (e) {
    const code = isBrowserControlError(e) ? e.errorCode : "transport_failed";
    throw browserControlError(code, "not_dispatched", "the lazy HELLO before EXECUTE failed; the action was not sent", e);
  }
  const r = await exchange(c, "EXECUTE", parsed.data, signal);
  if (!r.ok) throw failFromReply(c, r);
}

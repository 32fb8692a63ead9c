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
  const idParse = identitySchema.safeParse(opts.identity);
  if (!idParse.success)
    throw browserControlError(
      "invalid_request",
      "not_dispatched",
      "createBrowserControlClient: identity must be {generation, challenge, runtimeRevision} tokens",
    );
  const identity = idParse.data;
  const timeoutMs = opts.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
  if (!Number.isInteger(timeoutMs) || timeoutMs < MIN_REQUEST_TIMEOUT_MS || timeoutMs > MAX_REQUEST_TIMEOUT_MS)
    throw browserControlError(
      "invalid_request",
      "not_dispatched",
      `createBrowserControlClient: requestTimeoutMs must be an integer in ${MIN_REQUEST_TIMEOUT_MS}…${MAX_REQUEST_TIMEOUT_MS}`,
    );
  const transport = opts.transport;

  let seq = 0;
  let closedCode: BrowserControlErrorCode | null = null;
  let pending: Pending | null = null;
  let busy = false;
  let helloDone = false;
  let helloPromise: Promise<void> | null = null;

  const shutdown = (code: BrowserControlErrorCode, failure?: BrowserControlError) => {
    if (closedCode === null) closedCode = code;
    const p = pending;
    pending = null;
    if (p)
      p.reject(
        failure ??
          browserControlError(
            code,
            p.possiblyWritten ? "outcome_uncertain" : "not_dispatched",
            `browser control closed (${code}) during ${p.operation} request-${p.seq}`,
          ),
      );
    transport.close(code);
  };

  const settle = () => {
    const p = pending;
    if (!p?.writeDone || p.reply === undefined) return;
    pending = null;
    p.resolve(p.reply);
  };

  const onMessage = (raw: unknown) => {
    const p = pending;
    if (!p || p.reply !== undefined) return shutdown("invalid_response");
    const parsed = replySchema.safeParse(raw);
    if (!parsed.success) return shutdown("invalid_response");
    const r = parsed.data;
    if (
      !sameIdentity(r.identity, identity) ||
      r.seq !== p.seq ||
      r.requestId !== `request-${p.seq}` ||
      r.operation !== p.operation ||
      r.actionId !== p.actionId
    )
      return shutdown("protocol_mismatch");
    p.reply = r;
    settle();
  };

  transport.start({ onMessage, onClose: (code) => shutdown(code) });

  /** Send one request and wait for both its write callback and its matching reply. */
  const exchange = (operation: BrowserControlOperation, action: BrowserAction | undefined, signal: AbortSignal | undefined): Promise<BrowserControlReply> => {
    if (closedCode !== null) return Promise.reject(browserControlError("executor_closed", "not_dispatched", "browser control is closed"));
    if (signal?.aborted) return Promise.reject(browserControlError("cancelled", "not_dispatched", `${operation} cancelled before it was sent`));
    if (seq >= Number.MAX_SAFE_INTEGER) {
      shutdown("protocol_mismatch");
      return Promise.reject(browserControlError("protocol_mismatch", "not_dispatched", "browser control sequence numbers are exhausted"));
    }
    const mySeq = seq + 1;
    const actionId = operation === "EXECUTE" ? `action-${mySeq}` : undefined;
    const message: Record<string, unknown> = { version: 1, type: "request", identity, seq: mySeq, requestId: `request-${mySeq}`, operation };
    if (operation === "EXECUTE") {
      message.actionId = actionId;
      message.action = action;
    }
    return new Promise<BrowserControlReply>((resolve, reject) => {
      let timer: ReturnType<typeof setTimeout> | null = null;
      const onAbort = () => {
        if (pending === p) shutdown("cancelled");
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
      // Reserve before writing: a reply can arrive while write() is still on the stack.
      seq = mySeq;
      pending = p;
      let write: Promise<void>;
      try {
        write = transport.send(message, () => {
          p.possiblyWritten = true;
        });
      } catch (e) {
        // Nothing was written: the sequence number is not consumed.
        if (pending === p) pending = null;
        if (seq === mySeq) seq = mySeq - 1;
        reject(isBrowserControlError(e) ? e : browserControlError("invalid_request", "not_dispatched", `${operation} could not be encoded`, e));
        return;
      }
      if (pending !== p) return; // settled synchronously (closed during the write)
      timer = setTimeout(() => {
        if (pending === p) shutdown("deadline_exceeded");
      }, timeoutMs);
      signal?.addEventListener("abort", onAbort, { once: true });
      write.then(
        () => {
          p.writeDone = true;
          if (pending === p) settle();
        },
        (e: unknown) => {
          if (pending === p) shutdown("transport_failed", isBrowserControlError(e) ? e : undefined);
        },
      );
    });
  };

  /** Turn an error reply into the caller's failure; closes unless EXECUTE action_rejected/ND. */
  const failFromReply = (r: BrowserControlReply & { ok: false }): BrowserControlError => {
    const { code, disposition } = r.error;
    const err = browserControlError(code, disposition, `guest refused ${r.operation} request-${r.seq}: ${code} (${disposition})`);
    if (!(r.operation === "EXECUTE" && code === "action_rejected" && disposition === "not_dispatched")) shutdown(code);
    return err;
  };

  const hello = (): Promise<void> => {
    if (helloDone) return Promise.resolve();
    if (helloPromise) return helloPromise;
    helloPromise = exchange("HELLO", undefined, undefined).then((r) => {
      if (!r.ok) throw failFromReply(r);
      helloDone = true;
    });
    helloPromise
      .catch(() => undefined)
      .finally(() => {
        if (!helloDone) helloPromise = null;
      });
    return helloPromise;
  };

  const guard = async <T>(run: () => Promise<T>): Promise<T> => {
    if (closedCode !== null) throw browserControlError("executor_closed", "not_dispatched", "browser control is closed");
    if (busy) throw browserControlError("executor_busy", "not_dispatched", "another browser-control request is in flight; requests are never queued");
    busy = true;
    try {
      return await run();
    } finally {
      busy = false;
    }
  };

  const executor: BrowserControlExecutor = {
    stallRecovery: "fail_closed",
    observe(signal?: AbortSignal): Promise<BrowserObservation> {
      return guard(async () => {
        if (signal?.aborted) throw browserControlError("cancelled", "not_dispatched", "observe cancelled before it was sent");
        await hello();
        const r = await exchange("OBSERVE", undefined, signal);
        if (!r.ok) {
          shutdown("invalid_response");
          throw browserControlError("invalid_response", "outcome_uncertain", `guest failed OBSERVE request-${r.seq}: ${r.error.code}`);
        }
        try {
          return decodeObservation(r.observation);
        } catch (e) {
          shutdown("invalid_response");
          throw e;
        }
      });
    },
    execute(action: BrowserAction, signal?: AbortSignal): Promise<void> {
      return guard(async () => {
        const parsed = browserActionSchema.safeParse(action);
        if (!parsed.success)
          throw browserControlError("invalid_request", "not_dispatched", `action field ${parsed.error.issues[0]?.path.join(".") || "kind"} is invalid`);
        if (signal?.aborted) throw browserControlError("cancelled", "not_dispatched", "execute cancelled before it was sent");
        try {
          await hello();
        } catch (e) {
          const code = isBrowserControlError(e) ? e.errorCode : "transport_failed";
          throw browserControlError(code, "not_dispatched", "the lazy HELLO before EXECUTE failed; the action was not sent", e);
        }
        const r = await exchange("EXECUTE", parsed.data, signal);
        if (!r.ok) throw failFromReply(r);
      });
    },
  };

  return {
    executor,
    ready: () => guard(() => hello()),
    close: () => {
      if (closedCode === null) shutdown("executor_closed");
    },
  };
}

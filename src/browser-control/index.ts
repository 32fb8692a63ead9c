/**
 * Browser control: the framed host ↔ guest channel that drives one browser desktop
 * (protocol version 1: HELLO, OBSERVE, EXECUTE only — no recording transfer, no `speak`, no
 * `heldKeys`; design ARCHITECTURE.md "Browser control").
 *
 * ## For the guest driver (src/guest/): implement `BrowserExecutor`
 *
 * ```ts
 * import { attachBrowserControlDispatcher, createSocketTransport, BrowserControlError,
 *          type BrowserExecutor, type BrowserAction, type BrowserObservation } from "../browser-control/index.ts";
 *
 * const executor: BrowserExecutor = {
 *   async observe(signal: AbortSignal): Promise<BrowserObservation> {
 *     // capture → { png: Uint8Array (valid per admitPng), stateSignature, url?, title?, text?, scrollY? }
 *   },
 *   async execute(action: BrowserAction, signal: AbortSignal): Promise<void> {
 *     // validate the WHOLE action first; refuse with
 *     //   throw new BrowserControlError("action_rejected", "not_dispatched")   // nothing was sent
 *     // then before EVERY native input step:  if (signal.aborted) throw … ("session_revoked", dispatched ? "outcome_uncertain" : "not_dispatched")
 *     // after a partial dispatch:             throw new BrowserControlError("execution_failed", "outcome_uncertain")
 *   },
 * };
 * const dispatcher = attachBrowserControlDispatcher({
 *   transport: createSocketTransport(socket),          // socket: connected net.Socket / Duplex
 *   identity: { generation, challenge, runtimeRevision }, // tokens [A-Za-z0-9._-]{1,128}
 *   executor,
 *   isAuthorized: () => ownerStillAuthorises,          // checked right before each executor call
 *   authoritySignal,                                   // AbortSignal: aborts = authority withdrawn
 * });
 * // dispatcher.close() when the desktop goes away
 * ```
 *
 * Executor contract (full text on `BrowserExecutor` in ./executor.ts):
 * - one call at a time; `signal` aborts on revocation, channel loss or the 35 s request deadline;
 * - `execute` resolves after the input was sent; check `signal.aborted` before each input step;
 * - failures are `BrowserControlError(code, disposition)` with a code from the closed list of
 *   twelve (`BROWSER_CONTROL_ERROR_CODES`) and disposition `not_dispatched` (ONLY with positive
 *   evidence that no input reached the desktop) or `outcome_uncertain` (terminal);
 * - any untyped throw after the executor was invoked becomes `action_rejected`/`outcome_uncertain`
 *   and closes the channel; only `action_rejected`/`not_dispatched` on EXECUTE keeps it open.
 *
 * ## For the host: `createBrowserControlClient`
 *
 * `createBrowserControlClient({transport, identity, requestTimeoutMs?})` → `{executor, ready(), close()}`.
 * `executor.observe()` / `executor.execute(action)` (optional AbortSignal) forward over the
 * channel; HELLO is sent lazily; one request in flight (a second is refused `executor_busy`/
 * `not_dispatched`, never queued); `executor.stallRecovery === "fail_closed"`.
 *
 * ## Framing for other byte streams
 * `encodeFrame(message)` → bytes; `new FrameDecoder().push(chunk)` → `{messages, fault}`
 * (or `pushSpans(chunk)` → reused `FrameSpans` byte ranges, no object per frame).
 */

export {
  type BrowserControlClient,
  type BrowserControlClientOptions,
  createBrowserControlClient,
  DEFAULT_REQUEST_TIMEOUT_MS,
  MAX_REQUEST_TIMEOUT_MS,
  MIN_REQUEST_TIMEOUT_MS,
} from "./client.ts";
export {
  attachBrowserControlDispatcher,
  type BrowserControlDispatcher,
  type BrowserControlDispatcherOptions,
  DISPATCHER_DEADLINE_MS,
} from "./dispatcher.ts";
export {
  ACTION_DISPOSITIONS,
  type ActionDisposition,
  BROWSER_CONTROL_ERROR_CODES,
  BrowserControlError,
  type BrowserControlErrorCode,
  browserControlError,
  humanishCodeFor,
  isActionDisposition,
  isBrowserControlError,
  isBrowserControlErrorCode,
} from "./errors.ts";
export {
  abortableSleep,
  type BrowserControlExecutor,
  type BrowserExecutor,
  captureFailure,
  type ExecuteProgress,
  ExecutorSession,
  settleFailedExecute,
} from "./executor.ts";
export {
  encodeFrame,
  type FrameDecodeResult,
  FrameDecoder,
  type FrameDecoderOptions,
  type FrameFault,
  type FrameFaultKind,
  type FrameSpans,
} from "./framing.ts";
export { decodeObservation, encodeObservation } from "./observation.ts";
export {
  BROWSER_ACTION_KINDS,
  type BrowserAction,
  type BrowserActionKind,
  type BrowserControlIdentity,
  type BrowserControlMessage,
  type BrowserControlOperation,
  type BrowserControlReply,
  type BrowserControlRequest,
  type BrowserObservation,
  browserActionSchema,
  coordinateSchema,
  identitySchema,
  MAX_COORDINATE,
  MAX_DRAG_POINTS,
  MAX_FRAME_BYTES,
  MAX_KEY_NAME,
  MAX_KEYS,
  MAX_OBSERVATION_TEXT,
  MAX_PNG_BASE64,
  MAX_PNG_BYTES,
  MAX_TYPE_TEXT,
  MAX_WAIT_MS,
  OPERATIONS,
  replySchema,
  requestSchema,
  sameIdentity,
  tokenSchema,
  utf8ByteLength,
  type WireObservation,
  wireObservationSchema,
} from "./schemas.ts";
export {
  BrowserControlTransport,
  type BrowserControlTransportOptions,
  createSocketTransport,
  FRAME_ASSEMBLY_MS,
  type TransportHandlers,
} from "./transport.ts";

/**
 * Browser control: the framed host ↔ guest channel that drives one browser desktop
 * (reference subsystems.md §1, protocol version 1: HELLO, OBSERVE, EXECUTE only — no recording
 * transfer, no `speak`, no `heldKeys`; design ARCHITECTURE.md "Browser control").
 *
 * ## For the guest driver (src/guest/): implement `BrowserExecutor`
 *
 * ```ts
 * import { attachBrowserControlDispatcher, createSocketTransport, CuaExecutorError,
 *          type BrowserExecutor, type CuaAction, type CuaObservation } from "../browser-control/index.ts";
 *
 * const executor: BrowserExecutor = {
 *   async observe(signal: AbortSignal): Promise<CuaObservation> {
 *     // capture → { png: Uint8Array (valid per admitPng), stateSignature, url?, title?, text?, scrollY? }
 *   },
 *   async execute(action: CuaAction, signal: AbortSignal): Promise<void> {
 *     // validate the WHOLE action first; refuse with
 *     //   throw new CuaExecutorError("action_rejected", "not_dispatched")   // nothing was sent
 *     // then before EVERY native input step:  if (signal.aborted) throw … ("session_revoked", dispatched ? "outcome_uncertain" : "not_dispatched")
 *     // after a partial dispatch:             throw new CuaExecutorError("execution_failed", "outcome_uncertain")
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
 * - failures are `CuaExecutorError(code, disposition)` with a code from the closed list of
 *   twelve (`CUA_EXECUTOR_ERROR_CODES`) and disposition `not_dispatched` (ONLY with positive
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
  CUA_EXECUTOR_ERROR_CODES,
  CUA_DISPOSITIONS,
  CuaExecutorError,
  cuaError,
  isCuaExecutorError,
  isCuaExecutorErrorCode,
  isCuaDisposition,
  humanishCodeFor,
  type CuaExecutorErrorCode,
  type CuaDisposition,
} from "./errors.ts";
export {
  cuaActionSchema,
  identitySchema,
  tokenSchema,
  coordinateSchema,
  wireObservationSchema,
  requestSchema,
  replySchema,
  sameIdentity,
  utf8ByteLength,
  CUA_ACTION_KINDS,
  OPERATIONS,
  MAX_FRAME_BYTES,
  MAX_COORDINATE,
  MAX_TYPE_TEXT,
  MAX_OBSERVATION_TEXT,
  MAX_KEYS,
  MAX_KEY_NAME,
  MAX_DRAG_POINTS,
  MAX_WAIT_MS,
  MAX_PNG_BYTES,
  MAX_PNG_BASE64,
  type CuaAction,
  type CuaActionKind,
  type CuaObservation,
  type WireObservation,
  type BrowserControlIdentity,
  type BrowserControlOperation,
  type BrowserControlRequest,
  type BrowserControlReply,
  type BrowserControlMessage,
} from "./schemas.ts";
export type { BrowserExecutor, BrowserControlExecutor } from "./executor.ts";
export { encodeFrame, FrameDecoder, type FrameDecoderOptions, type FrameDecodeResult, type FrameFault, type FrameFaultKind, type FrameSpans } from "./framing.ts";
export {
  BrowserControlTransport,
  createSocketTransport,
  connectUnixSocketTransport,
  FRAME_ASSEMBLY_MS,
  type BrowserControlTransportOptions,
  type TransportHandlers,
} from "./transport.ts";
export { encodeObservation, decodeObservation } from "./observation.ts";
export {
  createBrowserControlClient,
  DEFAULT_REQUEST_TIMEOUT_MS,
  MIN_REQUEST_TIMEOUT_MS,
  MAX_REQUEST_TIMEOUT_MS,
  type BrowserControlClient,
  type BrowserControlClientOptions,
} from "./client.ts";
export {
  attachBrowserControlDispatcher,
  DISPATCHER_DEADLINE_MS,
  type BrowserControlDispatcher,
  type BrowserControlDispatcherOptions,
} from "./dispatcher.ts";

/**
 * `openai-computer-use`: an OpenAI computer-use model driving the browser desktop by full-frame
 * screenshots and input actions, in the host process (the key never enters the guest).
 *
 *   actions.ts   model actions → the browser-control action union (pure)
 *   (the Responses wire — request bodies, the replayed conversation, response parsing — is
 *   models/computer-use.ts: only models/ speaks Responses)
 *   backstop.ts  the idle / no-progress fold (pure)
 *   outcome.ts   declared outcome, stopWhen, task funnel, closing report (pure)
 *   provider.ts  one admitted, metered SDK request
 *   seat-record.ts  what every model-driven browser seat records alike (also the local-agent seat's)
 *   loop-seat.ts the turn bookkeeping every Responses-driven browser loop shares (also the vision agent's)
 *   loop.ts      the loop itself: the computer tool's requests, safety checks, batches, closing account
 *   trace.ts     the outcome → `humanish.actor-trace.v1`
 *   seat.ts      brief, preflight (key, priced model) and one seat run
 *   evidence.ts  the request ledger and its cost lines
 */

export { Conversation, checkCallPairs, type ParsedResponse, parseResponse, toolFor } from "../../models/computer-use.ts";
export { describeAction, guestKeyName, MAX_BATCH_ACTIONS, type MappedAction, mapAction, mapBatch } from "./actions.ts";
export { DEFAULT_IDLE_STEPS, DEFAULT_NO_PROGRESS_STEPS, fingerprint, foldTurn, progressKey, startBackstop } from "./backstop.ts";
export { computerUseLedger } from "./evidence.ts";
export {
  type ComputerUseOptions,
  type ComputerUseOutcome,
  DEBRIEF_MAX_OUTPUT_TOKENS,
  DEBRIEF_TIMEOUT_MS,
  DEFAULT_TURN_TIMEOUT_MS,
  type DebriefResult,
  runComputerUse,
} from "./loop.ts";
export {
  claimOf,
  type DeclaredOutcome,
  declaredOutcome,
  type LoopTask,
  matchStopWhen,
  parseClosingReport,
  type StopWhen,
  stopWhenObservation,
  type TaskFunnel,
  taskFunnel,
} from "./outcome.ts";
export { assertPricedForCaps, classifyError, type RequestResult, sendRequest } from "./provider.ts";
export {
  briefDigest,
  COMPUTER_USE_KEY_NAMES,
  type ComputerUseReadiness,
  type ComputerUseSeatOptions,
  computerUseBrief,
  computerUseModel,
  computerUsePreflight,
  DEFAULT_COMPUTER_USE_MODEL,
  DEFAULT_COMPUTER_USE_PERSONA,
  runComputerUseSeat,
} from "./seat.ts";
export { computerUseTrace, type TraceMeta } from "./trace.ts";

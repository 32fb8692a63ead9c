/**
 * The browser participant seam: the interface every browser participant implements
 * (participant.ts), the factory that picks one by actor type (factory.ts), and the shared
 * vocabulary a lane reads of any participant's outcome — observations and the hidden checks
 * over them, kept screenshots, a participant's claim, a `stopWhen` rule.
 */
export { claimOf, type DeclaredOutcome, type StopWhen, stopWhenObservation } from "../computer-use/outcome.ts";
export { type BrowserCheck, evaluateCheck, type KeptScreenshot, type ObservationRecord } from "../scripted-browser/index.ts";
export { BROWSER_PARTICIPANTS, browserParticipant } from "./factory.ts";
export type * from "./participant.ts";

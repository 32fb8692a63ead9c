/**
 * The one place a browser participant is chosen: `actors[0].type` → its factory. Every other
 * module (the browser route, both browser lanes, the study's seat evidence) sees only the
 * {@link BrowserParticipant} seam. The actor registry (`actors/registry.ts`) holds what each
 * type is; this map holds how to build it; a test keeps the two in step.
 */
import type { BrowserActor } from "../../lab/schema.ts";
import { localAgentParticipant } from "../codex-account/browser-participant.ts";
import { computerUseParticipant } from "../computer-use/participant.ts";
import { scriptedBrowserParticipant } from "../scripted-browser/participant.ts";
import { visionAgentParticipant } from "../vision-agent/index.ts";
import type { BrowserCaps, BrowserParticipant } from "./participant.ts";

type Factory<T extends BrowserActor["type"]> = (actor: Extract<BrowserActor, { type: T }>, caps: BrowserCaps) => BrowserParticipant;

/** The factory of every browser actor type. */
export const BROWSER_PARTICIPANTS: { readonly [T in BrowserActor["type"]]: Factory<T> } = {
  "scripted-browser": (actor) => scriptedBrowserParticipant(actor),
  "openai-computer-use": computerUseParticipant,
  "local-agent": localAgentParticipant,
  "vision-agent": visionAgentParticipant,
};

/** The participant of a browser lab's actor under the lab's `scenario.caps`. */
export function browserParticipant(actor: BrowserActor, caps: BrowserCaps): BrowserParticipant {
  const make = BROWSER_PARTICIPANTS[actor.type] as Factory<BrowserActor["type"]>;
  return make(actor as never, caps);
}

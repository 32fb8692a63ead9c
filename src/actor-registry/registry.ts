/**
 * The actor registry: every participant type humanish knows, with its declared capabilities
 * (an actor is resolved by the capability lane it serves, never by its name alone). Pure data,
 * imported by `lab/` and `bundle/` and importing neither (nor any actor implementation):
 * implementations live in their own folders and are picked by the route that runs them.
 */
import { HumanishError } from "../errors.ts";
import type { ActorCapabilities, ActorCapability, ActorDescriptor } from "./types.ts";

/** What an actor may declare apart from the defaults of {@link capabilities}. */
type OwnCapabilities = Partial<Pick<ActorCapabilities, "byoModel" | "inProcessTools" | "license" | "keyPlacement">>;

/**
 * The declared capabilities of an actor serving `lane`. Every registered actor is headless,
 * traces structurally and takes no pre-granted approvals; a browser lane's actor produces
 * screenshots, a terminal one does not. `own` overrides the rest of the defaults: the lab does
 * not choose the model, no tools run in process, an open license, no key placed.
 */
function capabilities(lane: ActorCapability, own: OwnCapabilities = {}): ActorCapabilities {
  return {
    headless: true,
    structuredTrace: true,
    lanes: [lane],
    producesScreenshots: lane !== "terminal",
    byoModel: own.byoModel ?? false,
    preGrantableApprovals: false,
    inProcessTools: own.inProcessTools ?? false,
    license: own.license ?? "open",
    keyPlacement: own.keyPlacement ?? "none",
  };
}

/** The descriptor fields of a scripted actor: no model, so nothing is priced or capped and `stopWhen` does not apply. */
function scripted(): Pick<ActorDescriptor, "modelParticipant" | "pricing" | "capUnits" | "stopWhen" | "provider" | "protocol"> {
  return { modelParticipant: false, pricing: "none", capUnits: [], stopWhen: false, provider: "humanish", protocol: "scripted-steps" };
}

const DESCRIPTORS: readonly ActorDescriptor[] = [
  {
    type: "scripted-terminal",
    targets: ["docker", "e2b-terminal"],
    ...scripted(),
    summary: "Runs the lab's steps[] one at a time in the sandbox as the participant; no model.",
    runtimeKeyNames: [],
    capabilities: capabilities("terminal"),
  },
  {
    type: "codex-exec",
    targets: ["docker", "e2b-terminal"],
    modelParticipant: true,
    pricing: "rate-table",
    capUnits: ["usd"],
    stopWhen: false,
    provider: "codex",
    protocol: "terminal-exec",
    summary: "The OpenAI Codex CLI (`codex exec --json`) installed at an exact version inside the sandbox.",
    runtimeKeyNames: ["CODEX_API_KEY", "OPENAI_API_KEY"],
    capabilities: capabilities("terminal", { byoModel: true, keyPlacement: "in-sandbox-command-scoped" }),
  },
  {
    type: "scripted-browser",
    targets: ["local"],
    ...scripted(),
    summary: "Replays a scenario's browser steps against the app origin; no model.",
    runtimeKeyNames: [],
    capabilities: capabilities("scripted-browser"),
  },
  {
    type: "openai-computer-use",
    targets: ["local", "e2b-desktop"],
    modelParticipant: true,
    pricing: "rate-table",
    capUnits: ["usd"],
    stopWhen: true,
    provider: "openai",
    protocol: "cua-loop",
    summary:
      "An OpenAI computer-use model driving the browser desktop by full-frame screenshots and input actions; the loop runs in the host process, so its key never enters the guest.",
    runtimeKeyNames: ["OPENAI_API_KEY"],
    capabilities: capabilities("computer-use", { byoModel: true, license: "proprietary", keyPlacement: "external" }),
  },
  {
    type: "local-agent",
    targets: ["local"],
    modelParticipant: true,
    pricing: "account-unknown",
    capUnits: [],
    stopWhen: false,
    provider: "codex",
    protocol: "cua-loop",
    summary:
      "The operator's signed-in Codex CLI (`localAgent: codex`, a ChatGPT login, no API key) driving the browser desktop through one humanish_ui tool, in a restricted codex app-server on the host; the login never enters the guest.",
    runtimeKeyNames: [],
    // The qualified account profile pins the model and effort: the lab cannot choose them.
    capabilities: capabilities("computer-use", { inProcessTools: true, keyPlacement: "external" }),
  },
  {
    type: "vision-agent",
    targets: ["local", "e2b-desktop"],
    modelParticipant: true,
    pricing: "rate-table",
    capUnits: ["usd", "tokens"],
    stopWhen: true,
    provider: "openai-compatible",
    protocol: "cua-loop",
    summary:
      "Any vision model on a Responses-compatible endpoint (OPENAI_BASE_URL) driving the browser desktop through function calls of the humanish_ui tool, a screenshot each turn; the loop runs in the host process, so its key never enters the desktop.",
    runtimeKeyNames: ["OPENAI_API_KEY"],
    capabilities: capabilities("computer-use", { byoModel: true, keyPlacement: "external" }),
  },
];

/** Every registered actor descriptor, in a stable order. */
export function listActors(): readonly ActorDescriptor[] {
  return DESCRIPTORS;
}

/** The descriptor of `type`, or undefined when no actor of that type is registered. */
export function findActor(type: string): ActorDescriptor | undefined {
  return DESCRIPTORS.find((d) => d.type === type);
}

/** True when `type` is registered and serves `lane` (the routing predicates use this). */
export function actorServesLane(type: string, lane: ActorCapability): boolean {
  return findActor(type)?.capabilities.lanes.includes(lane) ?? false;
}

/**
 * Resolves `type` to a descriptor of the given lane.
 * @throws HumanishError `HUMANISH_TERMINAL_LAB_ACTOR_UNSUPPORTED` (terminal lane) or
 *   `HUMANISH_ACTOR_UNSUPPORTED` when the type is unknown or serves another lane; the message
 *   lists the types that do serve the lane.
 */
export function resolveActor(type: string, lane: ActorCapability): ActorDescriptor {
  const d = findActor(type);
  if (d?.capabilities.lanes.includes(lane)) return d;
  const fits = DESCRIPTORS.filter((x) => x.capabilities.lanes.includes(lane)).map((x) => x.type);
  const code = lane === "terminal" ? "HUMANISH_TERMINAL_LAB_ACTOR_UNSUPPORTED" : "HUMANISH_ACTOR_UNSUPPORTED";
  const why = d ? `serves the ${d.capabilities.lanes.join("/")} lane, not ${lane}` : "is not a registered actor";
  throw new HumanishError(code, `actors[0].type "${type}" ${why}.`, {
    next: `Set actors[0].type to one of: ${fits.join(", ")}.`,
    details: { type, lane, supported: fits },
  });
}

/**
 * Routing predicates: the single source of truth for which route runs a lab, used both by
 * dispatch (`humanish lab run`) and by parse-time checks and warnings (ARCHITECTURE.md "Routes
 * and targets"). Actor lanes come from the actor registry.
 */
import { actorServesLane, listActors } from "../actor-registry/registry.ts";
import type { BrowserLabConfig, DeviceName, DevicePreset, LabConfig, TerminalLabConfig } from "./schema.ts";
import { browserSeatDevices, expandSeats, type SeatSpec } from "./seats.ts";

/** The routes humanish runs. */
export type LabBackend = "terminal" | "browser";

/**
 * Actor types per route, in the registry's order (the order shown to authors). Read from the
 * registry so a new actor is routed by the lane it declares, never by a second list here.
 */
export const ROUTE_ACTOR_TYPES: Readonly<Record<LabBackend, readonly string[]>> = {
  terminal: listActors()
    .filter((a) => a.capabilities.lanes.includes("terminal"))
    .map((a) => a.type),
  browser: listActors()
    .filter((a) => a.capabilities.lanes.some((l) => l === "scripted-browser" || l === "computer-use"))
    .map((a) => a.type),
};

/** `subject.source` of each route. */
export const ROUTE_SOURCES: Readonly<Record<LabBackend, string>> = {
  terminal: "terminal-product",
  browser: "app-url",
};

/** Minimal shape the predicates read, so they also work on partially validated input. */
type Routable = { subject: { source: string }; actors: readonly { type: string }[] };

/**
 * True when the lab is a terminal-product study run by a terminal-lane actor
 * (`scripted-terminal` or `codex-exec`).
 */
export function routesToTerminalProduct(config: Routable): boolean {
  const type = config.actors[0]?.type;
  return config.subject.source === "terminal-product" && type !== undefined && actorServesLane(type, "terminal");
}

/**
 * True when the lab is an app-url (loopback web app) study run by a browser actor
 * (any type the registry puts on the scripted-browser or computer-use lane).
 */
export function routesToBrowserApp(config: Routable): boolean {
  const type = config.actors[0]?.type;
  return config.subject.source === "app-url" && type !== undefined && (actorServesLane(type, "scripted-browser") || actorServesLane(type, "computer-use"));
}

/** True for a browser lab driven by the scripted (no-model) participant. */
export function routesToScriptedBrowser(config: Routable): boolean {
  return routesToBrowserApp(config) && actorServesLane(config.actors[0]!.type, "scripted-browser");
}

/** True for a browser lab driven by a model on the computer-use lane (a computer-use or vision model, a local agent). */
export function routesToComputerUse(config: Routable): boolean {
  return routesToBrowserApp(config) && actorServesLane(config.actors[0]!.type, "computer-use");
}

/**
 * The route that runs `config`: `terminal` for any terminal-product source (so an unsupported
 * actor still reaches the terminal route's fail-closed `HUMANISH_TERMINAL_LAB_ACTOR_UNSUPPORTED`),
 * `browser` for app-url. A validated {@link LabConfig} always has one of the two sources.
 */
export function selectLabBackend(config: Routable): LabBackend {
  if (routesToTerminalProduct(config) || config.subject.source === "terminal-product") return "terminal";
  return "browser";
}

/** Narrows a lab to the terminal route. */
export function isTerminalLab(config: LabConfig): config is TerminalLabConfig {
  return config.subject.source === "terminal-product";
}

/** Narrows a lab to the browser route. */
export function isBrowserLab(config: LabConfig): config is BrowserLabConfig {
  return config.subject.source === "app-url";
}

/**
 * The device of each seat of a browser lab, in seat order, with geometry: an explicit
 * `lanes[].device` wins, `count: 2` without lanes is desktop + mobile, every other seat desktop.
 */
export function labDevices(config: BrowserLabConfig): { seat: SeatSpec; name: DeviceName; preset: DevicePreset }[] {
  return browserSeatDevices(config.actors[0]);
}

/** The seats of any lab, in study order (see src/lab/seats.ts). */
export function labSeats(config: LabConfig): SeatSpec[] {
  return expandSeats(config.actors[0]);
}

/**
 * The mode a run uses: an explicit CLI override wins, else `scenario.mode`, else `dry-run`
 * (invariant 3: spend needs an affirmative `live`, so the absence of a mode is a dry run).
 */
export function resolveLabMode(config: LabConfig, override?: "dry-run" | "live"): "dry-run" | "live" {
  return override ?? config.scenario.mode;
}

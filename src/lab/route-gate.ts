/**
 * The checks of a lab before its route's schema runs, each naming one problem: the root (a
 * mapping with the right `schema`, no unknown top-level key), the route from `subject.source`,
 * exactly one actor of that route, and an `execution.target` of that route. They come first so
 * that a file of another version, route or participant type says so rather than listing the key
 * problems that follow from it.
 */
import { nearest } from "../text/nearest.ts";
import type { Problem } from "./issues.ts";
import { type LabBackend, ROUTE_ACTOR_TYPES, ROUTE_SOURCES } from "./routing.ts";
import {
  BrowserSubjectSchema,
  CodexExecActorSchema,
  ComputerUseActorSchema,
  LAB_SCHEMA_ID,
  LocalAgentActorSchema,
  ScriptedBrowserActorSchema,
  ScriptedTerminalActorSchema,
  TerminalLabSchema,
  TerminalSubjectSchema,
} from "./schema.ts";
import { topForeign } from "./schema-common.ts";
import { unknownKeyText } from "./strict.ts";

/** Sources of the reference humanish that this one names but does not run. */
const REFERENCE_SOURCES = ["this-repo", "clone", "local-app", "desktop-cli", "local-tree"];

/** True for a YAML mapping (a plain object, not a list or null). */
export function isMapping(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** Every key a `subject` may hold on some route (for "did you mean" before the route is known). */
const SUBJECT_KEYS = [...new Set([...Object.keys(TerminalSubjectSchema.shape), ...Object.keys(BrowserSubjectSchema.shape)])];
/** Every key an actor may hold on some route. */
const ACTOR_KEYS = [
  ...new Set(
    [ScriptedTerminalActorSchema, CodexExecActorSchema, ScriptedBrowserActorSchema, ComputerUseActorSchema, LocalAgentActorSchema].flatMap((s) =>
      Object.keys(s.shape),
    ),
  ),
];

/**
 * The problem of a root mapping with no or another `schema` than humanish.lab.v2 (checked
 * first: a v1 or foreign file should say so rather than list its key problems), or with an
 * unknown top-level key (reported before what it leaves missing).
 */
export function rootProblem(root: Record<string, unknown>): Problem | undefined {
  if (!("schema" in root)) return { path: [], key: undefined, message: `needs \`schema: ${LAB_SCHEMA_ID}\`` };
  if (root.schema !== LAB_SCHEMA_ID) {
    return {
      path: ["schema"],
      message: `must be exactly ${LAB_SCHEMA_ID} (got ${JSON.stringify(root.schema)}; there is no compatibility with other versions)`,
    };
  }
  return unknownKeyProblem(root, [], Object.keys(TerminalLabSchema.shape), topForeign);
}

/**
 * The route `subject.source` names (`terminal-product` → terminal, `app-url` → browser), or the
 * problem: no subject, not a mapping, a typo'd key where `source` is missing, no or a non-string
 * source, a reference source this humanish does not run, or an unknown one (with the nearest).
 */
export function routeOf(root: Record<string, unknown>): LabBackend | Problem {
  const subject = root.subject;
  if (subject === undefined) return { path: ["subject"], message: "is required (a mapping with `source: terminal-product` or `source: app-url`)" };
  if (!isMapping(subject)) return { path: ["subject"], message: "must be a mapping" };
  const src = subject.source;
  if (src === ROUTE_SOURCES.terminal) return "terminal";
  if (src === ROUTE_SOURCES.browser) return "browser";
  const typo = src === undefined ? unknownKeyProblem(subject, ["subject"], SUBJECT_KEYS, {}) : undefined;
  if (typo) return typo;
  if (typeof src !== "string") {
    return {
      path: ["subject", "source"],
      message: src === undefined ? "is required: terminal-product or app-url" : "must be the string terminal-product or app-url",
    };
  }
  if (REFERENCE_SOURCES.includes(src)) {
    return { path: ["subject", "source"], message: `\`${src}\` is a reference humanish source this humanish does not run; use terminal-product or app-url` };
  }
  const hint = nearest(src, [...Object.values(ROUTE_SOURCES), ...REFERENCE_SOURCES]);
  return {
    path: ["subject", "source"],
    message: `\`${src}\` is not a subject source${hint ? ` (did you mean \`${hint}\`?)` : ""}; use terminal-product or app-url`,
  };
}

/**
 * The problem with `actors`, if any: it must be a list of exactly one mapping whose `type` is a
 * string naming a participant of `route` (a typo'd key where `type` is missing, a participant of
 * the other route, or an unknown type with the nearest, are each named).
 */
export function actorProblem(root: Record<string, unknown>, route: LabBackend): Problem | undefined {
  const actors = root.actors;
  if (actors === undefined) return { path: ["actors"], message: `is required: a list with exactly one actor (${ROUTE_ACTOR_TYPES[route].join(" or ")})` };
  if (!Array.isArray(actors)) return { path: ["actors"], message: "must be a list with exactly one actor" };
  if (actors.length !== 1) {
    return {
      path: ["actors"],
      message:
        actors.length === 0
          ? "must list exactly one actor (got none)"
          : `must list exactly one actor (got ${actors.length}; only one participant type runs per lab — use count for more surfaces)`,
    };
  }
  const actor = actors[0];
  if (!isMapping(actor)) return { path: ["actors", 0], message: "must be a mapping with a `type`" };
  const type = actor.type;
  if (type === undefined) {
    const typo = unknownKeyProblem(actor, ["actors", 0], ACTOR_KEYS, {});
    if (typo) return typo;
  }
  if (typeof type !== "string") {
    const want = `one of ${ROUTE_ACTOR_TYPES[route].join(", ")}`;
    return { path: ["actors", 0, "type"], message: type === undefined ? `is required: ${want}` : `must be a string: ${want}` };
  }
  if (ROUTE_ACTOR_TYPES[route].includes(type)) return undefined;
  const other: LabBackend = route === "terminal" ? "browser" : "terminal";
  if (ROUTE_ACTOR_TYPES[other].includes(type)) {
    return {
      path: ["actors", 0, "type"],
      message: `\`${type}\` cannot act on subject.source ${ROUTE_SOURCES[route]}: it is a ${other} participant; use ${ROUTE_ACTOR_TYPES[route].join(" or ")}`,
    };
  }
  const hint = nearest(type, ROUTE_ACTOR_TYPES[route]);
  return {
    path: ["actors", 0, "type"],
    message: `\`${type}\` is not a ${route} participant${hint ? ` (did you mean \`${hint}\`?)` : ""}; use ${ROUTE_ACTOR_TYPES[route].join(" or ")}`,
  };
}

/** The problem of an `execution.target` of the other route (a route-specific message), if any. */
export function targetProblem(root: Record<string, unknown>, route: LabBackend): Problem | undefined {
  const execution = root.execution;
  if (!isMapping(execution) || typeof execution.target !== "string") return undefined;
  const targets = route === "terminal" ? ["docker", "e2b-terminal"] : ["local", "e2b-desktop"];
  const otherTargets = route === "terminal" ? ["local", "e2b-desktop"] : ["docker", "e2b-terminal"];
  if (!otherTargets.includes(execution.target)) return undefined;
  return {
    path: ["execution", "target"],
    message: `\`${execution.target}\` cannot act on subject.source ${ROUTE_SOURCES[route]}; use ${targets.join(" or ")}`,
  };
}

/** The first key of `obj` outside `known` as an unknown-key problem (or a foreign-key one), if any. */
export function unknownKeyProblem(
  obj: Record<string, unknown>,
  path: PropertyKey[],
  known: readonly string[],
  foreign: Readonly<Record<string, string>>,
): Problem | undefined {
  const key = Object.keys(obj).find((k) => !known.includes(k));
  if (key === undefined) return undefined;
  if (key in foreign) return { path, key, message: `${foreign[key]}; remove it`, unknownKey: true };
  return { path, key, message: unknownKeyText(key, known), unknownKey: true };
}

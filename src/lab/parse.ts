/**
 * `parseLab`: YAML text → a validated, normalised {@link LabConfig} plus warnings, or the first
 * problem as `HUMANISH_LAB_INVALID` naming the field path and its line; route-specific
 * cross-validation, and warnings for accepted fields that do not act yet.
 *
 * Order of checks: strict YAML → top-level shape and `schema` → unknown top-level keys → route
 * from `subject.source` → actor type and count → route schema (strict, no coercion) →
 * scripted-browser steps → cross-validation → normalisation → warnings. The first failing rule
 * wins (unknown keys before the "required" problems they cause).
 */
import type { z } from "zod";
import { findActor } from "../actor-registry/registry.ts";
import { errorMessage } from "../errors.ts";
import { parseBrowserSteps } from "./browser-steps.ts";
import { formatPath, type Problem, problemFromZod, renderFirstProblem } from "./issues.ts";
import { actorProblem, isMapping, rootProblem, routeOf, targetProblem } from "./route-gate.ts";
import { ROUTE_ACTOR_TYPES } from "./routing.ts";
import {
  type BrowserLabConfig,
  BrowserLabSchema,
  DEVICE_PRESETS,
  LAB_SCHEMA_ID,
  type LabConfig,
  type LabWarning,
  type TerminalLabConfig,
  TerminalLabSchema,
} from "./schema.ts";
import { browserSeatDevices, isDevicePair, type SeatDeclaration, seatProblems } from "./seats.ts";
import { loadStrictYaml, type StrictYaml } from "./yaml.ts";

/** Largest lab accepted, in UTF-8 bytes (1 MiB); a file is refused by its size before it is read. */
export const MAX_LAB_BYTES = 1_048_576;

/** The result of {@link parseLab}. */
export type ParseLabResult = { ok: true; config: LabConfig; warnings: LabWarning[] } | { ok: false; error: { code: "HUMANISH_LAB_INVALID"; message: string } };

/** Options of {@link parseLab}. */
export interface ParseLabOptions {
  /** Shown before `:line:col` in messages (a path or `embedded:<id>`); default `lab`. */
  source?: string;
  /**
   * `lab run --count N`: run N seats instead of the lab's own `actors[0].count` (checked like
   * the key itself, 1–16). A lab that names its seats with `lanes` or `roster` is refused.
   */
  seatCount?: number;
}

/**
 * Parses and validates a lab manifest. Never throws for bad input: every problem is returned
 * as `{ok: false, error: {code: "HUMANISH_LAB_INVALID", message}}` where the message starts
 * with `<source>:<line>:<col>:` and names the field path (e.g. `actors[0].tasks[1].check.run`).
 */
export function parseLab(yamlText: string, opts: ParseLabOptions = {}): ParseLabResult {
  const source = opts.source ?? "lab";
  try {
    return parseInner(yamlText, source, opts.seatCount);
  } catch (e) {
    // A bug in a validator must not escape as a throw; it is still a refusal of this input.
    return invalid(`${source}: the lab could not be validated (${errorMessage(e)})`);
  }
}

function invalid(message: string): ParseLabResult {
  return { ok: false, error: { code: "HUMANISH_LAB_INVALID", message } };
}

/**
 * The refusal of a lab text before YAML is read: not a string, over {@link MAX_LAB_BYTES} UTF-8
 * bytes, or holding a NUL byte. Undefined to proceed.
 */
function textRefusal(text: string, source: string): string | undefined {
  if (typeof text !== "string") return `${source}: the lab text must be a string`;
  // Every UTF-16 unit is at least one UTF-8 byte, so a string far past the bound in units is
  // refused without measuring all of it.
  const measured = text.length <= 4 * MAX_LAB_BYTES;
  const bytes = measured ? Buffer.byteLength(text, "utf8") : text.length;
  if (bytes > MAX_LAB_BYTES) {
    return `${source}: the lab is ${measured ? "" : "at least "}${bytes} bytes; a lab may be at most ${MAX_LAB_BYTES} bytes (1 MiB)`;
  }
  if (text.includes("\u0000")) return `${source}: the lab contains a NUL byte; it must be UTF-8 YAML text`;
  return undefined;
}

/**
 * `--count N` in place of `actors[0].count`: written into `root` before validation, so it meets
 * exactly the key's own rules. Returns the refusal when the lab names its seats (`lanes` or
 * `roster`), else undefined.
 */
function applySeatCount(root: Record<string, unknown>, seatCount: number, source: string): string | undefined {
  const a = rawActor(root);
  const named = (["lanes", "roster"] as const).find((k) => a[k] !== undefined);
  if (named) return `${source}: --count cannot override actors[0].${named}: this lab names its seats; remove --count or edit the lab`;
  (root.actors as unknown[])[0] = { ...a, count: seatCount };
  return undefined;
}

/** {@link parseLab} without its guard against a throwing validator (see the module doc for the order of checks). */
function parseInner(text: string, source: string, seatCount?: number): ParseLabResult {
  const refused = textRefusal(text, source);
  if (refused) return invalid(refused);
  const loaded = loadStrictYaml(text);
  if (!loaded.ok) return invalid(`${source}:${loaded.problem.message}`);
  const yaml = loaded.yaml;
  const root = yaml.value;
  const fail = (problems: Problem[]) => invalid(renderFirstProblem(problems, yaml, source));
  if (root === null || root === undefined) return invalid(`${source}:1:1: the lab is empty (expected a mapping starting with \`schema: ${LAB_SCHEMA_ID}\`)`);
  if (!isMapping(root)) return fail([{ path: [], message: `must be a mapping (got ${Array.isArray(root) ? "a list" : typeof root})` }]);
  const bad = rootProblem(root);
  if (bad) return fail([bad]);
  const route = routeOf(root);
  if (typeof route !== "string") return fail([route]);
  const gated = actorProblem(root, route) ?? targetProblem(root, route);
  if (gated) return fail([gated]);
  if (seatCount !== undefined) {
    const countRefused = applySeatCount(root, seatCount, source);
    if (countRefused) return invalid(countRefused);
  }
  const r = route === "terminal" ? parseTerminal(root, yaml, fail) : parseBrowser(root, yaml, fail);
  if (r.ok && seatCount !== undefined) {
    r.warnings.push({
      code: "HUMANISH_LAB_COUNT_OVERRIDDEN",
      path: "actors[0].count",
      message: `actors[0].count is ${seatCount} from --count (the lab file is unchanged)`,
    });
  }
  return r;
}

type Fail = (problems: Problem[]) => ParseLabResult;

function zodProblems(err: z.ZodError, yaml: StrictYaml): Problem[] {
  return err.issues.map((i) => problemFromZod(i, yaml));
}

// ---------------------------------------------------------------------------------------------
// Terminal

function parseTerminal(root: Record<string, unknown>, yaml: StrictYaml, fail: Fail): ParseLabResult {
  const parsed = TerminalLabSchema.safeParse(root, { reportInput: true });
  if (!parsed.success) return fail(zodProblems(parsed.error, yaml));
  const lab = parsed.data;
  const actor = lab.actors[0]!;
  const problems: Problem[] = [];

  taskIdProblems(actor.tasks ?? [], problems);
  problems.push(...seatProblems(rawActor(root), actor, "terminal"));

  const ex = lab.execution;
  const install = lab.subject.product.install ?? [];
  if (actor.type === "scripted-terminal") {
    if (ex.runtime !== undefined)
      problems.push({ path: ["execution", "runtime"], message: "only acts on a codex-exec participant (it pins the Codex CLI version); remove it" });
    if (ex.runtimeAuth !== undefined)
      problems.push({ path: ["execution", "runtimeAuth"], message: "only acts on a codex-exec participant (a scripted participant uses no key); remove it" });
  } else if (actor.mission === undefined && actor.tasks === undefined) {
    problems.push({ path: ["actors", 0], message: "needs a `mission` or `tasks`: the codex-exec participant's brief would be empty" });
  } else {
    const unchecked = goalCheckProblem(actor);
    if (unchecked) problems.push(unchecked);
  }
  if (ex.target === "e2b-terminal") {
    if (ex.image !== undefined)
      problems.push({ path: ["execution", "image"], message: "only acts on target docker (E2B sandboxes use their own template); remove it" });
    if (ex.network !== undefined) problems.push({ path: ["execution", "network"], message: "only acts on target docker; remove it" });
    if (ex.limits !== undefined)
      problems.push({ path: ["execution", "limits"], message: "only acts on target docker (the Docker sandbox's disk bound); remove it" });
  } else {
    if (ex.egressAllow !== undefined)
      problems.push({ path: ["execution", "egressAllow"], message: "only acts on target e2b-terminal (on docker, execution.network decides); remove it" });
    if (ex.template !== undefined)
      problems.push({ path: ["execution", "template"], message: "only acts on target e2b-terminal (on docker, execution.image decides); remove it" });
  }
  if (ex.network === "bridge" && actor.type === "scripted-terminal" && install.length === 0) {
    problems.push({
      path: ["execution", "network"],
      message:
        "is bridge but nothing in this lab uses the network: bridge is only accepted with subject.product.install commands (or a codex-exec participant); use none or remove it",
    });
  }
  if (ex.network === "none" && actor.type === "codex-exec") {
    problems.push({
      path: ["execution", "network"],
      message: "is none, but a codex-exec participant must download the Codex CLI and reach the model API; use bridge or remove it",
    });
  }
  if (problems.length) return fail(problems);

  const network: "none" | "bridge" = ex.network ?? (actor.type === "codex-exec" ? "bridge" : "none");
  const config: TerminalLabConfig = {
    ...lab,
    execution: { ...ex, network },
    actors: [actor],
  };

  const warnings: LabWarning[] = [];
  if (ex.timeoutMs !== undefined) {
    warnings.push(inert("execution.timeoutMs", "is accepted but not consumed on the terminal route; the participant's deadline is scenario.caps.maxMinutes"));
  }
  if (actor.type === "scripted-terminal") scriptedInert(actor, warnings);
  policyWarnings(config, warnings);
  return { ok: true, config, warnings };
}

// ---------------------------------------------------------------------------------------------
// Browser

function parseBrowser(root: Record<string, unknown>, yaml: StrictYaml, fail: Fail): ParseLabResult {
  const parsed = BrowserLabSchema.safeParse(root, { reportInput: true });
  if (!parsed.success) return fail(zodProblems(parsed.error, yaml));
  const lab = parsed.data;
  const raw = lab.actors[0]!;
  const problems: Problem[] = [];
  taskIdProblems(raw.tasks ?? [], problems);
  problems.push(...seatProblems(rawActor(root), raw, "browser"));

  let config: BrowserLabConfig;
  if (raw.type === "scripted-browser") {
    const steps = parseBrowserSteps(raw.steps, yaml, problems);
    // Coordinates must fall inside every device frame the same steps run on.
    for (const [i, step] of steps.entries()) {
      if (step.kind !== "click" && step.kind !== "scroll") continue;
      if (step.x === undefined || step.y === undefined) continue;
      for (const name of new Set(browserSeatDevices(raw).map((d) => d.name))) {
        const d = DEVICE_PRESETS[name];
        if (step.x >= d.width || step.y >= d.height) {
          problems.push({
            path: ["actors", 0, "steps", i, step.kind],
            message: `(${step.x}, ${step.y}) is outside the ${name} frame ${d.width}×${d.height}${isDevicePair(raw) ? " (count 2 runs the same steps on desktop and mobile)" : " (every seat runs the same steps)"}`,
          });
          break;
        }
      }
    }
    config = { ...lab, actors: [{ ...raw, steps }] };
  } else {
    if (raw.mission === undefined && raw.tasks === undefined) {
      problems.push({ path: ["actors", 0], message: `needs a \`mission\` or \`tasks\`: the ${raw.type} participant's brief would be empty` });
    } else {
      const unchecked = goalCheckProblem(raw);
      if (unchecked) problems.push(unchecked);
    }
    config = { ...lab, actors: [raw] };
  }
  catalogProblems(lab, problems);
  if (lab.execution.target === "local") {
    if (/^https:/i.test(lab.subject.appUrl))
      problems.push({
        path: ["subject", "appUrl"],
        message: "must be a loopback URL on execution.target local; a public https URL only acts on execution.target e2b-desktop",
      });
    if (lab.execution.template !== undefined)
      problems.push({ path: ["execution", "template"], message: "only acts on execution.target e2b-desktop (the E2B desktop template); remove it" });
  } else e2bDesktopSubjectProblems(lab, problems);
  if (problems.length) return fail(problems);

  const warnings: LabWarning[] = [];
  const actor = config.actors[0];
  if (actor.type === "scripted-browser") scriptedInert(actor, warnings);
  if (isDevicePair(actor)) {
    warnings.push({
      code: "HUMANISH_LAB_COUNT_DEVICES",
      path: "actors[0].count",
      message:
        "actors[0].count: 2 without lanes runs one desktop and one mobile seat (the browser route's older meaning); name lanes with a device for other mixes",
    });
  }
  if (lab.scenario.caps?.maxJobs !== undefined) {
    warnings.push(inert("scenario.caps.maxJobs", "is accepted but not consumed on the browser route (no billable jobs are counted there)"));
  }
  policyWarnings(config, warnings);
  return { ok: true, config, warnings };
}

/** Why an actor runs only on some targets, by where its participant lives. */
const TARGET_REASON: Readonly<Record<string, string>> = {
  local: "it runs on this machine's guest desktop",
};

/**
 * What the actor registry says a browser actor supports: the targets it runs on, and the caps it
 * can enforce. A USD cap an actor cannot price (`account-unknown`) is refused rather than
 * silently ignored, and so is a token cap an actor does not count.
 */
function catalogProblems(lab: z.output<typeof BrowserLabSchema>, problems: Problem[]): void {
  const d = findActor(lab.actors[0]!.type);
  if (!d) return;
  if (!d.targets.includes(lab.execution.target)) {
    const only = d.targets.length === 1 ? TARGET_REASON[d.targets[0]!] : undefined;
    problems.push({
      path: ["execution", "target"],
      message: `must be ${d.targets.join(" or ")} for a ${d.type} participant${only ? ` (${only})` : ""}`,
    });
  }
  const caps = lab.scenario.caps;
  for (const cap of ["maxUsd", "maxTotalUsd"] as const) {
    if (caps?.[cap] !== undefined && d.pricing === "account-unknown")
      problems.push({
        path: ["scenario", "caps", cap],
        message: `is refused with a ${d.type} participant: its billing is account-unknown, so a USD cap cannot be enforced; remove it (maxMinutes bounds each seat's time)`,
      });
  }
  for (const cap of ["maxTokens", "maxTotalTokens"] as const) {
    if (caps?.[cap] !== undefined && !d.capUnits.includes("tokens"))
      problems.push({
        path: ["scenario", "caps", cap],
        message: `only acts on a participant that counts its model's tokens (${tokenCountingActors()}); a ${d.type} participant does not; remove it`,
      });
  }
}

/** The browser actor types that enforce a token cap, for messages. */
function tokenCountingActors(): string {
  return ROUTE_ACTOR_TYPES.browser.filter((t) => findActor(t)?.capUnits.includes("tokens")).join(", ") || "none";
}

/**
 * An E2B desktop runs on E2B's machines: it reaches a public https URL, or an app the lab serves
 * inside the desktop (`serve.static`, on the lab's loopback appUrl there). A loopback URL of this
 * machine, or a process started here (`serve.command`), is unreachable and refused.
 */
function e2bDesktopSubjectProblems(lab: z.output<typeof BrowserLabSchema>, problems: Problem[]): void {
  // Another participant type is refused on this target by its own rule; its placement is moot.
  if (!findActor(lab.actors[0]?.type ?? "")?.targets.includes("e2b-desktop")) return;
  const serve = lab.subject.serve;
  const https = /^https:/i.test(lab.subject.appUrl);
  if (serve?.command !== undefined)
    problems.push({
      path: ["subject", "serve", "command"],
      message:
        "starts a process on this machine, which an E2B desktop cannot reach; use serve.static (the lab serves the files inside the desktop) or a public https URL",
    });
  else if (https && serve?.static)
    problems.push({
      path: ["subject", "serve", "static"],
      message: "serves the app inside the desktop on the lab's loopback appUrl; set appUrl to http://127.0.0.1:<port>/, or remove serve for a public https URL",
    });
  else if (!https && !serve?.static)
    problems.push({
      path: ["subject", "appUrl"],
      message:
        "is a loopback address of this machine, which an E2B desktop cannot reach: use a public https:// URL, or add subject.serve.static (an embedded app such as embedded:todomvc-vanillajs, or a project directory) so the lab serves the app inside the desktop",
    });
}

// ---------------------------------------------------------------------------------------------
// Shared checks and warnings

/**
 * A model participant (codex-exec, openai-computer-use, local-agent) needs a hidden check, in
 * every mode: its own verdict is a claim, never success, so a lab without one could never
 * report a seat that reached the goal. The check is `tasks` (each with a hidden `check`), or —
 * for a computer-use model — a `stopWhen` rule observed on the page. Scripted participants
 * claim nothing; without tasks their seats simply cannot reach the goal.
 */
function goalCheckProblem(actor: { type: string; tasks?: readonly unknown[]; stopWhen?: unknown }): Problem | undefined {
  if (actor.tasks?.length) return undefined;
  const d = findActor(actor.type);
  if (!d?.modelParticipant) return undefined;
  // An actor that stops on a page rule may use it as the check instead.
  if (d.stopWhen) {
    if (actor.stopWhen !== undefined) return undefined;
    return {
      path: ["actors", 0],
      message: `has no hidden check: add actors[0].tasks (each a goal with a hidden check) or actors[0].stopWhen (a rule observed on the page); a ${actor.type} model's own word is a claim, never success`,
    };
  }
  return {
    path: ["actors", 0],
    message: `has no hidden check: add actors[0].tasks (each a goal with a hidden check); a ${actor.type} participant's own verdict is a claim, never success`,
  };
}

/** The actor mapping as written (before defaults), which says whether `count` was given at all. */
function rawActor(root: Record<string, unknown>): Record<string, unknown> {
  const a = (root.actors as unknown[])[0];
  return isMapping(a) ? a : {};
}

function taskIdProblems(tasks: readonly { id: string }[], problems: Problem[]): void {
  const seen = new Map<string, number>();
  tasks.forEach((t, i) => {
    const prior = seen.get(t.id);
    if (prior !== undefined)
      problems.push({ path: ["actors", 0, "tasks", i, "id"], message: `\`${t.id}\` repeats actors[0].tasks[${prior}].id; task ids must be unique` });
    else seen.set(t.id, i);
  });
}

function inert(path: string, what: string): LabWarning {
  return { code: "HUMANISH_LAB_FIELD_INERT", path, message: `${path} ${what}` };
}

function scriptedInert(actor: { persona?: string; mission?: string } & SeatDeclaration, warnings: LabWarning[]): void {
  for (const f of ["persona", "mission"] as const) {
    if (actor[f] !== undefined)
      warnings.push(inert(`actors[0].${f}`, "is recorded but not consumed: a scripted participant follows its steps and reads no brief"));
  }
  const key = actor.lanes ? "lanes" : "roster";
  (actor.lanes ?? actor.roster ?? []).forEach((e, i) => {
    if (e.instruction !== undefined)
      warnings.push(inert(`actors[0].${key}[${i}].instruction`, "is recorded but not consumed: a scripted participant follows its steps and reads no brief"));
  });
}

function policyWarnings(config: LabConfig, warnings: LabWarning[]): void {
  for (const [k, v] of Object.entries(config.policies)) {
    if (v === true) {
      warnings.push({
        code: "HUMANISH_LAB_POLICY_DECLARATION_ONLY",
        path: `policies.${k}`,
        message: `policies.${k}: true is recorded as a declaration only; humanish has no channel that gives a participant these credentials`,
      });
    }
  }
}

/** Exposed for tests and tools: the path formatter used in messages. */
export { formatPath };

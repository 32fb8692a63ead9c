/**
 * Pieces the browser study tests share (local guest and E2B desktop): the TodoMVC study's hidden
 * tasks, one builder of a live lab over a statically served app (and its TodoMVC form for a
 * model-driven actor), and a recursive listing of a run bundle's files.
 */
import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { type LabConfig, parseLab } from "../../src/lab/index.ts";
import { TODO_TASKS_YAML } from "./fake-openai/computer-use.ts";

/** The TodoMVC study's hidden tasks as a lab's `tasks:` block (one definition, beside the fake model's session that solves them). */
export { TODO_TASKS_YAML };

/** What {@link todoMvcLab} writes. */
export interface TodoMvcLabOptions {
  id: string;
  /** Port of the served TodoMVC app on 127.0.0.1. */
  port: number;
  /** The actor's lines after `  - type: …` (its model, mission, seats), each indented four spaces. */
  actor: string;
  /** The hidden tasks block (absent: {@link TODO_TASKS_YAML}). */
  tasks?: string;
  /** The lines under `scenario.caps`, each indented four spaces. */
  caps: string;
}

/**
 * A parsed live `humanish.lab.v2` over the app that static `root` serves on 127.0.0.1:`port`,
 * with one actor entry of `type` whose remaining keys are `actor` (YAML, indented four spaces)
 * and, when given, the lines under `scenario.caps` (indented four spaces).
 * @throws Error with the parser's message when the lab does not parse.
 */
export function servedAppLab(o: { id: string; port: number; root: string; type: string; actor: string; caps?: string }): LabConfig {
  const parsed = parseLab(`schema: humanish.lab.v2
id: ${o.id}
subject:
  source: app-url
  appUrl: http://127.0.0.1:${o.port}/
  serve:
    static:
      root: ${o.root}
actors:
  - type: ${o.type}
${o.actor}
scenario:
  mode: live
${o.caps !== undefined ? `  caps:\n${o.caps}\n` : ""}`);
  if (!parsed.ok) throw new Error(parsed.error.message);
  return parsed.config;
}

/**
 * A parsed live lab over the TodoMVC app that `node_modules/todomvc` serves on `port`, with one
 * actor entry of `type` and the TodoMVC hidden tasks (or `o.tasks`).
 * @throws Error with the parser's message when the lab does not parse.
 */
export function todoMvcLab(type: string, o: TodoMvcLabOptions): LabConfig {
  const actor = `${o.actor}\n${o.tasks ?? TODO_TASKS_YAML}`;
  return servedAppLab({ id: o.id, port: o.port, root: "node_modules/todomvc/examples/vanillajs", type, actor, caps: o.caps });
}

/** Every file under `dir`, recursively (absolute paths). */
export function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((f) => (statSync(join(dir, f)).isDirectory() ? filesUnder(join(dir, f)) : [join(dir, f)]));
}

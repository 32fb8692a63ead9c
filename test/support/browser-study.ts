/**
 * Pieces the browser study tests share (local guest and E2B desktop): the TodoMVC study's hidden
 * tasks, one builder of a live TodoMVC lab for a model-driven actor, and a recursive listing of a
 * run bundle's files.
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
 * A parsed live `humanish.lab.v2` over the TodoMVC app that `node_modules/todomvc` serves on
 * `port`, with one actor entry of `type`.
 * @throws Error with the parser's message when the lab does not parse.
 */
export function todoMvcLab(type: string, o: TodoMvcLabOptions): LabConfig {
  const parsed = parseLab(`schema: humanish.lab.v2
id: ${o.id}
subject:
  source: app-url
  appUrl: http://127.0.0.1:${o.port}/
  serve:
    static:
      root: node_modules/todomvc/examples/vanillajs
actors:
  - type: ${type}
${o.actor}
${o.tasks ?? TODO_TASKS_YAML}
scenario:
  mode: live
  caps:
${o.caps}
`);
  if (!parsed.ok) throw new Error(parsed.error.message);
  return parsed.config;
}

/** Every file under `dir`, recursively (absolute paths). */
export function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((f) => (statSync(join(dir, f)).isDirectory() ? filesUnder(join(dir, f)) : [join(dir, f)]));
}

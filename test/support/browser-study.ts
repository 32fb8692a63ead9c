/**
 * Pieces the browser study tests share (local guest and E2B desktop): the TodoMVC study's hidden
 * tasks and a recursive listing of a run bundle's files.
 */
import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";

/**
 * The TodoMVC study's hidden tasks (add two todos, complete one, clear it), indented to sit under
 * an actor entry (`  - type: …`) of a lab file.
 */
export const TODO_TASKS_YAML = `    tasks:
      - id: add-two-todos
        goal: Add two todos, "Buy milk" and "Walk the dog".
        check:
          textIncludes: [Buy milk, Walk the dog, 2 items left]
      - id: complete-one
        goal: Mark "Buy milk" as completed.
        check:
          textIncludes: [Walk the dog, 1 item left, Clear completed (1)]
      - id: clear-completed
        goal: Clear the completed todo so that only "Walk the dog" is left.
        check:
          textIncludes: [Walk the dog, 1 item left]
          textExcludes: [Buy milk, Clear completed (1)]`;

/** Every file under `dir`, recursively (absolute paths). */
export function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((f) => (statSync(join(dir, f)).isDirectory() ? filesUnder(join(dir, f)) : [join(dir, f)]));
}

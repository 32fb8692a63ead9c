/**
 * The part of a participant's brief that comes from the lab's tasks: only the goals, numbered, under "Work through these in order:". Hidden checks never
 * appear here — this is the one place routes take task text from for a brief.
 */
import type { LabConfig } from "./schema.ts";

/** The goals of `config`'s tasks as brief text, or undefined when the lab has no tasks. */
export function taskGoalsBrief(config: LabConfig): string | undefined {
  const tasks = config.actors[0].tasks;
  if (!tasks || tasks.length === 0) return undefined;
  return ["Work through these in order:", ...tasks.map((t, i) => `${i + 1}. ${t.goal}`)].join("\n");
}

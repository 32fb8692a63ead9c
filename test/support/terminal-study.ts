/**
 * A scripted terminal study as the real-Docker tests and benches set one up: a coreutils lab
 * with scripted steps and hidden checks (no install, no model), and one live study run through
 * the terminal route that must end in a verified bundle.
 */
import { runTerminalStudy } from "../../src/routes/terminal/index.ts";
import type { SandboxProvider } from "../../src/sandbox/types.ts";
import { labFromText, studyContext } from "../routes/terminal/support.ts";

/** One hidden check of the lab: a task id, its goal, and the shell test that decides it. */
export interface LabTask {
  id: string;
  goal: string;
  run: string;
}

/** The task most terminal studies check: the participant created `done.txt`. */
export const MADE_FILE: LabTask = { id: "made-file", goal: "Create done.txt.", run: "test -e done.txt" };

/** What {@link scriptedTerminalLab} writes. */
export interface ScriptedTerminalLabOptions {
  id: string;
  /** The lab's `title` (absent: none). */
  title?: string;
  /** Shell commands, one scripted step each, in order. */
  steps: readonly string[];
  /** Seats of the actor (absent: the lab's default of one). */
  count?: number;
  /** `execution.concurrency` (absent: the lab's default). */
  concurrency?: number;
  /** The hidden checks (absent: {@link MADE_FILE}). */
  tasks?: readonly LabTask[];
  /** `scenario.caps.maxMinutes` (absent: 5). */
  maxMinutes?: number;
}

/** `humanish.lab.v2` YAML text of a live scripted-terminal study over coreutils, with a zero USD cap. */
export function scriptedTerminalLab(o: ScriptedTerminalLabOptions): string {
  const tasks = o.tasks ?? [MADE_FILE];
  return `schema: humanish.lab.v2
id: ${o.id}
${o.title !== undefined ? `title: ${JSON.stringify(o.title)}\n` : ""}subject:
  source: terminal-product
  product:
    name: coreutils
    publicSurfaces: ["https://www.gnu.org/software/coreutils/"]
actors:
  - type: scripted-terminal
${o.count !== undefined ? `    count: ${o.count}\n` : ""}    tasks:
${tasks.map((t) => `      - id: ${t.id}\n        goal: ${JSON.stringify(t.goal)}\n        check: {run: ${JSON.stringify(t.run)}}`).join("\n")}
    steps:
${o.steps.map((s) => `      - run: ${JSON.stringify(s)}`).join("\n")}
${o.concurrency !== undefined ? `execution:\n  concurrency: ${o.concurrency}\n` : ""}scenario:
  mode: live
  caps: {maxUsd: 0, maxMinutes: ${o.maxMinutes ?? 5}}
`;
}

/**
 * Runs the lab `text` live as run `runId` in project `dir` (with `env` as the host environment
 * and `sandboxProvider` for its sandboxes when given) and returns the route's result.
 * @throws Error when the study did not end in a verified bundle, with the route's error or verdict.
 */
export async function verifiedTerminalStudy(o: {
  dir: string;
  text: string;
  runId: string;
  env?: Record<string, string | undefined>;
  /** The sandboxes' provider (absent: the route's own Docker provider). */
  sandboxProvider?: SandboxProvider;
}) {
  const r = await runTerminalStudy(
    studyContext({ cwd: o.dir, lab: labFromText(o.text), text: o.text, runId: o.runId, mode: "live", ...(o.env ? { env: o.env } : {}) }),
    o.sandboxProvider ? { sandboxProvider: o.sandboxProvider } : {},
  );
  if (r.error || !r.verify.ok) throw new Error(`study ${o.runId} did not produce a verified bundle: ${JSON.stringify(r.error ?? r.verify)}`);
  return r;
}

/**
 * The lab manifest schema `humanish.lab.v2`: zod schemas for the two routes humanish runs, and the TypeScript types every
 * other layer imports. This module gathers the shared, terminal and browser parts.
 *
 * Every object is strict: an unknown key is rejected with the nearest known key, and a key that
 * belongs to the other route is rejected as "cannot act here". Nothing is coerced: `"true"` is
 * not a boolean, `1.10` is the number 1.1 and never the string "1.10".
 *
 * Two routes (ARCHITECTURE.md "Routes and targets"):
 * - terminal: `subject.source: terminal-product`, actors `scripted-terminal` | `codex-exec`,
 *   `execution.target: docker` (default) | `e2b-terminal`.
 * - browser: `subject.source: app-url` (loopback only), actors `scripted-browser` |
 *   `openai-computer-use`, `execution.target: local` (default) | `e2b-desktop`.
 */
import type { BrowserLabConfig, BrowserTask } from "./schema-browser.ts";
import type { TerminalLabConfig, TerminalTask } from "./schema-terminal.ts";

export * from "./schema-browser.ts";
export {
  type AnalysisConfig,
  type Caps,
  CapsSchema,
  isContainedRelativePath,
  LAB_ID_PATTERN,
  LAB_SCHEMA_ID,
  type LabWarning,
  LabWarningSchema,
  LaneSchema,
  loopbackUrlProblem,
  MAX_SEATS,
  type Policies,
  PoliciesSchema,
  RosterSchema,
  type Scenario,
  ScenarioSchema,
  TASK_ID_PATTERN,
} from "./schema-common.ts";
export * from "./schema-terminal.ts";

/** Any task: `{id, goal, check}`; the check shape depends on the route. */
export type LabTask = TerminalTask | BrowserTask;

/** A validated, normalised lab. Narrow with `isTerminalLab`/`isBrowserLab` or `subject.source`. */
export type LabConfig = TerminalLabConfig | BrowserLabConfig;

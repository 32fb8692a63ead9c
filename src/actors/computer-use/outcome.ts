/**
 * Pieces of the computer-use participant's outcome that need no I/O: the declared outcome of a
 * final message, `stopWhen` rules, the task funnel and the closing-account report check.
 */
import type { BrowserCheck, ObservationRecord } from "../scripted-browser/index.ts";
import { evaluateCheck } from "../scripted-browser/index.ts";

/** What the model said about its own result (recorded, never trusted as success). */
export type DeclaredOutcome = "reached" | "not_reached" | "blocked";

/**
 * The declared outcome of a final message: its first non-empty line, read as "did not reach /
 * not reached / could not", "blocked", or "reached / done / completed". Undefined otherwise.
 */
export function declaredOutcome(message: string | undefined): DeclaredOutcome | undefined {
  const line = message
    ?.split("\n")
    .map((l) => l.trim())
    .find((l) => l.length > 0)
    ?.toLowerCase();
  if (!line) return undefined;
  if (/\b(did not|didn't|could not|couldn't|not) (reach|complete|finish)|\bnot reached\b|\bgave up\b/.test(line)) return "not_reached";
  if (/\bblocked\b/.test(line)) return "blocked";
  if (/\b(reached|done|completed|finished|succeeded)\b/.test(line)) return "reached";
  return undefined;
}

/**
 * The claim a declared outcome makes, in the bundle's words: `reached` → `passed`, `blocked` →
 * `blocked`, `not_reached` → `failed`, nothing declared → `none`. A claim is kept as evidence of
 * what the participant believed; the hidden checks alone decide whether it reached the goal.
 */
export function claimOf(declared: DeclaredOutcome | undefined): "passed" | "blocked" | "failed" | "none" {
  return declared === "reached" ? "passed" : declared === "blocked" ? "blocked" : declared === "not_reached" ? "failed" : "none";
}

/** One `stopWhen` rule: all present conditions must hold on one observation of the app origin. */
export interface StopRule {
  id?: string;
  urlIncludes?: string;
  urlPathEquals?: string;
  textIncludes?: string[];
}

/** `stopWhen: {any: [...]}`. */
export interface StopWhen {
  any: StopRule[];
}

/** Index of the first rule `o` matches (on `origin` only), or -1. */
export function matchStopWhen(rules: StopWhen | undefined, o: ObservationRecord, origin: string): number {
  if (!rules) return -1;
  return rules.any.findIndex((r) => {
    const check: BrowserCheck = {
      ...(r.urlIncludes !== undefined ? { urlIncludes: r.urlIncludes } : {}),
      ...(r.urlPathEquals !== undefined ? { urlPathEquals: r.urlPathEquals } : {}),
      ...(r.textIncludes !== undefined ? { textIncludes: r.textIncludes } : {}),
    };
    return evaluateCheck(check, [o], origin) === 0;
  });
}

/**
 * `stopWhen` as the hidden check of a lab without tasks: whether any rule matched any of the
 * seat's observations of `origin` (the same observations the task checks read), and which.
 */
export function stopWhenObservation(rules: StopWhen, observations: readonly ObservationRecord[], origin: string): { matched: boolean; detail: string } {
  for (const [n, o] of observations.entries()) {
    const i = matchStopWhen(rules, o, origin);
    if (i >= 0) return { matched: true, detail: `stopWhen rule ${rules.any[i]?.id ?? i + 1} matched observation ${n + 1} of ${observations.length}` };
  }
  return { matched: false, detail: `no stopWhen rule matched any of ${observations.length} observation(s) of ${origin}` };
}

/** A task as the loop sees it (goal for the brief, check hidden from the model). */
export interface LoopTask {
  id: string;
  goal: string;
  check: BrowserCheck;
}

/** `humanish.task-funnel.v1`: which hidden checks an observation of the app origin satisfied. */
export interface TaskFunnel {
  schema: "humanish.task-funnel.v1";
  total: number;
  completed: number;
  /** First task not completed, in declared order. */
  stoppedAt?: string;
  tasks: { id: string; completed: boolean; observation?: number }[];
}

/** The funnel over every observation the seat made. */
export function taskFunnel(tasks: readonly LoopTask[], observations: readonly ObservationRecord[], origin: string): TaskFunnel {
  const rows = tasks.map((t) => {
    const hit = evaluateCheck(t.check, observations, origin);
    return hit >= 0 ? { id: t.id, completed: true, observation: hit + 1 } : { id: t.id, completed: false };
  });
  const first = rows.find((r) => !r.completed);
  return {
    schema: "humanish.task-funnel.v1",
    total: rows.length,
    completed: rows.filter((r) => r.completed).length,
    ...(first ? { stoppedAt: first.id } : {}),
    tasks: rows,
  };
}

/** A valid closing account. */
export interface ClosingReport {
  summary: string;
  frictionReports: string[];
}

/** The name and JSON schema of the answer the closing-account request asks for (held strictly). */
export const CLOSING_REPORT_FORMAT = {
  name: "participant_closing_report",
  schema: {
    type: "object",
    additionalProperties: false,
    required: ["summary", "frictionReports"],
    properties: {
      summary: { type: "string" },
      frictionReports: { type: "array", items: { type: "string" }, maxItems: 8 },
    },
  },
} as const;

/**
 * Reads a closing account: exactly the keys `summary` (non-blank, ≤ 4000 chars) and
 * `frictionReports` (≤ 8 non-blank strings of ≤ 2000 chars). Returns the report or why not.
 */
export function parseClosingReport(text: string | undefined): ClosingReport | string {
  if (!text) return "the reply carried no message";
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return "the reply is not JSON";
  }
  if (!v || typeof v !== "object" || Array.isArray(v)) return "the reply is not a JSON object";
  const o = v as Record<string, unknown>;
  const keys = Object.keys(o).sort();
  if (keys.length !== 2 || keys[0] !== "frictionReports" || keys[1] !== "summary") return "the reply must have exactly summary and frictionReports";
  if (typeof o.summary !== "string" || !o.summary.trim() || o.summary.length > 4000) return "summary must be non-blank text of at most 4000 characters";
  const f = o.frictionReports;
  if (!Array.isArray(f) || f.length > 8 || !f.every((x) => typeof x === "string" && x.trim().length > 0 && x.length <= 2000))
    return "frictionReports must be at most 8 non-blank strings of at most 2000 characters";
  return { summary: o.summary, frictionReports: f as string[] };
}

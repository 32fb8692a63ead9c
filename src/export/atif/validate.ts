/**
 * Our own ATIF validator. Pure. It never stops at the first problem: the shape errors zod finds
 * and the rules a schema cannot state are all collected, each with a JSON path, so a producer
 * sees everything wrong with a trajectory in one pass.
 *
 * Rules beyond the shape: `step_id`s run 1, 2, 3… in order; every `tool_call_id` is unique in
 * the trajectory; every observation result's `source_call_id` names a tool call of the same
 * step; timestamps are ISO 8601; the agent-only fields (`model_name`, `reasoning_effort`,
 * `reasoning_content`, `tool_calls`, `metrics`) appear on agent steps only.
 */
import type { z } from "zod";
import { type AtifTrajectory, AtifTrajectorySchema } from "./schema.ts";

/** What kind of rule an error breaks. */
export type AtifErrorCode = "shape" | "timestamp" | "step_id_sequence" | "duplicate_tool_call_id" | "unresolved_source_call_id" | "agent_only_field";

/** One problem: where (`steps[3].tool_calls[0].tool_call_id`), which rule, and what is wrong. */
export interface AtifValidationError {
  path: string;
  code: AtifErrorCode;
  message: string;
}

/** The result: ok with the typed trajectory, or every error found. */
export type AtifValidation = { ok: true; trajectory: AtifTrajectory; errors: [] } | { ok: false; errors: AtifValidationError[] };

/** Fields only an agent step may carry. */
export const AGENT_ONLY_FIELDS = ["model_name", "reasoning_effort", "reasoning_content", "tool_calls", "metrics"] as const;

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);

/** `steps[2].tool_calls[0]` from a zod issue path. */
export function formatPath(path: readonly PropertyKey[]): string {
  let out = "";
  for (const p of path) out += typeof p === "number" ? `[${p}]` : `${out ? "." : ""}${String(p)}`;
  return out || "(root)";
}

function shapeErrors(issues: readonly z.core.$ZodIssue[]): AtifValidationError[] {
  return issues.map((i) => {
    const path = formatPath(i.path);
    if (i.path.at(-1) === "timestamp") return { path, code: "timestamp", message: `not an ISO 8601 timestamp with a time zone (e.g. 2026-12-01T12:00:00Z)` };
    return { path, code: "shape", message: i.message };
  });
}

/** The rules a schema cannot state, checked on whatever parts of `value` have the right types. */
function ruleErrors(value: unknown): AtifValidationError[] {
  const errors: AtifValidationError[] = [];
  if (!isObject(value) || !Array.isArray(value.steps)) return errors;
  const seenCalls = new Map<string, string>();
  value.steps.forEach((step, i) => {
    if (!isObject(step)) return;
    const at = `steps[${i}]`;
    if (typeof step.step_id === "number" && step.step_id !== i + 1) {
      errors.push({ path: `${at}.step_id`, code: "step_id_sequence", message: `step_id is ${step.step_id}, expected ${i + 1} (ids run 1, 2, 3… in order)` });
    }
    if (step.source !== "agent") {
      for (const f of AGENT_ONLY_FIELDS) {
        if (step[f] !== undefined) {
          errors.push({
            path: `${at}.${f}`,
            code: "agent_only_field",
            message: `${f} is only allowed on agent steps; this step's source is ${JSON.stringify(step.source)}`,
          });
        }
      }
    }
    const callsHere = new Set<string>();
    if (Array.isArray(step.tool_calls)) {
      step.tool_calls.forEach((c, j) => {
        if (!isObject(c) || typeof c.tool_call_id !== "string") return;
        const first = seenCalls.get(c.tool_call_id);
        if (first !== undefined) {
          errors.push({
            path: `${at}.tool_calls[${j}].tool_call_id`,
            code: "duplicate_tool_call_id",
            message: `tool_call_id ${JSON.stringify(c.tool_call_id)} is already used at ${first}`,
          });
        } else seenCalls.set(c.tool_call_id, `${at}.tool_calls[${j}]`);
        callsHere.add(c.tool_call_id);
      });
    }
    const results = isObject(step.observation) && Array.isArray(step.observation.results) ? step.observation.results : [];
    results.forEach((r, k) => {
      if (!isObject(r) || typeof r.source_call_id !== "string") return;
      if (!callsHere.has(r.source_call_id)) {
        errors.push({
          path: `${at}.observation.results[${k}].source_call_id`,
          code: "unresolved_source_call_id",
          message: `source_call_id ${JSON.stringify(r.source_call_id)} names no tool call of this step`,
        });
      }
    });
  });
  return errors;
}

/** Validate `value` as an ATIF trajectory, collecting every error (shape first, then the rules). */
export function validateAtif(value: unknown): AtifValidation {
  const parsed = AtifTrajectorySchema.safeParse(value);
  const errors = [...(parsed.success ? [] : shapeErrors(parsed.error.issues)), ...ruleErrors(value)];
  if (parsed.success && errors.length === 0) return { ok: true, trajectory: parsed.data, errors: [] };
  return { ok: false, errors };
}

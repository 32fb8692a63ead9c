/**
 * The Agent Trajectory Interchange Format, version 1.4 (Harbor's trajectory JSON), as zod
 * schemas. Objects are strict, as Harbor's own models are: an unknown key is an error, and
 * custom data goes under `extra`. Units: tokens are counts, money is USD, times are ISO 8601.
 */
import { z } from "zod";

/** The `schema_version` this exporter writes. */
export const ATIF_VERSION = "ATIF-v1.4";

/** Versions a trajectory may declare (the validator accepts earlier ones it understands). */
export const ATIF_VERSIONS = ["ATIF-v1.0", "ATIF-v1.1", "ATIF-v1.2", "ATIF-v1.3", "ATIF-v1.4"] as const;

const Extra = z.record(z.string(), z.unknown());
const Count = z.number().int().nonnegative();

/** The agent system that produced the trajectory. */
export const AtifAgentSchema = z.strictObject({
  name: z.string().min(1),
  version: z.string().min(1),
  model_name: z.string().min(1).optional(),
  extra: Extra.optional(),
});

/** One tool or function invocation; `tool_call_id` links it to an observation result. */
export const AtifToolCallSchema = z.strictObject({
  tool_call_id: z.string().min(1),
  function_name: z.string().min(1),
  arguments: Extra,
});

/** A reference to a delegated sub-agent's own trajectory. */
export const AtifSubagentRefSchema = z.strictObject({
  session_id: z.string().min(1),
  trajectory_path: z.string().optional(),
  extra: Extra.optional(),
});

/** One result of an observation: the output of a tool call (`source_call_id`) or of a non-tool event. */
export const AtifObservationResultSchema = z.strictObject({
  source_call_id: z.string().min(1).nullable().optional(),
  content: z.string().optional(),
  subagent_trajectory_ref: z.array(AtifSubagentRefSchema).optional(),
});

/** Environment feedback after a step's actions. */
export const AtifObservationSchema = z.strictObject({ results: z.array(AtifObservationResultSchema) });

/** Per-step model metrics; `cost_usd` only where the cost is known. */
export const AtifMetricsSchema = z.strictObject({
  /** All input tokens, cached ones included. */
  prompt_tokens: Count.optional(),
  completion_tokens: Count.optional(),
  /** The cached subset of `prompt_tokens`. */
  cached_tokens: Count.optional(),
  cost_usd: z.number().finite().nonnegative().optional(),
  prompt_token_ids: z.array(z.number().int()).optional(),
  completion_token_ids: z.array(z.number().int()).optional(),
  logprobs: z.array(z.number()).optional(),
  extra: Extra.optional(),
});

/** One step: a system event, a user message, or one agent turn with its actions and observations. */
export const AtifStepSchema = z.strictObject({
  step_id: z.number().int().positive(),
  timestamp: z.iso.datetime({ offset: true }).optional(),
  source: z.enum(["system", "user", "agent"]),
  model_name: z.string().min(1).optional(),
  reasoning_effort: z.union([z.string(), z.number()]).optional(),
  message: z.string(),
  reasoning_content: z.string().optional(),
  tool_calls: z.array(AtifToolCallSchema).optional(),
  observation: AtifObservationSchema.optional(),
  metrics: AtifMetricsSchema.optional(),
  extra: Extra.optional(),
});

/** Aggregates over the whole trajectory. */
export const AtifFinalMetricsSchema = z.strictObject({
  total_prompt_tokens: Count.optional(),
  total_completion_tokens: Count.optional(),
  total_cached_tokens: Count.optional(),
  total_cost_usd: z.number().finite().nonnegative().optional(),
  total_steps: Count.optional(),
  extra: Extra.optional(),
});

/** The root object. */
export const AtifTrajectorySchema = z.strictObject({
  schema_version: z.enum(ATIF_VERSIONS),
  session_id: z.string().min(1),
  agent: AtifAgentSchema,
  steps: z.array(AtifStepSchema).min(1),
  notes: z.string().optional(),
  final_metrics: AtifFinalMetricsSchema.optional(),
  extra: Extra.optional(),
});

export type AtifTrajectory = z.infer<typeof AtifTrajectorySchema>;
export type AtifStep = z.infer<typeof AtifStepSchema>;
export type AtifToolCall = z.infer<typeof AtifToolCallSchema>;
export type AtifObservationResult = z.infer<typeof AtifObservationResultSchema>;
export type AtifMetrics = z.infer<typeof AtifMetricsSchema>;
export type AtifFinalMetrics = z.infer<typeof AtifFinalMetricsSchema>;

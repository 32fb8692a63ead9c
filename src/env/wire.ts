/**
 * The OpenEnv-style wire shapes the environment server speaks (reference openenv-wire.md):
 * request validation (zod) and the JSON schemas served at `GET /schema`.
 *
 * Actions and tool arguments are strict (unknown fields rejected); reset and step requests
 * accept extra fields (environment-specific parameters).
 */
import { z } from "zod";

/** The one tool's name. Reserved names (`reset`, `step`, `state`, `close`) are never tools. */
export const TERMINAL_TOOL_NAME = "terminal";

/** The tool description an agent sees; states the shell semantics plainly. */
export const TERMINAL_TOOL_DESCRIPTION = [
  "Run a shell command in this episode's sandbox, or end the episode with a final answer.",
  "With `command`: the command runs with bash in a FRESH shell process, starting in /home/user.",
  "Files you write persist between calls; `cd`, exported variables, shell functions and aliases do NOT",
  "(chain them in one command, e.g. `cd /tmp && make`). Each call returns stdout, stderr and the exit code;",
  "a command that runs past the per-command timeout is killed. A non-zero exit code is a normal result.",
  "With `final_answer`: the task's hidden verify commands run, the episode ends and its reward is returned.",
  "Pass exactly one of `command` or `final_answer`.",
].join(" ");

/** Tool arguments: exactly one of `command` / `final_answer` must be non-empty. */
export const terminalArgsSchema = z
  .object({
    command: z.string().default("").describe("Shell command to run in a fresh bash process."),
    final_answer: z.string().default("").describe("Your final answer; runs the verify commands and ends the episode."),
  })
  .strict();

/** JSON schema of the tool input (MCP `inputSchema`, OpenEnv `input_schema`). */
export const terminalInputJsonSchema = (() => {
  const { $schema: _drop, ...rest } = z.toJSONSchema(terminalArgsSchema, { io: "input" }) as Record<string, unknown>;
  return rest;
})();

/** The tool as listed by `list_tools` (OpenEnv) — `input_schema` snake case. */
export function terminalToolOpenEnv(): { name: string; description: string; input_schema: Record<string, unknown> } {
  return { name: TERMINAL_TOOL_NAME, description: TERMINAL_TOOL_DESCRIPTION, input_schema: terminalInputJsonSchema };
}

/** The tool as listed by MCP `tools/list` — `inputSchema` camel case. */
export function terminalToolMcp(): { name: string; description: string; inputSchema: Record<string, unknown> } {
  return { name: TERMINAL_TOOL_NAME, description: TERMINAL_TOOL_DESCRIPTION, inputSchema: terminalInputJsonSchema };
}

const commandList = z.array(z.string().max(100_000)).max(200);

/**
 * `POST /reset` body / WebSocket `reset` data. `setup`/`verify` and their `_scripts` aliases are
 * lists of shell commands; giving both spellings of one list is rejected. `episode_id` names the
 * episode (default: a random UUID); `seed` is accepted for OpenEnv compatibility and has no
 * effect (an episode is determined by its setup commands). Extra fields allowed.
 */
export const resetRequestSchema = z
  .looseObject({
    seed: z.number().int().min(0).optional(),
    episode_id: z.string().max(255).optional(),
    setup: commandList.optional(),
    verify: commandList.optional(),
    setup_scripts: commandList.optional(),
    verify_scripts: commandList.optional(),
  })
  .superRefine((v, ctx) => {
    if (v.setup !== undefined && v.setup_scripts !== undefined) {
      ctx.addIssue({ code: "custom", path: ["setup_scripts"], message: "give `setup` or `setup_scripts`, not both" });
    }
    if (v.verify !== undefined && v.verify_scripts !== undefined) {
      ctx.addIssue({ code: "custom", path: ["verify_scripts"], message: "give `verify` or `verify_scripts`, not both" });
    }
  });
/** A validated reset request. */
export type ResetRequest = z.infer<typeof resetRequestSchema>;

/** `{"type": "list_tools"}` (strict). */
export const listToolsActionSchema = z.object({ type: z.literal("list_tools") }).strict();
/** `{"type": "call_tool", "tool_name", "arguments"}` (strict; `arguments` defaults to `{}`). */
export const callToolActionSchema = z
  .object({
    type: z.literal("call_tool"),
    tool_name: z.string().min(1),
    arguments: z.record(z.string(), z.unknown()).default({}),
  })
  .strict();
/** A step action (strict). */
export const actionSchema = z.discriminatedUnion("type", [listToolsActionSchema, callToolActionSchema]);
/** A validated step action. */
export type Action = z.infer<typeof actionSchema>;

/** `POST /step` body (extra fields allowed). */
export const stepRequestSchema = z.looseObject({
  action: actionSchema,
  timeout_s: z.number().positive().optional(),
  request_id: z.string().max(255).optional(),
});
/** A validated `POST /step` body. */
export type StepRequest = z.infer<typeof stepRequestSchema>;

/** A framework failure inside an observation. A non-zero exit code is never one of these. */
export type ToolErrorType = "execution_error" | "invalid_args" | "transport_error" | "tool_not_found" | "timeout";

const toolErrorSchema = z
  .object({
    error_type: z.enum(["execution_error", "invalid_args", "transport_error", "tool_not_found", "timeout"]),
    message: z.string(),
  })
  .strict();

const base = {
  done: z.boolean(),
  reward: z.number().nullable(),
  metadata: z.record(z.string(), z.unknown()),
};

/** Observation schemas served at `/schema`. */
export const observationSchema = z.union([
  z
    .object({ ...base })
    .strict()
    .describe("reset observation (details in metadata)"),
  z
    .object({
      tools: z.array(z.object({ name: z.string(), description: z.string(), input_schema: z.record(z.string(), z.unknown()) }).strict()),
      ...base,
    })
    .strict()
    .describe("list_tools observation"),
  z
    .object({ tool_name: z.string(), result: z.unknown(), error: toolErrorSchema.optional(), ...base })
    .strict()
    .describe("call_tool observation"),
]);

/** `state.reward_override_ignored` when set. */
const ignoredSchema = z
  .object({
    reason: z.enum(["empty", "too_large", "multiple_lines", "not_decimal", "not_finite", "not_regular_file", "unreadable", "not_deleted"]),
    detail: z.string(),
  })
  .strict();

/** `GET /state` shape. */
export const stateSchema = z.looseObject({
  episode_id: z.string().nullable(),
  step_count: z.number().int().min(0),
  sandbox_id: z.string().nullable(),
  backend: z.enum(["docker", "e2b"]),
  done: z.boolean(),
  reward: z.number().nullable(),
  reward_override_ignored: ignoredSchema.nullable(),
  infrastructure_failure: z.object({ code: z.string(), message: z.string() }).nullable(),
});

/** The `GET /schema` body. */
export function schemaDocument(): { action: unknown; observation: unknown; state: unknown } {
  return {
    action: z.toJSONSchema(actionSchema, { io: "input" }),
    observation: z.toJSONSchema(observationSchema, { unrepresentable: "any" }),
    state: z.toJSONSchema(stateSchema),
  };
}

/** WebSocket client → server messages. */
export const wsMessageSchema = z.discriminatedUnion("type", [
  z.object({ type: z.literal("reset"), data: z.record(z.string(), z.unknown()).default({}) }).strict(),
  z.object({ type: z.literal("step"), data: z.record(z.string(), z.unknown()) }).strict(),
  z.object({ type: z.literal("state") }).strict(),
  z.object({ type: z.literal("close") }).strict(),
  z.object({ type: z.literal("mcp"), data: z.record(z.string(), z.unknown()) }).strict(),
]);
/** A validated WebSocket client message. */
export type WsMessage = z.infer<typeof wsMessageSchema>;

/** WebSocket error codes (openenv-wire.md). */
export type WsErrorCode = "INVALID_JSON" | "UNKNOWN_TYPE" | "VALIDATION_ERROR" | "EXECUTION_ERROR" | "CAPACITY_REACHED" | "FACTORY_ERROR" | "SESSION_ERROR";

/** One-line summary of a zod error: `path: message; …` (names the field). */
export function describeZodError(err: z.ZodError): string {
  return err.issues
    .slice(0, 5)
    .map((i) => `${i.path.length ? i.path.join(".") : "(root)"}: ${i.message}`)
    .join("; ");
}

/**
 * The OpenEnv-style wire shapes the environment server speaks:
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

/**
 * A command list: a list of shell commands, or one string taken as one command (as upstream
 * terminus accepts). Blank commands are dropped, as upstream drops them.
 */
const commandList = z
  .union([z.string().max(100_000), z.array(z.string().max(100_000)).max(200)])
  .transform((v) => (typeof v === "string" ? [v] : v).filter((c) => c.trim() !== ""));

/** What `/schema` and the README say about `seed`. */
export const SEED_NOTE =
  "Any integer is accepted and recorded (state.seed, reset metadata.seed); it has no effect: an episode is determined by its setup commands, and sandboxes are not seeded.";

/**
 * `POST /reset` body / WebSocket `reset` data. `setup`/`verify` and their `_scripts` aliases are
 * lists of shell commands (or one string = one command); giving both spellings of one list is
 * rejected. `episode_id` names the episode (default: a random UUID); `seed` is any integer,
 * recorded with no effect ({@link SEED_NOTE}). Extra fields allowed.
 */
export const resetRequestSchema = z
  .looseObject({
    seed: z
      .number()
      .refine((n) => Number.isInteger(n), "seed must be an integer")
      .nullish(),
    // null is what OpenEnv's `Optional[...] = None` fields serialize to: the same as absent.
    episode_id: z.string().max(255).nullish(),
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

/** OpenEnv's `Action` base carries `metadata` (a dict); a client that serializes the whole action sends it. */
const actionMetadata = z.record(z.string(), z.unknown()).optional();
/** `{"type": "list_tools"}` (strict). */
export const listToolsActionSchema = z.object({ type: z.literal("list_tools"), metadata: actionMetadata }).strict();
/** `{"type": "call_tool", "tool_name", "arguments"}` (strict; `arguments` defaults to `{}`). */
export const callToolActionSchema = z
  .object({
    type: z.literal("call_tool"),
    tool_name: z.string().min(1),
    arguments: z.record(z.string(), z.unknown()).default({}),
    metadata: actionMetadata,
  })
  .strict();
/** A step action (strict). */
export const actionSchema = z.discriminatedUnion("type", [listToolsActionSchema, callToolActionSchema]);
/** A validated step action. */
export type Action = z.infer<typeof actionSchema>;

/** `POST /step` body (extra fields allowed). */
export const stepRequestSchema = z.looseObject({
  action: actionSchema,
  timeout_s: z.number().positive().nullish(),
  request_id: z.string().max(255).nullish(),
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

/** One command's result in state lists (upstream terminus `CommandResult` fields first). */
const commandResultSchema = z.looseObject({
  command: z.string(),
  output: z.string(),
  error: z.string().nullable(),
  success: z.boolean(),
  exit_code: z.number().int(),
  stdout: z.string(),
  stderr: z.string(),
  timed_out: z.boolean(),
  duration_ms: z.number(),
});

/**
 * How sessions map onto the routes; served in `/schema` (the state schema's description) and
 * restated in src/env/README.md.
 */
export const SESSIONS_NOTE = [
  "Sessions, as OpenEnv serves them:",
  "each WebSocket /ws connection is one session with its own environment;",
  "POST /mcp `openenv/session/create` opens an MCP session (params.session_id on tools/list and tools/call; `openenv/session/close` ends it);",
  "POST /reset, POST /step and GET /state are stateless: each request gets a temporary environment that is closed (its sandbox released) before the answer,",
  "so a /reset proves the setup commands run and a /step cannot continue it (call_tool answers `no episode`), and GET /state shows a fresh environment.",
  "A tools/call without a session id also gets a temporary environment (an episode with no setup or verify, released after the call).",
  "--max-concurrent / MAX_CONCURRENT_ENVS counts concurrent sessions; temporary environments count while they hold a sandbox, and so does a sandbox whose release is unconfirmed.",
].join(" ");

/** The state document (WebSocket `state`; `GET /state` shows a fresh environment's). */
export const stateSchema = z
  .looseObject({
    episode_id: z.string().nullable(),
    step_count: z.number().int().min(0).describe("steps of this episode, tool listings included"),
    sandbox_id: z.string().nullable(),
    backend: z.enum(["docker", "e2b"]),
    seed: z.number().nullable().describe(SEED_NOTE),
    done: z.boolean(),
    reward: z.number().nullable(),
    last_reward: z.number().nullable().describe("reward of the final answer; null before one and after an infrastructure failure"),
    setup_results: z.array(commandResultSchema),
    verify_commands: z.array(z.string()).describe("the hidden verify commands (orchestrator view; the agent's tool never shows them)"),
    verify_results: z.array(commandResultSchema),
    commands: z.array(commandResultSchema).describe("the latest agent commands (at most 10); command_count counts all"),
    command_count: z.number().int().min(0),
    submitted_answer: z.string().nullable(),
    last_error: z.string().nullable().describe("the last framework failure as one line"),
    reward_override_ignored: ignoredSchema.nullable(),
    infrastructure_failure: z.object({ code: z.string(), message: z.string() }).nullable(),
  })
  .describe(SESSIONS_NOTE);

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

/** WebSocket error codes, as OpenEnv names them. */
export type WsErrorCode = "INVALID_JSON" | "UNKNOWN_TYPE" | "VALIDATION_ERROR" | "EXECUTION_ERROR" | "CAPACITY_REACHED" | "FACTORY_ERROR" | "SESSION_ERROR";

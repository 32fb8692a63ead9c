/**
 * The Terminus-style terminal environment server (`humanish env serve`): one
 * `terminal` tool, fresh sandboxes per episode, verify-command rewards, OpenEnv-style
 * HTTP/WebSocket/MCP surfaces, with OpenEnv's session model.
 *
 * Usage: `const s = await startEnvServer({ backend, port: 0 }); …; const summary = await s.stop();`
 */

export { type EnvSandboxSpec, envBackendFromProvider } from "./backends.ts";
export { type EnvServeCommandOptions, type EnvServeCommandOutcome, resolveMaxConcurrent, runEnvServeCommand } from "./command.ts";
export { type CommandReport, type EnvBackend, type EnvLogEvent, type EnvResponse, type EnvState, SANDBOX_WORKDIR, TerminalEnvironment } from "./environment.ts";
export { type ReleaseSummary, SandboxLedger, summarize } from "./ledger.ts";
export { callToolResult, handleMcpMessage, MCP_PROTOCOL_VERSION, type McpTarget, RPC } from "./mcp.ts";
export {
  computeReward,
  parseRewardOverride,
  parseRewardProbe,
  REWARD_MAX_BYTES,
  REWARD_OVERRIDE_PATH,
  type RewardIgnoredReason,
  type RewardOutcome,
  type RewardOverrideIgnored,
} from "./reward.ts";
export { ENV_DEFAULTS, type EnvServerHandle, type EnvServerOptions, startEnvServer } from "./server.ts";
export { Session, Slot, SlotPool } from "./sessions.ts";
export { commandOutputText, commandResultText, finalAnswerText, toolErrorText } from "./text.ts";
export { SEED_NOTE, SESSIONS_NOTE, schemaDocument, TERMINAL_TOOL_DESCRIPTION, TERMINAL_TOOL_NAME } from "./wire.ts";

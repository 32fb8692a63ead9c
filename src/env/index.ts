/**
 * The Terminus-style terminal environment server (`humanish env serve`, issue 6): one
 * `terminal` tool, fresh sandboxes per episode, verify-command rewards, OpenEnv-style
 * HTTP/WebSocket/MCP surfaces (reference openenv-wire.md).
 *
 * Usage: `const s = await startEnvServer({ backend, port: 0 }); …; const summary = await s.stop();`
 */

export { type EnvSandboxSpec, envBackendFromProvider } from "./backends.ts";
export { type EnvServeCommandOptions, type EnvServeCommandOutcome, runEnvServeCommand } from "./command.ts";
export { type CommandReport, type EnvBackend, type EnvLogEvent, type EnvResponse, type EnvState, SANDBOX_WORKDIR, TerminalEnvironment } from "./environment.ts";
export { type ReleaseSummary, SandboxLedger, summarize } from "./ledger.ts";
export { handleMcpMessage, MCP_PROTOCOL_VERSION } from "./mcp.ts";
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
export { schemaDocument, TERMINAL_TOOL_DESCRIPTION, TERMINAL_TOOL_NAME } from "./wire.ts";

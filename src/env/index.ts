/**
 * The Terminus-style terminal environment server (`humanish env serve`, issue 6): one
 * `terminal` tool, fresh sandboxes per episode, verify-command rewards, OpenEnv-style
 * HTTP/WebSocket/MCP surfaces (reference openenv-wire.md).
 *
 * Usage: `const s = await startEnvServer({ backend, port: 0 }); …; const summary = await s.stop();`
 */
export { startEnvServer, ENV_DEFAULTS, type EnvServerOptions, type EnvServerHandle } from "./server.ts";
export { runEnvServeCommand, type EnvServeCommandOptions, type EnvServeCommandOutcome } from "./command.ts";
export { envBackendFromProvider, type EnvSandboxSpec } from "./backends.ts";
export { TerminalEnvironment, SANDBOX_WORKDIR, type EnvBackend, type EnvResponse, type EnvState, type EnvLogEvent, type CommandReport } from "./environment.ts";
export { SandboxLedger, summarize, type ReleaseSummary } from "./ledger.ts";
export {
  REWARD_OVERRIDE_PATH,
  REWARD_MAX_BYTES,
  parseRewardOverride,
  parseRewardProbe,
  computeReward,
  type RewardOutcome,
  type RewardOverrideIgnored,
  type RewardIgnoredReason,
} from "./reward.ts";
export { handleMcpMessage, MCP_PROTOCOL_VERSION } from "./mcp.ts";
export { TERMINAL_TOOL_NAME, TERMINAL_TOOL_DESCRIPTION, schemaDocument } from "./wire.ts";

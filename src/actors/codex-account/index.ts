/**
 * The restricted Codex account launcher: one qualified profile, a private CODEX_HOME linking
 * only the operator's ChatGPT login, one ephemeral app-server thread whose only tools are the
 * caller's dynamic tools. Users: the `local-agent` browser participant and `analyze --provider codex`.
 */
export { type CodexAccountBounds, defaultBounds } from "./bounds.ts";
export { executionIdentity, QUALIFIED_CODEX_CLI_VERSION, QUALIFIED_CODEX_PROFILE, refuseNumericCaps, TOOL_POLICY } from "./profile.ts";
export { type CodexLauncherReadiness, checkCodexAccountLauncher } from "./readiness.ts";
export { type CodexAccountSessionOptions, startCodexAccountSession } from "./session.ts";
export type * from "./types.ts";

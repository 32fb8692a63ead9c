/**
 * Pure builders for the Codex participant's commands and its command-scoped credentials
 *.
 *
 * Key rule: the runtime key is read from `CODEX_API_KEY`, else `OPENAI_API_KEY` (first non-blank
 * wins). `codex exec` authenticates only from `CODEX_API_KEY`, so the exec command's env always
 * carries the key as `CODEX_API_KEY`, plus `OPENAI_API_KEY` when that was its source. No other
 * command (install, version probe, task checks) and no sandbox-wide env ever carries it.
 */
import type { RuntimeKey } from "../terminal/participant.ts";

/** npm package of the Codex CLI. */
export const CODEX_PACKAGE = "@openai/codex";

/** Env NAMES a runtime key may come from, in priority order. */
export const RUNTIME_KEY_NAMES = ["CODEX_API_KEY", "OPENAI_API_KEY"] as const;

/** Exact semver (no ranges, no tags): `MAJOR.MINOR.PATCH[-pre][+build]`. */
export const EXACT_SEMVER = /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*)?(?:\+[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*)?$/;

/** True when `v` is an exact semver string. */
export function isExactSemver(v: string): boolean {
  return EXACT_SEMVER.test(v);
}

/**
 * Picks the runtime key from an environment (names only are inspected first; the value is
 * returned to the caller, who must keep it out of every file and log).
 * @returns the key and the NAME it came from, or undefined when neither name has a non-blank value.
 */
export function resolveRuntimeKey(env: Record<string, string | undefined>): RuntimeKey | undefined {
  for (const name of RUNTIME_KEY_NAMES) {
    const v = env[name];
    if (typeof v === "string" && v.trim().length > 0) return { sourceName: name, value: v };
  }
  return undefined;
}

/**
 * The env of the one key-bearing command: `{CODEX_API_KEY}` from a `CODEX_API_KEY` source,
 * `{CODEX_API_KEY, OPENAI_API_KEY}` (same value) from an `OPENAI_API_KEY` source.
 */
export function runtimeKeyEnv(key: RuntimeKey): Record<string, string> {
  if (key.sourceName === "OPENAI_API_KEY") return { CODEX_API_KEY: key.value, OPENAI_API_KEY: key.value };
  return { CODEX_API_KEY: key.value };
}

/** Inputs of {@link buildCodexExecCommand}. */
export interface CodexExecCommandInput {
  /** The participant's brief, passed as the single prompt argument (never via stdin). */
  prompt: string;
  /** Working directory inside the sandbox (`--cd`). */
  workdir: string;
  /** The participant's home directory (Codex keeps its state under `$HOME/.codex`). */
  home: string;
  model?: string;
  reasoningEffort?: string;
  key: RuntimeKey;
  /** Non-secret env added to the command (e.g. CA trust); never overrides HOME or the key names. */
  extraEnv?: Record<string, string>;
}

/** The key-bearing command: argv plus the complete per-command env and its NAMES. */
export interface CodexExecCommand {
  argv: string[];
  env: Record<string, string>;
  envNames: string[];
}

/**
 * `codex exec --json --skip-git-repo-check --dangerously-bypass-approvals-and-sandbox --cd <workdir>
 * [--model M] [-c model_reasoning_effort="E"] <prompt>`. Codex's own sandbox is bypassed because
 * the humanish sandbox (a locked-down container) is the boundary; approvals cannot be answered
 * without stdin.
 */
export function buildCodexExecCommand(input: CodexExecCommandInput): CodexExecCommand {
  const argv = ["codex", "exec", "--json", "--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox", "--cd", input.workdir];
  if (input.model) argv.push("--model", input.model);
  if (input.reasoningEffort) argv.push("-c", `model_reasoning_effort="${input.reasoningEffort}"`);
  argv.push(input.prompt);
  const env = { ...(input.extraEnv ?? {}), HOME: input.home, ...runtimeKeyEnv(input.key) };
  return { argv, env, envNames: Object.keys(env).sort() };
}

/** argv that asks the npm registry (from inside the sandbox) which exact version `latest` is. */
export function npmResolveLatestArgv(): string[] {
  return ["npm", "view", `${CODEX_PACKAGE}@latest`, "version", "--json"];
}

/** argv that installs the exact Codex version globally (run as root, unkeyed). */
export function npmInstallArgv(version: string): string[] {
  return ["npm", "install", "--global", "--no-audit", "--no-fund", "--loglevel=error", `${CODEX_PACKAGE}@${version}`];
}

/** argv of the unkeyed version probe. */
export function versionProbeArgv(): string[] {
  return ["codex", "--version"];
}

/**
 * Parses the probe's stdout. It must be exactly `codex-cli <exact semver>` (one trailing newline
 * allowed); anything else — extra lines, banners, a range — is rejected.
 * @returns the version, or undefined when the output does not have that exact shape.
 */
export function parseCodexVersion(stdout: string): string | undefined {
  const text = stdout.endsWith("\r\n") ? stdout.slice(0, -2) : stdout.endsWith("\n") ? stdout.slice(0, -1) : stdout;
  const m = /^codex-cli (\S+)$/.exec(text);
  if (!m?.[1] || !isExactSemver(m[1])) return undefined;
  return m[1];
}

/**
 * Parses `npm view <pkg>@latest version --json` output (a JSON string, e.g. `"0.171.0"`).
 * @returns the exact version, or undefined.
 */
export function parseNpmViewVersion(stdout: string): string | undefined {
  let v: unknown;
  try {
    v = JSON.parse(stdout.trim());
  } catch {
    v = stdout.trim();
  }
  return typeof v === "string" && isExactSemver(v) ? v : undefined;
}

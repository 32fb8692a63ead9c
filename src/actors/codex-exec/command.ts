/**
 * Pure builders for the Codex participant's commands and its command-scoped credentials
 *.
 *
 * Key rule: the runtime key is read from `CODEX_API_KEY`, else `OPENAI_API_KEY` (first non-blank
 * wins) and is held by the host's model gateway. Codex authenticates to the gateway with the
 * per-seat token in `CODEX_API_KEY`; in `openai-env` mode the exec command's env also carries the
 * real key as `OPENAI_API_KEY` (the agent holds a spendable key, and the bundle says so). No
 * other command (install, version probe, task checks) and no sandbox-wide env ever carries either.
 */
import type { RuntimeKey } from "../terminal-participant/participant.ts";

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

/** Name of the model provider humanish configures in Codex (points at the model gateway). */
export const CODEX_PROVIDER_ID = "humanish";

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
  /** The gateway as the sandbox reaches it: base URL and the per-seat token. Exactly one of `gateway` and `direct`. */
  gateway?: { baseURL: string; token: string };
  /**
   * No gateway (a hosted sandbox): Codex's built-in OpenAI provider reaches the model itself.
   * `openai-env`: `key` is the command's `CODEX_API_KEY`; `openai-egress`: the command gets a
   * placeholder and the system CA bundle, the real key lives in the sandbox's egress rule.
   * `baseURL` (`openai-env` only; default {@link DIRECT_BASE_URL}) is where Codex sends requests;
   * `openai-egress` always uses {@link DIRECT_BASE_URL}, the host its egress rule is for.
   */
  direct?: { auth: "openai-env" | "openai-egress"; baseURL?: string };
  /** argv that starts Codex (default `["codex"]`), e.g. `["npx", "-y", "@openai/codex@0.171.0"]`. */
  launcher?: string[];
  /** `openai-env` only: the real key, added as `OPENAI_API_KEY` (the agent holds it; Codex does not use it). */
  key?: RuntimeKey;
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
 * The `-c` overrides that point Codex at `baseURL` (the gateway, or the API itself from a hosted
 * sandbox): a custom provider speaking the Responses wire format, WebSockets off (the gateway
 * forwards HTTP only), Codex's own request and stream retries off (a retried POST can bill
 * twice; the gateway never retries either), the credential read from `CODEX_API_KEY` (Codex
 * ignores `OPENAI_API_KEY` in `exec`). Always a custom provider: Codex refuses overrides of its
 * built-in `openai` provider, and that one retries a failed request several times.
 */
export function codexProviderOverrides(baseURL: string, name = "humanish model gateway"): string[] {
  const p = `model_providers.${CODEX_PROVIDER_ID}`;
  return [
    `model_provider="${CODEX_PROVIDER_ID}"`,
    `${p}.name="${name}"`,
    `${p}.base_url="${baseURL}"`,
    `${p}.env_key="CODEX_API_KEY"`,
    `${p}.wire_api="responses"`,
    `${p}.supports_websockets=false`,
    `${p}.request_max_retries=0`,
    `${p}.stream_max_retries=0`,
  ].flatMap((kv) => ["-c", kv]);
}

/**
 * `codex exec --json --skip-git-repo-check --dangerously-bypass-approvals-and-sandbox --cd <workdir>
 * <provider overrides> [--model M] [-c model_reasoning_effort="E"] <prompt>`. Codex's own sandbox
 * is bypassed because the humanish sandbox (a locked-down container) is the boundary; approvals
 * cannot be answered without stdin. The env carries the gateway token as `CODEX_API_KEY`.
 */
export function buildCodexExecCommand(input: CodexExecCommandInput): CodexExecCommand {
  const argv = [
    ...(input.launcher ?? ["codex"]),
    "exec",
    "--json",
    "--skip-git-repo-check",
    "--dangerously-bypass-approvals-and-sandbox",
    "--cd",
    input.workdir,
  ];
  if (input.gateway) argv.push(...codexProviderOverrides(input.gateway.baseURL));
  else if (input.direct) argv.push(...codexProviderOverrides(directBaseURL(input.direct), "OpenAI Responses API (direct)"));
  // No `--model` when the lab declares none: Codex's own default is its choice, never filled in.
  if (input.model) argv.push("--model", input.model);
  if (input.reasoningEffort) argv.push("-c", `model_reasoning_effort="${input.reasoningEffort}"`);
  argv.push(input.prompt);
  const env: Record<string, string> = { ...(input.extraEnv ?? {}), HOME: input.home };
  if (input.gateway) {
    env.CODEX_API_KEY = input.gateway.token;
    if (input.key) env.OPENAI_API_KEY = input.key.value;
  } else if (input.direct?.auth === "openai-egress") {
    env.CODEX_API_KEY = EGRESS_KEY_PLACEHOLDER;
    env.CODEX_CA_CERTIFICATE = SYSTEM_CA_BUNDLE;
  } else if (input.key) {
    env.CODEX_API_KEY = input.key.value;
  }
  return { argv, env, envNames: Object.keys(env).sort() };
}

/** What Codex sends as its key in `openai-egress` mode: the E2B proxy replaces the header. Not a secret. */
export const EGRESS_KEY_PLACEHOLDER = "humanish-egress-auth-placeholder";
/** The system CA bundle Codex trusts in `openai-egress` mode (the E2B proxy re-signs TLS). */
export const SYSTEM_CA_BUNDLE = "/etc/ssl/certs/ca-certificates.crt";
/** The model host the egress rule carries the key for. */
export const OPENAI_API_HOST = "api.openai.com";
/** The public API base a direct (gateway-less) Codex reaches by default. */
export const DIRECT_BASE_URL = `https://${OPENAI_API_HOST}/v1`;

/** Where a direct Codex sends requests: the public API in `openai-egress` mode (its rule's host), else `baseURL`. */
export function directBaseURL(direct: { auth: "openai-env" | "openai-egress"; baseURL?: string }): string {
  return direct.auth === "openai-egress" ? DIRECT_BASE_URL : (direct.baseURL ?? DIRECT_BASE_URL);
}

/** The host (`host[:port]`) a direct Codex reaches, which the sandbox's egress allowlist must hold. */
export function directModelHost(direct: { auth: "openai-env" | "openai-egress"; baseURL?: string }): string {
  return new URL(directBaseURL(direct)).host.toLowerCase();
}

/** argv that starts the exact Codex version through npx (no global install). */
export function npxLauncher(version: string): string[] {
  return ["npx", "-y", `${CODEX_PACKAGE}@${version}`];
}

/** argv that asks the npm registry (from inside the sandbox) which exact version `latest` is. */
export function npmResolveLatestArgv(): string[] {
  return ["npm", "view", `${CODEX_PACKAGE}@latest`, "version", "--json"];
}

/** argv that installs the exact Codex version globally (run as root, unkeyed). */
export function npmInstallArgv(version: string): string[] {
  return ["npm", "install", "--global", "--no-audit", "--no-fund", "--loglevel=error", `${CODEX_PACKAGE}@${version}`];
}

/** argv of the unkeyed version probe (default launcher `codex`). */
export function versionProbeArgv(launcher: string[] = ["codex"]): string[] {
  return [...launcher, "--version"];
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

/**
 * The one execution profile the restricted Codex launcher qualifies, and the identity it
 * persists. Pure: no I/O.
 */
import { HumanishError } from "../../errors.ts";
import type { CodexAccountProfile, CodexAccountPurpose, CodexExecutionIdentity } from "./types.ts";

/** The exact `@openai/codex` release whose app-server protocol and config this launcher was checked against. */
export const QUALIFIED_CODEX_CLI_VERSION = "0.171.0";

/** The qualified profile: the pinned CLI on linux-x64, a file-backed ChatGPT login, the pinned model and effort. */
export const QUALIFIED_CODEX_PROFILE: Readonly<CodexAccountProfile> = Object.freeze({
  cliVersion: QUALIFIED_CODEX_CLI_VERSION,
  platform: "linux-x64",
  auth: "chatgpt-file",
  model: "gpt-5.5",
  effort: "low",
});

/** Tool policy names persisted in the identity: analysts get no tools, participants only their declared dynamic tools. */
export const TOOL_POLICY: Record<CodexAccountPurpose, string> = {
  analyst: "codex-no-tools-v1",
  participant: "codex-ui-tools-v1",
};

/** The host's platform in the profile's spelling (`linux-x64`, `darwin-arm64`, …). */
export function hostPlatform(platform: string = process.platform, arch: string = process.arch): string {
  return `${platform}-${arch}`;
}

/**
 * Refuses any profile other than the qualified one, before anything is launched.
 * @throws HumanishError `HUMANISH_CODEX_UNSUPPORTED_VERSION`, `HUMANISH_CODEX_UNSUPPORTED_PLATFORM`,
 *   `HUMANISH_CODEX_UNSUPPORTED_AUTH` or `HUMANISH_CODEX_UNSUPPORTED_PROFILE` naming the field.
 */
export function assertQualifiedProfile(profile: CodexAccountProfile, platform: string = hostPlatform()): void {
  const q = QUALIFIED_CODEX_PROFILE;
  if (profile.cliVersion !== q.cliVersion)
    throw new HumanishError(
      "HUMANISH_CODEX_UNSUPPORTED_VERSION",
      `profile.cliVersion ${JSON.stringify(profile.cliVersion)} is not the qualified Codex CLI ${q.cliVersion}`,
      {
        next: `Use the qualified profile (Codex CLI ${q.cliVersion}): npm install --global @openai/codex@${q.cliVersion}`,
      },
    );
  if (profile.platform !== q.platform || platform !== q.platform)
    throw new HumanishError(
      "HUMANISH_CODEX_UNSUPPORTED_PLATFORM",
      `the restricted Codex launcher is qualified on ${q.platform} only (profile ${profile.platform}, host ${platform})`,
      {
        next: "Run Codex account seats and analyses on a linux-x64 host, or use --provider openai with an API key.",
      },
    );
  if (profile.auth !== q.auth)
    throw new HumanishError("HUMANISH_CODEX_UNSUPPORTED_AUTH", `profile.auth ${JSON.stringify(profile.auth)} is not a file-backed ChatGPT login`, {
      next: 'Sign in with `codex login` (ChatGPT) and keep cli_auth_credentials_store = "file".',
    });
  if (profile.model !== q.model || profile.effort !== q.effort)
    throw new HumanishError(
      "HUMANISH_CODEX_UNSUPPORTED_PROFILE",
      `profile model/effort ${profile.model}/${profile.effort} is not the qualified ${q.model}/${q.effort}`,
      {
        next: `Leave the model unset (the qualified model is ${q.model}, effort ${q.effort}).`,
      },
    );
}

/** The persisted identity of one execution (never a secret). */
export function executionIdentity(profile: CodexAccountProfile, purpose: CodexAccountPurpose): CodexExecutionIdentity {
  return {
    transport: "codex-app-server-stdio",
    authClass: "chatgpt-file",
    billing: "account-unknown",
    model: profile.model,
    effort: profile.effort,
    toolPolicy: TOOL_POLICY[purpose],
    cliVersion: profile.cliVersion,
  };
}

/**
 * Account seats are billed to a subscription humanish cannot see, so a numeric spend or token
 * cap could never be enforced; it is refused instead of silently ignored.
 * @throws HumanishError `HUMANISH_CODEX_CAP_UNENFORCEABLE` naming the first numeric cap.
 */
export function refuseNumericCaps(caps: Record<string, number | null | undefined>, where: string): void {
  for (const [name, v] of Object.entries(caps)) {
    if (v === null || v === undefined) continue;
    throw new HumanishError(
      "HUMANISH_CODEX_CAP_UNENFORCEABLE",
      `${where}.${name} = ${v}: a Codex account is billed to the ChatGPT subscription (billing account-unknown), so humanish cannot enforce a numeric ${name}`,
      { next: `Remove ${name} for Codex account seats and analyses (the stored value is null), or use an API-key provider to get a metered cap.` },
    );
  }
}

/**
 * Which environment values are secrets, so every byte written or printed can be scrubbed of
 * them literally before pattern redaction (ARCHITECTURE.md invariant 1). Env var NAMES are
 * evidence; VALUES of these never are.
 */

/** Names that are always treated as secret (runtime keys of the providers we call). */
export const KNOWN_SECRET_NAMES = ["CODEX_API_KEY", "OPENAI_API_KEY", "E2B_API_KEY", "ANTHROPIC_API_KEY", "GH_TOKEN", "GITHUB_TOKEN"] as const;

/** A name that looks like it holds a credential. */
const SECRET_NAME = /(KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|AUTH|COOKIE|SESSION)/i;

/**
 * Secret values found in `env`: known key names, credential-looking names, and every name in
 * `alsoSecret` (e.g. all names from `--env-file`). Values shorter than 4 characters are left
 * out (scrubbing them would shred ordinary text); the result is deduplicated, longest first.
 */
export function secretValuesFromEnv(env: Record<string, string | undefined>, alsoSecret: Iterable<string> = []): string[] {
  const names = new Set<string>([...KNOWN_SECRET_NAMES, ...alsoSecret]);
  for (const name of Object.keys(env)) if (SECRET_NAME.test(name)) names.add(name);
  const values = new Set<string>();
  for (const name of names) {
    const v = env[name];
    if (typeof v === "string" && v.length >= 4) values.add(v);
  }
  return [...values].sort((a, b) => b.length - a.length);
}

/**
 * Every secret value a study must scrub: the values the caller passed (`ctx.secrets`, e.g. all
 * `--env-file` values) plus those found in `ctx.env`. Deduplicated, longest first.
 */
export function studySecrets(ctx: { env: Record<string, string | undefined>; secrets?: string[] }): string[] {
  const all = new Set<string>([...(ctx.secrets ?? []).filter((v) => v.length >= 4), ...secretValuesFromEnv(ctx.env)]);
  return [...all].sort((a, b) => b.length - a.length);
}

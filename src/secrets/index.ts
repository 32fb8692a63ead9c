/**
 * Which environment values are secrets, so every free-text byte written or printed can be
 * scrubbed of them literally before pattern redaction (the invariant that secret values never
 * reach disk or stdout). Env var NAMES are evidence; VALUES of secret variables never are.
 *
 * A value is secret when its variable is:
 *   - a key humanish provisions or knows ({@link KNOWN_SECRET_NAMES});
 *   - named like a credential: a `_`-separated part of the name is KEY, APIKEY, TOKEN, SECRET,
 *     PASSWORD, PASSWD, PASS, PWD, CREDENTIAL(S), COOKIE, SESSION, AUTH, PRIVATE or DSN — unless the
 *     value is plainly not a credential (a boolean word such as `true`/`off`, or a number), so
 *     `AUTH_ENABLED=true` stays an ordinary setting;
 *   - marked secret by the caller, e.g. an `--env-file` line preceded by `# humanish:secret`
 *     (see src/cli/env-file.ts). A marked value is secret whatever it looks like.
 * Every other value (`KIND=docker`, `MODE=live`, `FLAG=true`) is ordinary and never scrubbed.
 * Values shorter than 4 characters are never scrubbed literally: they would shred ordinary text.
 */

/** Names that are always treated as secret (runtime keys of the providers we call). */
export const KNOWN_SECRET_NAMES = ["CODEX_API_KEY", "OPENAI_API_KEY", "E2B_API_KEY", "ANTHROPIC_API_KEY", "GH_TOKEN", "GITHUB_TOKEN"] as const;

/** Shortest value scrubbed literally (chars). */
export const MIN_SECRET_VALUE_LENGTH = 4;

/** Name parts that mark a credential. */
const SECRET_PARTS = new Set([
  "KEY",
  "APIKEY",
  "TOKEN",
  "SECRET",
  "PASSWORD",
  "PASSWD",
  "PASS",
  "PWD",
  "CREDENTIAL",
  "CREDENTIALS",
  "COOKIE",
  "SESSION",
  "AUTH",
  "PRIVATE",
  "DSN",
]);

/** Values that are settings, not credentials, even under a credential-looking name. */
const NOT_A_CREDENTIAL = /^(?:true|false|yes|no|on|off|enabled|disabled|none|null|nil|undefined|-?\d+(?:\.\d+)?)$/i;

/**
 * True when `name` looks like it holds a credential (see module doc). `PWD` alone is the
 * shell's working directory, not a password.
 */
export function looksSecretName(name: string): boolean {
  if (name === "PWD" || name === "OLDPWD") return false;
  return name
    .toUpperCase()
    .split(/[^A-Z0-9]+/)
    .some((part) => SECRET_PARTS.has(part) || /APIKEY$|TOKEN$|SECRET$|PASSWORD$/.test(part));
}

/**
 * Secret values found in `env`: known key names, credential-looking names (ordinary setting
 * values excluded), and every name in `marked` (always secret). Values shorter than 4 characters
 * are left out; the result is deduplicated, longest first.
 */
export function secretValuesFromEnv(env: Record<string, string | undefined>, marked: Iterable<string> = []): string[] {
  const values = new Set<string>();
  const add = (v: string | undefined): void => {
    if (typeof v === "string" && v.length >= MIN_SECRET_VALUE_LENGTH) values.add(v);
  };
  for (const name of KNOWN_SECRET_NAMES) add(env[name]);
  for (const name of marked) add(env[name]);
  for (const [name, v] of Object.entries(env)) {
    if (typeof v === "string" && looksSecretName(name) && !NOT_A_CREDENTIAL.test(v.trim())) add(v);
  }
  return [...values].sort((a, b) => b.length - a.length);
}

/**
 * Every secret value a study must scrub: the values the caller passed (`ctx.secrets`, the
 * invocation's secret values) plus those found in `ctx.env`. Deduplicated, longest first.
 */
export function studySecrets(ctx: { env: Record<string, string | undefined>; secrets?: string[] }): string[] {
  const all = new Set<string>([...(ctx.secrets ?? []).filter((v) => v.length >= MIN_SECRET_VALUE_LENGTH), ...secretValuesFromEnv(ctx.env)]);
  return [...all].sort((a, b) => b.length - a.length);
}

/**
 * The first secret value that `text` contains, or undefined. Used to refuse identifiers (run
 * ids, lab ids) that would carry a secret into file names and structure before anything is written.
 */
export function secretIn(text: string, secrets: readonly string[]): string | undefined {
  return secrets.find((s) => s.length >= MIN_SECRET_VALUE_LENGTH && text.includes(s));
}

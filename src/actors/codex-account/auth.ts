/**
 * Qualifies the operator's Codex login WITHOUT reading it. humanish may `lstat`/`stat` the
 * `auth.json` (type, owner, mode, size) and read the operator's `config.toml` beside it (settings,
 * not secrets); it never opens, parses or copies `auth.json`.
 *
 * How the login shapes are told apart:
 * - keychain-only: the operator's config sets `cli_auth_credentials_store` to `keyring` (or
 *   `auto` with no `auth.json` file) — the tokens live in the OS keychain, which a private
 *   CODEX_HOME cannot reach and humanish will not touch → `HUMANISH_CODEX_UNSUPPORTED_AUTH`;
 * - no login at all: no `auth.json` → `HUMANISH_CODEX_LOGIN_REQUIRED`;
 * - API-key login: the operator's config forces `forced_login_method = "api"` (refused here),
 *   and after launch the app-server's `getAuthStatus` (asked with `includeToken:false`, so no
 *   token crosses the pipe) must report `authMethod: "chatgpt"` — an `auth.json` holding an API
 *   key reports `apikey` and is refused before any model turn. Provider keys in the operator's
 *   environment never reach the child (its environment is built from scratch).
 */
import { lstatSync, readFileSync, realpathSync, statSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, isAbsolute, join } from "node:path";
import { HumanishError } from "../../errors.ts";

/** Largest `auth.json` accepted (bytes): a login file is a few KiB; anything larger is not one. */
export const MAX_AUTH_FILE_BYTES = 1024 * 1024;

/** The located login: the path the operator has and the regular file it resolves to. */
export interface QualifiedAuth {
  /** `$CODEX_HOME/auth.json` or `~/.codex/auth.json` (or the explicit path). */
  path: string;
  /** Realpath of the regular file the private home links to. */
  target: string;
}

/** Where the operator's login lives: an explicit path, else `$CODEX_HOME/auth.json`, else `~/.codex/auth.json`. */
export function authPathFor(env: Record<string, string | undefined>, explicit?: string): string {
  if (explicit) return explicit;
  const home = env.CODEX_HOME && isAbsolute(env.CODEX_HOME) ? env.CODEX_HOME : join(env.HOME && isAbsolute(env.HOME) ? env.HOME : homedir(), ".codex");
  return join(home, "auth.json");
}

/** The operator's `cli_auth_credentials_store` / `forced_login_method` from the `config.toml` beside the login (settings only). */
export function operatorLoginSettings(authPath: string): { store: string | null; forcedLogin: string | null } {
  const file = join(dirname(authPath), "config.toml");
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch {
    return { store: null, forcedLogin: null };
  }
  let parsed: Record<string, unknown>;
  try {
    parsed = Bun.TOML.parse(text) as Record<string, unknown>;
  } catch (e) {
    throw new HumanishError("HUMANISH_CODEX_UNSAFE_CONFIGURATION", `${file} is not valid TOML (${(e as Error).message})`, {
      next: `Fix ${file} so Codex itself can read it.`,
    });
  }
  const s = parsed.cli_auth_credentials_store;
  const f = parsed.forced_login_method;
  return { store: typeof s === "string" ? s : null, forcedLogin: typeof f === "string" ? f : null };
}

const LOGIN_NEXT = 'Sign in with a ChatGPT account and a file store: set cli_auth_credentials_store = "file" in ~/.codex/config.toml, then run `codex login`.';

/**
 * Qualifies the login shape from metadata and settings only.
 * @throws HumanishError `HUMANISH_CODEX_UNSUPPORTED_AUTH` (keychain-only, API-key forced, not a
 *   regular file, wrong owner or mode) or `HUMANISH_CODEX_LOGIN_REQUIRED` (no login file).
 */
export function qualifyAuth(authPath: string, uid: number = process.getuid?.() ?? -1): QualifiedAuth {
  const { store, forcedLogin } = operatorLoginSettings(authPath);
  if (forcedLogin !== null && forcedLogin !== "chatgpt")
    throw new HumanishError(
      "HUMANISH_CODEX_UNSUPPORTED_AUTH",
      `${join(dirname(authPath), "config.toml")} forces forced_login_method = "${forcedLogin}" (an API-key login); Codex account seats need a ChatGPT login`,
      { next: LOGIN_NEXT },
    );
  if (store === "keyring")
    throw new HumanishError(
      "HUMANISH_CODEX_UNSUPPORTED_AUTH",
      `cli_auth_credentials_store = "keyring": the Codex login lives in the OS keychain, which humanish does not use`,
      { next: LOGIN_NEXT },
    );
  let l: ReturnType<typeof lstatSync>;
  try {
    l = lstatSync(authPath);
  } catch {
    const why = store === "auto" ? ' (cli_auth_credentials_store = "auto" with no file: the login is probably in the OS keychain)' : "";
    throw new HumanishError(
      store === "auto" ? "HUMANISH_CODEX_UNSUPPORTED_AUTH" : "HUMANISH_CODEX_LOGIN_REQUIRED",
      `no Codex login file at ${authPath}${why}`,
      { next: LOGIN_NEXT },
    );
  }
  let target = authPath;
  if (l.isSymbolicLink()) {
    try {
      target = realpathSync(authPath);
    } catch {
      throw new HumanishError("HUMANISH_CODEX_LOGIN_REQUIRED", `${authPath} is a dangling symlink`, { next: LOGIN_NEXT });
    }
  } else target = realpathSync(authPath);
  const st = statSync(target);
  if (!st.isFile()) throw new HumanishError("HUMANISH_CODEX_UNSUPPORTED_AUTH", `${authPath} is not a regular file`, { next: LOGIN_NEXT });
  if (uid >= 0 && st.uid !== uid)
    throw new HumanishError("HUMANISH_CODEX_UNSUPPORTED_AUTH", `${target} is owned by uid ${st.uid}, not by you (uid ${uid})`, {
      next: `Sign in as this user (${LOGIN_NEXT})`,
    });
  if ((st.mode & 0o077) !== 0)
    throw new HumanishError(
      "HUMANISH_CODEX_UNSUPPORTED_AUTH",
      `${target} has mode ${(st.mode & 0o777).toString(8)}; a login file must not be readable by group or others`,
      { next: `chmod 600 ${target}` },
    );
  if (st.size === 0 || st.size > MAX_AUTH_FILE_BYTES)
    throw new HumanishError("HUMANISH_CODEX_UNSUPPORTED_AUTH", `${target} is ${st.size} bytes, not a Codex login file`, { next: LOGIN_NEXT });
  return { path: authPath, target };
}

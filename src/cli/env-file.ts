/**
 * `--env-file FILE`: env vars for one invocation, never persisted.
 * Parsed with `node:util` parseEnv after a line check, so a malformed line is an error naming
 * its line number instead of being silently dropped.
 *
 * Marking secrets: a comment line `# humanish:secret` marks the next `KEY=value` line as secret
 * (blank lines and other comments may sit between). A marked value is scrubbed literally from
 * every file and stream whatever it looks like. Unmarked values are secret only when their name
 * looks like a credential (`*_API_KEY`, `*_TOKEN`, `SECRET_*`, …; see src/secrets/index.ts);
 * ordinary settings such as `KIND=docker` or `MODE=live` are never scrubbed.
 */
import { readFileSync, statSync } from "node:fs";
import { resolve } from "node:path";
import { parseEnv } from "node:util";
import { HumanishError } from "../errors.ts";

const MAX_ENV_FILE_BYTES = 1024 * 1024;
const LINE = /^\s*(export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=/;
/** The comment that marks the next variable as secret. */
export const SECRET_MARK = /^#\s*humanish:secret\s*$/;

/** A parsed env file: the variables, and the names marked `# humanish:secret`. */
export interface EnvFile {
  env: Record<string, string>;
  secretNames: string[];
}

/**
 * Reads and parses an env file relative to `cwd`.
 * @throws HumanishError `HUMANISH_ENV_FILE_NOT_FOUND` (missing / not a file) or
 *   `HUMANISH_ENV_FILE_INVALID` (over 1 MiB, NUL bytes, or a line that is not `KEY=value`).
 */
export function loadEnvFile(file: string, cwd: string): EnvFile {
  const path = resolve(cwd, file);
  let size: number;
  try {
    const st = statSync(path);
    if (!st.isFile()) throw new Error("not a regular file");
    size = st.size;
  } catch (e) {
    throw new HumanishError("HUMANISH_ENV_FILE_NOT_FOUND", `env file ${file} not found (${(e as Error).message})`, {
      next: "pass an existing file to --env-file, e.g. --env-file .env",
    });
  }
  if (size > MAX_ENV_FILE_BYTES) {
    throw new HumanishError("HUMANISH_ENV_FILE_INVALID", `env file ${file} is ${size} bytes; the limit is ${MAX_ENV_FILE_BYTES}`, {
      next: "keep only KEY=value lines in the env file",
    });
  }
  const text = readFileSync(path, "utf8");
  if (text.includes("\0"))
    throw new HumanishError("HUMANISH_ENV_FILE_INVALID", `env file ${file} contains NUL bytes`, { next: "keep only KEY=value lines in the env file" });
  let openQuote: string | null = null;
  let marked = false;
  const secretNames: string[] = [];
  text.split(/\r?\n/).forEach((line, i) => {
    if (openQuote) {
      if (line.includes(openQuote)) openQuote = null;
      return;
    }
    const t = line.trim();
    if (SECRET_MARK.test(t)) marked = true;
    if (t === "" || t.startsWith("#")) return;
    const m = LINE.exec(line);
    if (!m) {
      throw new HumanishError("HUMANISH_ENV_FILE_INVALID", `env file ${file}:${i + 1} is not a KEY=value line`, { next: `fix line ${i + 1} of ${file}` });
    }
    if (marked) secretNames.push(m[2]!);
    marked = false;
    const value = line.slice(line.indexOf("=") + 1).trim();
    const q = value[0];
    if ((q === '"' || q === "'" || q === "`") && value.indexOf(q, 1) === -1) openQuote = q;
  });
  if (openQuote) {
    throw new HumanishError("HUMANISH_ENV_FILE_INVALID", `env file ${file} has a quoted value that is never closed (${openQuote})`, {
      next: `close the ${openQuote} quote in ${file}`,
    });
  }
  if (marked) {
    throw new HumanishError("HUMANISH_ENV_FILE_INVALID", `env file ${file} ends with a # humanish:secret mark that marks no variable`, {
      next: `put the KEY=value line to keep secret right after the mark in ${file}`,
    });
  }
  return { env: parseEnv(text) as Record<string, string>, secretNames };
}

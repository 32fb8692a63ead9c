/**
 * `--env-file FILE`: env vars for one invocation, never persisted (reference contracts.md §4.1).
 * Parsed with `node:util` parseEnv after a line check, so a malformed line is an error naming
 * its line number instead of being silently dropped.
 */
import { readFileSync, statSync } from "node:fs";
import { resolve } from "node:path";
import { parseEnv } from "node:util";
import { HumanishError } from "../errors.ts";

const MAX_ENV_FILE_BYTES = 1024 * 1024;
const LINE = /^\s*(export\s+)?[A-Za-z_][A-Za-z0-9_]*\s*=/;

/**
 * Reads and parses an env file relative to `cwd`.
 * @throws HumanishError `HUMANISH_ENV_FILE_NOT_FOUND` (missing / not a file) or
 *   `HUMANISH_ENV_FILE_INVALID` (over 1 MiB, NUL bytes, or a line that is not `KEY=value`).
 */
export function loadEnvFile(file: string, cwd: string): Record<string, string> {
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
  text.split(/\r?\n/).forEach((line, i) => {
    if (openQuote) {
      if (line.includes(openQuote)) openQuote = null;
      return;
    }
    const t = line.trim();
    if (t === "" || t.startsWith("#")) return;
    if (!LINE.test(line)) {
      throw new HumanishError("HUMANISH_ENV_FILE_INVALID", `env file ${file}:${i + 1} is not a KEY=value line`, { next: `fix line ${i + 1} of ${file}` });
    }
    const value = line.slice(line.indexOf("=") + 1).trim();
    const q = value[0];
    if ((q === '"' || q === "'" || q === "`") && value.indexOf(q, 1) === -1) openQuote = q;
  });
  if (openQuote) {
    throw new HumanishError("HUMANISH_ENV_FILE_INVALID", `env file ${file} has a quoted value that is never closed (${openQuote})`, {
      next: `close the ${openQuote} quote in ${file}`,
    });
  }
  return parseEnv(text) as Record<string, string>;
}

/** Runs the CLI in-process with captured output. */

import type { CliIO } from "../../src/cli/output.ts";
import { runCli } from "../../src/cli/run.ts";

export interface Captured {
  code: number;
  stdout: string;
  stderr: string;
  /** stdout parsed as JSON (throws if it is not exactly one document). */
  json<T = Record<string, unknown>>(): T;
}

/** `humanish <argv>` with the given env (default: process env) and captured streams. */
export async function cli(argv: string[], env: Record<string, string | undefined> = process.env): Promise<Captured> {
  let stdout = "";
  let stderr = "";
  const io: CliIO = { stdout: (t) => void (stdout += t), stderr: (t) => void (stderr += t), stderrIsTTY: false, stdinIsTTY: false, env };
  const code = await runCli(argv, io);
  return { code, stdout, stderr, json: <T>() => JSON.parse(stdout) as T };
}

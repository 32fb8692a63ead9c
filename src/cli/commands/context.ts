/** What every command handler receives from the CLI driver. */
import { HumanishError } from "../../errors.ts";
import type { CliIO, CommandOutcome } from "../output.ts";
import type { CommandSpec } from "../spec.ts";

export interface CommandContext {
  spec: CommandSpec;
  /** Positional arguments by name. */
  args: Record<string, string>;
  /** Parsed flags (strict). */
  flags: Record<string, string | boolean | undefined>;
  /** Absolute project directory (`--cwd`, validated). */
  cwd: string;
  /** Process env merged with `--env-file`. */
  env: Record<string, string | undefined>;
  /** Secret values to scrub from everything printed or written. */
  secrets: string[];
  json: boolean;
  io: CliIO;
  /**
   * Aborts (reason `SIGINT` or `SIGTERM`) on the first signal, for commands whose spec sets
   * `interrupts: "trap"`; never aborts for the others (the signal's default action ends them).
   */
  signal: AbortSignal;
}

/** A command handler: returns the envelope (and human text); throws HumanishError on failure. */
export type Handler = (ctx: CommandContext) => Promise<CommandOutcome>;

/**
 * Reads a whole-number flag, or returns `fallback` when absent.
 * @throws HumanishError `code` (default `HUMANISH_INVALID_OPTION`) naming the flag.
 */
export function intFlag(ctx: CommandContext, name: string, fallback: number, code = "HUMANISH_INVALID_OPTION", min = 0): number {
  const raw = ctx.flags[name];
  if (raw === undefined) return fallback;
  if (typeof raw !== "string" || !/^\d+$/.test(raw) || !Number.isSafeInteger(Number(raw)) || Number(raw) < min) {
    throw new HumanishError(code, `--${name} must be a whole number ≥ ${min}, got ${JSON.stringify(raw)}`, {
      next: `pass e.g. --${name} ${Math.max(min, fallback)}`,
    });
  }
  return Number(raw);
}

/** A string flag or undefined. */
export function strFlag(ctx: CommandContext, name: string): string | undefined {
  const v = ctx.flags[name];
  return typeof v === "string" ? v : undefined;
}

/** `humanish init | env serve | guest serve` — thin wrappers over their modules. */
import type { CommandOutcome } from "../output.ts";
import { type CommandContext, intFlag, strFlag } from "./context.ts";

/** `init`: the wizard (interactive) or a template (`--yes`). */
export async function initCommand(ctx: CommandContext): Promise<CommandOutcome> {
  const { runInit } = await import("../../init/index.ts");
  const result = await runInit({
    cwd: ctx.cwd,
    yes: ctx.flags.yes === true,
    template: strFlag(ctx, "template"),
    id: strFlag(ctx, "id"),
    force: ctx.flags.force === true,
    json: ctx.json,
    interactive: ctx.io.stdinIsTTY,
  });
  return { result: { ...result, schema: ctx.spec.schema }, human: result.ok ? result.human : undefined };
}

/** `env serve`: runs until SIGINT/SIGTERM, then releases every sandbox by exact id. */
export async function envServeCommand(ctx: CommandContext): Promise<CommandOutcome> {
  const { runEnvServeCommand } = await import("../../env/index.ts");
  const backend = strFlag(ctx, "backend") ?? "docker";
  const outcome = await runEnvServeCommand({
    backend,
    host: strFlag(ctx, "host") ?? "127.0.0.1",
    port: intFlag(ctx, "port", 8000, "HUMANISH_INVALID_PORT"),
    // Validated (with MAX_CONCURRENT_ENVS when the flag is absent) by runEnvServeCommand, as a usage error.
    maxConcurrent: strFlag(ctx, "max-concurrent"),
    sessionTimeoutMs: ctx.flags["session-timeout-ms"] === undefined ? undefined : intFlag(ctx, "session-timeout-ms", 0, "HUMANISH_INVALID_TIMEOUT", 1),
    sandboxTimeoutMs: ctx.flags["sandbox-timeout-ms"] === undefined ? undefined : intFlag(ctx, "sandbox-timeout-ms", 0, "HUMANISH_INVALID_TIMEOUT", 1),
    commandTimeoutMs: ctx.flags["command-timeout-ms"] === undefined ? undefined : intFlag(ctx, "command-timeout-ms", 0, "HUMANISH_INVALID_TIMEOUT", 1),
    image: strFlag(ctx, "image"),
    network: strFlag(ctx, "network"),
    env: ctx.env,
    log: (line: string) => ctx.io.stderr(`${line}\n`),
  });
  // A server that never listened has nothing to summarise: the failure lines alone say what happened.
  return { result: { ...outcome, schema: ctx.spec.schema }, human: outcome.url === null ? undefined : outcome.human, exitCode: outcome.exitCode };
}

/** `guest serve` (inside the guest container): browser control over a Unix socket. */
export async function guestServeCommand(ctx: CommandContext): Promise<CommandOutcome> {
  const { runGuestServe } = await import("../../guest/index.ts");
  const ioDir = strFlag(ctx, "io-dir");
  const exitCode = await runGuestServe({ ...(ioDir ? { ioDir } : {}), log: (line: string) => ctx.io.stderr(`${line}\n`) });
  return { result: { schema: ctx.spec.schema, ok: exitCode === 0 }, exitCode, printed: true };
}

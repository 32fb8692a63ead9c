/**
 * The CLI driver: parse argv, load `--env-file`, run the command handler, print the result.
 * Exit codes: 0 ok; 2 a domain failure (`ok: false`); 1 a usage error;
 * 130/143 after SIGINT/SIGTERM, only once cleanup has run (src/cli/interrupt.ts: commands that
 * trap the signals, or handle them themselves, finish their cleanup first; the others are ended
 * by the signal, which a shell reports as the same 130/143).
 */

import { existsSync, statSync } from "node:fs";
import { resolve } from "node:path";
import { configDir } from "../bundle/index.ts";
import { HumanishError } from "../errors.ts";
import { applyUserRates } from "../models/rate-file.ts";
import { secretValuesFromEnv } from "../secrets/index.ts";
import { BUILD_COMMIT, VERSION } from "../version.ts";
import { helpText, parseArgv } from "./argv.ts";
import { type CommandContext, loadHandler } from "./commands/index.ts";
import { loadEnvFile } from "./env-file.ts";
import { interruptedOutcome, trapInterrupts } from "./interrupt.ts";
import { type CliIO, type CommandOutcome, emit, failure, inertText, scrubForTerminal, scrubJsonForTerminal } from "./output.ts";
import type { CommandSpec } from "./spec.ts";

/** Runs one invocation and returns the process exit code. Never throws. */
export async function runCli(argv: string[], io: CliIO): Promise<number> {
  const parsed = parseArgv(argv);
  switch (parsed.kind) {
    case "version":
      io.stdout(
        parsed.json
          ? `${JSON.stringify({ schema: "humanish.version-result.v1", ok: true, version: VERSION, commit: BUILD_COMMIT }, null, 2)}\n`
          : `humanish ${VERSION} (${BUILD_COMMIT})\n`,
      );
      return 0;
    case "help":
      io.stdout(`${helpText(parsed.topic, parsed.group)}\n`);
      return 0;
    case "orientation":
      if (parsed.json) {
        io.stdout(
          `${JSON.stringify(
            { schema: "humanish.orientation.v1", ok: true, version: VERSION, next: ["humanish lab list", "humanish lab run default", "humanish init"] },
            null,
            2,
          )}\n`,
        );
      } else if (io.stdinIsTTY && process.stdout.isTTY) {
        // A person at a terminal: the home screen; each choice runs as the command it names.
        const { runHome } = await import("./commands/home.ts");
        return runHome(process.cwd(), io, (next) => runCli(next, io));
      } else io.stdout(`${helpText()}\n`);
      return 0;
    case "usage-error":
      if (parsed.json) {
        io.stdout(
          `${scrubJsonForTerminal(
            { schema: parsed.schema, ok: false, error: { code: "HUMANISH_USAGE", message: parsed.message, next: parsed.next } },
            secretValuesFromEnv(io.env),
          )}\n`,
        );
      } else io.stderr(`${inertText(scrubForTerminal(`humanish: ${parsed.message}`, secretValuesFromEnv(io.env)))}\n`);
      return 1;
    case "command":
      return runCommand(parsed.spec, parsed.args, parsed.flags, io);
  }
}

async function runCommand(spec: CommandSpec, args: Record<string, string>, flags: Record<string, string | boolean | undefined>, io: CliIO): Promise<number> {
  const json = flags.json === true;
  const name = spec.path.join(" ");
  let secrets = secretValuesFromEnv(io.env);
  let outcome: CommandOutcome;
  // Set before anything else runs, so a signal during set-up is caught too.
  const trap =
    spec.interrupts === "trap"
      ? trapInterrupts({
          first: (sig) => {
            if (!json) io.stderr(`\nhumanish: ${sig} — finishing the step under way, then stopping\n`);
          },
        })
      : undefined;
  try {
    const cwd = resolveCwd(typeof flags.cwd === "string" ? flags.cwd : ".");
    let env = io.env;
    if (typeof flags["env-file"] === "string") {
      const file = loadEnvFile(flags["env-file"], cwd);
      env = { ...io.env, ...file.env };
      secrets = secretValuesFromEnv(env, file.secretNames);
    }
    const ctx: CommandContext = { spec, args, flags, cwd, env, secrets, json, io, signal: trap?.signal ?? new AbortController().signal };
    // Every cost and cap of the command uses the user's dated rates over the built-in ones; a
    // broken rate file stops the command, except doctor, which reports it.
    try {
      applyUserRates(env, configDir(env));
    } catch (e) {
      if (name !== "doctor") throw e;
    }
    if (spec.sweep) await reconcileBeforeCommand(ctx);
    // The command table and the loaders are one list (a test holds them equal), so a parsed command has a handler.
    const handler = await loadHandler(name);
    if (!handler) throw new HumanishError("HUMANISH_USAGE", `no handler for command ${name}`, { next: "Run humanish --help." });
    outcome = await handler(ctx);
  } catch (e) {
    outcome = failure(spec.schema, e);
  } finally {
    trap?.release();
  }
  if (trap?.received) outcome = interruptedOutcome(outcome, trap.received, name);
  return emit(io, name, outcome, json, secrets);
}

function resolveCwd(dir: string): string {
  const abs = resolve(dir);
  try {
    if (statSync(abs).isDirectory()) return abs;
  } catch {
    // fall through to the error below
  }
  throw new HumanishError("HUMANISH_INVALID_CWD", `--cwd ${dir} is not a directory`, { next: "pass an existing project directory to --cwd" });
}

/**
 * Commands that create resources (`sweep: true` in the command table) first release what
 * earlier invocations left behind when their controlling process died: host processes they
 * started (a browser lab's serve.command, by pid + start time) and containers of ours (by exact
 * id), each outcome recorded in that run's directory. A missing or unsupported engine is not an
 * error here: commands that need one say so themselves.
 */
async function reconcileBeforeCommand(ctx: CommandContext): Promise<void> {
  const say = (line: string) => {
    if (!ctx.json) ctx.io.stderr(`humanish: ${inertText(scrubForTerminal(line, ctx.secrets))}\n`);
  };
  const { reconcileHostProcesses } = await import("../runtime/host-process.ts");
  for (const r of await reconcileHostProcesses(ctx.cwd)) {
    say(
      `orphaned app server ${r.proof.id} of run ${r.runId ?? "?"} (its controller is gone): ${r.proof.outcome}${r.recordedIn ? `, recorded in ${r.recordedIn}` : ""}`,
    );
  }
  try {
    const [{ dockerClientFor, resolveDockerSocket }, { reconcileOrphans }] = await Promise.all([
      import("../docker/index.ts"),
      import("../runtime/reconcile.ts"),
    ]);
    if (!existsSync(resolveDockerSocket(ctx.env))) return;
    const released = await reconcileOrphans(dockerClientFor(ctx.env, { timeoutMs: 5000 }), ctx.cwd);
    for (const r of released) {
      say(
        `orphaned container ${r.proof.id.slice(0, 12)} of run ${r.runId ?? "?"} (its controller is gone): ${r.proof.outcome}${r.recordedIn ? `, recorded in ${r.recordedIn}` : ""}`,
      );
    }
  } catch (e) {
    if (!(e instanceof HumanishError)) throw e;
  }
}

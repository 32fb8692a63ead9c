/**
 * The command table (src/cli/spec.ts) against its handlers:
 * - every declared flag is read — by the command's handler (`ctx.flags.x`, `ctx.flags["x"]`,
 *   `strFlag(ctx, "x")`, `intFlag(ctx, "x", …)`) or, for the flags every command shares
 *   (`--json`, `--cwd`, `--env-file`), by the CLI driver (src/cli/run.ts): a flag added to the
 *   spec and never read fails here;
 * - `sweep` is true exactly for the commands that create resources;
 * - read-only commands never connect to the engine: with DOCKER_HOST on a Unix socket that
 *   accepts and never answers, they finish and the socket sees no connection, while a sweeping
 *   command does connect.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer, type Server, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { COMMAND_PATHS, loadHandler } from "../../src/cli/commands/index.ts";
import { COMMANDS } from "../../src/cli/spec.ts";
import { cli } from "./support.ts";

/** Flags the driver reads for every command, and how it reads them. */
const DRIVER_FLAGS: Record<string, RegExp> = {
  json: /flags\.json\b/,
  cwd: /flags\.cwd\b/,
  "env-file": /flags\["env-file"\]/,
};

function reads(source: string, flag: string): boolean {
  const q = flag.replace(/[-]/g, "\\-");
  const dotted = /^[a-z][a-z0-9]*$/i.test(flag) ? `|flags\\.${q}\\b` : "";
  return new RegExp(`flags\\[["']${q}["']\\]${dotted}|(?:strFlag|intFlag)\\(ctx, ["']${q}["']`).test(source);
}

/** Flags of `spec` that neither its handler nor the driver reads. */
function unread(flags: string[], handlerSource: string, driverSource: string): string[] {
  return flags.filter((f) => !reads(handlerSource, f) && !(DRIVER_FLAGS[f]?.test(driverSource) ?? false));
}

const driver = readFileSync(join(import.meta.dir, "../../src/cli/run.ts"), "utf8");

describe("command table ↔ handlers", () => {
  test("every command has a handler and every declared flag is read", async () => {
    const problems: string[] = [];
    for (const spec of COMMANDS) {
      const name = spec.path.join(" ");
      const handler = await loadHandler(name);
      if (!handler) {
        problems.push(`${name}: no handler`);
        continue;
      }
      for (const f of unread(Object.keys(spec.flags), handler.toString(), driver)) problems.push(`${name}: --${f} is declared but never read`);
    }
    expect(problems).toEqual([]);
    expect([...COMMAND_PATHS].sort()).toEqual(COMMANDS.map((c) => c.path.join(" ")).sort());
  });

  test("the check itself catches a declared flag nobody reads", () => {
    const handler = async (ctx: { flags: Record<string, unknown> }) => ctx.flags.live;
    expect(unread(["live", "never-read", "json"], handler.toString(), driver)).toEqual(["never-read"]);
    expect(reads('strFlag(ctx, "only")', "only")).toBe(true);
    expect(reads('ctx.flags["dry-run"]', "dry-run")).toBe(true);
    expect(reads('ctx.flags["dry-run-x"]', "dry-run")).toBe(false);
  });

  test("the orphan sweep runs exactly before the commands that create resources", () => {
    const sweeping = COMMANDS.filter((c) => c.sweep)
      .map((c) => c.path.join(" "))
      .sort();
    expect(sweeping).toEqual(["env serve", "lab run", "runtime prune", "runtime setup"]);
  });
});

describe("read-only commands never wait on the engine", () => {
  const dir = mkdtempSync(join(tmpdir(), "humanish-hang-"));
  const socketPath = join(dir, "docker.sock");
  const held: Socket[] = [];
  let connections = 0;
  let server: Server;

  afterAll(async () => {
    for (const s of held) s.destroy();
    await new Promise<void>((r) => server?.close(() => r()));
    rmSync(dir, { recursive: true, force: true });
  });

  test("verify, runs, report, lab list, lab inspect, keys, --help: no connection to a socket that never answers", async () => {
    server = createServer((s) => {
      connections++;
      held.push(s); // accepted, never answered
    });
    await new Promise<void>((r) => server.listen(socketPath, r));
    const project = mkdtempSync(join(tmpdir(), "humanish-hang-project-"));
    const env = { ...process.env, DOCKER_HOST: `unix://${socketPath}`, HUMANISH_CONFIG_DIR: join(project, "config") };
    try {
      for (const argv of [
        ["runs", "--json", "--cwd", project],
        ["verify", "--json", "--cwd", project],
        ["report", "--json", "--cwd", project],
        ["lab", "list", "--json", "--cwd", project],
        ["lab", "inspect", "default", "--json", "--cwd", project],
        ["keys", "--json"],
        ["--help"],
        ["runtime", "--help"],
      ]) {
        const r = await cli(argv, env);
        expect(r.code === 0 || r.code === 2).toBe(true);
      }
      // The server counts every accepted connection: none of them touched the socket (so none
      // could have waited on it), whatever the machine's speed.
      expect(connections).toBe(0);

      // A sweeping command does connect (and gives up after the sweep's timeout, then runs).
      const dry = await cli(["lab", "run", "default", "--dry-run", "--json", "--cwd", project], env);
      expect(dry.json<{ ok: boolean }>().ok).toBe(true);
      expect(connections).toBeGreaterThan(0);
    } finally {
      rmSync(project, { recursive: true, force: true });
    }
  }, 30_000);
});

/**
 * `lab run --watch` and `humanish watch` refusals through the CLI driver: a port in use stops the
 * study before it starts (no run directory), a bad port names the flag, and `watch` without any
 * run says how to make one.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgv } from "../../src/cli/argv.ts";
import { cli } from "./support.ts";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
const project = () => {
  const d = mkdtempSync(join(tmpdir(), "humanish-watch-cli-"));
  dirs.push(d);
  return d;
};

describe("--watch", () => {
  test("alone means any free port; a number after it is the port", () => {
    const a = parseArgv(["lab", "run", "default", "--watch"]);
    const b = parseArgv(["lab", "run", "--watch", "8123", "default"]);
    expect(a.kind === "command" && a.flags.watch).toBe("0");
    expect(b.kind === "command" && b.flags.watch).toBe("8123");
    expect(b.kind === "command" && b.args.lab).toBe("default");
  });

  test("a port in use: HUMANISH_PORT_IN_USE and the study does not start", async () => {
    const holder = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response("taken") });
    try {
      const cwd = project();
      const r = await cli(["lab", "run", "default", "--dry-run", "--watch", String(holder.port), "--cwd", cwd, "--json"]);
      expect(r.code).toBe(2);
      const j = r.json<{ ok: boolean; error: { code: string; message: string; next: string } }>();
      expect(j.ok).toBe(false);
      expect(j.error.code).toBe("HUMANISH_PORT_IN_USE");
      expect(j.error.message).toContain(String(holder.port));
      expect(j.error.next).toContain("--watch");
      expect(existsSync(join(cwd, ".humanish", "runs"))).toBe(false);
    } finally {
      await holder.stop(true);
    }
  });

  test("a dry run with --watch carries watchUrl and still verifies", async () => {
    const cwd = project();
    const r = await cli(["lab", "run", "default", "--dry-run", "--watch", "--cwd", cwd, "--json"]);
    const j = r.json<{ ok: boolean; watchUrl: string; verify: { ok: boolean } }>();
    expect(j.ok).toBe(true);
    expect(j.watchUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/);
    expect(j.verify.ok).toBe(true);
    expect(r.stderr).toContain(`observer at ${j.watchUrl}`);
  });

  test("humanish watch with no run yet: HUMANISH_RUN_NOT_FOUND with a next step", async () => {
    const r = await cli(["watch", "--cwd", project(), "--json"]);
    expect(r.code).toBe(2);
    const j = r.json<{ error: { code: string; next: string } }>();
    expect(j.error.code).toBe("HUMANISH_RUN_NOT_FOUND");
    expect(j.error.next).toContain("lab run");
  });
});

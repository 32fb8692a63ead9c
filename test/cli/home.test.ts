/**
 * The home screen through a real pseudo-terminal: tmux runs `bun src/cli/main.ts` with no
 * arguments in a fresh project, the test reads the screen with capture-pane and answers with
 * send-keys. The menu lists the labs with the doctor's readiness, and choosing a lab runs it
 * through `lab run --watch` (the Observer URL and the verdict reach the terminal). Off a
 * terminal the same invocation prints help.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { startInTmux, type TmuxDriver } from "../init/tmux.ts";

const ROOT = resolve(import.meta.dir, "../..");
const BUN = join(ROOT, "node_modules/.bin/bun");
let project: string;
let term: TmuxDriver | undefined;

beforeAll(async () => {
  project = mkdtempSync(join(tmpdir(), "humanish-home-"));
  // A project lab (dry run by default) to choose from the menu.
  const init = Bun.spawnSync([BUN, join(ROOT, "src/cli/main.ts"), "init", "--yes", "--id", "home-lab", "--cwd", project], { stdout: "pipe", stderr: "pipe" });
  expect(init.exitCode).toBe(0);
});

afterAll(async () => {
  await term?.close();
  rmSync(project, { recursive: true, force: true });
});

describe("home screen", () => {
  test("off a terminal `humanish` prints help", () => {
    const r = Bun.spawnSync([BUN, join(ROOT, "src/cli/main.ts")], { cwd: project, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
    expect(r.exitCode).toBe(0);
    expect(r.stdout.toString()).toContain("usage: humanish <command>");
  });

  test("on a terminal: the labs with readiness, and a lab runs through lab run --watch", async () => {
    term = await startInTmux(`timeout --foreground 240 ${BUN} ${join(ROOT, "src/cli/main.ts")}; echo "exit=$?"`, {
      cwd: project,
      cols: 220,
      rows: 60,
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HUMANISH_CONFIG_DIR: process.env.HUMANISH_CONFIG_DIR ?? join(project, ".config") },
    });
    const t = term;
    const menu = await t.waitFor(/What next\?[\s\S]*quit/, 180_000);
    expect(menu).toContain("run jq-first-contact");
    expect(menu).toContain("run todomvc-first-run-seats");
    // The active lab shows the doctor's verdict on its prerequisites: the project lab is ready,
    // the Codex lab misses its key (by name) in this environment.
    expect(menu).toMatch(/● run home-lab \(terminal · project · ready\)/);
    await t.press("Down", "Down");
    expect(await t.waitFor(/● run codex-first-contact \([^)]*missing: [^)]*key CODEX_API_KEY\|OPENAI_API_KEY/)).toBeTruthy();
    await t.press("Up", "Up");
    await t.waitFor(/● run home-lab/);
    await t.press("Enter");
    const done = await t.waitFor(/exit=\d+/, 200_000);
    expect(done).toContain("humanish lab run home-lab --watch");
    expect(done).toMatch(/observer at http:\/\/127\.0\.0\.1:\d+\//);
    expect(done).toMatch(/home-lab · terminal · dry-run/);
    expect(done).toMatch(/verify: ok/);
    expect(done).toContain("exit=0");
  }, 300_000);
});

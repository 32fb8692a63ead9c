/**
 * `humanish init` driven as a person would: the real CLI entry (`src/cli/main.ts`) in a real
 * pseudo-terminal (tmux), keys typed one prompt at a time, the screen read back.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseLab } from "../../src/lab/index.ts";
import { tempProject } from "../report/fixtures.ts";
import { startInTmux, type TmuxDriver } from "./tmux.ts";

const ROOT = join(import.meta.dir, "..", "..");
const BUN = process.execPath;
const MAIN = join(ROOT, "src", "cli", "main.ts");
const projects: { cleanup: () => void }[] = [];
afterAll(() => projects.forEach((p) => p.cleanup()));

function project() {
  const p = tempProject("humanish-init-");
  projects.push(p);
  return p.cwd;
}

async function cli(cwd: string, args: string[]): Promise<{ code: number; json: Record<string, unknown>; stderr: string }> {
  const p = Bun.spawn([BUN, MAIN, ...args, "--json"], { cwd, stdin: "ignore", stdout: "pipe", stderr: "pipe", env: { ...process.env, NO_COLOR: "1" } });
  const [out, err, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  let json: Record<string, unknown> = {};
  try {
    json = JSON.parse(out);
  } catch {
    throw new Error(`humanish ${args.join(" ")} printed no JSON (exit ${code}):\n${out}\n${err}`);
  }
  return { code, json, stderr: err };
}

/** The active prompt's line: clack marks the prompt waiting for input with `◆`. */
function active(question: string): string {
  return `◆  ${question}`;
}

/** Waits until `question` is the active prompt. */
async function ask(d: TmuxDriver, question: string): Promise<string> {
  return d.waitFor(active(question));
}

/** Answers one text prompt: waits until it is active, types, presses Enter. */
async function answer(d: TmuxDriver, question: string, text: string): Promise<void> {
  await ask(d, question);
  if (text) await d.type(text);
  await d.press("Enter");
}

/** Waits for `question` to appear as the active prompt after `count` earlier appearances. */
async function waitNth(d: TmuxDriver, question: string, count: number): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (Date.now() < deadline) {
    const s = await d.screen();
    if (s.split(question).length - 1 >= count) return;
    await Bun.sleep(80);
  }
  throw new Error(`timed out waiting for occurrence ${count} of ${question}:\n${await d.screen()}`);
}

describe("humanish init wizard under a pseudo-terminal", () => {
  test("terminal study: every prompt answered (one answer corrected after the loader refused it); the lab parses and dry-runs", async () => {
    const cwd = project();
    writeFileSync(join(cwd, ".gitignore"), "node_modules/\n");
    const d = await startInTmux(`${BUN} ${MAIN} init; echo "WIZARD-EXIT=$?"`, { cwd, env: { PATH: process.env.PATH ?? "/usr/bin:/bin" } });
    try {
      await ask(d, "What are you studying?");
      await d.press("Enter"); // A command-line product
      await ask(d, "Lab id");
      await d.type("bad id!");
      await d.press("Enter");
      // The loader's own message for `id` is shown, and nothing moves on.
      await d.waitFor("id must start with a letter or digit");
      await d.press(...Array(7).fill("BSpace"));
      await d.type("jq-wizard");
      await d.press("Enter");
      await answer(d, "Title", "Wizard jq study");
      await answer(d, "Product name", "jq");
      await answer(d, "Public surfaces", "https://jqlang.org/manual/, https://github.com/jqlang/jq");
      await answer(d, "Install command", "apt-get update -qq && apt-get install -y -qq jq");
      await ask(d, "Who is the participant?");
      await d.press("Enter"); // scripted
      await answer(d, "Step 1 of the scripted participant", "jq --version");
      await answer(d, "Step 2 of the scripted participant", `printf '{"a":1}' > in.json && jq .a in.json > a.txt`);
      await answer(d, "Step 3 of the scripted participant", "");
      await answer(d, "Task 1 id", "read-a");
      await answer(d, "Goal of read-a", "Save the value of a in in.json to a.txt");
      await answer(d, "Hidden check of read-a", `test "$(cat a.txt)" = 1`);
      await answer(d, "Task 2 id", "");
      await ask(d, "Mode: dry-run or live?");
      await d.press("Enter"); // dry-run
      await answer(d, "Time cap", "5");
      await answer(d, "Spend cap in USD", "0");
      await ask(d, "Findings after the study?");
      await d.press("Enter"); // openai
      await answer(d, "Analyst cap in USD", "0.5");
      // The YAML is shown before anything is written.
      const shown = await ask(d, "Write humanish/labs/jq-wizard.yaml?");
      expect(shown).toContain("schema: humanish.lab.v2");
      expect(shown).toContain("id: jq-wizard");
      expect(existsSync(join(cwd, "humanish"))).toBe(false);
      await d.press("Enter"); // Yes
      const end = await d.waitFor("WIZARD-EXIT=");
      expect(end).toContain("WIZARD-EXIT=0");
      expect(end).toContain("next: humanish lab run jq-wizard");
    } finally {
      await d.close();
    }

    const text = readFileSync(join(cwd, "humanish", "labs", "jq-wizard.yaml"), "utf8");
    const parsed = parseLab(text);
    if (!parsed.ok) throw new Error(parsed.error.message);
    expect(parsed.warnings).toEqual([]);
    const lab = parsed.config;
    expect(lab.id).toBe("jq-wizard");
    expect(lab.title).toBe("Wizard jq study");
    if (lab.subject.source !== "terminal-product") throw new Error("expected a terminal lab");
    expect(lab.subject.product.name).toBe("jq");
    expect(lab.subject.product.publicSurfaces).toEqual(["https://jqlang.org/manual/", "https://github.com/jqlang/jq"]);
    expect(lab.subject.product.install).toEqual(["apt-get update -qq && apt-get install -y -qq jq"]);
    const actor = lab.actors[0];
    expect(actor.type).toBe("scripted-terminal");
    if (actor.type !== "scripted-terminal") throw new Error("expected scripted-terminal");
    expect(actor.steps.map((s) => s.run)).toEqual(["jq --version", `printf '{"a":1}' > in.json && jq .a in.json > a.txt`]);
    expect(actor.tasks?.map((t) => [t.id, t.goal, t.check.run])).toEqual([["read-a", "Save the value of a in in.json to a.txt", `test "$(cat a.txt)" = 1`]]);
    expect(lab.scenario.mode).toBe("dry-run");
    expect(lab.scenario.caps).toEqual({ maxMinutes: 5, maxUsd: 0 });
    expect(lab.review?.analysis).toEqual({ provider: "openai", maxCost: 0.5 });
    expect(readFileSync(join(cwd, ".gitignore"), "utf8")).toBe("node_modules/\n.humanish/\n");

    // The next command works on what the wizard wrote.
    const run = await cli(cwd, ["lab", "run", "jq-wizard", "--dry-run"]);
    expect(run.json.ok).toBe(true);
    expect(run.json.mode).toBe("dry-run");
    const verify = await cli(cwd, ["verify"]);
    expect(verify.json.ok).toBe(true);
  }, 120_000);

  test("browser study with an LLM participant: loopback URL enforced by the loader; every prompt answered", async () => {
    const cwd = project();
    mkdirSync(join(cwd, "public"));
    writeFileSync(join(cwd, "public", "index.html"), "<!doctype html><h1>Welcome</h1>");
    const d = await startInTmux(`${BUN} ${MAIN} init; echo "WIZARD-EXIT=$?"`, { cwd, env: { PATH: process.env.PATH ?? "/usr/bin:/bin" } });
    try {
      await ask(d, "What are you studying?");
      await d.press("Down", "Enter"); // A local web app
      await answer(d, "Lab id", "web-wizard");
      await answer(d, "Title", "");
      await ask(d, "The app's loopback URL");
      await d.type("http://example.com/");
      await d.press("Enter");
      await d.waitFor("must be a loopback URL");
      await d.press(...Array("http://example.com/".length).fill("BSpace"));
      await d.type("http://127.0.0.1:5173/");
      await d.press("Enter");
      await ask(d, "How does the app get served?");
      await d.press("Down", "Down", "Enter"); // static folder
      await answer(d, "Folder to serve", "public");
      await ask(d, "Who is the participant?");
      await d.press("Down", "Enter"); // LLM
      await answer(d, "Model", ""); // default computer-use model
      await answer(d, "Mission", "Find the welcome message.");
      await answer(d, "Task 1 id", "see-welcome");
      await answer(d, "Goal of see-welcome", "Find the welcome message");
      await ask(d, "Hidden check of see-welcome");
      await d.press("Enter"); // page text includes
      await answer(d, "Text the page must include", "Welcome");
      await answer(d, "Task 2 id", "");
      await ask(d, "Mode: dry-run or live?");
      await d.press("Enter");
      await answer(d, "Time cap", "");
      await answer(d, "Spend cap in USD", "2.5");
      await ask(d, "Findings after the study?");
      await d.press("Down", "Down", "Enter"); // none
      await ask(d, "Write humanish/labs/web-wizard.yaml?");
      await d.press("Enter");
      const end = await d.waitFor("WIZARD-EXIT=");
      expect(end).toContain("WIZARD-EXIT=0");
    } finally {
      await d.close();
    }
    const parsed = parseLab(readFileSync(join(cwd, "humanish", "labs", "web-wizard.yaml"), "utf8"));
    if (!parsed.ok) throw new Error(parsed.error.message);
    const lab = parsed.config;
    if (lab.subject.source !== "app-url") throw new Error("expected a browser lab");
    expect(lab.subject.appUrl).toBe("http://127.0.0.1:5173/");
    expect(lab.subject.serve?.static?.root).toBe("public");
    const actor = lab.actors[0];
    expect(actor.type).toBe("openai-computer-use");
    if (actor.type !== "openai-computer-use") throw new Error("expected computer use");
    expect(actor.model).toBe("computer-use-preview");
    expect(actor.mission).toBe("Find the welcome message.");
    expect(actor.tasks?.[0]?.check).toEqual({ textIncludes: ["Welcome"] });
    expect(lab.scenario.caps).toEqual({ maxMinutes: 10, maxUsd: 2.5 });
    expect(lab.review?.analysis).toBe(false);
    expect(readFileSync(join(cwd, ".gitignore"), "utf8")).toBe(".humanish/\n");
  }, 120_000);

  test("cancel mid-way (Esc, then Ctrl+C) writes nothing", async () => {
    for (const key of ["Escape", "C-c"]) {
      const cwd = project();
      const d = await startInTmux(`${BUN} ${MAIN} init; echo "WIZARD-EXIT=$?"`, { cwd, env: { PATH: process.env.PATH ?? "/usr/bin:/bin" } });
      try {
        await ask(d, "What are you studying?");
        await d.press("Enter");
        await answer(d, "Lab id", "half-done");
        await answer(d, "Title", "Half done");
        await ask(d, "Product name");
        await d.type("jq");
        await d.press(key);
        const end = await d.waitFor("WIZARD-EXIT=");
        expect(end).toContain("Nothing was written");
        expect(end).toContain("HUMANISH_INIT_CANCELLED");
        expect(end).toContain("WIZARD-EXIT=2");
      } finally {
        await d.close();
      }
      expect(readdirSync(cwd)).toEqual([]);
    }
  }, 120_000);

  test("declining at the final confirmation writes nothing", async () => {
    const cwd = project();
    const d = await startInTmux(`${BUN} ${MAIN} init --id keep-out; echo "WIZARD-EXIT=$?"`, { cwd, env: { PATH: process.env.PATH ?? "/usr/bin:/bin" } });
    try {
      await ask(d, "What are you studying?");
      await d.press("Enter");
      // --id pre-fills the answer: Enter accepts it.
      await answer(d, "Lab id", "");
      for (const q of ["Title", "Product name", "Public surfaces", "Install command"]) await answer(d, q, "");
      await ask(d, "Who is the participant?");
      await d.press("Enter");
      await answer(d, "Step 1 of the scripted participant", "");
      await answer(d, "Task 1 id", "");
      await ask(d, "Mode: dry-run or live?");
      await d.press("Enter");
      await answer(d, "Time cap", "");
      await answer(d, "Spend cap in USD", "");
      await ask(d, "Findings after the study?");
      await d.press("Enter");
      await answer(d, "Analyst cap in USD", "");
      const shown = await ask(d, "Write humanish/labs/keep-out.yaml?");
      expect(shown).toContain("id: keep-out");
      await d.press("Right", "Enter"); // No
      await waitNth(d, "Nothing was written", 1);
      expect(await d.waitFor("WIZARD-EXIT=")).toContain("WIZARD-EXIT=2");
    } finally {
      await d.close();
    }
    expect(readdirSync(cwd)).toEqual([]);
  }, 120_000);
});

/**
 * `humanish init --yes` and every refusal of `humanish init`: the templates produce labs that
 * the real CLI dry-runs and verifies; unsafe paths, overwrites and missing confirmation are
 * refused with their codes and leave the project untouched.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { HumanishError, isHumanishError } from "../../src/errors.ts";
import { checkDraft, parseBrowserStep, renderLabYaml, runInit, templateAnswers } from "../../src/init/index.ts";
import { parseLab } from "../../src/lab/index.ts";
import { tempProject } from "../report/fixtures.ts";

const ROOT = join(import.meta.dir, "..", "..");
const MAIN = join(ROOT, "src", "cli", "main.ts");
const projects: { cleanup: () => void }[] = [];
afterAll(() => projects.forEach((p) => p.cleanup()));

function project(): string {
  const p = tempProject("humanish-init-yes-");
  projects.push(p);
  return p.cwd;
}

async function cli(
  cwd: string,
  args: string[],
  stdin: "ignore" | "pipe" = "ignore",
): Promise<{ code: number; json: Record<string, unknown>; stdout: string; stderr: string }> {
  const p = Bun.spawn([process.execPath, MAIN, ...args], { cwd, stdin, stdout: "pipe", stderr: "pipe" });
  if (stdin === "pipe") (p.stdin as { end(): void }).end();
  const [stdout, stderr, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  let json: Record<string, unknown> = {};
  if (args.includes("--json")) {
    try {
      json = JSON.parse(stdout);
    } catch {
      throw new Error(`humanish ${args.join(" ")} printed no JSON (exit ${code}):\n${stdout}\n${stderr}`);
    }
  }
  return { code, json, stdout, stderr };
}

async function refusal(opts: Parameters<typeof runInit>[0]): Promise<HumanishError> {
  try {
    await runInit(opts);
  } catch (e) {
    if (e instanceof HumanishError) return e;
    throw e;
  }
  throw new Error("expected runInit to refuse");
}

describe("init --yes: each template yields a lab that dry-runs and verifies", () => {
  for (const template of ["terminal", "browser", "computer-use"] as const) {
    test(`${template} template through the real CLI`, async () => {
      const cwd = project();
      const init = await cli(cwd, ["init", "--yes", "--template", template, "--id", `${template}-starter`, "--json"]);
      expect(init.code).toBe(0);
      expect(init.json.ok).toBe(true);
      expect(init.json.schema).toBe("humanish.init-result.v1");
      expect(init.json.next).toBe(`humanish lab run ${template}-starter`);
      expect(Object.keys(init.json)).not.toContain("human");
      const text = readFileSync(join(cwd, "humanish", "labs", `${template}-starter.yaml`), "utf8");
      const parsed = parseLab(text);
      if (!parsed.ok) throw new Error(parsed.error.message);
      expect(parsed.warnings).toEqual([]);
      expect(parsed.config.subject.source).toBe(template === "terminal" ? "terminal-product" : "app-url");
      expect(readFileSync(join(cwd, ".gitignore"), "utf8")).toBe(".humanish/\n");

      const run = await cli(cwd, ["lab", "run", `${template}-starter`, "--dry-run", "--json"]);
      expect({ code: run.code, ok: run.json.ok, error: run.json.error }).toEqual({ code: 0, ok: true, error: undefined });
      expect(run.json.mode).toBe("dry-run");
      const verify = await cli(cwd, ["verify", "--json"]);
      expect(verify.json.ok).toBe(true);
    }, 60_000);
  }

  test("human mode prints what was written and the exact next command", async () => {
    const cwd = project();
    const r = await cli(cwd, ["init", "--yes"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("wrote humanish/labs/my-cli-study.yaml");
    expect(r.stdout).toContain("next: humanish lab run my-cli-study");
  });
});

describe("init refusals write nothing", () => {
  test("an existing lab is not overwritten without --force; --force replaces it", async () => {
    const cwd = project();
    await runInit({ cwd, yes: true, json: true, id: "dup" });
    const path = join(cwd, "humanish", "labs", "dup.yaml");
    writeFileSync(path, "# edited by hand\n");
    const e = await refusal({ cwd, yes: true, json: true, id: "dup" });
    expect(e.code).toBe("HUMANISH_LAB_EXISTS");
    expect(e.next).toContain("--force");
    expect(readFileSync(path, "utf8")).toBe("# edited by hand\n");
    const again = await runInit({ cwd, yes: true, json: true, id: "dup", force: true, template: "browser" });
    expect(again.lab.replaced).toBe(true);
    expect(again.gitignore).toBe("present");
    expect(readFileSync(path, "utf8")).toContain("source: app-url");
    expect(readdirSync(join(cwd, "humanish", "labs"))).toEqual(["dup.yaml"]);
  });

  test("an id that escapes humanish/labs/ is HUMANISH_UNSAFE_PROJECT_PATH", async () => {
    const cwd = project();
    for (const id of ["../escape", "../../etc/x", "a/b", "..", ".hidden", "a\\b"]) {
      const e = await refusal({ cwd, yes: true, json: true, id });
      expect({ id, code: e.code }).toEqual({ id, code: "HUMANISH_UNSAFE_PROJECT_PATH" });
    }
    expect(readdirSync(cwd)).toEqual([]);
  });

  test("a symlinked humanish/ or humanish/labs/ is refused and nothing lands outside", async () => {
    const cwd = project();
    const outside = project();
    symlinkSync(outside, join(cwd, "humanish"));
    let e = await refusal({ cwd, yes: true, json: true });
    expect(e.code).toBe("HUMANISH_UNSAFE_PROJECT_PATH");
    expect(readdirSync(outside)).toEqual([]);

    const cwd2 = project();
    mkdirSync(join(cwd2, "humanish"));
    symlinkSync(outside, join(cwd2, "humanish", "labs"));
    e = await refusal({ cwd: cwd2, yes: true, json: true, force: true });
    expect(e.code).toBe("HUMANISH_UNSAFE_PROJECT_PATH");
    expect(readdirSync(outside)).toEqual([]);
    expect(existsSync(join(cwd2, ".gitignore"))).toBe(false);
  });

  test("a lab file that is a symlink is refused even with --force", async () => {
    const cwd = project();
    const outside = project();
    writeFileSync(join(outside, "target.yaml"), "keep\n");
    mkdirSync(join(cwd, "humanish", "labs"), { recursive: true });
    symlinkSync(join(outside, "target.yaml"), join(cwd, "humanish", "labs", "my-cli-study.yaml"));
    const e = await refusal({ cwd, yes: true, json: true, force: true });
    expect(e.code).toBe("HUMANISH_UNSAFE_PROJECT_PATH");
    expect(readFileSync(join(outside, "target.yaml"), "utf8")).toBe("keep\n");
    expect(lstatSync(join(cwd, "humanish", "labs", "my-cli-study.yaml")).isSymbolicLink()).toBe(true);
  });

  test("a symlinked .gitignore is refused before the lab is written", async () => {
    const cwd = project();
    const outside = project();
    writeFileSync(join(outside, "ignore"), "x\n");
    symlinkSync(join(outside, "ignore"), join(cwd, ".gitignore"));
    const e = await refusal({ cwd, yes: true, json: true });
    expect(e.code).toBe("HUMANISH_UNSAFE_PROJECT_PATH");
    expect(readFileSync(join(outside, "ignore"), "utf8")).toBe("x\n");
    expect(existsSync(join(cwd, "humanish"))).toBe(false);
  });

  test("no --yes on a non-interactive stdin (or with --json) is HUMANISH_CONFIRMATION_REQUIRED", async () => {
    const cwd = project();
    const piped = await cli(cwd, ["init", "--json"], "pipe");
    expect(piped.code).toBe(2);
    expect((piped.json.error as { code: string }).code).toBe("HUMANISH_CONFIRMATION_REQUIRED");
    const human = await cli(cwd, ["init"], "pipe");
    expect(human.code).toBe(2);
    expect(human.stderr).toContain("code: HUMANISH_CONFIRMATION_REQUIRED");
    expect((await refusal({ cwd, yes: false, json: true, interactive: true })).code).toBe("HUMANISH_CONFIRMATION_REQUIRED");
    expect((await refusal({ cwd, yes: false, json: false, interactive: false })).code).toBe("HUMANISH_CONFIRMATION_REQUIRED");
    expect(readdirSync(cwd)).toEqual([]);
  });

  test("bad options and a bad id are refused with their codes", async () => {
    const cwd = project();
    expect((await refusal({ cwd, yes: true, json: true, template: "desktop" })).code).toBe("HUMANISH_INVALID_OPTION");
    expect((await refusal({ cwd, yes: false, json: false, interactive: true, template: "browser" })).code).toBe("HUMANISH_INVALID_OPTION");
    const bad = await refusal({ cwd, yes: true, json: true, id: "bad id" });
    expect(bad.code).toBe("HUMANISH_LAB_INVALID");
    expect(bad.message).toContain("id must start with a letter or digit");
    expect((await refusal({ cwd: join(cwd, "missing"), yes: true, json: true })).code).toBe("HUMANISH_INVALID_CWD");
    expect(readdirSync(cwd)).toEqual([]);
  });

  test(".gitignore: an existing entry is kept, a missing final newline handled", async () => {
    const cwd = project();
    writeFileSync(join(cwd, ".gitignore"), "dist");
    const r = await runInit({ cwd, yes: true, json: true });
    expect(r.gitignore).toBe("added");
    expect(readFileSync(join(cwd, ".gitignore"), "utf8")).toBe("dist\n.humanish/\n");
    const cwd2 = project();
    writeFileSync(join(cwd2, ".gitignore"), "/.humanish/\n");
    const r2 = await runInit({ cwd: cwd2, yes: true, json: true });
    expect(r2.gitignore).toBe("present");
    expect(r2.written).toEqual(["humanish/labs/my-cli-study.yaml"]);
    expect(readFileSync(join(cwd2, ".gitignore"), "utf8")).toBe("/.humanish/\n");
  });
});

describe("draft helpers", () => {
  test("every template passes the loader with no warnings", () => {
    for (const route of ["terminal", "browser"] as const) {
      const r = checkDraft(templateAnswers(route));
      expect(r.ok).toBe(true);
      if (r.ok) expect(r.warnings).toEqual([]);
    }
  });

  test("the loader, not a second copy of rules, judges answers", () => {
    const base = templateAnswers("terminal");
    const bad = checkDraft({ ...base, publicSurfaces: ["not a url"] });
    expect(bad.ok).toBe(false);
    if (!bad.ok) expect(bad.message).toContain("subject.product.publicSurfaces[0]");
    const yaml = renderLabYaml({ ...base, publicSurfaces: ["not a url"] });
    const direct = parseLab(yaml);
    expect(direct.ok).toBe(false);
    if (!direct.ok && !bad.ok) expect(bad.message).toBe(direct.error.message);
  });

  test("browser step short forms", () => {
    expect(parseBrowserStep("open /todos")).toEqual({ ok: true, step: { open: "/todos" } });
    expect(parseBrowserStep("click 10 20 right")).toEqual({ ok: true, step: { click: { x: 10, y: 20, button: "right" } } });
    expect(parseBrowserStep("type buy milk")).toEqual({ ok: true, step: { type: "buy milk" } });
    expect(parseBrowserStep("press ctrl+a")).toEqual({ ok: true, step: { press: ["ctrl", "a"] } });
    expect(parseBrowserStep("press Enter")).toEqual({ ok: true, step: { press: "Enter" } });
    expect(parseBrowserStep("scroll 400")).toEqual({ ok: true, step: { scroll: { scrollY: 400 } } });
    expect(parseBrowserStep("wait 250")).toEqual({ ok: true, step: { wait: { ms: 250 } } });
    expect(parseBrowserStep("waitForText Saved")).toEqual({ ok: true, step: { waitForText: "Saved" } });
    expect(parseBrowserStep("screenshot")).toEqual({ ok: true, step: "screenshot" });
    expect(parseBrowserStep("screenshot home")).toEqual({ ok: true, step: { screenshot: "home" } });
    expect(parseBrowserStep("click here").ok).toBe(false);
    expect(parseBrowserStep("hover 1 2").ok).toBe(false);
    // The step schema still judges what the short form produced.
    const a = templateAnswers("browser");
    const r = checkDraft({ ...a, steps: [{ press: "NotAKey" }] });
    expect(r.ok).toBe(false);
  });

  test("isHumanishError narrows init refusals", async () => {
    const cwd = project();
    let caught: unknown;
    try {
      await runInit({ cwd, yes: true, json: true, id: "../x" });
    } catch (e) {
      caught = e;
    }
    expect(isHumanishError(caught, "HUMANISH_UNSAFE_PROJECT_PATH")).toBe(true);
  });
});

/**
 * What the CLI prints and writes about secrets and structure:
 * - `--env-file` values are secret only when marked (`# humanish:secret`) or named like a
 *   credential; ordinary values (`KIND=docker`, `MODE=live`, `FLAG=true`, `AUTH_ENABLED=true`,
 *   `APP=<lab id>`) never break a run, while a marked value is scrubbed from stdout and files;
 * - a run id or lab id that carries a secret value is refused before anything is written;
 * - human output is inert: lab text cannot retitle, clear or recolour the terminal;
 * - the user's own terminal shows the user's own paths and lab text as written.
 */
import { describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { inertJson, inertText } from "../../src/cli/output.ts";
import { cli } from "./support.ts";

const tmp = () => mkdtempSync(join(tmpdir(), "humanish-cli-secrets-"));
const ACTIVE = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/;
const SECRET = "zq9-canary-7731-secret";

function envFile(dir: string, lines: string[]): string {
  const p = join(dir, "study.env");
  writeFileSync(p, `${lines.join("\n")}\n`);
  return p;
}

/** Every file under `.humanish/runs` of `cwd`, as text. */
function runFiles(cwd: string): { path: string; text: string }[] {
  const out: { path: string; text: string }[] = [];
  const walk = (d: string): void => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) walk(p);
      else out.push({ path: p, text: readFileSync(p, "utf8") });
    }
  };
  const root = join(cwd, ".humanish", "runs");
  if (existsSync(root)) walk(root);
  return out;
}

describe("--env-file: secrets are what is secret, structure is never scrubbed", () => {
  test("ordinary values never break a run; a marked value is scrubbed from stdout and every file", async () => {
    const cwd = tmp();
    const env = envFile(cwd, [
      "KIND=docker",
      "MODE=live",
      "FLAG=true",
      "AUTH_ENABLED=true",
      "APP=jq-first-contact",
      "ROUTE=terminal",
      "# humanish:secret",
      `ZQ=${SECRET}`,
    ]);
    for (const json of [true, false]) {
      const r = await cli(["lab", "run", "default", "--dry-run", "--cwd", cwd, "--env-file", env, ...(json ? ["--json"] : [])], { PATH: process.env.PATH });
      expect({ code: r.code, stderr: json ? r.stderr : "" }).toEqual({ code: 0, stderr: "" });
      expect(r.stdout + r.stderr).not.toContain(SECRET);
      if (json) {
        const j = r.json<{ ok: boolean; lab: string; mode: string; runId: string }>();
        expect(j).toMatchObject({ ok: true, lab: "jq-first-contact", mode: "dry-run" });
        const run = JSON.parse(readFileSync(join(cwd, ".humanish", "runs", j.runId, "run.json"), "utf8"));
        expect(run.lab.id).toBe("jq-first-contact");
        expect(run.route).toBe("terminal");
        expect(JSON.stringify(run)).toContain("docker");
      }
    }
    const files = runFiles(cwd);
    expect(files.length).toBeGreaterThan(4);
    for (const f of files) expect(f.text.includes(SECRET), f.path).toBe(false);
  });

  test("a marked value is scrubbed on stdout wherever it appears; unmarked ordinary values are printed as written", async () => {
    const cwd = tmp();
    const env = envFile(cwd, ["# humanish:secret", "PHRASE=nothing was started", "PLAIN=contract only"]);
    const r = await cli(["lab", "run", "default", "--dry-run", "--cwd", cwd, "--env-file", env], { PATH: process.env.PATH });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("contract only, [REDACTED_SECRET] or spent");
    expect(r.stdout).not.toContain("nothing was started");
  });

  test("a run id or lab id equal to a secret value is refused before anything is written", async () => {
    const cwd = tmp();
    const env = envFile(cwd, ["# humanish:secret", `ZQ=${SECRET}`]);
    const r = await cli(["lab", "run", "default", "--cwd", cwd, "--env-file", env, "--run-id", SECRET, "--json"], { PATH: process.env.PATH });
    expect(r.code).toBe(2);
    const j = r.json<{ ok: boolean; error: { code: string; message: string } }>();
    expect(j.error.code).toBe("HUMANISH_SECRET_IN_IDENTIFIER");
    expect(r.stdout).not.toContain(SECRET);
    expect(existsSync(join(cwd, ".humanish", "runs", SECRET))).toBe(false);
    expect(runFiles(cwd)).toEqual([]);

    const labEnv = envFile(cwd, ["# humanish:secret", "LABNAME=jq-first-contact"]);
    const l = await cli(["lab", "run", "default", "--cwd", cwd, "--env-file", labEnv, "--json"], { PATH: process.env.PATH });
    const le = l.json<{ error: { code: string; message: string } }>().error;
    expect(le.code).toBe("HUMANISH_SECRET_IN_IDENTIFIER");
    // The lab id is named, not the run id derived from it.
    expect(le.message).toContain("lab id");
    expect(runFiles(cwd)).toEqual([]);
  });

  test("a marked secret that looks like JSON structure (`true`, a number) never breaks the --json document", async () => {
    const cwd = tmp();
    const env = envFile(cwd, ["# humanish:secret", "A=true", "# humanish:secret", "B=1234"]);
    const d = await cli(["lab", "run", "default", "--dry-run", "--cwd", cwd, "--env-file", env, "--json"], { PATH: process.env.PATH });
    expect(d.code).toBe(0);
    const j = d.json<{ ok: boolean }>();
    expect(j.ok).toBe(true);
  });

  test("env-file marks: the mark applies to the next variable only; a dangling mark is an error", async () => {
    const cwd = tmp();
    const dangling = envFile(cwd, ["A=1", "# humanish:secret"]);
    const r = await cli(["doctor", "--cwd", cwd, "--env-file", dangling, "--json"]);
    expect(r.json<{ error: { code: string; message: string } }>().error).toMatchObject({ code: "HUMANISH_ENV_FILE_INVALID" });
  });
});

describe("human output is inert", () => {
  const hostile = "\u001b]0;pwned\u0007\u001b[2J\u009b31m\u202e";
  test("inertText escapes lone ESC, BEL, C1, DEL and bidi controls; keeps newline and tab", () => {
    expect(inertText(`a${hostile}\tb\nc\u007f\r`)).toBe("a\\x1b]0;pwned\\x07\\x1b[2J\\x9b31m\\u{202e}\tb\nc\\x7f\\x0d");
    expect(ACTIVE.test(inertText(hostile))).toBe(false);
    const j = inertJson(JSON.stringify({ t: hostile }));
    expect(JSON.parse(j)).toEqual({ t: hostile });
    expect(ACTIVE.test(j)).toBe(false);
  });

  test("a lab title with terminal escapes cannot retitle or clear the terminal in lab list / lab inspect", async () => {
    const cwd = tmp();
    mkdirSync(join(cwd, "humanish", "labs"), { recursive: true });
    const lab = readFileSync(join(import.meta.dir, "../../labs/jq-first-contact.yaml"), "utf8")
      .replace("id: jq-first-contact", "id: hostile-title")
      .replace("title: jq first contact", 'title: "\\e]0;pwned\\a\\e[2J"');
    writeFileSync(join(cwd, "humanish", "labs", "hostile-title.yaml"), lab);
    for (const argv of [
      ["lab", "list", "--cwd", cwd],
      ["lab", "inspect", "hostile-title", "--cwd", cwd],
      ["lab", "inspect", "hostile-title", "--cwd", cwd, "--json"],
    ]) {
      const r = await cli(argv, { PATH: process.env.PATH });
      expect(r.code).toBe(0);
      expect(ACTIVE.test(r.stdout), argv.join(" ")).toBe(false);
      expect(ACTIVE.test(r.stderr), argv.join(" ")).toBe(false);
      if (!argv.includes("--json")) expect(r.stdout).toContain("\\x1b]0;pwned\\x07\\x1b[2J");
    }
  });
});

describe("the user's own terminal shows the user's own text", () => {
  test("lab inspect prints lab paths as written; doctor prints the cwd as it is", async () => {
    const r = await cli(["lab", "inspect", "codex-first-contact"], { PATH: process.env.PATH });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("/home/user/study");
    expect(r.stdout).not.toContain("[REDACTED_RUNTIME_PATH]");
    const cwd = tmp();
    const d = await cli(["doctor", "--cwd", cwd], { PATH: process.env.PATH });
    expect(d.stdout).toContain(cwd);
    expect(d.stdout).not.toContain("[REDACTED_LOCAL_PATH]");
  });

  test("a secret shape is still scrubbed on the user's terminal", async () => {
    const cwd = tmp();
    mkdirSync(join(cwd, "humanish", "labs"), { recursive: true });
    const key = `sk-proj-${"Ab3".repeat(10)}`;
    const lab = readFileSync(join(import.meta.dir, "../../labs/jq-first-contact.yaml"), "utf8")
      .replace("id: jq-first-contact", "id: keyed-title")
      .replace("title: jq first contact", `title: "uses ${key}"`);
    writeFileSync(join(cwd, "humanish", "labs", "keyed-title.yaml"), lab);
    for (const json of [false, true]) {
      const r = await cli(["lab", "inspect", "keyed-title", "--cwd", cwd, ...(json ? ["--json"] : [])], { PATH: process.env.PATH });
      expect(r.stdout).not.toContain(key);
      expect(r.stdout).toContain("[REDACTED_SECRET]");
    }
  });
});

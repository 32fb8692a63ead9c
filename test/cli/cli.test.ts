import { describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgv } from "../../src/cli/argv.ts";
import { loadHandler } from "../../src/cli/commands/index.ts";
import { COMMANDS } from "../../src/cli/spec.ts";
import { cli } from "./support.ts";

const tmp = () => mkdtempSync(join(tmpdir(), "humanish-cli-"));

describe("argv", () => {
  test("every command in the table has a handler", async () => {
    for (const c of COMMANDS) expect(await loadHandler(c.path.join(" "))).toBeFunction();
  });
  test("unknown command suggests the nearest", async () => {
    const r = await cli(["verfy"]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("did you mean `verify`");
    expect(r.stdout).toBe("");
  });
  test("unknown subcommand suggests the nearest", async () => {
    const r = await cli(["lab", "rnu", "x"]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("humanish lab run");
  });
  test("unknown flag suggests the nearest, or names the command that has it", async () => {
    const a = await cli(["lab", "run", "default", "--jsno"]);
    expect(a.code).toBe(1);
    expect(a.stderr).toContain("did you mean `--json`");
    const b = await cli(["verify", "--max-concurrent", "3"]);
    expect(b.code).toBe(1);
    expect(b.stderr).toContain("humanish env serve");
  });
  test("missing positional is a usage error", async () => {
    const r = await cli(["lab", "run"]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("<lab>");
  });
  test("a usage error with --json still prints exactly one JSON document (exit 1)", async () => {
    const cases: [string[], string][] = [
      [["verfy", "--json"], "humanish.usage-result.v1"],
      [["lab", "run", "--json"], "humanish.lab-run-result.v1"],
      [["runs", "--bogus", "--json"], "humanish.runs-result.v1"],
      [["lab", "rnu", "--json"], "humanish.usage-result.v1"],
      [["verify", "--run", "--json"], "humanish.verify-result.v1"],
    ];
    for (const [argv, schema] of cases) {
      const r = await cli(argv);
      expect(r.code).toBe(1);
      const j = r.json<{ schema: string; ok: boolean; error: { code: string; message: string; next?: string } }>();
      expect(j).toMatchObject({ schema, ok: false, error: { code: "HUMANISH_USAGE" } });
      expect(j.error.message.length).toBeGreaterThan(0);
      expect(j.error.next).toBeDefined();
      expect(r.stderr).toBe("");
    }
    expect((await cli(["verify", "--run", "--json"])).json<{ error: { message: string } }>().error.message).toContain("`--run` needs a value");
    // A negative amount after a flag parses as an option: the message says what was read and how to pass it.
    const negative = (await cli(["analyze", "--max-cost", "-1", "--json"])).json<{ error: { message: string } }>().error.message;
    expect(negative).toContain("`-1` after it reads as an option");
    expect(negative).toContain("--max-cost=-1");
    // Without --json, stdout stays empty and the message goes to stderr.
    const human = await cli(["runs", "--bogus"]);
    expect(human.stdout).toBe("");
    expect(human.stderr).toContain("unknown option `--bogus`");
  });
  test("a string flag without value is a usage error, not a crash", () => {
    expect(parseArgv(["verify", "--run"]).kind).toBe("usage-error");
  });
});

describe("envelopes", () => {
  test("--version prints the version; --json is one document", async () => {
    const r = await cli(["--version"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^humanish \d+\.\d+\.\d+ \(/);
    const j = (await cli(["--version", "--json"])).json();
    expect(j).toMatchObject({ schema: "humanish.version-result.v1", ok: true });
  });
  test("a domain failure in --json mode: schema, ok false, error {code, message}, exit 2", async () => {
    const cwd = tmp();
    const r = await cli(["lab", "inspect", "no-such-lab", "--cwd", cwd, "--json"]);
    expect(r.code).toBe(2);
    const j = r.json<{ schema: string; ok: boolean; error: { code: string; message: string; next?: string } }>();
    expect(j.schema).toBe("humanish.lab-inspect-result.v1");
    expect(j.ok).toBe(false);
    expect(j.error.code).toBe("HUMANISH_LAB_NOT_FOUND");
    expect(j.error.message).toContain("no-such-lab");
    expect(r.stderr).toBe("");
  });
  test("human failure lines: failed / code / next on stderr", async () => {
    const r = await cli(["lab", "inspect", "no-such-lab", "--cwd", tmp()]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("humanish lab inspect failed:");
    expect(r.stderr).toContain("code: HUMANISH_LAB_NOT_FOUND");
    expect(r.stderr).toContain("next: ");
  });
  test("--cwd that is not a directory", async () => {
    const r = await cli(["runs", "--cwd", "/definitely/not/here", "--json"]);
    expect(r.code).toBe(2);
    expect(r.json<{ error: { code: string } }>().error.code).toBe("HUMANISH_INVALID_CWD");
  });
  test("--env-file missing and malformed", async () => {
    const cwd = tmp();
    const a = await cli(["doctor", "--cwd", cwd, "--env-file", "nope.env", "--json"]);
    expect(a.json<{ error: { code: string } }>().error.code).toBe("HUMANISH_ENV_FILE_NOT_FOUND");
    writeFileSync(join(cwd, "bad.env"), "GOOD=1\nthis is not an assignment\n");
    const b = await cli(["doctor", "--cwd", cwd, "--env-file", "bad.env", "--json"]);
    const err = b.json<{ error: { code: string; message: string } }>().error;
    expect(err.code).toBe("HUMANISH_ENV_FILE_INVALID");
    expect(err.message).toContain("bad.env:2");
    writeFileSync(join(cwd, "open.env"), 'A="never closed\nB=2\n');
    const c = await cli(["doctor", "--cwd", cwd, "--env-file", "open.env", "--json"]);
    expect(c.json<{ error: { code: string; message: string } }>().error).toMatchObject({ code: "HUMANISH_ENV_FILE_INVALID" });
    writeFileSync(join(cwd, "multi.env"), 'A="two\nlines"\nB=2\n');
    const d = await cli(["doctor", "--cwd", cwd, "--env-file", "multi.env", "--json"]);
    expect(d.json<{ error?: { code: string } }>().error?.code).not.toBe("HUMANISH_ENV_FILE_INVALID");
  });
  test("lab list shows the embedded default lab", async () => {
    const r = await cli(["lab", "list", "--cwd", tmp(), "--json"]);
    expect(r.code).toBe(0);
    const labs = r.json<{ labs: { id: string }[] }>().labs.map((l) => l.id);
    expect(labs).toContain("jq-first-contact");
  });
  test("lab inspect default resolves the embedded jq lab", async () => {
    const r = await cli(["lab", "inspect", "default", "--cwd", tmp(), "--json"]);
    expect(r.code).toBe(0);
    expect(r.json<{ lab: string; route: string }>()).toMatchObject({ lab: "jq-first-contact", route: "terminal" });
  });
  test("--dry-run with --live is refused before anything runs", async () => {
    const r = await cli(["lab", "run", "default", "--dry-run", "--live", "--cwd", tmp(), "--json"]);
    expect(r.code).toBe(2);
    expect(r.json<{ error: { code: string } }>().error.code).toBe("HUMANISH_LAB_OPTION_CONFLICT");
  });
  test("the quick start `lab run default` without an engine is a dry run that verifies (README quick start A)", async () => {
    const cwd = tmp();
    const r = await cli(["lab", "run", "default", "--cwd", cwd, "--json"], { ...process.env, DOCKER_HOST: "unix:///nonexistent/humanish-test.sock" });
    const j = r.json<{ ok: boolean; mode: string; runDir: string; modeReason: { code: string }; error?: { code: string } }>();
    expect(j.error).toBeUndefined();
    expect(j.mode).toBe("dry-run");
    expect(j.modeReason.code).toBe("no-engine");
    expect(j.ok).toBe(true);
    expect(r.code).toBe(0);
    // Scripts get a usable project-relative run dir (an absolute local path would be redacted).
    expect(j.runDir).toMatch(/^\.humanish\/runs\/jq-first-contact-/);
    expect(existsSync(join(cwd, j.runDir, "run.json"))).toBe(true);
    expect(existsSync(join(cwd, j.runDir, "report", "index.html"))).toBe(true);
  });
  test("verify in human mode names the share-safety status (not an object)", async () => {
    const cwd = tmp();
    expect((await cli(["lab", "run", "default", "--dry-run", "--cwd", cwd, "--json"])).code).toBe(0);
    const r = await cli(["verify", "--cwd", cwd]);
    expect(r.code).toBe(0);
    expect(r.stdout).not.toContain("[object Object]");
    expect(r.stdout).toContain("verified · share safety share_ready");
    // The run library line carries lab, route, mode, liveness, verdict, cost and duration.
    const runs = await cli(["runs", "--cwd", cwd]);
    expect(runs.code).toBe(0);
    expect(runs.stdout).toMatch(/jq-first-contact · terminal · dry-run · finished .*cost (unmeasured|\$[0-9.]+) · (\d|duration unknown)/);
  });
  test("verify of a run that is still running says so instead of 're-run the lab'", async () => {
    const { createRunWriter } = await import("../../src/bundle/index.ts");
    const cwd = tmp();
    const w = createRunWriter({ cwd, runId: "still-running", secrets: [], route: "terminal", mode: "live", lab: "x", heartbeatMs: 0 });
    try {
      await w.writeStatus({ phase: "participate", detail: "p1 step 1" });
      const r = await cli(["verify", "--run", "still-running", "--cwd", cwd, "--json"]);
      expect(r.code).toBe(2);
      const j = r.json<{ ok: boolean; error: { code: string; message: string; next: string } }>();
      expect(j.ok).toBe(false);
      expect(j.error.code).toBe("HUMANISH_RUN_IN_PROGRESS");
      expect(j.error.message).toContain("still running");
      expect(j.error.next).toContain("humanish verify --run still-running");
    } finally {
      w.close();
    }
  });
  test("an invalid --run-id is refused", async () => {
    const r = await cli(["lab", "run", "default", "--run-id", "../escape", "--cwd", tmp(), "--json"]);
    expect(r.code).toBe(2);
    expect(r.json<{ error: { code: string } }>().error.code).toBe("HUMANISH_INVALID_RUN_ID");
  });
  test("secret values from the env never reach stdout or stderr", async () => {
    const canary = "sk-canary-cli-0123456789abcdefghij";
    const r = await cli(["lab", "inspect", canary, "--cwd", tmp(), "--json"], { ...process.env, OPENAI_API_KEY: canary });
    expect(r.code).toBe(2);
    expect(r.stdout + r.stderr).not.toContain(canary);
  });
});

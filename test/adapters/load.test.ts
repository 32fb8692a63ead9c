/**
 * Loading a lab's scorer: every refusal code with the field it names, the flag overriding the
 * manifest, and `lab run` refusing a bad scorer before anything exists (no run directory, no
 * engine contacted).
 */
import { afterEach, describe, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, mkdirSync, realpathSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { loadScorer, scorerBackendProblem } from "../../src/adapters/load.ts";
import { sha256Hex } from "../../src/bytes/sha256.ts";
import { isHumanishError } from "../../src/errors.ts";
import { loadLab } from "../../src/lab/index.ts";
import { cli } from "../cli/support.ts";
import { tempProject } from "../support/bundles.ts";

// Each scorer runs in a container of its own (one to load it, one to run its hooks).
setDefaultTimeout(60_000);

const cleanups: (() => void)[] = [];
afterEach(() => {
  while (cleanups.length) cleanups.pop()!();
});

/** A terminal lab (dry run) whose review block is `review` (YAML lines, indented under `review:`). */
function labYaml(review?: string): string {
  return [
    "schema: humanish.lab.v2",
    "id: scored",
    "subject:",
    "  source: terminal-product",
    "  product:",
    "    name: wc",
    "    publicSurfaces: [https://www.gnu.org/software/coreutils/]",
    "actors:",
    "  - type: scripted-terminal",
    "    steps:",
    "      - run: wc --help",
    ...(review ? ["review:", review] : []),
    "",
  ].join("\n");
}

/** A project with `labs/scored/lab.yaml` (declaring `ref`, when given) and the given files under the lab folder. */
function project(ref: string | undefined, files: Record<string, string> = {}): { cwd: string; labDir: string; labPath: string } {
  const p = tempProject("humanish-scorer-load-");
  cleanups.push(p.cleanup);
  const labDir = join(p.cwd, "labs", "scored");
  mkdirSync(labDir, { recursive: true });
  const labPath = join(labDir, "lab.yaml");
  writeFileSync(labPath, labYaml(ref === undefined ? undefined : `  scorer:\n    ref: ${JSON.stringify(ref)}`));
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(join(labDir, name, ".."), { recursive: true });
    writeFileSync(join(labDir, name), text);
  }
  return { cwd: p.cwd, labDir, labPath };
}

async function load(ref: string | undefined, files: Record<string, string> = {}, flag?: string) {
  const p = project(ref, files);
  const lab = await loadLab("labs/scored/lab.yaml", p.cwd);
  return { p, scorer: await loadScorer({ config: lab.config, labPath: lab.path!, cwd: p.cwd, ...(flag !== undefined ? { flag } : {}) }) };
}

async function refusal(ref: string | undefined, files: Record<string, string> = {}, flag?: string): Promise<{ code: string; message: string; next?: string }> {
  try {
    await load(ref, files, flag);
  } catch (e) {
    if (isHumanishError(e)) return { code: e.code, message: e.message, ...(e.next ? { next: e.next } : {}) };
    throw e;
  }
  throw new Error("expected a refusal");
}

const GOOD = "export function score(ctx) { return { namespace: 'x', status: 'pass', score: 100, summary: ctx.runId }; }\n";

describe("loadScorer", () => {
  test("no scorer declared: null", async () => {
    expect((await load(undefined)).scorer).toBeNull();
  });

  test("a .ts module with a type annotation loads; provenance has the digest and the exported hooks", async () => {
    const text =
      "interface Ctx { runId: string }\nexport const score = (ctx: Ctx) => ({ namespace: 'x', status: 'pass', score: 1, summary: ctx.runId });\nexport async function deriveFeedback() { return []; }\n";
    const { p, scorer } = await load("./scorer.ts", { "scorer.ts": text });
    expect(scorer?.provenance).toEqual({
      schema: "humanish.scorer-provenance.v1",
      ref: "./scorer.ts",
      digest: sha256Hex(text),
      source: "manifest",
      exports: ["score", "deriveFeedback"],
      // Loaded in a container of its own, removed by its id once the import answered.
      confinement: {
        mode: "container",
        image: expect.stringMatching(/^humanish-sandbox:/),
        containers: [
          { id: expect.stringMatching(/^[0-9a-f]{64}$/), outcome: "released", reason: expect.stringContaining("inspect-404"), at: expect.any(String) },
        ],
      },
    });
    expect(scorer?.path).toBe(realpathSync(join(p.labDir, "scorer.ts")));
  });

  test("the module loads in its own process: its top-level code sees no secret of the environment and cannot exit humanish", async () => {
    const saved = process.env.OPENAI_API_KEY;
    process.env.OPENAI_API_KEY = "sk-test-not-for-the-scorer";
    try {
      // Its folder is read-only to it, so it reports what it sees through the load failure's message.
      const text = "throw new Error('ENV' + JSON.stringify(Object.keys(process.env)) + 'ENV');\nexport const score = () => ({});\n";
      const refused = await refusal("./scorer.mjs", { "scorer.mjs": text });
      const keys = JSON.parse(/ENV(.*)ENV/.exec(refused.message)?.[1] ?? "null") as string[];
      expect(keys).not.toContain("OPENAI_API_KEY");
      expect(keys.every((k) => ["PATH", "HOME", "TMPDIR", "LANG", "HOSTNAME", "DEBIAN_FRONTEND"].includes(k) || k.startsWith("BUN_"))).toBe(true);
    } finally {
      if (saved === undefined) delete process.env.OPENAI_API_KEY;
      else process.env.OPENAI_API_KEY = saved;
    }
    const exits = await refusal("./exits.mjs", { "exits.mjs": "process.exit(0);\nexport const score = () => 1;\n" });
    expect(exits).toMatchObject({ code: "HUMANISH_LAB_SCORER_LOAD_FAILED", message: expect.stringContaining("exited (code 0") });
  });

  test("--scorer may be an absolute path inside the project; an upper-case extension is refused", async () => {
    const p = project(undefined, { "flag.mjs": GOOD });
    const lab = await loadLab("labs/scored/lab.yaml", p.cwd);
    const abs = join(p.labDir, "flag.mjs");
    const s = await loadScorer({ config: lab.config, labPath: lab.path!, cwd: p.cwd, flag: abs });
    expect(s?.provenance).toMatchObject({ ref: abs, source: "cli-flag" });
    expect(await refusal("./scorer.TS", { "scorer.TS": GOOD })).toMatchObject({ code: "HUMANISH_LAB_SCORER_BAD_REF" });
  });

  test("--scorer overrides review.scorer.ref and is relative to the project directory", async () => {
    const { scorer } = await load("./missing.ts", { "flag.mjs": GOOD }, "labs/scored/flag.mjs");
    expect(scorer?.provenance).toMatchObject({ ref: "labs/scored/flag.mjs", source: "cli-flag", exports: ["score"] });
  });

  test("HUMANISH_LAB_SCORER_BAD_REF: absolute, escaping, wrong extension, symlink out of the lab folder", async () => {
    expect(await refusal("/etc/passwd.ts")).toMatchObject({ code: "HUMANISH_LAB_SCORER_BAD_REF", message: expect.stringContaining("review.scorer.ref") });
    expect((await refusal("/etc/passwd.ts")).message).toContain("absolute");
    expect(await refusal("../other/scorer.ts")).toMatchObject({
      code: "HUMANISH_LAB_SCORER_BAD_REF",
      message: expect.stringContaining("leaves the lab's folder"),
    });
    expect(await refusal("./scorer.py", { "scorer.py": "x" })).toMatchObject({
      code: "HUMANISH_LAB_SCORER_BAD_REF",
      message: expect.stringContaining('".py"'),
    });
    expect(await refusal("./scorer.ts", {}, "/tmp/x.ts")).toMatchObject({ code: "HUMANISH_LAB_SCORER_BAD_REF", message: expect.stringContaining("--scorer") });
    expect(await refusal("./scorer.ts", {}, "../x.ts")).toMatchObject({
      code: "HUMANISH_LAB_SCORER_BAD_REF",
      message: expect.stringContaining("project directory"),
    });

    const p = project("./link.ts");
    const outside = tempProject("humanish-scorer-outside-");
    cleanups.push(outside.cleanup);
    writeFileSync(join(outside.cwd, "evil.ts"), GOOD);
    symlinkSync(join(outside.cwd, "evil.ts"), join(p.labDir, "link.ts"));
    const lab = await loadLab("labs/scored/lab.yaml", p.cwd);
    const e = await loadScorer({ config: lab.config, labPath: lab.path!, cwd: p.cwd }).catch((x) => x);
    expect(e).toMatchObject({ code: "HUMANISH_LAB_SCORER_BAD_REF", message: expect.stringContaining("symlink") });
  });

  test("HUMANISH_LAB_SCORER_BAD_REF: a manifest ref on a lab with no folder (embedded)", async () => {
    const p = project("./scorer.ts", { "scorer.ts": GOOD });
    const lab = await loadLab("labs/scored/lab.yaml", p.cwd);
    const e = await loadScorer({ config: lab.config, cwd: p.cwd }).catch((x) => x);
    expect(e).toMatchObject({ code: "HUMANISH_LAB_SCORER_BAD_REF", next: expect.stringContaining("--scorer") });
  });

  test("HUMANISH_LAB_SCORER_NOT_FOUND: no file, or a directory", async () => {
    expect(await refusal("./nope.ts")).toMatchObject({ code: "HUMANISH_LAB_SCORER_NOT_FOUND", message: expect.stringContaining("./nope.ts") });
    const p = project("./dir.ts");
    mkdirSync(join(p.labDir, "dir.ts"));
    const lab = await loadLab("labs/scored/lab.yaml", p.cwd);
    const e = await loadScorer({ config: lab.config, labPath: lab.path!, cwd: p.cwd }).catch((x) => x);
    expect(e).toMatchObject({ code: "HUMANISH_LAB_SCORER_NOT_FOUND", message: expect.stringContaining("not a regular file") });
  });

  test("HUMANISH_LAB_SCORER_LOAD_FAILED: a syntax error, a throw at top level, a missing import", async () => {
    expect(await refusal("./syntax.ts", { "syntax.ts": "export function score( {\n" })).toMatchObject({ code: "HUMANISH_LAB_SCORER_LOAD_FAILED" });
    const thrown = await refusal("./throws.mjs", { "throws.mjs": "throw new Error('top-level boom');\nexport const score = () => 1;\n" });
    expect(thrown).toMatchObject({ code: "HUMANISH_LAB_SCORER_LOAD_FAILED", message: expect.stringContaining("top-level boom") });
    expect(await refusal("./imports.js", { "imports.js": "import x from './absent.js';\nexport const score = () => x;\n" })).toMatchObject({
      code: "HUMANISH_LAB_SCORER_LOAD_FAILED",
    });
  });

  test("HUMANISH_LAB_SCORER_NO_HOOKS: no hook, or a hook that is not a function", async () => {
    expect(await refusal("./none.mjs", { "none.mjs": "export const other = 1;\n" })).toMatchObject({ code: "HUMANISH_LAB_SCORER_NO_HOOKS" });
    const e = await refusal("./value.mjs", { "value.mjs": "export const score = 42;\n" });
    expect(e).toMatchObject({ code: "HUMANISH_LAB_SCORER_NO_HOOKS", message: expect.stringContaining("score is a number") });
    const dflt = await refusal("./default.mjs", { "default.mjs": "export default { score() { return {}; } };\n" });
    expect(dflt).toMatchObject({ code: "HUMANISH_LAB_SCORER_NO_HOOKS", message: expect.stringContaining("a default export is not read") });
  });

  test("HUMANISH_LAB_SCORER_UNSUPPORTED_BACKEND: a target or participant that cannot give the context", async () => {
    const p = project("./scorer.ts", { "scorer.ts": GOOD });
    const lab = await loadLab("labs/scored/lab.yaml", p.cwd);
    expect(scorerBackendProblem(lab.config)).toBeUndefined();
    const vm = { ...lab.config, execution: { ...lab.config.execution, target: "firecracker" } } as unknown as typeof lab.config;
    expect(scorerBackendProblem(vm)).toContain("execution.target firecracker");
    const e = await loadScorer({ config: vm, labPath: lab.path!, cwd: p.cwd }).catch((x) => x);
    expect(e).toMatchObject({ code: "HUMANISH_LAB_SCORER_UNSUPPORTED_BACKEND", message: expect.stringContaining("review.scorer.ref") });
    const unknownActor = { ...lab.config, actors: [{ ...lab.config.actors[0], type: "a-participant-without-trace" }] } as unknown as typeof lab.config;
    expect(scorerBackendProblem(unknownActor)).toContain("no structured trace");
  });
});

describe("lab run refuses a bad scorer before anything exists", () => {
  test("a missing scorer: HUMANISH_LAB_SCORER_NOT_FOUND, exit 2, no run directory", async () => {
    const p = project("./missing.ts");
    // A Docker host that does not exist: a refusal that came after preflight would name it.
    const r = await cli(["lab", "run", "labs/scored/lab.yaml", "--live", "--json", "--cwd", p.cwd], {
      ...process.env,
      DOCKER_HOST: "unix:///nonexistent/docker.sock",
    });
    expect(r.json()).toMatchObject({ ok: false, error: { code: "HUMANISH_LAB_SCORER_NOT_FOUND" } });
    expect(r.code).not.toBe(0);
    expect(existsSync(join(p.cwd, ".humanish", "runs"))).toBe(false);
  });

  test("lab inspect and doctor --lab check review.scorer.ref as lab run does", async () => {
    for (const ref of ["../ea/scorer.ts", "./missing.ts"]) {
      const p = project(ref);
      const inspect = await cli(["lab", "inspect", "labs/scored/lab.yaml", "--json", "--cwd", p.cwd]);
      expect(inspect.json()).toMatchObject({
        ok: false,
        error: { code: ref.startsWith("..") ? "HUMANISH_LAB_SCORER_BAD_REF" : "HUMANISH_LAB_SCORER_NOT_FOUND" },
      });
      const doctor = await cli(["doctor", "--lab", "labs/scored/lab.yaml", "--json", "--cwd", p.cwd]);
      const row = doctor.json<{ checks: { name: string; ok: boolean; message: string }[] }>().checks.find((c) => c.name === "lab scorer");
      expect(row).toMatchObject({ ok: false, message: expect.stringContaining("HUMANISH_LAB_SCORER_") });
    }
    const good = project("./scorer.mjs", { "scorer.mjs": GOOD });
    expect((await cli(["lab", "inspect", "labs/scored/lab.yaml", "--json", "--cwd", good.cwd])).json()).toMatchObject({ ok: true });
  }, 60_000);

  test("the browser route takes the seam too: --scorer on an embedded browser lab (dry run)", async () => {
    const p = project(undefined, { "s.mjs": GOOD });
    const r = await cli(["lab", "run", "todomvc-first-run", "--dry-run", "--scorer", "labs/scored/s.mjs", "--json", "--cwd", p.cwd]);
    const res = r.json<{ ok: boolean; route: string; runDir: string }>();
    expect(res).toMatchObject({ ok: true, route: "browser" });
    const bundle = JSON.parse(await Bun.file(join(p.cwd, res.runDir, "run.json")).text());
    expect(bundle.scorerProvenance).toMatchObject({ ref: "labs/scored/s.mjs", source: "cli-flag", hooks: "loaded-only" });
  });

  test("no usable engine: lab run refuses the scorer before anything exists; opted in, it says on stderr and in the bundle that it ran unconfined", async () => {
    const p = project("./scorer.mjs", { "scorer.mjs": GOOD });
    const noEngine = { ...process.env, DOCKER_HOST: "unix:///nonexistent/docker.sock" };
    const refused = await cli(["lab", "run", "labs/scored/lab.yaml", "--dry-run", "--json", "--cwd", p.cwd], noEngine);
    expect(refused.json()).toMatchObject({ ok: false, error: { code: "HUMANISH_LAB_SCORER_UNCONFINED" } });
    expect(refused.code).toBe(2);
    expect(existsSync(join(p.cwd, ".humanish", "runs"))).toBe(false);

    const r = await cli(["lab", "run", "labs/scored/lab.yaml", "--dry-run", "--json", "--cwd", p.cwd], { ...noEngine, HUMANISH_ALLOW_UNCONFINED_SCORER: "1" });
    const res = r.json<{ ok: boolean; runDir: string; warnings: { code: string }[] }>();
    expect(res.ok).toBe(true);
    expect(r.stderr).toContain("runs UNCONFINED");
    expect(r.stderr).toContain("signing key");
    expect(res.warnings.map((w) => w.code)).toContain("HUMANISH_ADAPTER_UNCONFINED");
    const bundle = JSON.parse(await Bun.file(join(p.cwd, res.runDir, "run.json")).text());
    expect(bundle.scorerProvenance.confinement).toMatchObject({ mode: "unconfined", optIn: "HUMANISH_ALLOW_UNCONFINED_SCORER=1" });
  });

  test("a dry run loads the scorer, records it, and runs no hook", async () => {
    const p = project("./scorer.mjs", { "scorer.mjs": "export function score() { throw new Error('must not run on a dry run'); }\n" });
    const r = await cli(["lab", "run", "labs/scored/lab.yaml", "--json", "--cwd", p.cwd]);
    const res = r.json<{ ok: boolean; runDir: string; warnings: { code: string }[] }>();
    expect(res.ok).toBe(true);
    expect(res.warnings.map((w) => w.code)).toContain("HUMANISH_ADAPTER_NOT_RUN");
    expect(r.json<{ adapter: unknown }>().adapter).toEqual({ ref: "./scorer.mjs", hooks: "loaded-only", score: null, feedbackCandidates: 0, artifacts: [] });
    const bundle = JSON.parse(await Bun.file(join(p.cwd, res.runDir, "run.json")).text());
    expect(bundle.scorerProvenance).toMatchObject({ ref: "./scorer.mjs", source: "manifest", hooks: "loaded-only", exports: ["score"] });
    expect(bundle.adapterScore).toBeUndefined();
  });
});

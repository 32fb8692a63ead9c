/**
 * The example adapter through the compiled binary: `humanish lab run labs/example-adapter/lab.yaml`
 * on a real Docker sandbox with the scripted participant (no model, nothing spent). The binary
 * imports the lab's `scorer.ts` at run time; the bundle carries its score, feedback candidate
 * and summary file, and verifies; no container is left. `humanish types --out` from the same
 * binary writes the declarations the example is typed against.
 */
import { afterAll, expect, test } from "bun:test";
import { cpSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { dockerClientFor } from "../../src/docker/index.ts";
import { PROJECT_LABEL } from "../../src/sandbox/controller.ts";
import { requireDocker } from "../support/prereq.ts";

const ROOT = resolve(import.meta.dir, "../..");
const buildDir = mkdtempSync(join(tmpdir(), "humanish-adapter-bin-"));
const project = realpathSync(mkdtempSync(join(tmpdir(), "humanish-adapter-project-")));
afterAll(() => {
  rmSync(buildDir, { recursive: true, force: true });
  rmSync(project, { recursive: true, force: true });
});

async function run(bin: string, args: string[]): Promise<{ code: number; out: string; err: string }> {
  const proc = Bun.spawn([bin, ...args], {
    cwd: project,
    env: {
      PATH: process.env.PATH ?? "/usr/bin:/bin",
      HOME: process.env.HOME ?? project,
      ...(process.env.DOCKER_HOST ? { DOCKER_HOST: process.env.DOCKER_HOST } : {}),
    },
    stdout: "pipe",
    stderr: "pipe",
  });
  const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  return { code, out, err };
}

test("compiled binary: the example adapter scores a live scripted run and the bundle verifies", async () => {
  await requireDocker();
  const bin = join(buildDir, "humanish");
  const build = Bun.spawnSync([process.execPath, "build.ts", "--outfile", bin], { cwd: ROOT, stdout: "pipe", stderr: "pipe" });
  expect({ code: build.exitCode, err: build.exitCode === 0 ? "" : build.stderr.toString() }).toEqual({ code: 0, err: "" });

  mkdirSync(join(project, "labs"));
  cpSync(join(ROOT, "labs/example-adapter"), join(project, "labs/example-adapter"), { recursive: true });

  // The copied folder already holds the declarations: regenerating them replaces the file, so --force.
  const types = await run(bin, ["types", "--out", "labs/example-adapter/humanish.d.ts", "--force", "--json"]);
  expect(types.code).toBe(0);
  expect(JSON.parse(types.out)).toMatchObject({ ok: true, out: "labs/example-adapter/humanish.d.ts" });
  expect(readFileSync(join(project, "labs/example-adapter/humanish.d.ts"), "utf8")).toBe(
    readFileSync(join(ROOT, "labs/example-adapter/humanish.d.ts"), "utf8"),
  );

  const r = await run(bin, ["lab", "run", "labs/example-adapter/lab.yaml", "--json"]);
  const leftover = await dockerClientFor(process.env).containerList({ all: true, labels: [`${PROJECT_LABEL}=${project}`] });
  expect(leftover.map((c) => c.Id)).toEqual([]);
  expect({ code: r.code, err: r.code === 0 ? "" : `${r.err.slice(-2000)}${r.out.slice(-2000)}` }).toEqual({ code: 0, err: "" });
  const res = JSON.parse(r.out);
  expect(res).toMatchObject({ ok: true, route: "terminal", mode: "live", reward: 1, verify: { ok: true } });
  expect(res.adapter).toEqual({
    ref: "./scorer.ts",
    hooks: "ran",
    score: { namespace: "example.wc", status: "partial", score: 90, summary: "1/1 task(s) passed; 1 command(s) exited non-zero" },
    feedbackCandidates: 1,
    artifacts: ["adapter/example.wc/summary.json"],
  });

  const bundle = JSON.parse(readFileSync(join(project, res.runDir, "run.json"), "utf8"));
  expect(bundle.scorerProvenance).toMatchObject({
    ref: "./scorer.ts",
    source: "manifest",
    hooks: "ran",
    exports: ["score", "deriveFeedback", "deriveArtifacts"],
    // The binary ran the scorer in sandbox containers of its own (load, then hooks), each removed by id.
    confinement: { mode: "container", image: expect.stringMatching(/^humanish-sandbox:/) },
  });
  expect(bundle.scorerProvenance.confinement.containers.map((c: { outcome: string }) => c.outcome)).toEqual(["released", "released"]);
  expect(bundle.scorerProvenance.digest).toBe(new Bun.CryptoHasher("sha256").update(readFileSync(join(ROOT, "labs/example-adapter/scorer.ts"))).digest("hex"));
  expect(bundle.adapterScore).toEqual({
    schema: "humanish.adapter-score.v1",
    namespace: "example.wc",
    status: "partial",
    score: 90,
    summary: "1/1 task(s) passed; 1 command(s) exited non-zero",
    data: { tasksPassed: 1, tasksTotal: 1, failedCommands: 1 },
  });
  expect(bundle.feedbackCandidates).toHaveLength(1);
  expect(bundle.feedbackCandidates[0]).toMatchObject({
    id: "p1-failed-command-1",
    run_id: res.runId,
    participant_id: "p1",
    adapter_id: "example.wc",
    summary: expect.stringContaining("wc --words-only"),
    evidence: [expect.objectContaining({ path: "actor.json" }), expect.objectContaining({ path: "terminal-transcript.txt" })],
  });
  expect(bundle.adapterArtifacts).toEqual([expect.objectContaining({ path: "adapter/example.wc/summary.json", kind: "summary" })]);
  const summary = JSON.parse(readFileSync(join(project, res.runDir, "adapter/example.wc/summary.json"), "utf8"));
  expect(summary.participants[0].commands.map((c: { exitCode: number }) => c.exitCode)).toEqual([0, 1, 0]);

  const v = await run(bin, ["verify", "--run", res.runId, "--json"]);
  expect(v.code).toBe(0);
  expect(JSON.parse(v.out).checks.find((c: { name: string }) => c.name === "adapter output")).toMatchObject({ ok: true });
}, 300_000);

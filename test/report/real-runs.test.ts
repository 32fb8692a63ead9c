/**
 * Reports of runs made by the real CLI and terminal route: a live scripted-terminal study in a
 * real Docker sandbox whose participant prints hostile markup, and a dry run. `humanish report`
 * writes each report; real headless Chromium renders it.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { RunBundleSchema } from "../../src/bundle/index.ts";
import { EMBEDDED_LABS } from "../../src/lab/embedded.ts";
import { dockerSocketPath, requireDocker } from "../support/prereq.ts";
import { renderInChromium, textOf } from "./chromium.ts";
import { tempProject } from "./fixtures.ts";

const ROOT = join(import.meta.dir, "..", "..");
const MAIN = join(ROOT, "src", "cli", "main.ts");
const project = tempProject("humanish-report-real-");
afterAll(() => project.cleanup());

const HOSTILE_LINE = `<script>document.title="PWNED"</script></pre><h1 id="injected">x</h1>"><img src=x onerror="document.title=1">`;

const LAB = `schema: humanish.lab.v2
id: hostile-output
title: A participant that prints markup
subject:
  source: terminal-product
  product:
    name: coreutils
    publicSurfaces: [https://www.gnu.org/software/coreutils/]
actors:
  - type: scripted-terminal
    steps:
      - run: echo hello > greeting.txt && cat greeting.txt
      - run: printf '%s\\n' '${HOSTILE_LINE}'
    tasks:
      - id: greet
        goal: Write hello to greeting.txt
        check: {run: 'test "$(cat greeting.txt)" = hello'}
      - id: finish
        goal: Create done.txt when finished
        check: {run: test -f done.txt}
execution: {target: docker}
scenario:
  mode: live
  caps: {maxUsd: 0, maxMinutes: 2}
`;

async function cli(args: string[]): Promise<Record<string, unknown>> {
  const p = Bun.spawn([process.execPath, MAIN, ...args, "--json"], { cwd: project.cwd, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  const [out, err, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  try {
    return { ...JSON.parse(out), exitCode: code };
  } catch {
    throw new Error(`humanish ${args.join(" ")} printed no JSON (exit ${code}):\n${out}\n${err}`);
  }
}

describe("reports of real runs", () => {
  test("live terminal study in Docker: hostile transcript renders as text; verdict and funnel shown; no container left", async () => {
    await requireDocker();
    mkdirSync(join(project.cwd, "humanish", "labs"), { recursive: true });
    writeFileSync(join(project.cwd, "humanish", "labs", "hostile-output.yaml"), LAB);
    const run = await cli(["lab", "run", "hostile-output"]);
    expect(run.ok).toBe(true);
    expect(run.mode).toBe("live");
    expect(run.verdict).toBe("0/1 reached the goal; tasks: greet 1/1 · finish 0/1");
    const runId = String(run.runId);

    const rep = await cli(["report", "--run", runId]);
    expect(rep.ok).toBe(true);
    const runDir = join(project.cwd, ".humanish", "runs", runId);
    const bundle = RunBundleSchema.parse(JSON.parse(readFileSync(join(runDir, "run.json"), "utf8")));
    expect(bundle.artifacts.some((a) => a.path === "report/index.html" && a.kind === "report")).toBe(true);
    expect((await cli(["verify", "--run", runId])).ok).toBe(true);

    const r = await renderInChromium(join(runDir, "report", "index.html"), { keepScreenshotAs: "humanish-report-live-terminal.png" });
    const text = textOf(r.dom);
    expect(text).toContain("0/1 reached the goal; tasks: greet 1/1 · finish 0/1");
    expect(r.dom).toContain('id="funnel"');
    expect(r.dom).toContain('id="transcript"');
    expect(text).toContain("hello");
    expect(text).toContain(HOSTILE_LINE);
    expect(r.dom).not.toMatch(/<h1 id="injected"/);
    expect(r.dom).not.toMatch(/<img[^>]*onerror/i);
    expect(r.dom).not.toMatch(/<script/i);
    expect(r.dom).toContain("<title>humanish report · A participant that prints markup</title>");
    expect(text).toContain("released");

    // The route released its sandbox by id: nothing labelled with this run remains.
    const filters = encodeURIComponent(JSON.stringify({ label: [`humanish.run=${runId}`] }));
    const res = await fetch(`http://localhost/containers/json?all=1&filters=${filters}`, { unix: dockerSocketPath() } as RequestInit);
    expect(await res.json()).toEqual([]);
  }, 180_000);

  test("dry run through the real CLI: contract-only report", async () => {
    mkdirSync(join(project.cwd, "humanish", "labs"), { recursive: true });
    writeFileSync(join(project.cwd, "humanish", "labs", "dry.yaml"), LAB.replace("id: hostile-output", "id: dry").replace("mode: live", "mode: dry-run"));
    const run = await cli(["lab", "run", "dry"]);
    expect(run.ok).toBe(true);
    expect(run.mode).toBe("dry-run");
    const rep = await cli(["report", "--run", String(run.runId)]);
    expect(rep.ok).toBe(true);
    const runDir = join(project.cwd, ".humanish", "runs", String(run.runId));
    const r = await renderInChromium(join(runDir, "report", "index.html"), { keepScreenshotAs: "humanish-report-real-dry-run.png" });
    const text = textOf(r.dom);
    expect(text).toContain("contract_proof_only");
    expect(text).toContain("dry run (contract only): 0/1 participants ran; tasks: greet 0/1 · finish 0/1");
    expect(r.dom).toContain('id="funnel"');
    expect(text).toContain("No terminal transcript was written");
    expect(text).toContain("share_ready");
  }, 120_000);

  test("live two-seat browser study (desktop + mobile) in real guests: a row and a screenshot strip per seat", async () => {
    await requireDocker();
    mkdirSync(join(project.cwd, "humanish", "labs"), { recursive: true });
    const todomvc = EMBEDDED_LABS.find((l) => l.id === "todomvc-first-run")!.text;
    const two = todomvc.replace("id: todomvc-first-run", "id: todomvc-two-seats").replace("    count: 1", "    count: 2");
    expect(two).toContain("count: 2");
    writeFileSync(join(project.cwd, "humanish", "labs", "todomvc-two-seats.yaml"), two);
    const run = await cli(["lab", "run", "todomvc-two-seats"]);
    expect(run.error).toBeUndefined();
    expect(run.ok).toBe(true);
    expect(run.verdict).toBe("2/2 reached the goal; tasks: add-two-todos 2/2 · complete-one 2/2 · clear-completed 2/2");
    const runDir = join(project.cwd, ".humanish", "runs", String(run.runId));
    const bundle = RunBundleSchema.parse(JSON.parse(readFileSync(join(runDir, "run.json"), "utf8")));
    const shots = bundle.artifacts.filter((a) => a.kind === "screenshot").length;
    expect(shots).toBeGreaterThanOrEqual(4);

    const r = await renderInChromium(join(runDir, "report", "index.html"), { keepScreenshotAs: "humanish-report-live-two-seats.png" });
    const text = textOf(r.dom);
    expect(text).toContain("2/2 reached the goal; tasks: add-two-todos 2/2 · complete-one 2/2 · clear-completed 2/2");
    const strips = [...r.dom.matchAll(/<div class="strip" id="strip-\d+"><h3>([\s\S]*?)<\/h3>/g)].map((m) => textOf(m[1]!).trim());
    expect(strips.length).toBe(2);
    expect(strips[0]).toMatch(/^p1 · desktop \d+×\d+ \d+ screenshots$/);
    expect(strips[1]).toMatch(/^p2 · mobile \d+×\d+ \d+ screenshots$/);
    // Every listed screenshot is in exactly one strip, once.
    expect([...r.dom.matchAll(/<figure class="thumb"/g)].length).toBe(shots);
    const seats = /<table id="seats">[\s\S]*?<\/table>/.exec(r.dom)![0];
    expect([...seats.matchAll(/<tr><td><code>(p\d)<\/code>/g)].map((m) => m[1])).toEqual(["p1", "p2"]);
  }, 300_000);
});

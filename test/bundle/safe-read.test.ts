/**
 * The safe reader and the tools that read bundles through it: a FIFO, a symlink to /dev/zero
 * or a 2 GB sparse file in place of run.json / status.json is refused with a code naming the
 * file — `verify`, `runs`, `report` and `serve` never hang and never balloon. The CLI cases run
 * as real processes (a hang would otherwise hang the test runner), each killed after a bound.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { readFileSync, symlinkSync, unlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { listRuns, safeReadFile, safeReadOrThrow, verifyRun } from "../../src/bundle/index.ts";
import { isHumanishError } from "../../src/errors.ts";
import { loadReportModel } from "../../src/report/index.ts";
import { tempProject, writeLiveTerminal } from "./helpers.ts";

const BUN = process.execPath;
const CLI = join(import.meta.dir, "..", "..", "src", "cli", "main.ts");
const p = tempProject();
afterAll(() => p.cleanup());

function mkfifo(path: string): void {
  const r = Bun.spawnSync(["mkfifo", path]);
  if (r.exitCode !== 0) throw new Error(`mkfifo is required for this test and failed: ${r.stderr.toString()}`);
}
function sparse(path: string, size: string): void {
  const r = Bun.spawnSync(["truncate", "-s", size, path]);
  if (r.exitCode !== 0) throw new Error(`truncate (coreutils) is required for this test and failed: ${r.stderr.toString()}`);
}

type Hostile = "fifo" | "dev-zero" | "sparse-2g";
/** Replace `file` in `dir` with the hostile form. */
function plant(dir: string, file: string, kind: Hostile): void {
  unlinkSync(join(dir, file));
  if (kind === "fifo") mkfifo(join(dir, file));
  else if (kind === "dev-zero") symlinkSync("/dev/zero", join(dir, file));
  else sparse(join(dir, file), "2G");
}

/** Run the CLI as a process, killed after `ms`; returns exit code, output, whether it was killed, and max RSS (bytes). */
async function runCli(args: string[], ms = 20_000): Promise<{ code: number | null; stdout: string; stderr: string; killed: boolean; maxRss: number }> {
  const child = Bun.spawn([BUN, CLI, ...args], { stdout: "pipe", stderr: "pipe", env: { ...process.env } });
  let killed = false;
  const timer = setTimeout(() => {
    killed = true;
    child.kill("SIGKILL");
  }, ms);
  // Peak memory of this child alone, sampled from /proc while it runs: the rusage of a spawned
  // child can report the maximum over every child the test process ever had.
  let maxRss = 0;
  const sample = () => {
    try {
      const hwm = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${child.pid}/status`, "utf8"));
      if (hwm) maxRss = Math.max(maxRss, Number(hwm[1]) * 1024);
    } catch {
      /* the child has exited */
    }
  };
  const sampler = setInterval(sample, 10);
  const [stdout, stderr, code] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
  clearInterval(sampler);
  clearTimeout(timer);
  return { code, stdout, stderr, killed, maxRss };
}

describe("safeReadFile", () => {
  test("refuses FIFOs, links to devices, oversized and missing files; reads regular files", () => {
    const dir = join(p.cwd, "unit");
    Bun.spawnSync(["mkdir", "-p", dir]);
    writeFileSync(join(dir, "ok.txt"), "hello");
    mkfifo(join(dir, "fifo"));
    symlinkSync("/dev/zero", join(dir, "zero"));
    sparse(join(dir, "big"), "2G");
    const ok = safeReadFile(join(dir, "ok.txt"), 10);
    expect(ok.ok && new TextDecoder().decode(ok.bytes)).toBe("hello");
    expect(safeReadFile(join(dir, "ok.txt"), 4)).toEqual({ ok: false, reason: "too_large", size: 5 });
    expect(safeReadFile(join(dir, "fifo"), 1024)).toEqual({ ok: false, reason: "not_regular" });
    expect(safeReadFile(join(dir, "zero"), 1024)).toEqual({ ok: false, reason: "symlink" });
    expect(safeReadFile(join(dir, "big"), 64 * 1024 * 1024)).toEqual({ ok: false, reason: "too_large", size: 2 * 1024 ** 3 });
    expect(safeReadFile(join(dir, "nope"), 10)).toEqual({ ok: false, reason: "not_found" });
    expect(safeReadFile("/dev/zero", 10)).toEqual({ ok: false, reason: "not_regular" });
    let err: unknown;
    try {
      safeReadOrThrow(join(dir, "fifo"), ".humanish/runs/x/status.json", 1024);
    } catch (e) {
      err = e;
    }
    expect(isHumanishError(err, "HUMANISH_UNSAFE_BUNDLE_FILE")).toBe(true);
    expect((err as Error).message).toContain(".humanish/runs/x/status.json");
    expect((err as Error).message).not.toContain(p.cwd);
  });
});

for (const file of ["run.json", "status.json"] as const) {
  for (const kind of ["fifo", "dev-zero", "sparse-2g"] as const) {
    describe(`${file} replaced by ${kind}`, () => {
      const runId = `h-${file === "run.json" ? "run" : "status"}-${kind}`;
      let dir = "";
      test("in process: verify fails naming the file, runs lists the run, report refuses", async () => {
        ({
          w: { runDir: dir },
        } = await writeLiveTerminal(p.cwd, runId));
        plant(dir, file, kind);
        const v = await verifyRun(dir);
        expect(v.ok).toBe(false);
        const containment = v.checks.find((c) => c.name === "storage containment")!;
        expect(containment.ok).toBe(false);
        expect(containment.message).toContain(file);
        const row = (await listRuns(p.cwd)).find((r) => r.runId === runId);
        expect(row).toBeDefined();
        if (file === "run.json") {
          expect(row!.derivedFrom).toBe("status");
          let err: unknown;
          try {
            await loadReportModel(dir, { verify: v });
          } catch (e) {
            err = e;
          }
          expect(isHumanishError(err, "HUMANISH_INVALID_RUN_BUNDLE")).toBe(true);
          expect((err as Error).message).toContain("run.json");
        } else expect(row!.derivedFrom).toBe("bundle");
      });

      test("as processes: verify, runs and report return promptly without ballooning", async () => {
        const verify = await runCli(["verify", "--run", runId, "--cwd", p.cwd, "--json"]);
        expect(verify.killed).toBe(false);
        expect(verify.code).toBe(2);
        const out = JSON.parse(verify.stdout);
        expect(out.ok).toBe(false);
        expect(out.error.code).toMatch(/^HUMANISH_/);
        expect(JSON.stringify(out.checks)).toContain(file);
        const runs = await runCli(["runs", "--cwd", p.cwd, "--json"]);
        expect(runs.killed).toBe(false);
        expect(runs.code).toBe(0);
        expect(JSON.parse(runs.stdout).runs.some((r: { runId: string }) => r.runId === runId)).toBe(true);
        const report = await runCli(["report", "--run", runId, "--cwd", p.cwd, "--json"]);
        expect(report.killed).toBe(false);
        expect(report.code).toBe(2);
        const e = JSON.parse(report.stdout).error;
        expect(e.code).toMatch(/^HUMANISH_/);
        expect(e.message).toContain(file);
        // A 2 GB file read whole, or /dev/zero streamed, would take gigabytes; a refusal by size costs nothing.
        for (const r of [verify, runs, report]) {
          expect(r.maxRss).toBeGreaterThan(0);
          expect(r.maxRss).toBeLessThan(400 * 1024 * 1024);
        }
      }, 90_000);
    });
  }
}

describe("serve", () => {
  test("a FIFO run.json: the index answers, the run page refuses, SIGTERM exits 143 at once", async () => {
    const { w } = await writeLiveTerminal(p.cwd, "serve-fifo");
    plant(w.runDir, "run.json", "fifo");
    const { w: w2 } = await writeLiveTerminal(p.cwd, "serve-fifo-status");
    plant(w2.runDir, "status.json", "fifo");
    const child = Bun.spawn([BUN, CLI, "serve", "--cwd", p.cwd, "--port", "0", "--json"], { stdout: "pipe", stderr: "pipe", env: { ...process.env } });
    const reader = (child.stdout as ReadableStream<Uint8Array>).getReader();
    let buf = "";
    const deadline = Date.now() + 30_000;
    while (!buf.includes("\n") && Date.now() < deadline) {
      const { value, done } = await reader.read();
      if (done) break;
      buf += new TextDecoder().decode(value);
    }
    const url = JSON.parse(buf.split("\n")[0]!).url as string;
    const index = await fetch(url, { signal: AbortSignal.timeout(15_000) });
    expect(index.status).toBe(200);
    const html = await index.text();
    expect(html).toContain("serve-fifo");
    const page = await fetch(`${url}runs/serve-fifo/`, { signal: AbortSignal.timeout(15_000) });
    // Refused as a bundle that does not verify, naming the file (never served, never read).
    expect(page.status).toBe(409);
    const refusal = await page.text();
    expect(refusal).toContain("run.json is refused (not a regular file)");
    // SIGTERM must land whatever the bundles hold: the process gets 10 s, then is killed.
    child.kill("SIGTERM");
    const code = await Promise.race([child.exited, Bun.sleep(10_000).then(() => "did not exit within 10 s of SIGTERM" as const)]);
    if (typeof code === "string") child.kill("SIGKILL");
    expect(code).toBe(143);
  }, 60_000);
});

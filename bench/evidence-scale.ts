/**
 * Evidence cost as a study grows: `verify`, `analyze` (selection + admission, dry run: no key,
 * nothing sent), `report` and `export` of synthetic 16-seat browser studies of 208, 832 and
 * 1,664 distinct 1280×800 screenshots (~160 KiB each), against the floor measured in the same
 * run: reading, SHA-256 hashing and decoding (the PNG admission decoder) every file once.
 *
 *   ./node_modules/.bin/bun bench/evidence-scale.ts [--sizes 208,832,1664] [--bundles DIR] [--json]
 *
 * Every measurement runs in a child process of its own that imports only that operation's
 * modules, so each peak RSS (VmHWM) is its own.
 * Printed per size and operation: wall ms, CPU ms (what a loaded machine inflates least), peak
 * RSS, and the time ratio to the floor. `report` is measured as verify + load + render (the
 * write of report/index.html is left out so every child reads the same bundle); `export` is
 * the ATIF export of every seat. `--bundles DIR` keeps the written bundles in DIR and reuses
 * them (so another checkout can be measured against the very same bytes).
 * Goals: peak RSS ≤ 200 MiB at every size (flat), CPU time ≤ 1.2× the floor's.
 */
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { admitPng } from "../src/png/index.ts";
import { emitFigures, type Figure, figure, peakRssKiB } from "./lib/figures.ts";
import { distinctFrame, writeStudy } from "./lib/study-bundle.ts";

const SEATS = 16;
const MODES = ["floor", "verify", "analyze", "report", "export"] as const;
type Mode = (typeof MODES)[number];

/** Every regular file under `dir`, recursively. */
function filesUnder(dir: string): string[] {
  return (readdirSync(dir, { recursive: true }) as string[]).map((r) => join(dir, r)).filter((p) => statSync(p).isFile());
}

/** The floor: read, hash and decode (PNG) every file once. Returns the bytes read. */
function floor(runDir: string): number {
  let bytes = 0;
  for (const path of filesUnder(runDir)) {
    const b = new Uint8Array(readFileSync(path));
    bytes += b.byteLength;
    createHash("sha256").update(b).digest("hex");
    // A full decode to RGBA pixels, which is what decoding every PNG once costs any reader.
    if (path.endsWith(".png") && !admitPng(b, { includePixels: true }).ok) throw new Error(`${path} does not decode`);
  }
  return bytes;
}

/**
 * One operation. Each mode imports only its own modules, as the CLI loads only the command it
 * runs, so a peak is that command's: the tokenizer `analyze` needs is not in `verify`'s figure.
 */
async function operate(mode: Mode, runDir: string): Promise<void> {
  if (mode === "floor") {
    floor(runDir);
    return;
  }
  const { defaultTrust, verifyRun } = await import("../src/bundle/index.ts");
  const trust = defaultTrust();
  if (mode === "verify") {
    const v = await verifyRun(runDir, { trust });
    if (!v.ok) throw new Error(`bench bundle does not verify: ${v.checks.filter((c) => !c.ok).map((c) => `${c.name}: ${c.message}`)}`);
  } else if (mode === "analyze") {
    const [{ createOpenAIAnalysisProvider }, { analyzeRun }] = await Promise.all([
      import("../src/analysis/provider-openai.ts"),
      import("../src/analysis/run.ts"),
    ]);
    const o = await analyzeRun({
      runDir,
      provider: createOpenAIAnalysisProvider({}),
      model: "gpt-5.1",
      question: null,
      maxCostUsd: 5,
      maxOutputTokens: null,
      timeoutMs: 120_000,
      dryRun: true,
      rerun: false,
      signal: new AbortController().signal,
      trust,
    });
    if (o.selection.images === 0) throw new Error("the dry run selected no screenshot");
  } else if (mode === "report") {
    const [{ renderReportHtml }, { loadReportModel }] = await Promise.all([import("../src/report/html.ts"), import("../src/report/load.ts")]);
    const v = await verifyRun(runDir, { trust });
    const html = renderReportHtml(await loadReportModel(runDir, { verify: v }));
    if (html.length === 0) throw new Error("empty report");
  } else {
    const { exportAtif } = await import("../src/export/atif/index.ts");
    const out = mkdtempSync(join(tmpdir(), "humanish-bench-export-"));
    try {
      await exportAtif({ runDir, outDir: out, trust, secrets: [], force: true });
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  }
}

/** Child: one operation, printed as one JSON line. */
async function child(mode: Mode, runDir: string): Promise<void> {
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  await operate(mode, runDir);
  const ms = performance.now() - t0;
  const c = process.cpuUsage(c0);
  console.log(JSON.stringify({ ms, cpuMs: (c.user + c.system) / 1000, peakKiB: peakRssKiB() }));
}

interface Sample {
  ms: number;
  cpuMs: number;
  peakKiB: number;
}

async function measure(mode: Mode, runDir: string, env: Record<string, string | undefined>): Promise<Sample> {
  const p = Bun.spawn([process.execPath, import.meta.path, "--child", mode, runDir], { stdout: "pipe", stderr: "inherit", env });
  const out = await new Response(p.stdout).text();
  if ((await p.exited) !== 0) throw new Error(`${mode} child failed on ${runDir}`);
  return JSON.parse(out.trim().split("\n").at(-1)!) as Sample;
}

/** The bundle of `shots` screenshots under `root`, written unless already there. */
async function bundleOf(root: string, shots: number): Promise<string> {
  const cwd = join(root, `study-${shots}`);
  const runId = `scale-${shots}`;
  const runDir = join(cwd, ".humanish", "runs", runId);
  if (existsSync(join(runDir, "run.json"))) return runDir;
  mkdirSync(cwd, { recursive: true });
  const per = Math.ceil(shots / SEATS);
  return writeStudy(cwd, { runId, seats: SEATS, shotsPerSeat: per, frameOf: (s, k) => distinctFrame(s * 1000 + k) });
}

function argOf(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

async function main(): Promise<void> {
  const sizes = (argOf("--sizes") ?? "208,832,1664").split(",").map(Number);
  const keep = argOf("--bundles");
  const root = keep ? (mkdirSync(keep, { recursive: true }), realpathSync(keep)) : realpathSync(mkdtempSync(join(tmpdir(), "humanish-bench-scale-")));
  // The bundles are signed by a key of their own (kept with them), which the children trust as the local user's.
  const env = { ...process.env, HUMANISH_CONFIG_DIR: join(root, "config"), HUMANISH_BENCH_JSON: "0" };
  process.env.HUMANISH_CONFIG_DIR = env.HUMANISH_CONFIG_DIR;
  const figures: Figure[] = [];
  const mib = (k: number) => k / 1024;
  try {
    const rows: { shots: number; mibOnDisk: number; samples: Record<Mode, Sample> }[] = [];
    for (const shots of sizes) {
      const runDir = await bundleOf(root, shots);
      if (process.argv.includes("--write-only")) continue;
      const onDisk = filesUnder(runDir).reduce((a, p) => a + statSync(p).size, 0) / 1024 / 1024;
      const samples = {} as Record<Mode, Sample>;
      for (const mode of MODES) samples[mode] = await measure(mode, runDir, env);
      rows.push({ shots, mibOnDisk: onDisk, samples });
      console.log(`${shots} screenshots (${onDisk.toFixed(0)} MiB on disk):`);
      for (const mode of MODES) {
        const s = samples[mode];
        const f = samples.floor;
        console.log(
          `  ${mode.padEnd(8)} ${s.ms.toFixed(0).padStart(7)} ms wall, ${s.cpuMs.toFixed(0).padStart(7)} ms CPU (${(s.cpuMs / f.cpuMs).toFixed(2)}× the floor's), peak RSS ${mib(s.peakKiB).toFixed(0)} MiB`,
        );
        if (mode === "floor") continue;
        figures.push(figure(`${mode} ${shots} shots: CPU vs read+hash+decode floor`, s.cpuMs, "ms", f.cpuMs, { maxRatio: 1.2 }));
        figures.push(figure(`${mode} ${shots} shots: peak RSS`, mib(s.peakKiB), "MiB", mib(f.peakKiB), { maxValue: 200 }));
      }
    }
    if (rows.length > 1) {
      const [a, z] = [rows[0]!, rows.at(-1)!];
      console.log(`growth ${a.shots} → ${z.shots} screenshots (${(z.mibOnDisk / a.mibOnDisk).toFixed(1)}× the bytes):`);
      for (const mode of MODES) {
        const perMiB = (r: (typeof rows)[number]) => r.samples[mode].cpuMs / r.mibOnDisk;
        console.log(
          `  ${mode.padEnd(8)} CPU per MiB ×${(perMiB(z) / perMiB(a)).toFixed(2)}; peak RSS ${mib(a.samples[mode].peakKiB).toFixed(0)} → ${mib(z.samples[mode].peakKiB).toFixed(0)} MiB`,
        );
        if (mode === "floor") continue;
        figures.push(figure(`${mode}: CPU per MiB at ${z.shots} vs ${a.shots} shots (linear)`, perMiB(z), "ms/MiB", perMiB(a), { maxRatio: 1.2 }));
      }
    }
    emitFigures(figures);
  } finally {
    if (!keep) rmSync(root, { recursive: true, force: true });
  }
}

if (process.argv[2] === "--child") await child(process.argv[3] as Mode, process.argv[4]!);
else await main();

/**
 * Evidence selection and admission for a 16-seat browser study (13 screenshots a seat, 208 in
 * all, 1280×800), against the floor every analysis pays in the same run: reading the bundle and
 * verifying it (the packet is cut from the very bytes verify checked).
 *
 *   ./node_modules/.bin/bun bench/analysis-select.ts
 *
 * Each measurement runs in a fresh child process so its peak RSS (VmHWM) is its own:
 *   read    — walk + read every file + verify (the baseline);
 *   select  — the same, then select the packet (decode + downscale the chosen frames), build the
 *             prompt and estimate it.
 * Prints wall ms (best of 3 children), the selection's CPU ms (what a loaded machine inflates
 * least) and peak RSS of each, and the ratios. Then one real analysis
 * through the `openai` SDK against the fake model server, checking the estimate is not below the
 * usage the fake reports. Targets: selection + admission ≤ 1 s, peak ≤ 200 MiB. `--json`: a
 * final `{"figures":[…]}` line (bench/lib/figures.ts).
 */
import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { estimateRequest, outputAllowance } from "../src/analysis/admission.ts";
import { downscalePng } from "../src/analysis/downscale.ts";
import { buildPrompt } from "../src/analysis/prompt.ts";
import { createOpenAIAnalysisProvider } from "../src/analysis/provider-openai.ts";
import { analyzeRun } from "../src/analysis/run.ts";
import { SELECTION_LIMITS, selectEvidence } from "../src/analysis/select.ts";
import { loadVerifiedBundle } from "../src/analysis/store.ts";
import { defaultTrust } from "../src/bundle/index.ts";
import { countTokens } from "../src/models/tokens.ts";
import { emitFigures, type Figure, figure, peakRssKiB } from "./lib/figures.ts";
import { frame, writeStudy } from "./lib/study-bundle.ts";

const SEATS = 16;
const SHOTS_PER_SEAT = 13;

async function child(mode: "read" | "select", runDir: string): Promise<void> {
  const t0 = performance.now();
  // What `humanish analyze` does first: walk, verify (screenshots digested, not held).
  const view = await loadVerifiedBundle(runDir, defaultTrust());
  const tRead = performance.now() - t0;
  let tSelect = 0;
  let cpuSelect = 0;
  let facts = {};
  let tTable = 0;
  let tFloor = 0;
  let peakKiB = 0;
  if (mode === "select") {
    // In the order `humanish analyze` runs them: select, then (once a process, on the first count)
    // build the o200k table, then the prompt and its estimate. The table build is timed on its own
    // so the figure is the per-analysis work; it comes after the selection, as in the command, so
    // the selection's collections do not also walk the table.
    const t1 = performance.now();
    const c1 = process.cpuUsage();
    const sel = selectEvidence(view);
    const tSel = performance.now() - t1;
    const cSel = process.cpuUsage(c1);
    const t0Table = performance.now();
    countTokens("");
    tTable = performance.now() - t0Table;
    const t2 = performance.now();
    const c2 = process.cpuUsage();
    const prompt = buildPrompt(sel, null);
    const allowance = outputAllowance(prompt, "gpt-5.1", null, 5);
    const est = estimateRequest(prompt, "gpt-5.1", allowance);
    tSelect = tSel + (performance.now() - t2);
    const cEst = process.cpuUsage(c2);
    cpuSelect = (cSel.user + cSel.system + cEst.user + cEst.system) / 1000;
    facts = {
      evidence: sel.items.length,
      omitted: sel.omitted.length,
      images: sel.images,
      textBytes: sel.textBytes,
      imageBytes: sel.imageBytes,
      estimateTokens: est.inputTokens,
      estimateUsd: est.usd,
    };
    // The floor of the image part: as many screenshots as the packet sent, each read, hashed,
    // decoded and downscaled once, with nothing else (no budgets, no collections, no prompt).
    // Timed after the selection's peak is read: its decodes, without the selection's window, would raise it.
    peakKiB = peakRssKiB();
    const shots = [...(view.images?.sizes.keys() ?? [])].slice(0, sel.images);
    const t3 = performance.now();
    for (const path of shots) {
      const bytes = view.images!.read(path);
      downscalePng(bytes, SELECTION_LIMITS.imageMaxWidth, SELECTION_LIMITS.imageMaxHeight);
    }
    tFloor = performance.now() - t3;
  }
  const files = view.files.size + (view.images?.sizes.size ?? 0);
  console.log(JSON.stringify({ tRead, tSelect, tTable, tFloor, cpuSelect, peakKiB: peakKiB || peakRssKiB(), files, ...facts }));
}

async function measure(mode: "read" | "select", runDir: string): Promise<Record<string, number>> {
  const runs: Record<string, number>[] = [];
  for (let i = 0; i < 3; i++) {
    const p = Bun.spawn([process.execPath, import.meta.path, "--child", mode, runDir], {
      stdout: "pipe",
      stderr: "inherit",
      env: { ...process.env, HUMANISH_BENCH_JSON: "0" },
    });
    const out = await new Response(p.stdout).text();
    if ((await p.exited) !== 0) throw new Error(`${mode} child failed`);
    runs.push(JSON.parse(out.trim().split("\n").at(-1)!));
  }
  const key = mode === "read" ? "tRead" : "tSelect";
  return runs.sort((a, b) => a[key]! - b[key]!)[0]!;
}

async function main(): Promise<void> {
  const cwd = realpathSync(mkdtempSync(join(tmpdir(), "humanish-bench-analysis-")));
  if (!process.env.HUMANISH_CONFIG_DIR) process.env.HUMANISH_CONFIG_DIR = mkdtempSync(join(tmpdir(), "humanish-bench-config-"));
  try {
    const frames = Array.from({ length: 12 }, (_, i) => frame(i + 1));
    const runDir = await writeStudy(cwd, {
      runId: "bench-16",
      seats: SEATS,
      shotsPerSeat: SHOTS_PER_SEAT,
      frameOf: (s, k) => frames[(s + k) % frames.length]!,
    });
    const read = await measure("read", runDir);
    const sel = await measure("select", runDir);
    const mib = (k: number) => (k / 1024).toFixed(1);
    console.log(`16-seat browser study: ${read.files} files, ${SEATS * SHOTS_PER_SEAT} screenshots of 1280×800`);
    console.log(`  baseline  read + verify:             ${read.tRead!.toFixed(0)} ms, peak RSS ${mib(read.peakKiB!)} MiB`);
    console.log(
      `  selection + prompt + admission:      ${sel.tSelect!.toFixed(0)} ms (${(sel.tSelect! / read.tRead!).toFixed(2)}× the read; ${sel.cpuSelect!.toFixed(0)} ms of CPU), peak RSS ${mib(sel.peakKiB!)} MiB (${(sel.peakKiB! / read.peakKiB!).toFixed(2)}× the read's)`,
    );
    console.log(`  o200k token table, built once a process on the first count: ${sel.tTable!.toFixed(0)} ms (not in the figure above)`);
    console.log(
      `  floor: read + hash + decode + downscale of as many screenshots (${sel.images}) once: ${sel.tFloor!.toFixed(0)} ms; selection + admission / that ${(sel.tSelect! / sel.tFloor!).toFixed(2)}×`,
    );
    console.log(
      `  packet: ${sel.evidence} items (${sel.images} screenshots, ${(sel.imageBytes! / 1024).toFixed(0)} KiB), ${(sel.textBytes! / 1024).toFixed(1)} KiB text, ${sel.omitted} listed as not sent; estimate ${sel.estimateTokens} input tokens, ≤ $${sel.estimateUsd}`,
    );
    console.log(
      `  targets: selection + admission ≤ 1000 ms: ${sel.tSelect! <= 1000 ? "met" : "MISSED"}; peak ≤ 200 MiB: ${sel.peakKiB! <= 200 * 1024 ? "met" : "MISSED"}`,
    );
    const figures: Figure[] = [
      figure("analysis selection + admission, 208 shots (ms)", sel.tSelect!, "ms", read.tRead!, { maxValue: 1000 }),
      figure("o200k token table build, once a process (ms)", sel.tTable!, "ms", null),
      figure("analysis selection + admission vs its floor (read, hash, decode, downscale the sent screenshots once)", sel.tSelect!, "ms", sel.tFloor!),
      figure("analysis selection peak RSS, 208 shots (MiB)", sel.peakKiB! / 1024, "MiB", read.peakKiB! / 1024, { maxValue: 200 }),
    ];

    const key = "bench-analysis-key-0001";
    // Imported here, not at the top: the fake server loads the tokenizer package's own tables,
    // which would sit in every measured child's peak memory.
    const { goodAnswer, message } = await import("../test/analysis/support.ts");
    const { startFakeOpenAI } = await import("../test/support/fake-openai/server.ts");
    const fake = startFakeOpenAI({ apiKey: key, scenario: (req) => message(goodAnswer(req)) });
    try {
      const o = await analyzeRun({
        runDir,
        provider: createOpenAIAnalysisProvider({ OPENAI_BASE_URL: fake.baseURL, OPENAI_API_KEY: key }),
        model: null,
        question: null,
        maxCostUsd: 5,
        maxOutputTokens: null,
        timeoutMs: 120_000,
        dryRun: false,
        rerun: true,
        signal: new AbortController().signal,
      });
      const used = o.usage?.inputTokens ?? Number.NaN;
      console.log(
        `  fake-reported usage ${used} input tokens vs estimate ${o.estimate.inputTokens} (${(o.estimate.inputTokens / used).toFixed(2)}×): ${o.estimate.inputTokens >= used ? "estimate not below usage" : "ESTIMATE BELOW USAGE"}`,
      );
      figures.push(figure("analysis estimate vs reported input tokens", o.estimate.inputTokens, "tokens", used, { text: "ratio ≥ 1" }));
      figures.at(-1)!.met = o.estimate.inputTokens >= used;
    } finally {
      await fake.close();
    }
    emitFigures(figures);
  } finally {
    rmSync(cwd, { recursive: true, force: true });
  }
}

if (process.argv[2] === "--child") await child(process.argv[3] as "read" | "select", process.argv[4]!);
else await main();

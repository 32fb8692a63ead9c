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
 * usage the fake reports. Targets: selection + admission ≤ 1 s, peak ≤ 300 MiB.
 */
import { mkdtempSync, readFileSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PNG } from "pngjs";
import { estimateRequest, outputAllowance } from "../src/analysis/admission.ts";
import { buildPrompt } from "../src/analysis/prompt.ts";
import { createOpenAIAnalysisProvider } from "../src/analysis/provider-openai.ts";
import { analyzeRun } from "../src/analysis/run.ts";
import { selectEvidence } from "../src/analysis/select.ts";
import { type ActorTrace, createRunWriter, defaultTrust, digestText, type RunBundleInput, type Study, verifyFiles } from "../src/bundle/index.ts";
import { readBundleDir } from "../src/bundle/verify/disk.ts";
import { labBlock, scriptedTrace } from "../test/support/bundles.ts";
import { startFakeOpenAI } from "../test/support/fake-openai/server.ts";

const SEATS = 16;
const SHOTS_PER_SEAT = 13;
const T0 = "2026-12-01T10:00:00.000Z";
const T1 = "2026-12-01T10:00:30.000Z";

function peakRssKiB(): number {
  const m = /VmHWM:\s+(\d+)/.exec(readFileSync("/proc/self/status", "utf8"));
  return m ? Number(m[1]) : Number.NaN;
}

/** A 1280×800 frame that looks like a page: white, text-like noise rows, a coloured header. */
function frame(seed: number): Uint8Array {
  const w = 1280;
  const h = 800;
  const p = new PNG({ width: w, height: h });
  let s = seed * 2654435761;
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      const i = (y * w + x) * 4;
      s = (s * 1103515245 + 12345) >>> 0;
      const header = y < 60;
      const text = !header && y % 24 < 12 && x > 80 && x < 900 && s >>> 24 < 90;
      const v = header ? 40 + seed * 9 : text ? 30 : 255;
      p.data[i] = v;
      p.data[i + 1] = header ? 90 : v;
      p.data[i + 2] = header ? 200 : v;
      p.data[i + 3] = 255;
    }
  }
  return new Uint8Array(PNG.sync.write(p, { colorType: 2 }));
}

async function writeStudy(cwd: string): Promise<string> {
  const w = createRunWriter({ cwd, runId: "bench-16", secrets: [], route: "browser", mode: "live", lab: "todomvc-16", heartbeatMs: 0 });
  const frames = Array.from({ length: 12 }, (_, i) => frame(i + 1));
  const participants: NonNullable<RunBundleInput["participants"]> = [];
  const tasks: NonNullable<RunBundleInput["tasks"]> = [];
  const cleanup: NonNullable<RunBundleInput["cleanup"]> = [];
  const seats: Study["seats"] = [];
  for (let s = 0; s < SEATS; s++) {
    const id = `p${s + 1}`;
    const container = (s + 1).toString(16).padStart(64, "0");
    await w.appendNdjson(
      "sandbox-receipts.ndjson",
      { at: T0, participantId: id, provider: "docker", id: container, kind: "desktop" },
      { kind: "sandbox-receipts", durable: true },
    );
    const items: ActorTrace["items"] = [];
    for (let k = 1; k <= SHOTS_PER_SEAT; k++) {
      const path = `screenshots/${id}/turn-${String(k).padStart(2, "0")}.png`;
      await w.writeArtifact(path, frames[(s + k) % frames.length]!, { kind: "screenshot" });
      items.push({
        id: `ui_action-${String(k).padStart(3, "0")}`,
        kind: "ui_action",
        lifecycle: "completed",
        title: `step ${k}`,
        at: T0,
        action: { type: "click", x: 100 + k, y: 200 },
      });
      items.push({
        id: `screenshot-${String(k).padStart(3, "0")}`,
        kind: "screenshot",
        lifecycle: "completed",
        title: `after step ${k}`,
        at: T0,
        screenshotRef: { path, redaction: "none" },
      });
    }
    const gaveUp = s % 4 === 3;
    const trace = scriptedTrace("browser", {
      participantId: id,
      startedAt: T0,
      completedAt: T1,
      durationMs: 30_000,
      counts: { actions: SHOTS_PER_SEAT, screenshots: SHOTS_PER_SEAT },
      items,
      ...(gaveUp ? { status: "abandoned" as const, completionReason: "gave_up" as const, reason: "could not find how to clear completed todos" } : {}),
      persona: { id: "newcomer", traitsApplied: [], promptDigest: digestText("steps") },
    });
    await w.writeJson(`seats/${id}/actor.json`, trace, { kind: "actor-trace" });
    participants.push({
      id,
      actorType: "scripted-browser",
      status: gaveUp ? "abandoned" : "passed",
      completionReason: gaveUp ? "gave_up" : "goal_satisfied",
      reason: gaveUp ? "could not find how to clear completed todos" : "ok",
      trace: `seats/${id}/actor.json`,
      startedAt: T0,
      completedAt: T1,
      durationMs: 30_000,
      desktopGeometry: { preset: "desktop", screen: { requested: { width: 1280, height: 800 } }, warnings: [] },
    });
    tasks.push({ id: "add-todo", goal: "Add a todo", participantId: id, status: "passed", passed: true });
    tasks.push({ id: "clear-completed", goal: "Clear completed", participantId: id, status: gaveUp ? "failed" : "passed", passed: !gaveUp });
    cleanup.push({ id: container, provider: "docker", kind: "desktop", participantId: id, outcome: "released", reason: "inspect-404", at: T1 });
    seats.push({
      id,
      index: s,
      state: "completed",
      phase: "done",
      folder: `seats/${id}/`,
      release: "released",
      containerId: container,
      reason: "released",
      startedAt: T0,
      durationMs: 30_000,
      usd: 0,
      jobs: 0,
    });
  }
  await w.finalize({
    route: "browser",
    mode: "live",
    target: "local",
    createdAt: T0,
    completedAt: T1,
    lab: labBlock("todomvc-16", "TodoMVC, sixteen seats", "c".repeat(64)),
    subject: { source: "app-url", appUrl: "http://127.0.0.1:8080/", provenance: "undeclared" },
    participants,
    tasks,
    cleanup,
    study: {
      schema: "humanish.study.v1",
      lane: "local-guest",
      declaredSeats: SEATS,
      concurrency: 4,
      waves: 4,
      maxTotalUsd: 0,
      seats,
      totals: { seats: SEATS, completed: SEATS, failed: 0, interrupted: 0, budgetReached: 0, knownUsd: 0, knownJobs: 0, heldSlots: 0 },
    },
  });
  w.close();
  return w.runDir;
}

/** Child: one measurement, printed as one JSON line. */
async function child(mode: "read" | "select", runDir: string): Promise<void> {
  const t0 = performance.now();
  const walked = await readBundleDir(runDir);
  const v = await verifyFiles({ run: "bench-16", ...walked, trust: defaultTrust() });
  if (!v.ok) throw new Error(`bench bundle does not verify: ${v.checks.filter((c) => !c.ok).map((c) => c.name)}`);
  const tRead = performance.now() - t0;
  let tSelect = 0;
  let cpuSelect = 0;
  let facts = {};
  if (mode === "select") {
    const t1 = performance.now();
    const c1 = process.cpuUsage();
    const files = new Map(walked.files.map((f) => [f.path, f.bytes]));
    const bundle = JSON.parse(new TextDecoder().decode(files.get("run.json")));
    const sel = selectEvidence({ bundle, files });
    const prompt = buildPrompt(sel, null);
    const allowance = outputAllowance(prompt, "gpt-5.1", null, 5);
    const est = estimateRequest(prompt, "gpt-5.1", allowance);
    tSelect = performance.now() - t1;
    const c2 = process.cpuUsage(c1);
    cpuSelect = (c2.user + c2.system) / 1000;
    facts = {
      evidence: sel.items.length,
      omitted: sel.omitted.length,
      images: sel.images,
      textBytes: sel.textBytes,
      imageBytes: sel.imageBytes,
      estimateTokens: est.inputTokens,
      estimateUsd: est.usd,
    };
  }
  console.log(JSON.stringify({ tRead, tSelect, cpuSelect, peakKiB: peakRssKiB(), files: walked.files.length, ...facts }));
}

async function measure(mode: "read" | "select", runDir: string): Promise<Record<string, number>> {
  const runs: Record<string, number>[] = [];
  for (let i = 0; i < 3; i++) {
    const p = Bun.spawn([process.execPath, import.meta.path, "--child", mode, runDir], { stdout: "pipe", stderr: "inherit", env: process.env });
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
    const runDir = await writeStudy(cwd);
    const read = await measure("read", runDir);
    const sel = await measure("select", runDir);
    const mib = (k: number) => (k / 1024).toFixed(1);
    console.log(`16-seat browser study: ${read.files} files, ${SEATS * SHOTS_PER_SEAT} screenshots of 1280×800`);
    console.log(`  baseline  read + verify:             ${read.tRead!.toFixed(0)} ms, peak RSS ${mib(read.peakKiB!)} MiB`);
    console.log(
      `  selection + prompt + admission:      ${sel.tSelect!.toFixed(0)} ms (${(sel.tSelect! / read.tRead!).toFixed(2)}× the read; ${sel.cpuSelect!.toFixed(0)} ms of CPU), peak RSS ${mib(sel.peakKiB!)} MiB (${(sel.peakKiB! / read.peakKiB!).toFixed(2)}× the read's)`,
    );
    console.log(
      `  packet: ${sel.evidence} items (${sel.images} screenshots, ${(sel.imageBytes! / 1024).toFixed(0)} KiB), ${(sel.textBytes! / 1024).toFixed(1)} KiB text, ${sel.omitted} listed as not sent; estimate ${sel.estimateTokens} input tokens, ≤ $${sel.estimateUsd}`,
    );
    console.log(
      `  targets: selection + admission ≤ 1000 ms: ${sel.tSelect! <= 1000 ? "met" : "MISSED"}; peak ≤ 300 MiB: ${sel.peakKiB! <= 300 * 1024 ? "met" : "MISSED"}`,
    );

    const key = "bench-analysis-key-0001";
    const { goodAnswer, message } = await import("../test/analysis/support.ts");
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
    } finally {
      await fake.close();
    }
  } finally {
    rmSync(cwd, { recursive: true, force: true });
  }
}

if (process.argv[2] === "--child") await child(process.argv[3] as "read" | "select", process.argv[4]!);
else await main();

/**
 * The Observer's cost to a study and its latency, on the live 3-seat browser study
 * `todomvc-first-run-seats` (each seat a scripted participant in its own sandboxed guest):
 *
 *   ./node_modules/.bin/bun bench/observer.ts [PAIRS] [--cold-browser]     (default 5 pairs)
 *
 * Runs in turn, so all see the same machine: without a watcher (the baseline, `lab run --live`);
 * with one (`lab run --live --watch`, and a headless Chromium page, already running and settled
 * on a static page before the study starts, as a researcher's browser is, navigated to the
 * Observer's URL when it is printed); and the floor — the same settled headless Chromium idle on
 * the static page beside a study without `--watch`, which is what a browser that merely exists
 * costs on these cores (so watcher / floor is the Observer's own share); and `--watch` with no
 * page open, which splits that share into the Observer's server and the page drawing frames. `--cold-browser` starts
 * the browser only once the URL is printed instead, which adds Chromium's own start-up (about two
 * CPU-seconds) to a study of a few seconds on two cores. Wall time is the study's own `durationMs` from its
 * `status.json` (the Observer's linger for open pages after the seal is not the study's time).
 * Latency: for every frame the page shows, the time from the frame file appearing in the run
 * directory (its mtime: written, admitted and renamed into place by the run writer) to the
 * page's image `load` event, recorded in the page. Targets: ratio ≤ 1.05×, p95 ≤ 500 ms.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { availableParallelism, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { openCdpPage } from "../test/support/cdp-page.ts";
import { emitFigures, figure } from "./lib/figures.ts";

const ROOT = resolve(import.meta.dir, "..");
const BUN = join(ROOT, "node_modules/.bin/bun");
const MAIN = join(ROOT, "src/cli/main.ts");
const pairs = Number(process.argv.slice(2).find((a) => /^\d+$/.test(a)) ?? 5);
const coldBrowser = process.argv.includes("--cold-browser");
const STATIC_SETTLE_MS = 2000;

/** Records, in the page, each frame's mtime and the moment its image loaded (runs outside the page's CSP, through CDP). */
const RECORD_JS = `(() => { if (!document.getElementById("seats")) return false; window.__lat = window.__lat || []; document.addEventListener("load", (e) => {
  const t = e.target; if (t && t.tagName === "IMG" && t.dataset.frameAt) window.__lat.push({ frame: t.dataset.frame, at: Number(t.dataset.frameAt), shown: Date.now() });
}, true); return true; })()`;

/** A static page for the floor arm: a browser with nothing live to show. */
const STATIC_PAGE = Bun.serve({
  hostname: "127.0.0.1",
  port: 0,
  fetch: () => new Response("<!doctype html><title>idle</title><p>idle", { headers: { "content-type": "text/html" } }),
});

/** One study's wall time, the frames' latencies, and the CPU time (ms) the page's browser used during the study. */
async function runOnce(arm: "none" | "watch" | "floor" | "server"): Promise<{ durationMs: number; latencies: number[]; browserCpuMs: number | null }> {
  const watch = arm === "watch";
  const cwd = mkdtempSync(join(tmpdir(), "humanish-bench-observer-"));
  const cleanups: (() => void)[] = [];
  try {
    const idle = `http://127.0.0.1:${STATIC_PAGE.port}/`;
    // The browser a researcher watches with is already running; starting it is not the Observer's cost.
    let page = arm === "floor" || (watch && !coldBrowser) ? await openCdpPage(idle, cleanups) : undefined;
    if (page) await Bun.sleep(STATIC_SETTLE_MS);
    const cpuBefore = page?.cpuMs() ?? 0;
    const args = ["timeout", "900", BUN, MAIN, "lab", "run", "todomvc-first-run-seats", "--live", "--json", ...(watch || arm === "server" ? ["--watch"] : [])];
    const p = Bun.spawn(args, { cwd, stdin: "ignore", stdout: "pipe", stderr: "pipe", env: process.env });
    cleanups.push(() => p.kill("SIGTERM")); // through `timeout`, which a KILL would end alone
    let latencies: number[] = [];
    if (watch) {
      const reader = p.stderr.getReader();
      let err = "";
      let url: string | undefined;
      while (!url) {
        const { value, done } = await reader.read();
        if (done) throw new Error(`no observer URL: ${err}`);
        err += new TextDecoder().decode(value);
        url = /observer at (http:\/\/127\.0\.0\.1:\d+\/)/.exec(err)?.[1];
      }
      if (page) await page.navigate(url);
      else page = await openCdpPage(url, cleanups); // cold: its start-up counts in its CPU time
      while ((await page.evaluate<boolean | undefined>(RECORD_JS)) !== true) await Bun.sleep(50);
    }
    const out = await new Response(p.stdout).text();
    if (watch && page) {
      const lat = (await page.evaluate<{ at: number; shown: number }[] | undefined>("window.__lat")) ?? [];
      latencies = lat.map((l) => l.shown - l.at);
    }
    await p.exited;
    const browserCpuMs = page ? page.cpuMs() - cpuBefore : null;
    const runId = (JSON.parse(out) as { runId: string }).runId;
    const status = JSON.parse(readFileSync(join(cwd, ".humanish/runs", runId, "status.json"), "utf8")) as { outcome?: { durationMs?: number } };
    const durationMs = status.outcome?.durationMs;
    if (durationMs === undefined) throw new Error(`no durationMs in ${runId}/status.json (${readdirSync(join(cwd, ".humanish/runs", runId)).join(", ")})`);
    return { durationMs, latencies, browserCpuMs };
  } finally {
    for (const c of cleanups.reverse()) c();
    rmSync(cwd, { recursive: true, force: true });
  }
}

const base: number[] = [];
const watched: number[] = [];
const floor: number[] = [];
const server: number[] = [];
const lat: number[] = [];
const watcherCpu: number[] = [];
const idleCpu: number[] = [];
for (let i = 0; i < pairs; i++) {
  const a = await runOnce("none");
  const b = await runOnce("watch");
  const c = await runOnce("floor");
  const d = await runOnce("server");
  base.push(a.durationMs);
  watched.push(b.durationMs);
  floor.push(c.durationMs);
  server.push(d.durationMs);
  lat.push(...b.latencies);
  if (b.browserCpuMs !== null) watcherCpu.push(b.browserCpuMs);
  if (c.browserCpuMs !== null) idleCpu.push(c.browserCpuMs);
  console.log(
    `round ${i + 1}: without ${a.durationMs} ms · with watcher ${b.durationMs} ms (its browser ${b.browserCpuMs} CPU-ms) · idle browser beside it ${c.durationMs} ms (${c.browserCpuMs} CPU-ms) · Observer with no page ${d.durationMs} ms · ${b.latencies.length} frame(s) shown`,
  );
}
STATIC_PAGE.stop(true);
const median = (xs: number[]) => [...xs].sort((x, y) => x - y)[Math.floor((xs.length - 1) / 2)]!;
const sorted = [...lat].sort((x, y) => x - y);
const p95 = sorted.length ? sorted[Math.min(sorted.length - 1, Math.ceil(sorted.length * 0.95) - 1)]! : Number.NaN;
const ratio = median(watched) / median(base);
console.log(`study wall time, median: without ${median(base)} ms, with watcher ${median(watched)} ms → ratio ${ratio.toFixed(3)}× (target ≤ 1.05×)`);
console.log(
  `floor: an idle headless browser beside the study ${median(floor)} ms → ${(median(floor) / median(base)).toFixed(3)}× the baseline; the Observer over that floor ${(median(watched) / median(floor)).toFixed(3)}×`,
);
console.log(
  `the Observer's server with no page open ${median(server)} ms → ${(median(server) / median(base)).toFixed(3)}× the baseline (the rest of the watcher's share is the page drawing frames)`,
);
console.log(
  `observer latency frame admitted → shown: p50 ${sorted.length ? median(sorted) : "n/a"} ms, p95 ${p95} ms over ${sorted.length} frame(s) (target ≤ 500 ms)`,
);
// The page's floor: on a study that keeps every core busy, CPU the watching browser takes is wall
// time the seats lose, so no server design gets below 1 + that CPU over the cores' capacity in the
// study's own time. Drawing fewer or smaller frames is the only way under it.
const cores = availableParallelism();
const pageFloor = 1 + median(watcherCpu) / (cores * median(base));
console.log(
  `the watching browser used ${median(watcherCpu)} CPU-ms per study (idle beside a study: ${median(idleCpu)}); on ${cores} busy cores that alone is ${pageFloor.toFixed(3)}× the baseline`,
);
const browser = coldBrowser ? "a browser started once the URL is printed" : "an already running browser";
emitFigures([
  figure(`3-seat study wall time with a watcher (${browser}) vs without`, median(watched), "ms", median(base), { maxRatio: 1.05 }),
  figure("3-seat study wall time with a watcher vs an idle browser beside it (the Observer's own share)", median(watched), "ms", median(floor), {
    maxRatio: 1.05,
  }),
  figure("3-seat study wall time with the Observer serving no page vs without", median(server), "ms", median(base)),
  figure("floor: 1 + the watching browser's CPU time over the cores' capacity in the baseline's time", pageFloor, "×", null),
  figure("Observer latency, frame admitted → shown, p95", sorted.length ? p95 : null, "ms", null, { maxValue: 500 }),
]);

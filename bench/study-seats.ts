/**
 * Many seats vs one, measured in one run on this machine:
 *
 *   ./node_modules/.bin/bun bench/study-seats.ts [--skip-browser]
 *
 * A. Terminal: a scripted coreutils study (no install, a 2 s step) with 4 seats at
 *    concurrency 4 vs the same study with 1 seat — study wall time ratio (target ≤ 1.6×).
 * B. Browser: todomvc-first-run with 4 seats at concurrency 4 vs 1 seat — wall time ratio
 *    (target ≤ 2.5× on 2 cores), and the peak memory of each guest (the engine's own
 *    `memory_stats.max_usage`, polled while the guest lives) against its 2 GiB limit.
 * C. Runner overhead per seat: the full study runner (ledger, clock, scheduling, hooks) over a
 *    lane that does nothing, 16 seats — ms per seat vs the 50 ms budget.
 * Needs the Docker engine and the humanish images (scripts/setup-images.sh).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { dockerClientFor } from "../src/docker/index.ts";
import { type LabConfig, loadLab, parseLab } from "../src/lab/index.ts";
import { expandSeats } from "../src/lab/seats.ts";
import { runBrowserStudy } from "../src/routes/browser/index.ts";
import { runTerminalStudy } from "../src/routes/terminal/index.ts";
import type { StudyContext } from "../src/routes/types.ts";
import { type Lane, runSeats } from "../src/study/index.ts";
import { scriptedTerminalLab } from "../test/support/terminal-study.ts";
import { emitFigures, type Figure, figure } from "./lib/figures.ts";

const skipBrowser = process.argv.includes("--skip-browser");
const cwd = mkdtempSync(join(tmpdir(), "humanish-bench-seats-"));
const socket = (process.env.DOCKER_HOST ?? "unix:///var/run/docker.sock").replace(/^unix:\/\//, "");

function ctxOf(lab: LabConfig, runId: string): StudyContext<LabConfig> {
  return {
    cwd,
    lab,
    labSource: { ref: "bench", sha256: "0".repeat(64) },
    labWarnings: [],
    runId,
    mode: "live",
    env: { ...process.env },
    signal: new AbortController().signal,
    progress: () => undefined,
  };
}

function parsed(text: string): LabConfig {
  const r = parseLab(text);
  if (!r.ok) throw new Error(r.error.message);
  return r.config;
}

const terminalLab = (count: number) =>
  parsed(scriptedTerminalLab({ id: "bench-seats", count, concurrency: Math.min(count, 4), steps: ["ls -la; sleep 2; touch done.txt"] }));

async function timed(f: () => Promise<{ ok: boolean; error?: { code: string; message: string } }>): Promise<number> {
  const t0 = performance.now();
  const r = await f();
  if (!r.ok) throw new Error(`study failed: ${r.error?.code} ${r.error?.message}`);
  return performance.now() - t0;
}

/** Peak memory of each container while it lives, from the engine's stats (bytes). */
function watchMemory(): { add(id: string): void; stop(): Map<string, number> } {
  const peaks = new Map<string, number>();
  let stopped = false;
  const poll = async (id: string) => {
    while (!stopped) {
      try {
        const res = await fetch(`http://localhost/containers/${id}/stats?stream=false&one-shot=true`, { unix: socket } as RequestInit);
        if (!res.ok) return;
        const s = (await res.json()) as { memory_stats?: { usage?: number; max_usage?: number } };
        const m = Math.max(s.memory_stats?.max_usage ?? 0, s.memory_stats?.usage ?? 0);
        if (m > 0) peaks.set(id, Math.max(peaks.get(id) ?? 0, m));
      } catch {
        return;
      }
      await Bun.sleep(300);
    }
  };
  return {
    add: (id) => void poll(id),
    stop: () => {
      stopped = true;
      return peaks;
    },
  };
}

const figures: Figure[] = [];
async function main(): Promise<void> {
  // Warm-up: the first study pays image checks and page-cache misses.
  await timed(() => runTerminalStudy(ctxOf(terminalLab(1), `bench-warm-${Date.now()}`)));
  const t1 = await timed(() => runTerminalStudy(ctxOf(terminalLab(1), `bench-t1-${Date.now()}`)));
  const t4 = await timed(() => runTerminalStudy(ctxOf(terminalLab(4), `bench-t4-${Date.now()}`)));
  figures.push(figure("4 terminal seats vs 1 (study wall)", t4, "ms", t1, { maxRatio: 1.6 }));
  console.log(
    `A terminal: 1 seat ${(t1 / 1000).toFixed(2)} s, 4 seats at concurrency 4 ${(t4 / 1000).toFixed(2)} s, ratio ${(t4 / t1).toFixed(2)}× (target ≤ 1.6×)`,
  );

  if (!skipBrowser) {
    const base = await loadLab("todomvc-first-run", cwd);
    const four = parseLab(base.text, { seatCount: 4 });
    if (!four.ok) throw new Error(four.error.message);
    const docker = dockerClientFor(process.env);
    await timed(() => runBrowserStudy(ctxOf(base.config, `bench-bwarm-${Date.now()}`), { docker }));
    const b1 = await timed(() => runBrowserStudy(ctxOf(base.config, `bench-b1-${Date.now()}`), { docker }));
    const mem = watchMemory();
    const b4 = await timed(() => runBrowserStudy(ctxOf(four.config, `bench-b4-${Date.now()}`), { docker, onDesktopCreated: (_p, id) => mem.add(id) }));
    const peaks = [...mem.stop().values()];
    const MiB = 1024 * 1024;
    console.log(
      `B browser: 1 seat ${(b1 / 1000).toFixed(2)} s, 4 seats at concurrency 4 ${(b4 / 1000).toFixed(2)} s, ratio ${(b4 / b1).toFixed(2)}× (target ≤ 2.5×)`,
    );
    figures.push(
      figure("4 browser seats vs 1 (study wall)", b4, "ms", b1, { maxRatio: 2.5 }),
      figure("guest memory peak (max of 4 seats)", Math.max(0, ...peaks) / MiB, "MiB", null),
    );
    console.log(
      `B guest memory peaks: ${peaks.map((b) => `${Math.round(b / MiB)} MiB`).join(", ") || "(no sample)"}; max ${Math.round(Math.max(0, ...peaks) / MiB)} MiB = ${((Math.max(0, ...peaks) / (2 * 1024 * MiB)) * 100).toFixed(1)}% of the 2048 MiB limit`,
    );
  }

  // C: the runner over a lane that does nothing.
  const lane: Lane<number> = {
    name: "noop",
    spentUsd: () => 0,
    jobs: () => 0,
    session(_seat, hooks) {
      const noop = async () => undefined;
      return {
        async prepare() {
          hooks.beforeCreate();
          hooks.created("x");
        },
        openSession: noop,
        participate: noop,
        check: noop,
        finalize: async () => ({ outcome: "released", id: "x", reason: "noop" }),
        snapshot: () => 0,
      };
    },
  };
  let best = Number.POSITIVE_INFINITY;
  for (let round = 0; round < 9; round++) {
    const t0 = performance.now();
    await runSeats({
      seats: expandSeats({ count: 16 }),
      lane,
      concurrency: 4,
      signal: new AbortController().signal,
      caps: { maxTotalUsd: null, maxJobs: null },
      progress: () => undefined,
    });
    best = Math.min(best, (performance.now() - t0) / 16);
  }
  console.log(`C runner overhead: ${best.toFixed(3)} ms per seat vs the 50 ms budget: ratio ${(best / 50).toFixed(4)}×`);
  figures.push(figure("runner overhead per seat (16 no-op seats)", best, "ms", null, { maxValue: 50 }));
  emitFigures(figures);
}

try {
  await main();
} finally {
  rmSync(cwd, { recursive: true, force: true });
}

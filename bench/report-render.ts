/**
 * Report rendering cost vs a baseline in the same process: `renderReportHtml` of a heavy model
 * (512 KiB transcript, 2,000 timeline rows, 8 seats, 20 screenshots of 1440×950 in per-seat strips) against
 * `JSON.stringify` of the same model (the cheapest full serialisation of the same data).
 * Prints the median ms of each and their ratio. Run: `bun bench/report-render.ts`.
 */
import { PNG } from "pngjs";
import { type ReportModel, renderReportHtml } from "../src/report/index.ts";
import { emitFigures, figure } from "./lib/figures.ts";

function png(width: number, height: number, seed: number): Uint8Array {
  const p = new PNG({ width, height });
  for (let i = 0; i < p.data.length; i += 4) {
    p.data[i] = (i * 7 + seed) & 0xff;
    p.data[i + 1] = (i >> 8) & 0xff;
    p.data[i + 2] = seed * 40;
    p.data[i + 3] = 255;
  }
  return new Uint8Array(PNG.sync.write(p, { colorType: 2 }));
}

const line = '$ jq \'.[] | select(.status == "open") | .id\' orders.json <tag> & "quoted"\n';
const model: ReportModel = {
  runId: "bench-run",
  labId: "bench",
  route: "terminal",
  mode: "live",
  verdict: "pass",
  verdictLine: "1/1 reached the goal",
  reached: 1,
  total: 1,
  gaps: [],
  harnessFailed: 1,
  participants: Array.from({ length: 8 }, (_, i) => ({
    id: `p${i + 1}`,
    persona: "newcomer",
    device: i % 2 ? "mobile 500×896" : "desktop 1440×950",
    status: i === 7 ? "failed" : "passed",
    completionReason: i === 7 ? "harness_error" : "goal_satisfied",
    category: i === 7 ? ("harness" as const) : ("goal" as const),
    tasksPassed: 10,
    tasksTotal: 10,
    durationMs: 30_000 + i,
    cost: { usd: i % 3 ? 0.0123 : null, fullyMeasured: i % 3 !== 0 },
    screenshotCount: i < 4 ? 3 : 2,
  })),
  tasks: Array.from({ length: 10 }, (_, i) => ({ id: `t${i}`, goal: `goal ${i}`, passed: i % 2, total: 1, status: i % 2 ? "passed" : "failed" })),
  timeline: Array.from({ length: 2000 }, (_, i) => ({
    at: new Date(i * 1000).toISOString(),
    kind: "command",
    title: `step ${i} <x>`,
    detail: line.repeat(3),
    exitCode: 0,
  })),
  transcript: line.repeat(Math.ceil((512 * 1024) / line.length)),
  screenshots: Array.from({ length: 20 }, (_, i) => ({
    path: `screenshots/p${(i % 8) + 1}-${i}.png`,
    caption: `turn ${i}`,
    png: png(1440, 950, i),
    width: 1440,
    height: 950,
    participantId: `p${(i % 8) + 1}`,
  })),
  cost: [{ label: "provider", usd: null }],
  costTotal: { usd: null, fullyMeasured: false },
  cleanup: [],
  warnings: [],
  verify: null,
  generatedAt: new Date(0).toISOString(),
};

function median(fn: () => unknown, runs = 15): number {
  const t: number[] = [];
  fn();
  for (let i = 0; i < runs; i++) {
    const s = performance.now();
    fn();
    t.push(performance.now() - s);
  }
  t.sort((a, b) => a - b);
  return t[Math.floor(t.length / 2)]!;
}

const html = renderReportHtml(model);
const base = median(() =>
  JSON.stringify({ ...model, screenshots: model.screenshots.map((s) => ({ ...s, png: s.png ? Buffer.from(s.png).toString("base64") : null })) }),
);
const render = median(() => renderReportHtml(model));
console.log(`report bytes: ${(html.length / 1024 / 1024).toFixed(2)} MiB`);
console.log(`JSON.stringify baseline: ${base.toFixed(1)} ms (median)`);
console.log(`renderReportHtml:        ${render.toFixed(1)} ms (median)`);
console.log(`ratio render / baseline: ${(render / base).toFixed(2)}×`);
emitFigures([figure("renderReportHtml vs JSON.stringify of the same model", render, "ms", base)]);

import { parseArgs } from "node:util";
import { runScriptedBrowser } from "../src/actors/scripted-browser/index.ts";
import type { BareStep } from "../src/guest/bare-bench.ts";
import type { BrowserStep } from "../src/lab/schema-browser.ts";
import { allocateDesktop } from "../src/runtime/desktop.ts";
import { emitFigures, type Figure, figure } from "./lib/figures.ts";
import { type ArmRun, memoryKind, runBare, type StatsSource, watchContainer } from "./lib/seat-stats.ts";
import { todomvcGuestSetup } from "./lib/todomvc-guest.ts";

const { values } = parseArgs({ args: Bun.argv.slice(2), options: { rounds: { type: "string" }, json: { type: "boolean" } } });
const rounds = Number(values.rounds ?? 3);
const W = 1440;
const H = 950;

/** The scripted TodoMVC steps both arms run. */
const STEPS = [
  { kind: "open", path: "/" },
  { kind: "waitForText", text: "Double-click to edit a todo", timeoutMs: 10_000 },
  { kind: "screenshot", label: "empty" },
  { kind: "type", text: "Buy milk" },
  { kind: "press", keys: ["Enter"] },
  { kind: "type", text: "Walk the dog" },
  { kind: "press", keys: ["Enter"] },
  { kind: "type", text: "Call mom" },
  { kind: "press", keys: ["Enter"] },
  { kind: "waitForText", text: "3 items left", timeoutMs: 10_000 },
  { kind: "screenshot", label: "three" },
  // Tab 1: "mark all as complete"; Tab 2: the first todo's checkbox.
  { kind: "press", keys: ["Tab"] },
  { kind: "press", keys: ["Tab"] },
  { kind: "press", keys: ["space"] },
  { kind: "waitForText", text: "2 items left", timeoutMs: 10_000 },
  { kind: "screenshot", label: "toggled" },
] satisfies BareStep[] & BrowserStep[];

const { docker, image, port, app } = await todomvcGuestSetup();
const src: StatsSource = {
  docker,
  image,
  port,
  width: W,
  height: H,
  steps: STEPS,
  labels: { "humanish.bench": "seat-cost" },
  watch: watchContainer,
  memoryKind,
};

/** One scripted seat: allocate, run the steps, read the stats, release. */
async function runSeat(): Promise<ArmRun> {
  const t0 = performance.now();
  let stats: ReturnType<StatsSource["watch"]> | undefined;
  const d = await allocateDesktop({
    docker,
    image,
    runId: "bench-seat-cost",
    participantId: "p1",
    appPort: port,
    initialPath: "/",
    width: W,
    height: H,
    labels: src.labels,
    onCreated: (id) => {
      stats = src.watch(id);
    },
  });
  try {
    const ready = await stats!.sample();
    const out = await runScriptedBrowser({ executor: d.executor, steps: STEPS, origin: `http://127.0.0.1:${port}`, width: W, height: H });
    if (out.status !== "passed") throw new Error(`seat did not pass: ${out.completionReason}: ${out.reason}`);
    const done = await stats!.sample();
    return { cpuS: done.cpuNs / 1e9, readyCpuS: ready.cpuNs / 1e9, peakBytes: stats!.peak(), observations: out.observations.length, wallMs: 0, t0 };
  } finally {
    stats?.stop();
    const proof = await d.release();
    if (proof.outcome !== "released") console.error(`release ${proof.id}: ${proof.outcome} (${proof.reason})`);
  }
}

const timedArm = async (f: () => Promise<ArmRun>): Promise<ArmRun> => {
  const r = await f();
  return { ...r, wallMs: performance.now() - r.t0 };
};
const seat = () => timedArm(runSeat);
const bare = () => timedArm(() => runBare(src));
const many = async (f: () => Promise<ArmRun>, n: number) => {
  const t0 = performance.now();
  await Promise.all(Array.from({ length: n }, f));
  return performance.now() - t0;
};

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};
const spread = (xs: number[], d = 2) =>
  `median ${median(xs).toFixed(d)} (min ${Math.min(...xs).toFixed(d)}, max ${Math.max(...xs).toFixed(d)}, n ${xs.length})`;

interface Round {
  seat: ArmRun;
  bare: ArmRun;
  seat4: number;
  bare4: number;
}

async function main(): Promise<Round[]> {
  // Warm-up: page cache, image layers, the first Chromium profile.
  await seat();
  await bare();
  const out: Round[] = [];
  for (let r = 0; r < rounds; r++) {
    const seatFirst = r % 2 === 0;
    const s1 = seatFirst ? await seat() : undefined;
    const b1 = await bare();
    const seatOne = s1 ?? (await seat());
    const s4 = seatFirst ? await many(seat, 4) : undefined;
    const b4 = await many(bare, 4);
    const seatFour = s4 ?? (await many(seat, 4));
    out.push({ seat: seatOne, bare: b1, seat4: seatFour, bare4: b4 });
    console.error(
      `round ${r + 1}: seat ${seatOne.cpuS.toFixed(2)} CPU-s ${(seatOne.peakBytes / 2 ** 20).toFixed(0)} MiB ${(seatOne.wallMs / 1000).toFixed(1)} s; ` +
        `bare ${b1.cpuS.toFixed(2)} CPU-s ${(b1.peakBytes / 2 ** 20).toFixed(0)} MiB ${(b1.wallMs / 1000).toFixed(1)} s; ` +
        `4 seats ${(seatFour / 1000).toFixed(1)} s, 4 bare ${(b4 / 1000).toFixed(1)} s`,
    );
  }
  return out;
}

function report(rs: Round[]): Figure[] {
  const MiB = 2 ** 20;
  const cpuRatio = rs.map((r) => r.seat.cpuS / r.bare.cpuS);
  const memRatio = rs.map((r) => r.seat.peakBytes / r.bare.peakBytes);
  const seatScale = rs.map((r) => r.seat4 / r.seat.wallMs);
  const bareScale = rs.map((r) => r.bare4 / r.bare.wallMs);
  const rel = rs.map((_, i) => seatScale[i]! / bareScale[i]!);
  console.log(`guest image ${image.ref}, screen ${W}x${H}, ${rounds} round(s); memory = ${src.memoryKind()}`);
  console.log(`A. seat CPU-s ${spread(rs.map((r) => r.seat.cpuS))} (to ready ${spread(rs.map((r) => r.seat.readyCpuS))})`);
  console.log(`   bare CPU-s ${spread(rs.map((r) => r.bare.cpuS))} (to ready ${spread(rs.map((r) => r.bare.readyCpuS))})`);
  console.log(`   CPU ratio seat / bare: ${spread(cpuRatio)} (goal ≤ 1.3×)`);
  console.log(
    `   seat peak MiB ${spread(
      rs.map((r) => r.seat.peakBytes / MiB),
      0,
    )}; bare peak MiB ${spread(
      rs.map((r) => r.bare.peakBytes / MiB),
      0,
    )}`,
  );
  console.log(`   memory ratio seat / bare: ${spread(memRatio)} (goal ≤ 1.3×)`);
  console.log(
    `   observations: seat ${spread(
      rs.map((r) => r.seat.observations),
      0,
    )}, bare ${spread(
      rs.map((r) => r.bare.observations),
      0,
    )}`,
  );
  console.log(`B. 4 seats vs 1 (wall): ${spread(seatScale)} (goal ≤ 2.5×); 4 bare vs 1: ${spread(bareScale)}`);
  console.log(`   seat ratio / bare ratio: ${spread(rel)} (goal ≤ 1.15×)`);
  const med = (f: (r: Round) => number) => median(rs.map(f));
  return [
    figure(
      "seat CPU vs bare headless Chromium (median)",
      med((r) => r.seat.cpuS),
      "CPU-s",
      med((r) => r.bare.cpuS),
      { maxRatio: 1.3 },
    ),
    figure(`seat peak memory vs bare (${src.memoryKind()}, median)`, med((r) => r.seat.peakBytes) / MiB, "MiB", med((r) => r.bare.peakBytes) / MiB, {
      maxRatio: 1.3,
    }),
    figure(
      "4 seats vs 1 (wall, median)",
      med((r) => r.seat4),
      "ms",
      med((r) => r.seat.wallMs),
      { maxRatio: 2.5 },
    ),
    figure(
      "4 bare browsers vs 1 (wall, median)",
      med((r) => r.bare4),
      "ms",
      med((r) => r.bare.wallMs),
    ),
    figure("seat 4-vs-1 ratio vs the bare one (median)", median(seatScale), "×", median(bareScale), { maxRatio: 1.15 }),
  ];
}

try {
  emitFigures(report(await main()));
} finally {
  await app.close();
}

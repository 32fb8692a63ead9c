/**
 * Guest desktop costs, printed as figures and ratios:
 *
 *   ./node_modules/.bin/bun bench/guest.ts [--runs 3] [--observes 20]
 *
 * A. Cold start: container create → first admitted observation on the host (allocation, Xvfb,
 *    Chromium with its sandbox, app load, HELLO, OBSERVE), best and mean of N runs; also the
 *    part up to HELLO. Its floor, in the same run: a container of the same image running `true`
 *    (create → exited, best of N) plus a bare headless Chromium's spawn → first capture of the
 *    same page inside the guest (`bench-capture`'s `startMs`) — what any browser in a container
 *    of this image costs before its first frame.
 * B. Observe round trip over browser control (guest: xwd full frame incl. browser chrome → PNG
 *    → admitPng → page facts; framed over the Unix socket; host: base64 + re-admission) vs a
 *    bare CDP `Page.captureScreenshot` (PNG, viewport only) timed inside the SAME container by
 *    `humanish guest bench-capture`. Ratio = observe / bare capture (mean ms).
 * Needs a Docker engine and the guest image (built on first use, cached by revision).
 */

import { parseArgs } from "node:util";
import { runExec } from "../src/docker/index.ts";
import { allocateDesktop } from "../src/runtime/desktop.ts";
import { emitFigures, type Figure, figure } from "./lib/figures.ts";
import { todomvcGuestSetup } from "./lib/todomvc-guest.ts";

const { values } = parseArgs({ args: Bun.argv.slice(2), options: { runs: { type: "string" }, observes: { type: "string" } } });
const runs = Number(values.runs ?? 3);
const observes = Number(values.observes ?? 20);
const W = 1440;
const H = 950;

const { docker, image, port, app } = await todomvcGuestSetup();
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;

const cold: number[] = [];
const hello: number[] = [];
let obsMs: number[] = [];
let bare: { meanMs: number; minMs: number; bytes: number; startMs: number } | undefined;
const bareContainer: number[] = [];
let obsBytes = 0;
try {
  for (let r = 0; r < runs; r++) {
    const t0 = performance.now();
    const d = await allocateDesktop({
      docker,
      image,
      runId: "bench-guest",
      participantId: "p1",
      appPort: port,
      initialPath: "/",
      width: W,
      height: H,
      labels: { "humanish.bench": "guest" },
      onCreated: () => undefined,
    });
    try {
      hello.push(d.startMs);
      const o = await d.executor.observe();
      cold.push(performance.now() - t0);
      if (r === runs - 1) {
        // B: observe round trips on this warm desktop, then the bare CDP baseline in the same container.
        obsMs = [];
        for (let i = 0; i < observes; i++) {
          const t = performance.now();
          const x = await d.executor.observe();
          obsMs.push(performance.now() - t);
          obsBytes = x.png.length;
        }
        const res = await runExec(docker, d.containerId, {
          Cmd: ["/opt/humanish/humanish", "guest", "bench-capture", `http://127.0.0.1:${port}/`, String(W), String(H), String(observes)],
          AttachStdout: true,
          AttachStderr: true,
        });
        const line = new TextDecoder().decode(res.stdout).trim().split("\n").at(-1) ?? "";
        if (res.exitCode !== 0) throw new Error(`bench-capture exited ${res.exitCode}: ${new TextDecoder().decode(res.stderr)}`);
        bare = JSON.parse(line);
      }
      void o;
    } finally {
      const proof = await d.release();
      if (proof.outcome !== "released") console.error(`release ${proof.id}: ${proof.outcome} (${proof.reason})`);
    }
  }
  for (let r = 0; r < runs; r++) bareContainer.push(await containerRunsTrue());
} finally {
  await app.close();
}

/** Create → start → exited of a container of the guest image that runs `true`, ms (removed after). */
async function containerRunsTrue(): Promise<number> {
  const t0 = performance.now();
  const { Id } = await docker.containerCreate({ Image: image.ref, Entrypoint: ["true"], Cmd: [], Labels: { "humanish.bench": "guest" } });
  try {
    await docker.containerStart(Id);
    await docker.containerWait(Id);
    return performance.now() - t0;
  } finally {
    await docker.containerRemove(Id, { force: true });
  }
}

console.log(`guest image ${image.ref} (${image.runtimeRevision.slice(0, 22)}…), screen ${W}x${H}`);
console.log(
  `A. cold start, create → first admitted observation: best ${Math.min(...cold).toFixed(0)} ms, mean ${mean(cold).toFixed(0)} ms over ${runs} run(s) (create → HELLO: mean ${mean(hello).toFixed(0)} ms)`,
);
if (bare) {
  const m = mean(obsMs);
  console.log(
    `B. observe round trip over browser control: mean ${m.toFixed(1)} ms, best ${Math.min(...obsMs).toFixed(1)} ms (${observes}×, full frame incl. chrome, ${(obsBytes / 1024).toFixed(0)} KiB PNG)`,
  );
  console.log(
    `   bare CDP Page.captureScreenshot in the same container: mean ${bare.meanMs.toFixed(1)} ms, best ${bare.minMs.toFixed(1)} ms (${(bare.bytes / 1024).toFixed(0)} KiB PNG)`,
  );
  console.log(`   ratio observe / bare capture: ${(m / bare.meanMs).toFixed(2)}×`);
}
const startFloor = bare ? Math.min(...bareContainer) + bare.startMs : null;
if (bare)
  console.log(
    `   floor: a container of this image running \`true\` ${Math.min(...bareContainer).toFixed(0)} ms (best) + bare headless Chromium spawn → first capture ${bare.startMs.toFixed(0)} ms = ${startFloor!.toFixed(0)} ms; cold start / floor ${(Math.min(...cold) / startFloor!).toFixed(2)}×`,
  );
const figures: Figure[] = [
  figure("guest cold start, create → first admitted observation (best)", Math.min(...cold), "ms", null, { maxValue: 800 }),
  figure("guest cold start vs its floor (a `true` container of the image + bare Chromium to its first capture)", Math.min(...cold), "ms", startFloor),
];
if (bare) figures.push(figure("observe round trip vs bare CDP capture (mean)", mean(obsMs), "ms", bare.meanMs, { maxRatio: 1.2 }));
emitFigures(figures);

/**
 * The computer-use loop's own cost per turn, measured in one run on this machine:
 *
 *   ./node_modules/.bin/bun bench/cua-loop.ts [turns]
 *
 * A real guest (TodoMVC in real Chromium) and the fake Responses server answering at once. Per
 * turn the loop observes, admits the PNG, maps and dispatches one action, answers the call with
 * the new frame and records the trace; the model's time (every `responses.create` call, timed
 * around the real SDK) is subtracted. Baseline: the same bare executor calls in a plain loop
 * (one `execute` + one `observe` per turn). Prints the ratio (goal ≤ 1.3×) and the bytes per
 * screenshot the model is sent. Alternates loop and baseline runs and reports medians.
 * Needs the Docker engine and the humanish guest image (scripts/setup-images.sh).
 */
import { runComputerUse } from "../src/actors/computer-use/index.ts";
import type { OpenAI } from "../src/models/client.ts";
import { createModelClient, resolveEndpoint } from "../src/models/index.ts";
import { allocateDesktop } from "../src/runtime/desktop.ts";
import { guestPrereqs, serveTodoMvc, TEST_LABEL } from "../test/runtime/guest-support.ts";
import { cuaSession } from "../test/support/fake-openai/computer-use.ts";
import { startFakeOpenAI } from "../test/support/fake-openai/server.ts";
import { emitFigures, figure } from "./lib/figures.ts";

const turns = Number(process.argv[2] ?? 12);
const rounds = 3;
const KEY = "sk-bench-cua";

/** Harmless pointer moves over the page background, one per turn. */
const moveAt = (i: number) => ({ x: 100 + (i % 7) * 10, y: 700 + (i % 3) * 10 });

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

const { docker, image, testRun } = await guestPrereqs();
const app = serveTodoMvc();
const desktop = await allocateDesktop({
  docker,
  image,
  runId: `bench-${testRun}`,
  participantId: "p1",
  appPort: app.port,
  initialPath: "/",
  width: 1440,
  height: 950,
  labels: { [TEST_LABEL]: testRun },
  onCreated: () => {},
});

/** A client whose `responses.create` time is added up (the model's share of the loop). */
function timedClient(base: OpenAI): { client: OpenAI; modelMs: () => number } {
  let ms = 0;
  const responses = new Proxy(base.responses, {
    get(target, prop, recv) {
      const v = Reflect.get(target, prop, recv);
      if (prop !== "create" || typeof v !== "function") return v;
      return async (...args: unknown[]) => {
        const t = performance.now();
        try {
          return await (v as (...a: unknown[]) => Promise<unknown>).apply(target, args);
        } finally {
          ms += performance.now() - t;
        }
      };
    },
  });
  const client = new Proxy(base, { get: (t, p, r) => (p === "responses" ? responses : Reflect.get(t, p, r)) });
  return { client, modelMs: () => ms };
}

async function loopRun(): Promise<{ perTurnMs: number; bytes: number }> {
  const batches = Array.from({ length: turns }, (_, i) => [{ type: "move", ...moveAt(i) }]);
  const fake = startFakeOpenAI({ scenario: cuaSession({ turns: batches, batched: true }), apiKey: KEY });
  try {
    const { client, modelMs } = timedClient(
      createModelClient(resolveEndpoint({ OPENAI_BASE_URL: fake.baseURL }), { sourceName: "OPENAI_API_KEY", value: KEY }),
    );
    const t = performance.now();
    const out = await runComputerUse({
      executor: desktop.executor,
      client,
      model: "gpt-5.1",
      instructions: "Move the pointer as told.",
      origin: `http://127.0.0.1:${app.port}`,
      timeoutMs: 600_000,
      noProgressSteps: 10_000,
      idleSteps: 10_000,
    });
    const total = performance.now() - t;
    if (out.counts.turns !== turns + 1) throw new Error(`loop ran ${out.counts.turns} turns, expected ${turns + 1}: ${out.reason}`);
    const bytes = out.screenshots.reduce((a, s) => a + s.png.byteLength, 0) / out.screenshots.length;
    // Per acted turn: the whole run minus the model's time, over the acted turns.
    return { perTurnMs: (total - modelMs()) / turns, bytes };
  } finally {
    await fake.close();
  }
}

async function bareRun(): Promise<number> {
  const t = performance.now();
  await desktop.executor.observe();
  for (let i = 0; i < turns; i++) {
    await desktop.executor.execute({ kind: "move", ...moveAt(i) });
    await desktop.executor.observe();
  }
  // The loop observes once more after the model's final message (for the hidden checks).
  await desktop.executor.observe();
  return (performance.now() - t) / turns;
}

try {
  await bareRun(); // warm-up
  const loop: number[] = [];
  const bare: number[] = [];
  let bytes = 0;
  for (let r = 0; r < rounds; r++) {
    const l = await loopRun();
    loop.push(l.perTurnMs);
    bytes = l.bytes;
    bare.push(await bareRun());
  }
  const ratio = median(loop) / median(bare);
  console.log(
    JSON.stringify({
      schema: "humanish.bench.cua-loop.v1",
      turns,
      rounds,
      loopMsPerTurn: Math.round(median(loop) * 10) / 10,
      bareMsPerTurn: Math.round(median(bare) * 10) / 10,
      ratio: Math.round(ratio * 100) / 100,
      goal: 1.3,
      bytesPerScreenshot: Math.round(bytes),
    }),
  );
  emitFigures([figure("computer-use loop per turn vs bare executor calls (median)", median(loop), "ms", median(bare), { maxRatio: 1.3 })]);
} finally {
  const proof = await desktop.release();
  await app.close();
  if (proof.outcome !== "released") console.error(`guest ${proof.id}: ${proof.outcome} (${proof.reason})`);
}

/**
 * Model gateway overhead, against the fake Responses server running in a child process. Prints,
 * in one run, each figure with its same-run baseline:
 *   - per-request overhead: p50/p95 of `POST /v1/responses` (JSON) straight to the fake vs through
 *     the gateway's Unix socket; the added p50 in ms (goal ≤ 2 ms);
 *   - SSE time to first byte, direct vs through the gateway, against an instant fake and against
 *     one that waits 50 ms before its first byte (a fast model's time to first token): p50, p95
 *     and the ratio (goal ≤ 1.1×). The floor is a bare Bun pipe — a trivial `Bun.serve` on a Unix
 *     socket that forwards the body upstream and returns the upstream body — measured in the same
 *     run: what any proxy hop costs, before the gateway's admission, metering and policy; and the
 *     same pipe with every chunk handed through JavaScript, the floor of any proxy that meters
 *     what it passes (the gateway must read each chunk for the usage it bills);
 *   - a 10 MiB SSE response through the gateway and through the bare pipe, each read by a curl
 *     child process so only the proxy's memory is in this process: RSS growth while it streams
 *     (goal: the gateway's growth ≤ the pipe's + 1 MiB);
 * Direct, pipe and gateway iterations are interleaved, so load from other work on the machine
 * falls on all of them alike.
 *   - the admission estimate vs the input tokens the fake reports, for recorded requests (a real
 *     Codex 0.171.0 request, short and long text, PNG screenshots): min and max ratio (goal:
 *     never below 1, at most 1.5).
 * Usage: bun bench/gateway.ts [--iterations 300]
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { admissionEstimate, resolveEndpoint, SpendBudget, startGateway } from "../src/models/index.ts";
import { emitFigures, type Figure, figure } from "./lib/figures.ts";

const { values } = parseArgs({ options: { iterations: { type: "string", default: "300" } } });
const N = Number(values.iterations);
// A fake key: the fake model server only checks that the gateway passed it through.
const KEY = "fake-bench-key-0123456789";

const child = Bun.spawn(["bun", join(import.meta.dir, "gateway-fake-child.ts"), KEY], { stdout: "pipe", stderr: "inherit" });
const reader = child.stdout.getReader();
let banner = "";
while (!banner.includes("\n")) {
  const { value, done } = await reader.read();
  if (done) throw new Error("the fake child exited before it was ready");
  banner += new TextDecoder().decode(value);
}
const baseURL = /READY (\S+)/.exec(banner)?.[1] as string;
const gw = startGateway({
  endpoint: resolveEndpoint({ OPENAI_BASE_URL: baseURL }),
  key: { sourceName: "OPENAI_API_KEY", value: KEY },
  budgets: [new SpendBudget("bench", null)],
});
const sock = `${gw.socketDir}/${gw.socketName}`;

// The floor: a bare Bun pipe to the same upstream, with no admission, policy or metering.
const pipeSock = `${gw.socketDir}/pipe.sock`;
const pipe = Bun.serve({
  unix: pipeSock,
  fetch: async (req) => {
    const up = await fetch(`${baseURL}/responses`, {
      method: "POST",
      headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json" },
      body: await req.arrayBuffer(),
      decompress: false,
    } as RequestInit);
    return new Response(up.body, { status: up.status, headers: { "content-type": up.headers.get("content-type") ?? "application/json" } });
  },
});

const direct = (body: unknown) =>
  fetch(`${baseURL}/responses`, {
    method: "POST",
    headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
// The same pipe with every chunk handed through JavaScript (a pull stream, no parsing): what any
// tap on the stream costs in memory, since a chunk JavaScript sees is garbage until collected.
const jsPipeSock = `${gw.socketDir}/js-pipe.sock`;
const jsPipe = Bun.serve({
  unix: jsPipeSock,
  fetch: async (req) => {
    const up = await fetch(`${baseURL}/responses`, {
      method: "POST",
      headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json" },
      body: await req.arrayBuffer(),
      decompress: false,
    } as RequestInit);
    const r = (up.body as ReadableStream<Uint8Array>).getReader();
    const body = new ReadableStream<Uint8Array>(
      {
        async pull(c) {
          const x = await r.read();
          if (x.done) c.close();
          else c.enqueue(x.value);
        },
      },
      { highWaterMark: 0 },
    );
    return new Response(body, { status: up.status, headers: { "content-type": up.headers.get("content-type") ?? "application/json" } });
  },
});
/** A POST of `body` to a proxy listening on Unix socket `unix` (no token: the pipes check none). */
const viaSocket = (unix: string) => (body: unknown) =>
  fetch("http://pipe/v1/responses", { method: "POST", unix, headers: { "content-type": "application/json" }, body: JSON.stringify(body) } as RequestInit);
const viaPipe = viaSocket(pipeSock);
const viaJsPipe = viaSocket(jsPipeSock);
const viaGw = (body: unknown) =>
  fetch("http://gateway/v1/responses", {
    method: "POST",
    unix: sock,
    headers: { authorization: `Bearer ${gw.token}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  } as RequestInit);

function pct(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] as number;
}
async function timeIt(f: () => Promise<Response>, firstByte: boolean): Promise<number> {
  const t0 = performance.now();
  const res = await f();
  const r = res.body?.getReader();
  if (firstByte) {
    await r?.read();
    const t = performance.now() - t0;
    while (r && !(await r.read()).done) {
      // drain
    }
    return t;
  }
  while (r && !(await r.read()).done) {
    // drain
  }
  return performance.now() - t0;
}

const small = { model: "gpt-5.1-codex-mini", input: "hello", max_output_tokens: 16 };
const sse = { ...small, stream: true };
for (let i = 0; i < 30; i++) {
  await timeIt(() => direct(small), false);
  await timeIt(() => viaGw(small), false);
  await timeIt(() => viaPipe(sse), true);
  await timeIt(() => viaJsPipe(sse), true);
  await timeIt(() => viaGw(sse), true);
}
const pt: number[] = [];
const jt: number[] = [];
const pt50: number[] = [];
const d: number[] = [];
const g: number[] = [];
const dt: number[] = [];
const gt: number[] = [];
const dt50: number[] = [];
const gt50: number[] = [];
const sse50 = { ...sse, metadata: { delay_ms: "50" } };
for (let i = 0; i < N; i++) {
  // Interleaved so drift hits both sides alike.
  d.push(await timeIt(() => direct(small), false));
  g.push(await timeIt(() => viaGw(small), false));
  dt.push(await timeIt(() => direct(sse), true));
  pt.push(await timeIt(() => viaPipe(sse), true));
  jt.push(await timeIt(() => viaJsPipe(sse), true));
  gt.push(await timeIt(() => viaGw(sse), true));
  if (i < 60) {
    dt50.push(await timeIt(() => direct(sse50), true));
    pt50.push(await timeIt(() => viaPipe(sse50), true));
    gt50.push(await timeIt(() => viaGw(sse50), true));
  }
}
console.log(
  `JSON request   direct p50 ${pct(d, 50).toFixed(3)} ms p95 ${pct(d, 95).toFixed(3)} ms | gateway p50 ${pct(g, 50).toFixed(3)} ms p95 ${pct(g, 95).toFixed(3)} ms`,
);
console.log(`               added p50 ${(pct(g, 50) - pct(d, 50)).toFixed(3)} ms (goal ≤ 2 ms); ratio ${(pct(g, 50) / pct(d, 50)).toFixed(2)}×`);
const ms = (xs: number[]) => `p50 ${pct(xs, 50).toFixed(3)} ms p95 ${pct(xs, 95).toFixed(3)} ms`;
const ratio = (a: number[], b: number[]) => pct(a, 50) / pct(b, 50);
console.log(`SSE first byte instant fake: direct ${ms(dt)} | bare pipe ${ms(pt)} | pipe through JS ${ms(jt)} | gateway ${ms(gt)}`);
console.log(
  `               gateway/direct ${ratio(gt, dt).toFixed(2)}× (goal ≤ 1.1×); floors pipe/direct ${ratio(pt, dt).toFixed(2)}×, pipe through JS/direct ${ratio(jt, dt).toFixed(2)}×; gateway/pipe through JS ${ratio(gt, jt).toFixed(2)}×`,
);
console.log(`SSE first byte 50 ms model:  direct ${ms(dt50)} | bare pipe ${ms(pt50)} | gateway ${ms(gt50)}`);
console.log(`               gateway/direct ${ratio(gt50, dt50).toFixed(3)}× (goal ≤ 1.1×); pipe/direct ${ratio(pt50, dt50).toFixed(3)}×`);

// Big streams through the gateway, read by curl in its own process: sample this process's memory
// while each streams. RSS includes the allocator's lag behind freed chunks; `arrayBuffers` is
// what JS holds in buffers; growth that does not scale with the stream's size is no buffering.
async function streamThrough(bytes: number, via: "gateway" | "pipe" | "js-pipe"): Promise<{ streamed: number; rss: number; buffers: number; live: number }> {
  const body = { ...sse, metadata: { bench: "big", bytes: String(bytes) } };
  Bun.gc(true);
  const m0 = process.memoryUsage();
  let rssPeak = m0.rss;
  let bufPeak = m0.arrayBuffers;
  let livePeak = m0.arrayBuffers;
  let ticks = 0;
  const sampler = setInterval(() => {
    // Every 10th sample collects first: what is still held then is buffered, not garbage.
    if (++ticks % 10 === 0) {
      Bun.gc(true);
      livePeak = Math.max(livePeak, process.memoryUsage().arrayBuffers);
    }
    const m = process.memoryUsage();
    rssPeak = Math.max(rssPeak, m.rss);
    bufPeak = Math.max(bufPeak, m.arrayBuffers);
  }, 5);
  const curl = Bun.spawn(
    [
      "curl",
      "-sS",
      "--no-buffer",
      "--unix-socket",
      via === "gateway" ? sock : via === "pipe" ? pipeSock : jsPipeSock,
      "-o",
      "/dev/null",
      "-w",
      "%{size_download}",
      "-H",
      `authorization: Bearer ${gw.token}`,
      "-H",
      "content-type: application/json",
      "--data-binary",
      JSON.stringify(body),
      "http://proxy/v1/responses",
    ],
    { stdout: "pipe", stderr: "inherit" },
  );
  const streamed = Number(await new Response(curl.stdout).text());
  await curl.exited;
  clearInterval(sampler);
  return { streamed, rss: rssPeak - m0.rss, buffers: bufPeak - m0.arrayBuffers, live: livePeak - m0.arrayBuffers };
}
const figures: Figure[] = [
  figure("JSON request p50 via gateway vs direct", pct(g, 50), "ms", pct(d, 50), { text: "added ≤ 2 ms" }),
  figure("SSE first byte p50 via gateway vs direct (instant fake)", pct(gt, 50), "ms", pct(dt, 50), { maxRatio: 1.1 }),
  figure("SSE first byte p50: floor, a pipe through JS vs direct (instant fake)", pct(jt, 50), "ms", pct(dt, 50)),
  figure("SSE first byte p50 via gateway vs a pipe through JS (instant fake)", pct(gt, 50), "ms", pct(jt, 50)),
  figure("SSE first byte p50 via gateway vs direct (50 ms model)", pct(gt50, 50), "ms", pct(dt50, 50), { maxRatio: 1.1 }),
];
figures[0]!.met = pct(g, 50) - pct(d, 50) <= 2;
const mib = (n: number) => (n / 1024 / 1024).toFixed(2);
await streamThrough(10 * 1024 * 1024, "pipe");
await streamThrough(10 * 1024 * 1024, "gateway");
const rssGw: number[] = [];
const rssPipe: number[] = [];
const rssJs: number[] = [];
for (let i = 0; i < 3; i++) {
  // Interleaved, like the timings; the fresh-process allocator warm-up is behind us (above).
  const p = await streamThrough(10 * 1024 * 1024, "pipe");
  const g = await streamThrough(10 * 1024 * 1024, "gateway");
  const j = await streamThrough(10 * 1024 * 1024, "js-pipe");
  rssJs.push(j.rss);
  rssPipe.push(p.rss);
  rssGw.push(g.rss);
  console.log(
    `10 MiB stream  gateway ${mib(g.streamed)} MiB passed, RSS +${mib(g.rss)} MiB, buffers held after GC ${mib(g.live)} MiB | bare pipe ${mib(p.streamed)} MiB passed, RSS +${mib(p.rss)} MiB | pipe through JS ${mib(j.streamed)} MiB passed, RSS +${mib(j.rss)} MiB`,
  );
}
const big = await streamThrough(50 * 1024 * 1024, "gateway");
console.log(
  `50 MiB stream  gateway ${mib(big.streamed)} MiB passed, RSS +${mib(big.rss)} MiB, buffers held after GC ${mib(big.live)} MiB (flat: no growth with size)`,
);
const rssExtra = pct(rssGw, 50) - pct(rssPipe, 50);
const rssJsExtra = pct(rssJs, 50) - pct(rssPipe, 50);
figures.push(
  figure("50 MiB SSE stream: buffers held after GC", big.live / 1024 / 1024, "MiB", null, { maxValue: 1 }),
  figure("10 MiB SSE stream: RSS growth beyond a bare Bun pipe", rssExtra / 1024 / 1024, "MiB", rssJsExtra / 1024 / 1024, { maxValue: 1 }),
);

// Admission estimate vs reported input usage.
const png = (w: number, h: number) => {
  const b = Buffer.alloc(64);
  Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52]).copy(b);
  b.writeUInt32BE(w, 16);
  b.writeUInt32BE(h, 20);
  return `data:image/png;base64,${b.toString("base64")}`;
};
const codexRequest = JSON.parse(readFileSync(join(import.meta.dir, "../test/fixtures/models/codex-0.171.0-request.json"), "utf8"));
const longText = readFileSync(join(import.meta.dir, "../README.md"), "utf8");
const recorded: [string, Record<string, unknown>][] = [
  ["codex 0.171.0 first request", { ...codexRequest, stream: false }],
  ["one word", { model: "gpt-5.1", input: "hi" }],
  ["README as input", { model: "gpt-5.1", instructions: "Summarise.", input: longText }],
  [
    "chat of 20 turns",
    {
      model: "gpt-5.1",
      input: Array.from({ length: 20 }, (_, i) => ({ role: i % 2 ? "assistant" : "user", content: `turn ${i}: ${longText.slice(i * 200, i * 200 + 200)}` })),
    },
  ],
  ...(
    [
      [1280, 800],
      [1920, 1080],
      [512, 512],
      [3840, 2160],
    ] as const
  ).map(
    ([w, h]) =>
      [
        `screenshot ${w}x${h}`,
        {
          model: "computer-use-preview",
          input: [
            {
              role: "user",
              content: [
                { type: "input_text", text: "What is on the screen?" },
                { type: "input_image", image_url: png(w, h) },
              ],
            },
          ],
        },
      ] as [string, Record<string, unknown>],
  ),
];
let lo = Number.POSITIVE_INFINITY;
let hi = 0;
for (const [name, body] of recorded) {
  const e = admissionEstimate(body);
  const r = (await (await direct({ ...body, max_output_tokens: 16 })).json()) as { usage: { input_tokens: number } };
  const ratio = (e.inputTokens + e.imageTokens) / r.usage.input_tokens;
  lo = Math.min(lo, ratio);
  hi = Math.max(hi, ratio);
  console.log(
    `admission      ${name.padEnd(30)} estimate ${String(e.inputTokens + e.imageTokens).padStart(6)} vs reported ${String(r.usage.input_tokens).padStart(6)} input tokens: ${ratio.toFixed(3)}×`,
  );
}
console.log(`admission      min ${lo.toFixed(3)}× max ${hi.toFixed(3)}× (goal: never below 1, at most 1.5)`);
figures.push({
  ...figure("admission estimate vs reported input tokens (min..max)", hi, "×", null, { text: "min ≥ 1, max ≤ 1.5" }),
  ratio: null,
  met: lo >= 1 && hi <= 1.5,
});
console.log(
  `SUMMARY gateway: SSE first byte gateway/direct ${ratio(gt, dt).toFixed(2)}× (goal ≤ 1.1×; bare-pipe floor ${ratio(pt, dt).toFixed(2)}×, pipe-through-JS floor ${ratio(jt, dt).toFixed(2)}×, gateway/that floor ${ratio(gt, jt).toFixed(2)}×); 50 ms model ${ratio(gt50, dt50).toFixed(3)}× (goal ≤ 1.1×); 10 MiB stream RSS gateway − pipe ${mib(rssExtra)} MiB (goal ≤ 1 MiB; floor pipe through JS − pipe ${mib(rssJsExtra)} MiB); admission min ${lo.toFixed(3)}× (goal ≥ 1)`,
);
// The figures line is the bench's last line on stdout: bench/all.ts reads it there.
emitFigures(figures);
await pipe.stop(true);
await jsPipe.stop(true);
await gw.close();
child.kill("SIGTERM");
await child.exited;

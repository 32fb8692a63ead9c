/**
 * Environment-server step latency and throughput, on the real Docker engine. Prints, in one
 * process:
 *   - a raw Engine API exec of `bash -c 'echo hi'` (create → start → drain → inspect, over the
 *     socket with fetch, nothing else) — the baseline;
 *   - the same command as a `terminal` call over HTTP (`POST /mcp` tools/call on an MCP session;
 *     `POST /step` is stateless, as in OpenEnv) and as a WebSocket step;
 *   p50/p95 of each, and the ratio of each step's p50/p95 to the baseline's (goal ≤ 1.3×);
 *   - episodes per minute at capacity: `--max-concurrent` WebSocket clients each looping
 *     reset (1 setup command) → 2 commands → final answer (1 verify command).
 * Usage: bun bench/env-step.ts [--iterations 40] [--capacity 2] [--seconds 20] [--image IMAGE (default: the humanish sandbox image)]
 */
import { parseArgs } from "node:util";
import { dockerClientFor, resolveDockerSocket } from "../src/docker/index.ts";
import { envBackendFromProvider } from "../src/env/backends.ts";
import { startEnvServer } from "../src/env/server.ts";
import { ensureImage } from "../src/runtime/images.ts";
import { sandboxRecipe } from "../src/runtime/recipes.ts";
import { createDockerSandboxProvider } from "../src/sandbox/index.ts";
import { emitFigures, type Figure, figure } from "./lib/figures.ts";

const { values } = parseArgs({
  options: {
    iterations: { type: "string", default: "40" },
    capacity: { type: "string", default: "2" },
    seconds: { type: "string", default: "20" },
    image: { type: "string" },
  },
});
const N = Number(values.iterations);
const CAP = Number(values.capacity);
const SECONDS = Number(values.seconds);
const figures: Figure[] = [];
const docker = dockerClientFor(process.env);
// Default: the humanish sandbox image (built once when absent), as `env serve` uses.
const IMAGE = values.image ?? (await ensureImage(docker, sandboxRecipe)).tag;
const SOCKET = resolveDockerSocket(process.env);
const COMMAND = "echo hi";

function pct(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
}

async function engine(method: string, path: string, body?: unknown): Promise<Response> {
  return fetch(`http://localhost/v1.41${path}`, {
    method,
    unix: SOCKET,
    ...(body !== undefined ? { body: JSON.stringify(body), headers: { "content-type": "application/json" } } : {}),
  } as RequestInit);
}

/** One raw Engine API exec: create, start (no upgrade, multiplexed body drained), inspect. */
async function rawExec(containerId: string): Promise<void> {
  const created = (await (
    await engine("POST", `/containers/${containerId}/exec`, { Cmd: ["bash", "-c", COMMAND], AttachStdout: true, AttachStderr: true, WorkingDir: "/home/user" })
  ).json()) as { Id: string };
  await (await engine("POST", `/exec/${created.Id}/start`, { Detach: false, Tty: false })).arrayBuffer();
  for (;;) {
    const info = (await (await engine("GET", `/exec/${created.Id}/json`)).json()) as { Running: boolean; ExitCode: number | null };
    if (!info.Running && info.ExitCode !== null) {
      if (info.ExitCode !== 0) throw new Error(`raw exec exited ${info.ExitCode}`);
      return;
    }
    await Bun.sleep(5);
  }
}

const backend = envBackendFromProvider(createDockerSandboxProvider({ docker }), { image: IMAGE, labels: { "humanish.bench": "env-step" } });
const server = await startEnvServer({ backend, port: 0, maxConcurrent: Math.max(CAP, 2), log: () => undefined });
const step = { action: { type: "call_tool", tool_name: "terminal", arguments: { command: COMMAND } } };
let rpcId = 0;
const mcp = async (method: string, params: Record<string, unknown>) =>
  (await (await fetch(`${server.url}/mcp`, { method: "POST", body: JSON.stringify({ jsonrpc: "2.0", id: ++rpcId, method, params }) })).json()) as any;

try {
  // One MCP session over HTTP and one WebSocket session, each with its own sandbox.
  const session_id: string = (await mcp("openenv/session/create", {})).result.session_id;
  const call = { name: "terminal", arguments: { command: COMMAND }, session_id };
  await mcp("tools/call", call);
  const ws = new WebSocket(`${server.url.replace("http", "ws")}/ws`);
  await new Promise((r) => (ws.onopen = r));
  let onMsg: ((m: any) => void) | null = null;
  ws.onmessage = (ev) => onMsg?.(JSON.parse(String(ev.data)));
  const wsRequest = (msg: unknown) =>
    new Promise<any>((resolve) => {
      onMsg = resolve;
      ws.send(JSON.stringify(msg));
    });
  const wsSandbox: string = (await wsRequest({ type: "reset", data: {} })).data.metadata.sandbox_id;

  const raw: number[] = [];
  const http: number[] = [];
  const wsT: number[] = [];
  const warm = 5;
  for (let i = 0; i < N + warm; i++) {
    // Interleaved so all three see the same engine load.
    let t0 = performance.now();
    await rawExec(wsSandbox);
    const r = performance.now() - t0;
    t0 = performance.now();
    const res = await mcp("tools/call", call);
    const h = performance.now() - t0;
    if (res.result.structuredContent.result.stdout !== "hi\n") throw new Error("MCP tools/call output mismatch");
    t0 = performance.now();
    const wres = await wsRequest({ type: "step", data: step.action });
    const w = performance.now() - t0;
    if (wres.data.observation.result.stdout !== "hi\n") throw new Error("WS step output mismatch");
    if (i >= warm) {
      raw.push(r);
      http.push(h);
      wsT.push(w);
    }
  }
  const fmt = (x: number) => x.toFixed(1).padStart(7);
  const line = (name: string, xs: number[]) =>
    `${name.padEnd(26)} p50 ${fmt(pct(xs, 50))} ms  p95 ${fmt(pct(xs, 95))} ms  ratio p50 ${(pct(xs, 50) / pct(raw, 50)).toFixed(2)}×  p95 ${(pct(xs, 95) / pct(raw, 95)).toFixed(2)}×`;
  console.log(`step round trip, command ${JSON.stringify(COMMAND)}, ${N} iterations (after ${warm} warm-up), image ${IMAGE}`);
  console.log(line("raw Engine API exec", raw));
  console.log(line("HTTP POST /mcp tools/call", http));
  console.log(line("WebSocket step", wsT));
  figures.push(
    figure("env step over HTTP /mcp vs raw Engine API exec (p50)", pct(http, 50), "ms", pct(raw, 50), { maxRatio: 1.3 }),
    figure("env step over WebSocket vs raw Engine API exec (p50)", pct(wsT, 50), "ms", pct(raw, 50), { maxRatio: 1.3 }),
  );
  console.log(`goal ≤ 1.30× — HTTP ${(pct(http, 50) / pct(raw, 50)).toFixed(2)}×, WebSocket ${(pct(wsT, 50) / pct(raw, 50)).toFixed(2)}× (p50)`);
  await wsRequest({ type: "step", data: { type: "call_tool", tool_name: "terminal", arguments: { final_answer: "x" } } });
  ws.close();
  await mcp("openenv/session/close", { session_id });

  // Episodes per minute at capacity.
  const until = Date.now() + SECONDS * 1000;
  let episodes = 0;
  const durations: number[] = [];
  async function worker(): Promise<void> {
    const c = new WebSocket(`${server.url.replace("http", "ws")}/ws`);
    await new Promise((r) => (c.onopen = r));
    let resolveNext: ((m: any) => void) | null = null;
    c.onmessage = (ev) => resolveNext?.(JSON.parse(String(ev.data)));
    const req = (msg: unknown) =>
      new Promise<any>((resolve) => {
        resolveNext = resolve;
        c.send(JSON.stringify(msg));
      });
    const call = (args: Record<string, string>) => req({ type: "step", data: { type: "call_tool", tool_name: "terminal", arguments: args } });
    while (Date.now() < until) {
      const t0 = performance.now();
      const r = await req({ type: "reset", data: { setup: ["echo seed > seed.txt"], verify: ["test -f out.txt"] } });
      if (r.type !== "observation" || r.data.done) throw new Error(`reset failed: ${JSON.stringify(r).slice(0, 300)}`);
      await call({ command: "cat seed.txt > out.txt" });
      await call({ command: "ls -la" });
      const fin = await call({ final_answer: "done" });
      if (fin.data.reward !== 1) throw new Error(`unexpected reward ${fin.data.reward}`);
      durations.push(performance.now() - t0);
      episodes += 1;
    }
    c.close();
  }
  const t0 = performance.now();
  await Promise.all(Array.from({ length: CAP }, worker));
  const elapsedMin = (performance.now() - t0) / 60_000;
  console.log(
    `episodes at capacity ${CAP}: ${episodes} in ${(elapsedMin * 60).toFixed(1)} s = ${(episodes / elapsedMin).toFixed(1)} episodes/min; episode p50 ${pct(durations, 50).toFixed(0)} ms p95 ${pct(durations, 95).toFixed(0)} ms (reset+setup, 2 commands, final answer+verify, release)`,
  );
} finally {
  const summary = await server.stop();
  console.log(`shutdown: ${summary.released} released, ${summary.unconfirmed} unconfirmed`);
}
emitFigures(figures);

/**
 * The e2b-terminal lane's own cost, against the local E2B-compatible server (its sandboxes are
 * real containers on this machine, so this measures our fan-out and the SDK path, not E2B):
 *
 *   ./node_modules/.bin/bun bench/e2b-terminal.ts
 *
 * A. Lane overhead per seat: create → first command output through the real `e2b` SDK and the
 *    server (which makes a Docker container), vs the same for the container alone through the
 *    Docker sandbox provider (the container's own start). Median of 5; target ratio ≤ 1.2×.
 * B. A 16-seat scripted study at concurrency 16 vs a one-seat study of the same lab, whole
 *    studies through `runTerminalStudy` (create, readiness, steps, checks, release, bundle,
 *    verify). Target wall ratio ≤ 2×.
 * C. The machine's own floor for B: 16 containers at once through the Docker sandbox provider
 *    (create, the same five commands, release) vs one — what this host's engine and cores cost
 *    before any lane code; B ÷ C is the fan-out the lane and the server add.
 * Needs Docker. Every sandbox is released by exact id; the server's close checks none is left.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createDockerClient } from "../src/docker/index.ts";
import { parseLab } from "../src/lab/index.ts";
import { runTerminalStudy } from "../src/routes/terminal/index.ts";
import { ensureImage } from "../src/runtime/images.ts";
import { sandboxRecipe } from "../src/runtime/recipes.ts";
import { createE2BSandboxProvider } from "../src/sandbox/e2b.ts";
import { createDockerSandboxProvider } from "../src/sandbox/index.ts";
import type { Sandbox, SandboxProvider } from "../src/sandbox/types.ts";
import { startE2BServer } from "../test/support/e2b-server/index.ts";
import { emitFigures, figure } from "./lib/figures.ts";

const ROUNDS = 5;

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] ?? Number.NaN;
}

/** ms from the create call to the first stdout byte of `echo ready`, then the sandbox is released. */
async function firstOutput(provider: SandboxProvider, image: string, extra: Record<string, unknown> = {}): Promise<number> {
  const t0 = performance.now();
  const sb: Sandbox = await provider.create({ runId: "bench-e2b", image, ...extra });
  let first = Number.NaN;
  const ran = sb
    .exec({
      cmd: ["bash", "-c", "echo ready"],
      timeoutMs: 30_000,
      onStdout: () => {
        if (Number.isNaN(first)) first = performance.now() - t0;
      },
    })
    .then(
      () => undefined,
      (e: unknown) => e,
    );
  const failed = await ran;
  const proof = await sb.release();
  if (proof.outcome !== "released") throw new Error(`bench sandbox ${proof.id} not released: ${proof.reason}`);
  if (failed) throw failed;
  return first;
}

function studyLab(seats: number): { text: string } {
  return {
    text: `
schema: humanish.lab.v2
id: bench-e2b-scripted
subject:
  source: terminal-product
  product: { name: coreutils, publicSurfaces: [https://www.gnu.org/software/coreutils/] }
actors:
  - type: scripted-terminal
    count: ${seats}
    tasks:
      - id: wrote
        goal: Write a note.
        check: { run: test -s note.txt }
    steps:
      - run: echo hello > note.txt && sleep 2 && cat note.txt
execution: { target: e2b-terminal, concurrency: ${seats} }
scenario: { mode: live, caps: { maxUsd: 0.5, maxMinutes: 2 } }
`,
  };
}

async function study(seats: number, env: Record<string, string | undefined>, cwd: string): Promise<number> {
  const { text } = studyLab(seats);
  const r = parseLab(text);
  if (!r.ok) throw new Error(r.error.message);
  const t0 = performance.now();
  const out = (await runTerminalStudy({
    cwd,
    lab: r.config,
    labSource: { ref: "bench.yaml", sha256: "0".repeat(64) },
    labWarnings: [],
    runId: `bench-e2b-${seats}-${Date.now()}`,
    mode: "live",
    env,
    signal: new AbortController().signal,
    progress: () => {},
  })) as { ok: boolean; error?: { code: string; message: string } };
  const ms = performance.now() - t0;
  if (!out.ok) throw new Error(`the ${seats}-seat study failed: ${out.error?.code} ${out.error?.message}`);
  return ms;
}

/** One bare seat through the Docker provider: create, the commands a scripted seat runs, release. */
async function bareSeat(provider: SandboxProvider, image: string): Promise<void> {
  const sb = await provider.create({ runId: "bench-e2b-floor", image });
  const cmds = [
    "mkdir -p /home/user/study",
    "id -u user",
    "echo hello > /home/user/study/note.txt && sleep 2 && cat /home/user/study/note.txt",
    "test -s /home/user/study/note.txt",
  ];
  let failed: unknown;
  for (const c of cmds) {
    const r = await sb.exec({ cmd: ["bash", "-c", c], timeoutMs: 30_000 }).catch((e: unknown) => e);
    if (r instanceof Error) failed = r;
  }
  const proof = await sb.release();
  if (proof.outcome !== "released") throw new Error(`bench container ${proof.id} not released: ${proof.reason}`);
  if (failed) throw failed;
}

async function floor(seats: number, provider: SandboxProvider, image: string): Promise<number> {
  const t0 = performance.now();
  await Promise.all(Array.from({ length: seats }, () => bareSeat(provider, image)));
  return performance.now() - t0;
}

const docker = createDockerClient();
const image = (await ensureImage(docker, sandboxRecipe)).tag;
const e2b = await startE2BServer();
const cwd = mkdtempSync(join(tmpdir(), "humanish-bench-e2b-"));
try {
  const dockerProvider = createDockerSandboxProvider({ docker });
  const e2bProvider = createE2BSandboxProvider({ apiKey: e2b.apiKey, connection: { apiUrl: e2b.apiUrl, sandboxUrl: e2b.sandboxUrl } });
  await firstOutput(dockerProvider, image);
  await firstOutput(e2bProvider, "base");
  const base: number[] = [];
  const lane: number[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    base.push(await firstOutput(dockerProvider, image));
    lane.push(await firstOutput(e2bProvider, "base", { e2b: { metadata: { "humanish.run": "bench" }, network: { denyOut: ["0.0.0.0/0"] } } }));
  }
  const b = median(base);
  const l = median(lane);
  console.log(`A. create → first output: container alone ${b.toFixed(0)} ms, through e2b SDK + server ${l.toFixed(0)} ms`);
  console.log(`   lane overhead per seat ${(l - b).toFixed(0)} ms; ratio ${(l / b).toFixed(2)}× (target ≤ 1.2×)`);

  const env = {
    PATH: process.env.PATH,
    ...e2b.env(),
    ...(process.env.NODE_EXTRA_CA_CERTS ? { HUMANISH_SANDBOX_CA_CERTS: process.env.NODE_EXTRA_CA_CERTS } : {}),
  };
  const one = await study(1, env, cwd);
  const sixteen = await study(16, env, cwd);
  console.log(`B. scripted study wall: 1 seat ${one.toFixed(0)} ms, 16 seats at concurrency 16 ${sixteen.toFixed(0)} ms`);
  console.log(`   ratio ${(sixteen / one).toFixed(2)}× (target ≤ 2×)`);
  const f1 = await floor(1, dockerProvider, image);
  const f16 = await floor(16, dockerProvider, image);
  console.log(`C. machine floor (Docker provider alone): 1 container ${f1.toFixed(0)} ms, 16 at once ${f16.toFixed(0)} ms; ratio ${(f16 / f1).toFixed(2)}×`);
  console.log(`   fan-out the lane and server add: ${(sixteen / one / (f16 / f1)).toFixed(2)}× over the machine's own`);
  emitFigures([
    figure("e2b lane create → first output vs container alone (median)", l, "ms", b, { maxRatio: 1.2 }),
    figure("16 e2b seats vs 1 (study wall)", sixteen, "ms", one, { maxRatio: 2 }),
    figure("16 e2b seats vs 1, ratio over the machine floor's 16 vs 1", sixteen / one, "×", f16 / f1, { maxRatio: 1.1 }),
  ]);
} finally {
  await e2b.close();
  rmSync(cwd, { recursive: true, force: true });
}

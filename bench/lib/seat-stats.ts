/**
 * Container cost readings for bench/seat-cost.ts, from the Docker Engine API's container stats
 * (`GET /containers/{id}/stats?stream=false&one-shot=true`), and the bare-browser arm: a
 * container of the guest image under the seat's own confinement running
 * `humanish guest bench-bare` (src/guest/bare-bench.ts).
 */
import { chownSync, existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type DockerClient, resolveDockerSocket } from "../../src/docker/index.ts";
import { type Forwarder, startForwarder } from "../../src/forward/forward.ts";
import type { BareStep } from "../../src/guest/bare-bench.ts";
import { guestHostConfig, guestUser } from "../../src/runtime/desktop.ts";
import type { GuestImage } from "../../src/runtime/guest-image.ts";
import { releaseContainer } from "../../src/sandbox/release.ts";

/** One reading: CPU ns since the container started; memory bytes. */
export interface StatsSample {
  cpuNs: number;
  /** cgroup v1 `max_usage` (peak since start), else null. */
  maxUsage: number | null;
  usage: number;
}

/** One arm's run: CPU-s at done and at ready, peak bytes, observations made, wall ms, its start (performance.now()). */
export interface ArmRun {
  cpuS: number;
  readyCpuS: number;
  peakBytes: number;
  observations: number;
  wallMs: number;
  t0: number;
}

/** A container being watched: `sample()` reads now; `peak()` is the highest memory seen. */
export interface Watch {
  sample(): Promise<StatsSample>;
  peak(): number;
  stop(): void;
}

/** What both arms share. */
export interface StatsSource {
  docker: DockerClient;
  image: GuestImage;
  /** The app's loopback port on the host. */
  port: number;
  width: number;
  height: number;
  steps: readonly BareStep[];
  labels: Record<string, string>;
  watch(id: string): Watch;
  /** Which memory reading the peaks are: `max_usage` (cgroup v1) or `polled usage peak` (cgroup v2). */
  memoryKind(): string;
}

const socket = resolveDockerSocket(process.env);
let sawV2 = false;

async function readStats(id: string): Promise<StatsSample> {
  const res = await fetch(`http://localhost/containers/${id}/stats?stream=false&one-shot=true`, { unix: socket } as RequestInit);
  if (!res.ok) throw new Error(`stats ${id.slice(0, 12)}: HTTP ${res.status}`);
  const s = (await res.json()) as { cpu_stats?: { cpu_usage?: { total_usage?: number } }; memory_stats?: { usage?: number; max_usage?: number } };
  const maxUsage = s.memory_stats?.max_usage ?? null;
  // A container that is not running yet reports no memory at all; only a usage without its peak means cgroup v2.
  if (maxUsage === null && s.memory_stats?.usage !== undefined) sawV2 = true;
  return { cpuNs: s.cpu_stats?.cpu_usage?.total_usage ?? 0, maxUsage, usage: s.memory_stats?.usage ?? 0 };
}

/** Watch `id`: memory polled every 250 ms (the only peak cgroup v2 offers), plus on-demand samples. */
export function watchContainer(id: string): Watch {
  let peak = 0;
  let stopped = false;
  const note = (s: StatsSample) => {
    peak = Math.max(peak, s.maxUsage ?? s.usage);
    return s;
  };
  void (async () => {
    while (!stopped) {
      await readStats(id).then(note, () => undefined);
      await Bun.sleep(250);
    }
  })();
  return {
    sample: () => readStats(id).then(note),
    peak: () => peak,
    stop: () => {
      stopped = true;
    },
  };
}

/** The memory reading's name for the output. */
export function memoryKind(): string {
  return sawV2 ? "peak of polled usage (cgroup v2: no max_usage)" : "max_usage (cgroup v1)";
}

async function waitForFile(path: string, id: string, docker: DockerClient, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let inspected = 0;
  while (!existsSync(path)) {
    if (Date.now() > deadline) throw new Error(`bare arm: no ${path} within ${timeoutMs} ms`);
    if (Date.now() - inspected > 1000) {
      inspected = Date.now();
      const info = await docker.containerInspect(id);
      if (!info.State.Running && !existsSync(path)) throw new Error(`bare arm: container exited with ${info.State.ExitCode}`);
    }
    await Bun.sleep(25);
  }
}

/** One bare headless Chromium running the steps in a guest-image container; removed by exact id. */
export async function runBare(src: StatsSource): Promise<ArmRun> {
  const t0 = performance.now();
  const user = guestUser();
  const io = mkdtempSync(join(tmpdir(), "humanish-bare-"));
  if (process.getuid?.() === 0) chownSync(io, user.uid, user.gid);
  let forwarder: Forwarder | undefined;
  let id: string | undefined;
  let watch: Watch | undefined;
  try {
    forwarder = await startForwarder({ path: `${io}/app.sock` }, { host: "127.0.0.1", port: src.port });
    if (process.getuid?.() === 0) chownSync(`${io}/app.sock`, user.uid, user.gid);
    const url = `http://127.0.0.1:${src.port}/`;
    const created = await src.docker.containerCreate({
      Image: src.image.ref,
      User: `${user.uid}:${user.gid}`,
      Entrypoint: ["/opt/humanish/humanish", "guest", "bench-bare", url, String(src.width), String(src.height), JSON.stringify(src.steps)],
      Labels: { ...src.labels, "humanish.owner": "humanish", "humanish.run": "bench-seat-cost", "humanish.role": "bench-bare" },
      NetworkDisabled: true,
      StopSignal: "SIGTERM",
      HostConfig: guestHostConfig(io, user),
    });
    id = created.Id;
    watch = src.watch(id);
    await src.docker.containerStart(id);
    await waitForFile(`${io}/bare-ready.json`, id, src.docker, 45_000);
    const ready = await watch.sample();
    await waitForFile(`${io}/bare-done.json`, id, src.docker, 60_000);
    const done = await watch.sample();
    const result = JSON.parse(readFileSync(`${io}/bare-done.json`, "utf8")) as { ok: boolean; observations?: number; error?: string };
    if (!result.ok) throw new Error(`bare arm failed: ${result.error}`);
    return { cpuS: done.cpuNs / 1e9, readyCpuS: ready.cpuNs / 1e9, peakBytes: watch.peak(), observations: result.observations ?? 0, wallMs: 0, t0 };
  } finally {
    watch?.stop();
    await forwarder?.close().catch(() => undefined);
    if (id) {
      const proof = await releaseContainer(src.docker, id);
      if (proof.outcome !== "released") console.error(`release ${id}: ${proof.outcome} (${proof.reason})`);
    }
    rmSync(io, { recursive: true, force: true });
  }
}

/**
 * The suite as `npm test` runs it, in two phases:
 *
 * 1. every file but the machine-wide ones, in parallel worker processes (`bun test --parallel`),
 *    slowest first by `test/timings.json`. Most files wait on an engine, a guest or a Codex
 *    process, so more workers than cores keep both cores busy;
 * 2. the machine-wide files, one after another with nothing else running. Each of them plants an
 *    orphan (a container or host process whose controller is gone) and watches a humanish command
 *    release it. Every humanish process on the machine reconciles orphans first, so a file running
 *    beside them would have its orphan released by a stranger; the Observer's 3-seat study is here
 *    too, since it asserts frames from every seat of a live study.
 *
 * Usage: `bun scripts/test.ts [--workers N] [--update-timings]` (N default: cores + 1, at most 6).
 * Exit code: 0 when both phases pass, else the first failing phase's code. The last lines are the
 * combined counts in `bun test`'s own form (` N pass`, ` N fail`), which `.ci/run` reads.
 */
import { availableParallelism } from "node:os";
import { resolve } from "node:path";
import { parseArgs } from "node:util";

/** Files that must run alone (see the module note), relative to the repository root. */
export const MACHINE_WIDE_FILES = [
  "test/runtime/reconcile.test.ts",
  "test/cli/orphans.test.ts",
  "test/runtime/host-process.test.ts",
  "test/routes/terminal/seats.test.ts",
  "test/observer/chromium.test.ts",
];

const ROOT = resolve(import.meta.dir, "..");
const TIMEOUT = ["--timeout", "120000"];

/** Counts of one phase, read from its output; null when the phase printed none. */
interface PhaseCounts {
  pass: number;
  fail: number;
}

/** Runs one `bun test` phase with its output passed through; returns its exit code and counts. */
async function phase(args: string[]): Promise<{ code: number; counts: PhaseCounts | null }> {
  const child = Bun.spawn([process.execPath, "test", ...TIMEOUT, ...args], { cwd: ROOT, stdin: "inherit", stdout: "pipe", stderr: "pipe" });
  let tail = "";
  const pass = async (from: ReadableStream<Uint8Array>, to: NodeJS.WriteStream) => {
    for await (const chunk of from) {
      to.write(chunk);
      tail = (tail + new TextDecoder().decode(chunk)).slice(-4096);
    }
  };
  await Promise.all([pass(child.stdout, process.stdout), pass(child.stderr, process.stderr)]);
  const code = await child.exited;
  const n = (word: string) => Number(new RegExp(`^ *([0-9]+) ${word}$`, "m").exec(tail)?.[1] ?? Number.NaN);
  const counts = { pass: n("pass"), fail: n("fail") };
  return { code, counts: Number.isNaN(counts.pass) ? null : { pass: counts.pass, fail: Number.isNaN(counts.fail) ? 0 : counts.fail } };
}

async function main(): Promise<number> {
  const { values } = parseArgs({ options: { workers: { type: "string" }, "update-timings": { type: "boolean" } } });
  const workers = values.workers ? Number(values.workers) : Math.min(6, availableParallelism() + 1);
  if (!Number.isInteger(workers) || workers < 1) {
    process.stderr.write(`HUMANISH_USAGE: --workers must be a whole number ≥ 1, got ${values.workers}\n`);
    return 2;
  }
  const first = await phase([
    `--parallel=${workers}`,
    "--timings=test/timings.json",
    ...(values["update-timings"] ? ["--update-timings"] : []),
    ...MACHINE_WIDE_FILES.map((f) => `--path-ignore-patterns=${f}`),
  ]);
  const second = await phase(MACHINE_WIDE_FILES.map((f) => `./${f}`));
  const pass = (first.counts?.pass ?? 0) + (second.counts?.pass ?? 0);
  const fail = (first.counts?.fail ?? 0) + (second.counts?.fail ?? 0);
  process.stdout.write(`\nboth phases (parallel ×${workers}, then machine-wide alone):\n ${pass} pass\n ${fail} fail\n`);
  if (first.counts === null || second.counts === null) return first.code || second.code || 1;
  return first.code || second.code;
}

if (import.meta.main) process.exit(await main());

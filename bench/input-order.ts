/**
 * Input order on a starved host: the embedded 3-seat TodoMVC study, run again and again while
 * busy loops hold every core, and what became of each seat.
 *
 *   ./node_modules/.bin/bun bench/input-order.ts [--runs 20] [--binary dist/humanish]
 *       [--baseline /path/to/older/humanish] [--loops 2] [--keep-failed DIR]
 *
 * Each run is `humanish lab run todomvc-first-run-seats --json` in a fresh directory; with
 * `--baseline`, runs alternate between the two binaries so both see the same machine. `--loops`
 * busy loops (`yes` to /dev/null, each bounded by `timeout` and killed by pid at the end) run for
 * the whole bench. Per binary it prints, over all seats:
 * - reached the goal;
 * - input not applied: a `waitForText` right after typed text and keys failed (TodoMVC shows
 *   the text within milliseconds once the input lands, so the input was lost or reordered —
 *   whether the seat was labelled a finding or `host_starved`);
 * - host_starved: seats labelled a harness condition because the host was starved;
 * - other harness failures (a guest that did not boot, …) and product findings (step_failed).
 * `--keep-failed DIR` moves the directory of every run with a seat that did not reach the goal
 * into DIR (its bundle, final frames and traces) instead of deleting it.
 * Ratios are candidate / baseline over the same runs. Needs a Docker engine and both binaries'
 * guest images (`humanish runtime setup` with each binary).
 */
import { mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync } from "node:fs";
import { availableParallelism, loadavg, tmpdir } from "node:os";
import { basename, join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { emitFigures, type Figure, figure } from "./lib/figures.ts";

const { values } = parseArgs({
  args: Bun.argv.slice(2),
  options: {
    runs: { type: "string" },
    binary: { type: "string" },
    baseline: { type: "string" },
    loops: { type: "string" },
    "keep-failed": { type: "string" },
  },
});
const runs = Number(values.runs ?? 20);
const loops = Number(values.loops ?? 2);
const candidate = resolve(values.binary ?? "dist/humanish");
const baseline = values.baseline ? resolve(values.baseline) : undefined;
const keepFailed = values["keep-failed"] ? resolve(values["keep-failed"]) : undefined;
/** Hard bound on each busy loop, s. */
const BUSY_BOUND_S = 4 * 3600;
/** Deadline of one study run, ms. */
const RUN_TIMEOUT_MS = 15 * 60_000;

/** `waitForText` steps (1-based) of the lab that directly follow typed text or keys. */
const AFTER_INPUT_WAITS = new Set([8, 13]);

interface SeatTally {
  seats: number;
  goal: number;
  inputNotApplied: number;
  hostStarved: number;
  otherHarness: number;
  findings: number;
  /** `open /` (Ctrl+L, the URL, Enter) did not reach the page in time. */
  openNotSettled: number;
  /** A type/press refused before any input (the field did not hold focus). */
  refused: number;
  reasons: string[];
}
const empty = (): SeatTally => ({
  seats: 0,
  goal: 0,
  inputNotApplied: 0,
  hostStarved: 0,
  otherHarness: 0,
  findings: 0,
  openNotSettled: 0,
  refused: 0,
  reasons: [],
});

interface Participant {
  id: string;
  status: string;
  completionReason?: string;
  reason?: string;
  harnessError?: { code?: string };
}

function classify(t: SeatTally, p: Participant): void {
  t.seats++;
  const reason = p.reason ?? "";
  const step = Number(/^step (\d+) \(waitForText\)/.exec(reason)?.[1] ?? Number.NaN);
  if (p.status === "passed") t.goal++;
  if (AFTER_INPUT_WAITS.has(step)) t.inputNotApplied++;
  if (/^step 1 \(open \/\): the page did not reach/.test(reason)) t.openNotSettled++;
  if (/refused by the desktop before any input/.test(reason)) t.refused++;
  if (/host was starved/.test(reason)) t.hostStarved++;
  else if (p.completionReason === "step_failed") t.findings++;
  else if (p.status !== "passed") t.otherHarness++;
  if (p.status !== "passed") t.reasons.push(`${p.id}: ${p.completionReason} — ${reason.slice(0, 160)}`);
}

async function runStudy(binary: string, t: SeatTally): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "humanish-input-order-"));
  let keep = false;
  try {
    const proc = Bun.spawn([binary, "lab", "run", "todomvc-first-run-seats", "--json"], { cwd: dir, stdout: "pipe", stderr: "ignore", stdin: "ignore" });
    const timer = setTimeout(() => proc.kill("SIGINT"), RUN_TIMEOUT_MS);
    const out = await new Response(proc.stdout).text();
    await proc.exited;
    clearTimeout(timer);
    let runDir: string | undefined;
    try {
      runDir = (JSON.parse(out) as { runDir?: string }).runDir;
    } catch {
      /* no envelope: counted below */
    }
    if (!runDir) {
      t.seats += 3;
      t.otherHarness += 3;
      t.reasons.push(`run without a bundle (exit ${proc.exitCode})`);
      return;
    }
    const run = JSON.parse(readFileSync(resolve(dir, runDir, "run.json"), "utf8")) as { participants?: Participant[] };
    for (const p of run.participants ?? []) classify(t, p);
    keep = keepFailed !== undefined && (run.participants ?? []).some((p) => p.status !== "passed");
  } finally {
    if (keep && keepFailed) {
      mkdirSync(keepFailed, { recursive: true });
      renameSync(dir, join(keepFailed, basename(dir)));
    } else {
      rmSync(dir, { recursive: true, force: true });
    }
  }
}

function pressure(): string {
  let psi = "no PSI";
  try {
    psi = readFileSync("/proc/pressure/cpu", "utf8").split("\n")[0] ?? psi;
  } catch {
    /* no PSI on this kernel */
  }
  return `load ${loadavg()
    .map((l) => l.toFixed(1))
    .join(" ")} on ${availableParallelism()} cores; ${psi}`;
}

const busy = Array.from({ length: loops }, () => Bun.spawn(["timeout", String(BUSY_BOUND_S), "yes"], { stdout: "ignore", stderr: "ignore", stdin: "ignore" }));
const tallies = new Map<string, SeatTally>([[candidate, empty()]]);
if (baseline) tallies.set(baseline, empty());
const started = performance.now();
console.log(`input-order bench: ${runs} run(s) per binary, ${loops} busy loop(s); before: ${pressure()}`);
try {
  for (let r = 0; r < runs; r++) {
    for (const [binary, t] of tallies) {
      await runStudy(binary, t);
      console.log(`  run ${r + 1}/${runs} ${binary === candidate ? "candidate" : "baseline"}: ${t.goal}/${t.seats} reached the goal so far`);
    }
  }
} finally {
  // TERM reaches `yes` through `timeout`; a KILL would end `timeout` alone and orphan the loop.
  for (const p of busy) p.kill("SIGTERM");
}
console.log(`after: ${pressure()}; ${((performance.now() - started) / 60_000).toFixed(1)} min`);
for (const [binary, t] of tallies) {
  console.log(`\n${binary === candidate ? "candidate" : "baseline"} ${binary}`);
  console.log(`  seats ${t.seats}: reached the goal ${t.goal}`);
  console.log(`  input not applied (lost or reordered): ${t.inputNotApplied}   (goal 0)`);
  console.log(`  open did not settle: ${t.openNotSettled}; refused before any input: ${t.refused}`);
  console.log(`  host_starved (harness condition): ${t.hostStarved}; other harness failures: ${t.otherHarness}; product findings (step_failed): ${t.findings}`);
  for (const line of t.reasons) console.log(`    ${line}`);
}
if (baseline) {
  const c = tallies.get(candidate)!;
  const b = tallies.get(baseline)!;
  const ratio = (x: number, y: number) => (y === 0 ? (x === 0 ? "0/0" : "∞") : (x / y).toFixed(2));
  console.log(
    `\nratios candidate/baseline: input not applied ${ratio(c.inputNotApplied, b.inputNotApplied)}; product findings ${ratio(c.findings, b.findings)}; reached the goal ${ratio(c.goal, b.goal)}`,
  );
}
const mine = tallies.get(candidate)!;
const figures: Figure[] = [
  // The goal is every seat, which a ratio bound cannot say exactly.
  {
    ...figure(`seats that reached the goal on a starved host (${loops} busy loops, ${runs} runs)`, mine.goal, "seats", mine.seats, { text: "all seats" }),
    met: mine.goal === mine.seats,
  },
  figure("typed inputs lost or reordered on a starved host", mine.inputNotApplied, "seats", null, { maxValue: 0 }),
  figure("seats labelled host_starved (a harness condition, not a finding)", mine.hostStarved, "seats", null),
];
emitFigures(figures);

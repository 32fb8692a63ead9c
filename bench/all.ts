/**
 * Every bench in bench/, each in a child process of its own, summarised in ONE table: figure,
 * value, baseline (measured in the same run by that bench), ratio, goal, met/missed.
 *
 *   ./node_modules/.bin/bun bench/all.ts [--only NAME[,NAME…]] [--skip NAME[,NAME…]] [--json] [--timeout-s 1800]
 *   npm run bench -- --only png,framing
 *
 * NAME is a bench's file name without `.ts` (`png`, `evidence-scale`, …). Each bench is run with
 * `HUMANISH_BENCH_JSON=1` and must end its output with a `{"figures":[…]}` line
 * (bench/lib/figures.ts); its own text output is passed through to stderr. A bench whose
 * prerequisite (the Docker engine, an image, Chromium) is missing is not started: its row says
 * `not run: <why>`. A bench that fails or prints no figures gets a row saying so. `--json` prints
 * the table as one JSON document instead: `{schema, ok, machine, benches:[{name, status, why?, figures}]}`.
 * Exit code 0 when every bench that ran printed its figures, else 1 (a missed goal is a row, not
 * a failure).
 */
import { existsSync, readdirSync } from "node:fs";
import { availableParallelism, cpus, loadavg, totalmem } from "node:os";
import { basename, join } from "node:path";
import { parseArgs } from "node:util";
import { resolveDockerSocket } from "../src/docker/index.ts";
import { sandboxImageTag } from "../src/runtime/recipes.ts";
import type { BenchOutput, Figure } from "./lib/figures.ts";

/** What a bench needs before it can run. */
type Need = "docker" | "sandbox-image" | "guest-image" | "e2b-desktop-image" | "chromium";

/** Prerequisites of the benches that have any (the rest run anywhere Bun runs). */
const NEEDS: Record<string, Need[]> = {
  "cua-loop": ["docker", "guest-image"],
  "e2b-terminal": ["docker", "sandbox-image"],
  "env-step": ["docker", "sandbox-image"],
  guest: ["docker", "guest-image"],
  "sandbox-create": ["docker", "sandbox-image"],
  "seat-cost": ["docker", "guest-image"],
  "study-seats": ["docker", "sandbox-image", "guest-image"],
};

/** Files in bench/ that are not benches. */
const NOT_BENCHES = new Set(["all", "gateway-fake-child"]);

async function dockerGet(path: string): Promise<Response | null> {
  try {
    return await fetch(`http://localhost${path}`, { unix: resolveDockerSocket(process.env) } as RequestInit);
  } catch {
    return null;
  }
}

/** Why `need` is not met, or null when it is. Image checks only look: nothing is built here. */
async function missing(need: Need): Promise<string | null> {
  switch (need) {
    case "docker": {
      const r = await dockerGet("/_ping");
      return r?.ok ? null : `no Docker engine answers on ${resolveDockerSocket(process.env)}`;
    }
    case "sandbox-image": {
      const tag = sandboxImageTag();
      const r = await dockerGet(`/images/${encodeURIComponent(tag)}/json`);
      return r?.status === 200 ? null : `image ${tag} is missing (bash scripts/setup-images.sh)`;
    }
    case "guest-image":
    case "e2b-desktop-image": {
      const repo = need === "guest-image" ? "humanish-guest" : "humanish-e2b-desktop";
      const r = await dockerGet(`/images/json?filters=${encodeURIComponent(JSON.stringify({ reference: [repo] }))}`);
      const list = r?.ok ? ((await r.json()) as unknown[]) : [];
      return list.length ? null : `no ${repo} image (bash scripts/setup-images.sh)`;
    }
    case "chromium":
      return ["/usr/bin/chromium", "/usr/bin/chromium-browser"].some(existsSync) ? null : "Chromium is not installed (apt-get install -y chromium)";
  }
}

interface BenchRow {
  name: string;
  status: "ran" | "not_run" | "failed";
  why?: string;
  figures: Figure[];
  ms?: number;
}

/** Run one bench as a child; its text goes to stderr, its last JSON line is parsed. */
async function runBench(name: string, timeoutMs: number): Promise<BenchRow> {
  for (const need of NEEDS[name] ?? []) {
    const why = await missing(need);
    if (why) return { name, status: "not_run", why, figures: [] };
  }
  const t0 = performance.now();
  const child = Bun.spawn([process.execPath, join(import.meta.dir, `${name}.ts`)], {
    stdout: "pipe",
    stderr: "inherit",
    env: { ...process.env, HUMANISH_BENCH_JSON: "1" },
    timeout: timeoutMs,
    killSignal: "SIGKILL",
  });
  const out = await new Response(child.stdout).text();
  const code = await child.exited;
  const ms = performance.now() - t0;
  const lines = out.trimEnd().split("\n");
  process.stderr.write(`${lines.slice(0, -1).join("\n")}\n`);
  let parsed: BenchOutput | null = null;
  try {
    const v = JSON.parse(lines.at(-1) ?? "") as BenchOutput;
    if (Array.isArray(v.figures)) parsed = v;
  } catch {
    parsed = null;
  }
  if (child.signalCode) return { name, status: "failed", why: `killed (${child.signalCode}) after ${(ms / 1000).toFixed(0)} s`, figures: [], ms };
  if (code !== 0 || !parsed)
    return { name, status: "failed", why: code !== 0 ? `exit code ${code}` : "printed no figures line", figures: parsed?.figures ?? [], ms };
  if (parsed.notRun) return { name, status: "not_run", why: parsed.notRun, figures: [], ms };
  return { name, status: "ran", figures: parsed.figures, ms };
}

function fmt(n: number | null, unit = ""): string {
  if (n === null) return "—";
  const a = Math.abs(n);
  const s = a >= 100 ? n.toFixed(0) : a >= 10 ? n.toFixed(1) : n.toFixed(2);
  return unit ? `${s} ${unit}` : s;
}

/** The table as Markdown (what the README's performance section holds). */
function table(rows: BenchRow[]): string {
  const out = ["| bench | figure | value | baseline | ratio | goal | met |", "|---|---|---|---|---|---|---|"];
  for (const r of rows) {
    if (r.status !== "ran" && r.figures.length === 0) {
      out.push(`| ${r.name} | ${r.status === "not_run" ? `not run: ${r.why}` : `failed: ${r.why}`} | | | | | |`);
      continue;
    }
    for (const f of r.figures)
      out.push(
        `| ${r.name} | ${f.name} | ${fmt(f.value, f.unit)} | ${fmt(f.baseline, f.unit)} | ${f.ratio === null ? "—" : `${fmt(f.ratio)}×`} | ${f.goal} | ${f.met === null ? "—" : f.met ? "met" : "**missed**"} |`,
      );
  }
  return out.join("\n");
}

function machine(): string {
  const model = cpus()[0]?.model ?? "unknown CPU";
  return `${availableParallelism()} cores (${model}), ${(totalmem() / 2 ** 30).toFixed(0)} GiB, load average ${loadavg()[0]!.toFixed(1)} at start`;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: { only: { type: "string" }, skip: { type: "string" }, json: { type: "boolean" }, "timeout-s": { type: "string" } },
    strict: true,
  });
  const timeoutS = Number(values["timeout-s"] ?? 1800);
  if (!Number.isFinite(timeoutS) || timeoutS <= 0) {
    console.error(`error: --timeout-s must be a positive number of seconds (got ${values["timeout-s"]})`);
    process.exit(2);
  }
  const list = (v?: string) => new Set((v ?? "").split(",").filter(Boolean));
  const only = list(values.only);
  const skip = list(values.skip);
  const all = readdirSync(import.meta.dir)
    .filter((f) => f.endsWith(".ts"))
    .map((f) => basename(f, ".ts"))
    .filter((n) => !NOT_BENCHES.has(n))
    .sort();
  const unknown = [...only, ...skip].filter((n) => !all.includes(n));
  if (unknown.length > 0) {
    // A typo in --only/--skip is the user's input, not a crash: name it and list what exists.
    const message = `no bench named ${unknown.join(", ")}; benches: ${all.join(", ")}`;
    if (values.json) console.log(JSON.stringify({ schema: "humanish.bench-table.v1", ok: false, error: { code: "HUMANISH_BENCH_UNKNOWN", message } }));
    else console.error(`error: ${message}\nnext: pass one of those names to --only or --skip`);
    process.exit(2);
  }
  const chosen = all.filter((n) => (only.size === 0 || only.has(n)) && !skip.has(n));
  const timeoutMs = timeoutS * 1000;
  const where = machine();
  const rows: BenchRow[] = [];
  for (const name of chosen) {
    console.error(`── ${name}`);
    rows.push(await runBench(name, timeoutMs));
  }
  const ok = rows.every((r) => r.status !== "failed");
  if (values.json) console.log(JSON.stringify({ schema: "humanish.bench-table.v1", ok, machine: where, benches: rows }, null, 2));
  else console.log(`\nmachine: ${where}\n\n${table(rows)}`);
  process.exit(ok ? 0 : 1);
}

await main();

/**
 * Lab loading time against nesting depth and size, on hostile shapes, as a ratio to the `yaml`
 * package's own `parseDocument` of the same text in the same run.
 *
 *   ./node_modules/.bin/bun bench/lab-load.ts
 *
 * A linear loader keeps the ratio roughly flat as the input grows (and far below 1 where it
 * refuses early, e.g. past the depth bound, where the baseline still parses everything). Each
 * row prints: shape, size in bytes, nesting depth, our `parseLab` time (best of several runs,
 * ms), the baseline's, their ratio, and the verdict (`ok` or the start of the refusal). Last, a
 * 1 MiB lab of each hostile shape is loaded through `loadLab` (file on disk, bounded read) and
 * the best of three times to refuse it is printed against the 200 ms goal, plus the 1 MiB + 1 byte file refused
 * by its size alone.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseDocument } from "yaml";
import { loadLab, MAX_LAB_BYTES, parseLab } from "../src/lab/index.ts";
import { emitFigures, type Figure, figure } from "./lib/figures.ts";

const HEAD = `schema: humanish.lab.v2
id: bench
subject: {source: terminal-product, product: {name: jq, publicSurfaces: ["https://jqlang.org/"]}}
actors:
  - type: scripted-terminal
    steps:
      - run: "true"
`;

/** Repeats `unit` until `bytes` are filled (at least one copy). */
function fill(unit: string, bytes: number): string {
  return unit.repeat(Math.max(1, Math.floor(bytes / unit.length)));
}

/** Hostile shapes by target size in bytes (each a complete text). */
const SHAPES: Record<string, (bytes: number) => string> = {
  // `[[[[…]]]]` as deep as the size allows.
  "deep flow sequences": (b) => {
    const d = Math.max(1, Math.floor((b - 3) / 2));
    return `x: ${"[".repeat(d)}${"]".repeat(d)}\n`;
  },
  // `a:\n  a:\n    a: …` — indentation makes depth grow with the square root of the size.
  "deep block maps": (b) => {
    const lines: string[] = [];
    let used = 0;
    for (let i = 0; ; i++) {
      const line = `${"  ".repeat(i)}a:\n`;
      if (used + line.length + 2 * i + 4 > b && i > 0) break;
      lines.push(line);
      used += line.length;
    }
    return `${lines.join("")}${"  ".repeat(lines.length)}1\n`;
  },
  // One mapping of many distinct keys, under a field the schema validates (`policies`).
  "many keys": (b) => {
    const n = Math.max(1, Math.floor(b / 12));
    const keys = Array.from({ length: n }, (_, i) => `  k${i}: 1\n`).join("");
    return `${HEAD}policies:\n${keys}`;
  },
  // Many bad steps: one problem each, every one located for the message.
  "many problems": (b) => `schema: humanish.lab.v2
id: bench
subject: {source: app-url, appUrl: "http://127.0.0.1:4173/"}
actors:
  - type: scripted-browser
    steps:
${fill("      - wait: {ms: -1}\n", b - 160)}`,
  // One long quoted string in an accepted field.
  "long string": (b) => `${HEAD}description: "${"a".repeat(Math.max(1, b - HEAD.length - 20))}"\n`,
  // One anchor, then a list of aliases to it.
  "many aliases": (b) => `${HEAD}title: &t x\ndescription: [${fill("*t, ", b - HEAD.length - 30)}*t]\n`,
  // Billion laughs: each level a list of ten aliases to the level below, repeated to fill.
  "alias bomb": (b) => {
    const levels = ['l0: &l0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol","lol"]'];
    for (let i = 1; i < 10; i++) levels.push(`l${i}: &l${i} [${Array.from({ length: 10 }, () => `*l${i - 1}`).join(",")}]`);
    const bomb = `${levels.join("\n")}\n`;
    return `${bomb}${fill("# padding to the size of the row\n", b - bomb.length)}`;
  },
};

const SIZES = [1024, 8 * 1024, 64 * 1024, MAX_LAB_BYTES];
const DEPTHS = [16, 64, 1000, 4000, 100_000];

/** Best time in ms over `reps` runs after one warm-up, with the last result. */
function time<T>(run: () => T, reps: number): { ms: number; result: T } {
  let result = run();
  let ms = Number.POSITIVE_INFINITY;
  for (let i = 0; i < reps; i++) {
    const t0 = performance.now();
    result = run();
    ms = Math.min(ms, performance.now() - t0);
  }
  return { ms, result };
}

/**
 * Nesting depth (lists and mappings) of a plain value, iteratively and with each object
 * measured once: aliases make the baseline's value share objects, and an alias bomb shares
 * them a billion times over.
 */
function depthOf(value: unknown): number {
  const height = new Map<object, number>();
  const isObj = (v: unknown): v is object => v !== null && typeof v === "object";
  if (!isObj(value)) return 0;
  const stack: Array<[object, boolean]> = [[value, false]];
  while (stack.length) {
    const [v, done] = stack.pop()!;
    if (height.has(v)) continue;
    const kids = Object.values(v).filter(isObj);
    if (done) {
      height.set(v, 1 + kids.reduce((m, k) => Math.max(m, height.get(k) ?? 0), 0));
      continue;
    }
    stack.push([v, true]);
    for (const k of kids) if (!height.has(k)) stack.push([k, false]);
  }
  return height.get(value) ?? 0;
}

function verdict(text: string): string {
  const r = parseLab(text, { source: "b" });
  return r.ok ? "ok" : r.error.message.replace(/^b:/, "").slice(0, 70);
}

/**
 * The baseline: the yaml package composing the same text. Its composer recurses per nesting
 * level, so very deep text overflows the stack; the time until it throws is still its time.
 * `uniqueKeys: false` because the library's default duplicate-key check compares every pair of
 * keys of a mapping (quadratic in keys); the loader checks duplicates itself with a hash map.
 */
function baseline(text: string): { doc?: ReturnType<typeof parseDocument>; threw?: string } {
  try {
    return { doc: parseDocument(text, { uniqueKeys: false }) };
  } catch (e) {
    return { threw: (e as Error).name };
  }
}

function row(shape: string, text: string): void {
  const reps = text.length > 256 * 1024 ? 3 : 8;
  const base = time(() => baseline(text), reps);
  const ours = time(() => parseLab(text, { source: "b" }), reps);
  let depth = "?";
  try {
    if (base.result.doc) depth = String(depthOf(base.result.doc.toJS({ maxAliasCount: -1 })));
  } catch {
    // A document the baseline cannot expand (e.g. an alias bomb) has no depth to show.
  }
  const ratio = ours.ms / base.ms;
  if (!worst || ratio > worst.ratio) worst = { ratio, ours: ours.ms, base: base.ms, shape: `${shape}, ${text.length} B` };
  console.log(
    [
      shape.padEnd(20),
      String(text.length).padStart(8),
      depth.padStart(7),
      ours.ms.toFixed(2).padStart(9),
      base.ms.toFixed(2).padStart(9),
      `${ratio.toFixed(3)}×`.padStart(8),
      verdict(text) + (base.result.threw ? ` (yaml threw ${base.result.threw})` : ""),
    ].join("  "),
  );
}

let worst = null as { ratio: number; ours: number; base: number; shape: string } | null;
const figures: Figure[] = [];
console.log("shape                     bytes    depth   ours ms   yaml ms    ratio  verdict");
for (const d of DEPTHS) row("deep flow (depth)", `${HEAD}description: ${"[".repeat(d)}${"]".repeat(d)}\n`);
for (const [shape, make] of Object.entries(SHAPES)) for (const size of SIZES) row(shape, make(size));

if (worst) figures.push(figure(`parseLab vs yaml parseDocument, worst row (${worst.shape})`, worst.ours, "ms", worst.base));
console.log("\n1 MiB hostile labs through loadLab (file on disk, bounded read), goal < 200 ms:");
const dir = mkdtempSync(join(tmpdir(), "humanish-bench-lab-"));
try {
  const cases: Array<[string, string]> = Object.entries(SHAPES).map(([shape, make]) => [shape, make(MAX_LAB_BYTES).slice(0, MAX_LAB_BYTES)]);
  cases.push(["1 MiB + 1 byte", `x: "${"a".repeat(MAX_LAB_BYTES - 5)}"\n`]);
  for (const [shape, text] of cases) {
    const file = join(dir, "lab.yaml");
    writeFileSync(file, text);
    const bytes = Buffer.byteLength(text);
    let outcome = "";
    let ms = Number.POSITIVE_INFINITY;
    for (let i = 0; i < 3; i++) {
      const t0 = performance.now();
      try {
        await loadLab(file, dir);
        outcome = "accepted";
      } catch (e) {
        outcome = `refused: ${(e as Error).message.replace(file, "lab.yaml").slice(0, 60)}`;
      }
      ms = Math.min(ms, performance.now() - t0);
    }
    console.log(`  ${shape.padEnd(20)} ${String(bytes).padStart(8)} B  ${ms.toFixed(1).padStart(7)} ms  ${ms < 200 ? "under" : "OVER"} 200 ms  ${outcome}`);
    figures.push(figure(`loadLab of a 1 MiB hostile lab (${shape})`, ms, "ms", null, { maxValue: 200 }));
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
emitFigures(figures);

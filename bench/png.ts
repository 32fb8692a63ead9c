/**
 * PNG admission cost vs pngjs decoding alone, in the same process, and
 * peak memory on decompression bombs (measured in child processes).
 *
 *   ./node_modules/.bin/bun bench/png.ts
 *
 * 1. A generated 1280×800 RGBA screenshot-like image: time of `admitPng` vs `PNG.sync.read`
 *    alone with its defaults (goal ≤ 1.25×); also vs `PNG.sync.read(…, {checkCRC: false})` as a
 *    stricter context line (admitPng checks every CRC natively, then inflates once).
 * 2. Bombs: ~1 MiB of IDAT that inflates to 1 GiB, declared as 1280×800 RGBA and as
 *    4096×3906 RGBA (the largest admissible). Each decoder runs in a fresh child process that
 *    reads the file; prints its peak RSS (max resident set) next to an idle child's.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { crc32, createDeflate } from "node:zlib";
import { PNG } from "pngjs";
import { admitPng } from "../src/png/index.ts";
import { emitFigures, type Figure, figure } from "./lib/figures.ts";

function chunk(type: string, data: Uint8Array): Buffer {
  const out = Buffer.alloc(12 + data.length);
  out.writeUInt32BE(data.length, 0);
  out.write(type, 4, "latin1");
  out.set(data, 8);
  out.writeUInt32BE(crc32(out.subarray(4, 8 + data.length)) >>> 0, 8 + data.length);
  return out;
}

async function bomb(width: number, height: number): Promise<Buffer> {
  const deflate = createDeflate({ level: 9 });
  const parts: Buffer[] = [];
  deflate.on("data", (c: Buffer) => parts.push(c));
  const done = new Promise((r) => deflate.on("end", r));
  const zeros = Buffer.alloc(1 << 20);
  for (let i = 0; i < 1024; i++) if (!deflate.write(zeros)) await new Promise((r) => deflate.once("drain", r));
  deflate.end();
  await done;
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr.set([8, 6, 0, 0, 0], 8);
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk("IHDR", ihdr),
    chunk("IDAT", Buffer.concat(parts)),
    chunk("IEND", new Uint8Array(0)),
  ]);
}

/** Peak resident set (VmHWM, KiB) of this process; unlike ru_maxrss it is not inherited over fork/exec. */
function peakRssKiB(): number {
  const m = /VmHWM:\s+(\d+)/.exec(readFileSync("/proc/self/status", "utf8"));
  return m ? Number(m[1]) : Number.NaN;
}

/** Child process: read one file, run one decoder on it, print the peak RSS. */
async function child(): Promise<void> {
  const [mode, file] = [process.argv[3]!, process.argv[4]!];
  const bytes = new Uint8Array(readFileSync(file));
  Bun.gc(true);
  const before = peakRssKiB();
  let verdict = "idle";
  if (mode === "admitPng") {
    const r = admitPng(bytes);
    verdict = r.ok ? "admitted" : r.code;
  } else if (mode === "pngjs") {
    try {
      const r = PNG.sync.read(Buffer.from(bytes));
      verdict = `decoded ${r.width}×${r.height}`;
    } catch (e) {
      verdict = `threw: ${(e as Error).message}`;
    }
  } else admitPng(new Uint8Array(0));
  console.log(JSON.stringify({ verdict, beforeKiB: before, maxRSSKiB: peakRssKiB() }));
}

function screenshot(width: number, height: number): Buffer {
  const png = new PNG({ width, height });
  let seed = 12345;
  for (let y = 0; y < height; y++)
    for (let x = 0; x < width; x++) {
      const i = (y * width + x) * 4;
      // Flat panels, gradients and a band of "text" noise, roughly like a web page.
      const panel = ((x >> 7) + (y >> 6)) & 1 ? 245 : 230;
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      const text = y % 24 < 12 && x % 400 < 300 && seed % 3 === 0 ? 60 : panel;
      png.data[i] = text;
      png.data[i + 1] = y < 80 ? 40 + (x >> 4) : text;
      png.data[i + 2] = y < 80 ? 90 : text - 5;
      png.data[i + 3] = 255;
    }
  return PNG.sync.write(png);
}

async function main(): Promise<void> {
  const img = screenshot(1280, 800);
  console.log(`1280×800 RGBA screenshot: ${img.length} bytes`);
  const check = admitPng(img);
  if (!check.ok) throw new Error(`bench image not admitted: ${check.code}`);
  // Alternate the two sides in blocks so machine load affects both alike. The machine is
  // shared, so besides wall time we report thread CPU time (process.cpuUsage), which other
  // processes' load disturbs much less.
  const wallA: number[] = [];
  const wallB: number[] = [];
  const wallC: number[] = [];
  let cpuA = 0;
  let cpuB = 0;
  let cpuC = 0;
  const block = (f: () => void, wall: number[]) => {
    const c0 = process.cpuUsage();
    for (let i = 0; i < 5; i++) {
      const t0 = performance.now();
      f();
      wall.push(performance.now() - t0);
    }
    const c = process.cpuUsage(c0);
    return c.user + c.system;
  };
  for (let round = 0; round < 12; round++) {
    cpuA += block(() => void PNG.sync.read(img), wallA); // pngjs defaults: checkCRC on
    cpuB += block(() => void admitPng(img), wallB);
    cpuC += block(() => void PNG.sync.read(img, { checkCRC: false }), wallC);
  }
  wallA.sort((x, y) => x - y);
  wallB.sort((x, y) => x - y);
  wallC.sort((x, y) => x - y);
  const med = (s: number[]) => s[Math.floor(s.length / 2)]!;
  const n = wallA.length;
  console.log(
    `  pngjs PNG.sync.read alone      : CPU ${(cpuA / 1000 / n).toFixed(2)} ms/image; wall min ${wallA[0]!.toFixed(2)} ms, median ${med(wallA).toFixed(2)} ms`,
  );
  console.log(
    `  admitPng (all checks + pngjs)  : CPU ${(cpuB / 1000 / n).toFixed(2)} ms/image; wall min ${wallB[0]!.toFixed(2)} ms, median ${med(wallB).toFixed(2)} ms`,
  );
  console.log(
    `  pngjs, checkCRC: false (context): CPU ${(cpuC / 1000 / n).toFixed(2)} ms/image; wall min ${wallC[0]!.toFixed(2)} ms, median ${med(wallC).toFixed(2)} ms`,
  );
  console.log(`  ratio admitPng / pngjs         : CPU ${(cpuB / cpuA).toFixed(2)}×, wall median ${(med(wallB) / med(wallA)).toFixed(2)}× (goal ≤ 1.25×)`);
  console.log(
    `  ratio admitPng / pngjs no-CRC  : CPU ${(cpuB / cpuC).toFixed(2)}×, wall median ${(med(wallB) / med(wallC)).toFixed(2)}× (stricter context: pngjs skipping its CRC pass)`,
  );

  const figures: Figure[] = [figure("admitPng vs pngjs PNG.sync.read, 1280×800 (CPU)", cpuB / 1000 / n, "ms", cpuA / 1000 / n, { maxRatio: 1.25 })];
  const dir = mkdtempSync(join(tmpdir(), "humanish-png-bench-"));
  try {
    const run = async (mode: string, file: string) => {
      const p = Bun.spawn([process.execPath, import.meta.path, "--child", mode, file], { stdout: "pipe", stderr: "inherit" });
      const out = await new Response(p.stdout).text();
      await p.exited;
      return JSON.parse(out.trim()) as { verdict: string; beforeKiB: number; maxRSSKiB: number };
    };
    const mib = (kib: number) => (kib / 1024).toFixed(1);
    for (const [w, h] of [
      [1280, 800],
      [4096, 3906],
    ] as const) {
      const file = join(dir, `bomb-${w}x${h}.png`);
      const bytes = await bomb(w, h);
      writeFileSync(file, bytes);
      const idle = await run("idle", file);
      const ours = await run("admitPng", file);
      const theirs = await run("pngjs", file);
      const bound = (h * (1 + w * 4)) / 1048576;
      console.log(
        `\nbomb: ${(bytes.length / 1048576).toFixed(2)} MiB file inflating to 1 GiB, declared ${w}×${h} RGBA (exact image data ${bound.toFixed(1)} MiB)`,
      );
      console.log(`  idle child (read file only): peak RSS ${mib(idle.maxRSSKiB)} MiB`);
      console.log(`  admitPng   → ${ours.verdict}; peak RSS ${mib(ours.maxRSSKiB)} MiB (+${mib(ours.maxRSSKiB - idle.maxRSSKiB)} MiB over idle)`);
      console.log(`  pngjs alone → ${theirs.verdict}; peak RSS ${mib(theirs.maxRSSKiB)} MiB (+${mib(theirs.maxRSSKiB - idle.maxRSSKiB)} MiB over idle)`);
      figures.push(figure(`admitPng peak RSS on a 1 GiB bomb declared ${w}×${h} (vs an idle child)`, ours.maxRSSKiB / 1024, "MiB", idle.maxRSSKiB / 1024));
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  emitFigures(figures);
}

if (process.argv[2] === "--child") await child();
else await main();

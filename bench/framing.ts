/**
 * Framing throughput vs a Buffer.copy baseline in the same process (issue 3, Performance).
 *
 *   ./node_modules/.bin/bun bench/framing.ts
 *
 * Case A: 1 MiB frames arriving in 64-byte chunks. Case B: 1,000 small frames coalesced in one
 * chunk. The baseline copies exactly the same chunks into a preallocated buffer with
 * `Buffer.copy`. Each case runs the real decoder (strict UTF-8 + JSON.parse) and its raw mode
 * (length checks, in-place assembly and strict UTF-8 validation, no JSON.parse). Prints MiB/s and
 * the ratio decoder/baseline (goal ≥ 0.5×).
 */
import { encodeFrame, FrameDecoder } from "../src/browser-control/index.ts";

function best(run: () => void, reps: number): number {
  run(); // warm-up
  let bestMs = Number.POSITIVE_INFINITY;
  for (let i = 0; i < reps; i++) {
    const t0 = performance.now();
    run();
    bestMs = Math.min(bestMs, performance.now() - t0);
  }
  return bestMs;
}

function report(name: string, bytes: number, chunks: Buffer[], reps: number): void {
  const total = chunks.reduce((n, c) => n + c.length, 0);
  const target = Buffer.allocUnsafe(total);
  let sink = 0;
  const baseline = best(() => {
    let off = 0;
    for (const c of chunks) off += c.copy(target, off);
    sink += target[off - 1]!;
  }, reps);
  const decode = (raw: boolean) =>
    best(() => {
      const d = new FrameDecoder({ raw });
      let n = 0;
      for (const c of chunks) n += d.push(c).messages.length;
      sink += n;
    }, reps);
  const parsed = decode(false);
  const raw = decode(true);
  const mibs = (ms: number) => ((bytes / (1024 * 1024)) / (ms / 1000)).toFixed(0);
  console.log(`${name}`);
  console.log(`  baseline Buffer.copy : ${baseline.toFixed(3)} ms  ${mibs(baseline)} MiB/s`);
  console.log(`  decoder (JSON.parse) : ${parsed.toFixed(3)} ms  ${mibs(parsed)} MiB/s  ratio ${(baseline / parsed).toFixed(2)}× of baseline`);
  console.log(`  decoder (raw, UTF-8) : ${raw.toFixed(3)} ms  ${mibs(raw)} MiB/s  ratio ${(baseline / raw).toFixed(2)}× of baseline`);
  if (sink === -1) console.log("");
}

// Case A: a 1 MiB frame (an observation-like JSON with a long base64 string), 64-byte chunks.
const big = encodeFrame({ png: Buffer.alloc(786_000, 7).toString("base64"), stateSignature: "x" });
const framesA = 8;
const streamA = Buffer.concat(Array.from({ length: framesA }, () => big));
const chunksA: Buffer[] = [];
for (let o = 0; o < streamA.length; o += 64) chunksA.push(streamA.subarray(o, o + 64));
console.log(`frame size ${(big.length / 1048576).toFixed(2)} MiB × ${framesA}, ${chunksA.length} chunks of 64 bytes`);
report("A: 1 MiB frames in 64-byte chunks", streamA.length, chunksA, 15);

// Case B: 1,000 small frames coalesced in one chunk.
const small = Array.from({ length: 1000 }, (_, i) =>
  encodeFrame({ version: 1, type: "request", identity: { generation: "g", challenge: "c", runtimeRevision: "r" }, seq: i + 1, requestId: `request-${i + 1}`, operation: "EXECUTE", actionId: `action-${i + 1}`, action: { kind: "click", x: i, y: i / 2 } }),
);
const streamB = Buffer.concat(small);
console.log(`\n1,000 frames, ${streamB.length} bytes in one chunk`);
report("B: 1,000 coalesced small frames", streamB.length, [streamB], 200);
// Context for B: a baseline that copies each frame separately (one Buffer.copy per frame).
{
  const target = Buffer.allocUnsafe(streamB.length);
  const frames = small.map((f) => Buffer.from(f));
  const perFrame = best(() => {
    let off = 0;
    for (const f of frames) off += f.copy(target, off);
  }, 200);
  const raw = best(() => {
    new FrameDecoder({ raw: true }).push(streamB);
  }, 200);
  console.log(`  per-frame Buffer.copy: ${perFrame.toFixed(3)} ms; raw decoder / per-frame copy ratio ${(perFrame / raw).toFixed(2)}×`);
}

/**
 * Framing throughput vs a Buffer.copy baseline in the same process.
 *
 *   ./node_modules/.bin/bun bench/framing.ts
 *
 * Case A: 1 MiB frames arriving in 64-byte chunks. Case B: 1,000 small frames coalesced in one
 * chunk. The baseline copies exactly the same chunks into a preallocated buffer with
 * `Buffer.copy`. Each case runs the decoder three ways: `pushSpans` (the framing itself: length
 * checks before allocation, in-place assembly, BOM and strict UTF-8 checks, frames returned as
 * byte ranges), `push` in raw mode (the same plus one subarray view object per frame), and `push`
 * (the same plus bytes → string and JSON.parse per frame, as the transport uses it). Prints MiB/s
 * and the ratio baseline time / decoder time (goal ≥ 0.5×). Each variant uses one long-lived
 * decoder across runs, as the transport keeps one per channel.
 *
 * Case B is bounded by the sequential walk over the 1,000 length prefixes (each offset depends
 * on the previous length; ~4–5 ns per frame here, about the time memcpy needs for the whole
 * 226-byte frame) plus one `isUtf8` pass; the "context" line shows what one object per frame or
 * one copy per frame would cost on their own.
 *
 * JSON.parse costs far more than a memcpy of the same bytes, so the JSON variant also gets a
 * second baseline: JSON.parse alone on the same payloads (strings decoded before timing), and
 * the ratio (copy + JSON.parse alone) / decoder.
 */
import { encodeFrame, FrameDecoder } from "../src/browser-control/index.ts";
import { emitFigures, type Figure, figure } from "./lib/figures.ts";

/**
 * Best (minimum) time in ms of each run. Runs go in blocks of consecutive repetitions (so each
 * variant, the baseline included, is timed with its own data hot in cache, as in a steady
 * stream), and the blocks are interleaved over several rounds so that load from other
 * processes on this shared machine hits every variant alike. The first block of each variant in
 * the first round also serves as warm-up.
 */
function bestOf(runs: Array<() => void>, reps: number): number[] {
  const rounds = 5;
  const block = Math.max(2, Math.ceil(reps / rounds));
  const bestMs = runs.map(() => Number.POSITIVE_INFINITY);
  for (let r = 0; r < rounds; r++)
    runs.forEach((run, k) => {
      run();
      for (let i = 0; i < block; i++) {
        const t0 = performance.now();
        run();
        bestMs[k] = Math.min(bestMs[k]!, performance.now() - t0);
      }
    });
  return bestMs;
}

function best(run: () => void, reps: number): number {
  return bestOf([run], reps)[0]!;
}

/** Payload strings of `chunks` (what JSON.parse needs), decoded once outside any timing. */
function payloadStrings(stream: Buffer): string[] {
  const out: string[] = [];
  for (let o = 0; o < stream.length; ) {
    const len = stream.readUInt32BE(o);
    out.push(stream.toString("utf8", o + 4, o + 4 + len));
    o += 4 + len;
  }
  return out;
}

function report(name: string, stream: Buffer, chunks: Buffer[], reps: number): void {
  const bytes = stream.length;
  const framesPerRun = payloadStrings(stream).length;
  const target = Buffer.allocUnsafe(bytes);
  let sink = 0;
  // One long-lived decoder per variant, as the transport keeps one per channel; every run
  // ends on a frame boundary, so each run starts from the same state.
  const frames = (n: number) => {
    if (n !== framesPerRun) throw new Error(`decoded ${n} frames, expected ${framesPerRun}`);
  };
  const jsonDecoder = new FrameDecoder();
  const rawDecoder = new FrameDecoder({ raw: true });
  const spanDecoder = new FrameDecoder({ raw: true });
  // Second baseline for the JSON variant: JSON.parse alone on the same payloads, from strings
  // decoded before timing (so it excludes even the bytes → string step the decoder must do).
  const texts = payloadStrings(stream);
  const [baseline, spans, raw, parsed, parseAlone] = bestOf(
    [
      () => {
        let off = 0;
        for (const c of chunks) off += c.copy(target, off);
        sink += target[off - 1]!;
      },
      () => {
        let n = 0;
        for (const c of chunks) n += spanDecoder.pushSpans(c).count;
        frames(n);
      },
      () => {
        let n = 0;
        for (const c of chunks) n += rawDecoder.push(c).messages.length;
        frames(n);
      },
      () => {
        let n = 0;
        for (const c of chunks) n += jsonDecoder.push(c).messages.length;
        frames(n);
      },
      () => {
        for (const t of texts) sink += JSON.parse(t) === null ? 1 : 0;
      },
    ],
    reps,
  ) as [number, number, number, number, number];
  const mibs = (ms: number) => (bytes / (1024 * 1024) / (ms / 1000)).toFixed(0);
  const ratio = (ms: number) => `ratio ${(baseline / ms).toFixed(2)}× of baseline`;
  figures.push(
    figure(`${name}: pushSpans vs Buffer.copy (time)`, spans, "ms", baseline, { maxRatio: 2, text: "≥ 0.5× the copy's throughput (time ratio ≤ 2)" }),
    figure(`${name}: push + JSON.parse vs Buffer.copy (time)`, parsed, "ms", baseline),
  );
  console.log(`${name}`);
  console.log(`  baseline Buffer.copy          : ${baseline.toFixed(3)} ms  ${mibs(baseline)} MiB/s`);
  console.log(`  decoder pushSpans (framing)   : ${spans.toFixed(3)} ms  ${mibs(spans)} MiB/s  ${ratio(spans)}  [goal ≥ 0.5×]`);
  console.log(`  decoder push raw (view/frame) : ${raw.toFixed(3)} ms  ${mibs(raw)} MiB/s  ${ratio(raw)}`);
  console.log(`  decoder push (JSON.parse)     : ${parsed.toFixed(3)} ms  ${mibs(parsed)} MiB/s  ${ratio(parsed)}`);
  console.log(
    `  JSON.parse alone (2nd base)   : ${parseAlone.toFixed(3)} ms  ${mibs(parseAlone)} MiB/s  = ${(parseAlone / baseline).toFixed(2)}× the copy time`,
  );
  console.log(
    `  JSON decoder vs copy + JSON.parse alone: ratio ${((baseline + parseAlone) / parsed).toFixed(2)}×; ` +
      `overhead beyond JSON.parse alone ${(parsed - parseAlone).toFixed(3)} ms (${((parsed - parseAlone) / baseline).toFixed(2)}× the copy time)`,
  );
  if (sink === -1) console.log("");
}

const figures: Figure[] = [];
// Case A: a 1 MiB frame (an observation-like JSON with a long base64 string), 64-byte chunks.
const big = encodeFrame({ png: Buffer.alloc(786_000, 7).toString("base64"), stateSignature: "x" });
const framesA = 8;
const streamA = Buffer.concat(Array.from({ length: framesA }, () => big));
const chunksA: Buffer[] = [];
for (let o = 0; o < streamA.length; o += 64) chunksA.push(streamA.subarray(o, o + 64));
console.log(`frame size ${(big.length / 1048576).toFixed(2)} MiB × ${framesA}, ${chunksA.length} chunks of 64 bytes`);
report("A: 1 MiB frames in 64-byte chunks", streamA, chunksA, 15);

// Case B: 1,000 small frames coalesced in one chunk.
const small = Array.from({ length: 1000 }, (_, i) =>
  encodeFrame({
    version: 1,
    type: "request",
    identity: { generation: "g", challenge: "c", runtimeRevision: "r" },
    seq: i + 1,
    requestId: `request-${i + 1}`,
    operation: "EXECUTE",
    actionId: `action-${i + 1}`,
    action: { kind: "click", x: i, y: i / 2 },
  }),
);
const streamB = Buffer.concat(small);
console.log(`\n1,000 frames, ${streamB.length} bytes in one chunk`);
report("B: 1,000 coalesced small frames", streamB, [streamB], 1000);
// Context for B: a baseline that copies each frame separately (one Buffer.copy per frame).
{
  const target = Buffer.allocUnsafe(streamB.length);
  const frames = small.map((f) => Buffer.from(f));
  const perFrame = best(() => {
    let off = 0;
    for (const f of frames) off += f.copy(target, off);
  }, 200);
  const d = new FrameDecoder({ raw: true });
  const raw = best(() => {
    d.pushSpans(streamB);
  }, 200);
  const views = best(() => {
    for (let o = 0; o < streamB.length; ) {
      const v = streamB.subarray(o + 4, o + 4 + streamB.readUInt32BE(o));
      o = v.byteOffset - streamB.byteOffset + v.byteLength;
    }
  }, 200);
  console.log(
    `  floor: one Buffer.copy per frame ${perFrame.toFixed(3)} ms (pushSpans takes ${(raw / perFrame).toFixed(2)}× that); creating one subarray view per frame alone ${views.toFixed(3)} ms`,
  );
  // One bulk copy of the whole chunk touches no frame boundary; any framer visits each of the
  // 1,000 headers, so the per-frame copy is the floor this case's ratio is read against.
  figures.push(figure("B: pushSpans vs one Buffer.copy per frame (the per-frame floor)", raw, "ms", perFrame));
}
emitFigures(figures);

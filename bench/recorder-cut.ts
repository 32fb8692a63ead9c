/**
 * Cost of keeping secrets whole and bytes lossless in the terminal event stream, vs floors in the
 * same process:
 *
 *   ./node_modules/.bin/bun bench/recorder-cut.ts
 *
 * A. 512 KiB of ordinary terminal output (lines of words, paths, numbers) in 4 KiB chunks through
 *    the real recorder with the real redactor's safe cut, vs the same recorder cutting at the last
 *    newline with no secret analysis (the floor: what the stream cost before cuts were checked).
 * B. Adversarial: an unfinished PEM header, then 256 KiB dribbled as 2-byte lines — the recorder
 *    must hold the block, and its rescans must stay linear — vs the same floor.
 * C. Encoding 512 KiB of mixed bytes (text with controls and invalid bytes) with the escaped-bytes
 *    encoder vs a lossy `TextDecoder` decode of the same bytes.
 * D. The same on the well-formed UTF-8 text of A (the encoder's native fast path).
 * Prints ms (best of 5 rounds) and the ratios. Appends are no-ops: disk I/O is not measured.
 */
import { encodeOutputBytes } from "../src/bundle/output-codec.ts";
import { createRedactor, type Redactor } from "../src/bundle/redact.ts";
import type { RunWriter } from "../src/bundle/writer.ts";
import { createTerminalRecording } from "../src/terminal-seat/recorder.ts";
import { emitFigures, type Figure, figure } from "./lib/figures.ts";

const SECRETS = ["zq9-canary-7731-secret", `sk-proj-${"Ab3".repeat(16)}`, "open sesame 4471 vault"];
const real = createRedactor(SECRETS, { cwd: "/work/project" });
const floor: Redactor = { ...real, safeCut: (s, desired) => (desired === s.length ? s.lastIndexOf("\n") + 1 : desired) };

function recorderWith(redactor: Redactor) {
  const writer = { redactor, appendNdjson: async () => {} } as unknown as RunWriter;
  return createTerminalRecording({ writer, participantId: "p1", redact: (s) => redactor.text(s), onProgress: () => {} });
}

function best(run: () => void): number {
  let b = Number.POSITIVE_INFINITY;
  for (let i = 0; i < 5; i++) {
    const t0 = performance.now();
    run();
    b = Math.min(b, performance.now() - t0);
  }
  return b;
}

const enc = new TextEncoder();
const words = ["build", "ok", "/usr/lib/node_modules/pkg/index.js", "12.5ms", "warning:", "jq", "--help", "A-1001", '{"id":3}', "done"];
let text = "";
for (let i = 0; text.length < 512 * 1024; i++) text += `${words[i % 10]} ${words[(i * 7) % 10]} ${i}\n`;
const ordinary = enc.encode(text);
const chunks = (bytes: Uint8Array, n: number) => Array.from({ length: Math.ceil(bytes.length / n) }, (_, i) => bytes.subarray(i * n, (i + 1) * n));
const ordinaryChunks = chunks(ordinary, 4096);
const dribble = [enc.encode("-----BEGIN RSA PRIVATE KEY-----\n"), ...Array.from({ length: 128 * 1024 }, () => enc.encode("x\n"))];

const feed = (redactor: Redactor, parts: Uint8Array[]) => () => {
  const rec = recorderWith(redactor);
  for (const c of parts) rec.recorder.output("stdout", c);
  void rec.flush();
};

const a = [best(feed(real, ordinaryChunks)), best(feed(floor, ordinaryChunks))];
const b = [best(feed(real, dribble)), best(feed(floor, dribble))];
const mixed = new Uint8Array(512 * 1024);
for (let i = 0; i < mixed.length; i++) mixed[i] = i % 97 === 0 ? 0x07 : i % 211 === 0 ? 0xff : 0x61 + (i % 26);
const c = [best(() => void encodeOutputBytes(mixed)), best(() => void new TextDecoder().decode(mixed))];
const d = [best(() => void encodeOutputBytes(ordinary)), best(() => void new TextDecoder().decode(ordinary))];

const figures: Figure[] = [];
const row = (name: string, [x, y]: number[]) =>
  figures.push(figure(name, x!, "ms", y!)) &&
  console.log(`${name.padEnd(48)} ${x!.toFixed(2).padStart(8)} ms  vs ${y!.toFixed(2).padStart(8)} ms  ratio ${(x! / y!).toFixed(2)}x`);
row("A. ordinary output, safe cut vs newline cut", a);
row("B. held PEM block dribbled, safe cut vs newline", b);
row("C. escaped-bytes encode vs lossy TextDecoder", c);
row("D. same on well-formed UTF-8 (the usual case)", d);
emitFigures(figures);

/**
 * Bundle integrity costs vs baselines in the same process:
 *
 *   ./node_modules/.bin/bun bench/bundle-integrity.ts
 *
 * A. `sealRunDir` (safe-read every covered file, SHA-256, canonical manifest, Ed25519 sign,
 *    atomic write of signature.json) vs the floor: `readFileSync` + SHA-256 of the same files.
 * B. `verifyFiles` in memory on fresh byte arrays (no memo hits) vs `verifyRun` on disk
 *    (the walk and safe reads on top of the same core).
 * C. the signature check alone (manifest rebuild + Ed25519 verify) vs the whole in-memory verify.
 * D. `safeReadFile` vs `readFileSync` of a 4 MiB file.
 * Prints ms (best of N) and the ratios. Uses a temp signing key (HUMANISH_CONFIG_DIR).
 */
import { createHash } from "node:crypto";
import { mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildManifest, checkBundleSignature, createRunWriter, safeReadFile, sealRunDir, verifyFiles, verifyRun } from "../src/bundle/index.ts";
import { defaultTrust } from "../src/bundle/signing/keys.ts";
import { readBundleDir } from "../src/bundle/verify/disk.ts";
import { scriptedTrace } from "../test/support/bundles.ts";
import { emitFigures, figure } from "./lib/figures.ts";

async function best(run: () => Promise<unknown> | unknown, reps: number): Promise<number> {
  await run();
  let b = Number.POSITIVE_INFINITY;
  for (let i = 0; i < reps; i++) {
    const t0 = performance.now();
    await run();
    b = Math.min(b, performance.now() - t0);
  }
  return b;
}

const root = realpathSync(mkdtempSync(join(tmpdir(), "humanish-bench-integrity-")));
process.env.HUMANISH_CONFIG_DIR = join(root, "config");
try {
  const w = createRunWriter({ cwd: root, runId: "bench-1", secrets: [], route: "terminal", mode: "dry-run", heartbeatMs: 0 });
  const T0 = "2026-11-30T02:00:00.000Z";
  const line = "$ tool --flag value\noutput line with some words in it and a number 12345\n";
  await w.writeArtifact("terminal-transcript.txt", line.repeat(8000), { kind: "terminal-transcript" });
  for (let i = 0; i < 2000; i++) await w.appendNdjson("terminal-events.ndjson", { at: T0, stream: "stdout", chunk: line }, { kind: "terminal-events" });
  await w.writeJson("actor.json", scriptedTrace("terminal", { startedAt: T0, completedAt: T0, durationMs: 0, counts: {}, items: [] }), { kind: "actor-trace" });
  await w.finalize({
    route: "terminal",
    mode: "dry-run",
    target: "docker",
    createdAt: T0,
    completedAt: T0,
    lab: { id: "bench", source: { ref: "embedded:bench", sha256: "a".repeat(64) } },
    subject: { source: "terminal-product", provenance: "unpinned" },
    participants: [{ id: "p1", actorType: "scripted-terminal", status: "contract_proof_only", completionReason: null, reason: "dry run", trace: null }],
  });
  const dir = w.runDir;
  const covered = ["run.json", "status.json", "terminal-transcript.txt", "terminal-events.ndjson", "actor.json"];

  const floorA = await best(() => {
    for (const f of covered)
      createHash("sha256")
        .update(readFileSync(join(dir, f)))
        .digest("hex");
  }, 20);
  const seal = await best(() => sealRunDir(dir, "bench-1"), 20);
  console.log(`A. seal ${seal.toFixed(2)} ms vs read+sha256 ${floorA.toFixed(2)} ms → ratio ${(seal / floorA).toFixed(2)}`);

  const trust = defaultTrust();
  const walked = await readBundleDir(dir);
  const fresh = () => walked.files.map((f) => ({ path: f.path, bytes: new Uint8Array(f.bytes) }));
  const mem = await best(() => verifyFiles({ run: "bench-1", files: fresh(), trust }), 10);
  const disk = await best(() => verifyRun(dir, { trust }), 10);
  console.log(`B. verifyRun (disk) ${disk.toFixed(2)} ms vs verifyFiles (memory) ${mem.toFixed(2)} ms → ratio ${(disk / mem).toFixed(2)}`);

  const map = new Map(walked.files.map((f) => [f.path, f.bytes]));
  const sig = map.get("signature.json")!;
  const listed = ["actor.json", "terminal-events.ndjson", "terminal-transcript.txt"];
  const sigOnly = await best(() => {
    const m = new Map([...map].map(([k, v]) => [k, new Uint8Array(v)]));
    return checkBundleSignature(sig, buildManifest("bench-1", m, listed));
  }, 20);
  console.log(`C. signature check ${sigOnly.toFixed(2)} ms vs whole verify ${mem.toFixed(2)} ms → share ${((sigOnly / mem) * 100).toFixed(1)}%`);

  const big = join(root, "big.bin");
  writeFileSync(big, new Uint8Array(4 * 1024 * 1024).fill(7));
  const plain = await best(() => readFileSync(big), 30);
  const safe = await best(() => safeReadFile(big, 8 * 1024 * 1024), 30);
  console.log(`D. safeReadFile ${safe.toFixed(2)} ms vs readFileSync ${plain.toFixed(2)} ms → ratio ${(safe / plain).toFixed(2)}`);
  emitFigures([
    figure("seal vs read+sha256", seal, "ms", floorA),
    figure("verifyRun (disk) vs verifyFiles (memory)", disk, "ms", mem),
    figure("signature check vs whole in-memory verify", sigOnly, "ms", mem),
    figure("safeReadFile vs readFileSync, 4 MiB", safe, "ms", plain),
  ]);
} finally {
  rmSync(root, { recursive: true, force: true });
}

/**
 * Bundle layer costs vs baselines in the same process:
 *
 *   ./node_modules/.bin/bun bench/bundle.ts
 *
 * A. `verifyRun` of a live browser-shaped bundle (40 screenshots of 720×475, a 512 KiB
 *    transcript, a trace, receipts, a report that inlines every screenshot) vs two floors any
 *    verifier pays: read + SHA-256 every file, and that plus `admitPng` of every screenshot
 *    (re-admission is required; its decode dominates). Prints ms (best of N) and the ratios.
 * B. Redaction of 1 MiB of transcript-like text with 2 provisioned secrets vs one literal
 *    `String.prototype.replaceAll` of a single value over the same text. Prints MiB/s and ratio.
 * B2. Redaction of one 1 MiB whitespace-free token in text that also holds a `%` vs the same
 *    text without the `%` (the percent-escape pass must stay linear). Prints ms and ratio.
 * C. `writeArtifact` (redact + atomic temp/fsync/rename) of a 256 KiB text vs `Bun.write` of the
 *    same bytes (no fsync). Prints ms and ratio.
 */
import { createHash } from "node:crypto";
import { mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PNG } from "pngjs";
import { createRedactor, createRunWriter, verifyRun } from "../src/bundle/index.ts";
import { admitPng } from "../src/png/index.ts";
import { browserParticipant, scriptedTrace } from "../test/support/bundles.ts";
import { emitFigures, figure } from "./lib/figures.ts";

async function best(run: () => Promise<void> | void, reps: number): Promise<number> {
  await run();
  let b = Number.POSITIVE_INFINITY;
  for (let i = 0; i < reps; i++) {
    const t0 = performance.now();
    await run();
    b = Math.min(b, performance.now() - t0);
  }
  return b;
}

function png(width: number, height: number, seed: number): Uint8Array {
  const p = new PNG({ width, height });
  for (let i = 0; i < p.data.length; i++) p.data[i] = ((i >> 2) * 7 + seed * 13 + (i % 4) * 50) & 0xff;
  return new Uint8Array(PNG.sync.write(p));
}

function walk(dir: string, prefix = ""): string[] {
  const out: string[] = [];
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const rel = prefix ? `${prefix}/${e.name}` : e.name;
    if (e.isDirectory()) out.push(...walk(join(dir, e.name), rel));
    else out.push(rel);
  }
  return out;
}

const cwd = realpathSync(mkdtempSync(join(tmpdir(), "humanish-bench-bundle-")));
try {
  const secret = `sk-proj-${"Z".repeat(40)}`;
  const T0 = "2026-11-30T02:00:00.000Z";
  const T1 = "2026-11-30T02:01:00.000Z";
  const w = createRunWriter({ cwd, runId: "bench", secrets: [secret, "canary-bench-123"], heartbeatMs: 0 });
  const shots: string[] = [];
  const b64s: string[] = [];
  for (let i = 0; i < 40; i++) {
    const bytes = png(720, 475, i);
    const path = `screenshots/${String(i + 1).padStart(3, "0")}.png`;
    await w.writeArtifact(path, bytes, { kind: "screenshot" });
    shots.push(path);
    b64s.push(Buffer.from(bytes).toString("base64"));
  }
  const line = "$ jq '.items[] | select(.done)' data.json  # output line with /tmp/scratch and numbers 1234567890\n";
  const transcript = line.repeat(Math.ceil((512 * 1024) / line.length));
  await w.writeArtifact("terminal-transcript.txt", transcript, { kind: "log" });
  await w.appendNdjson("sandbox-receipts.ndjson", { at: T0, provider: "docker", id: "d".repeat(64), kind: "desktop" }, { kind: "sandbox-receipts" });
  await w.writeJson(
    "actor.json",
    scriptedTrace("browser", {
      prompt: "x",
      redaction: { status: "passed", screenshots: "raw", notes: "" },
      startedAt: T0,
      completedAt: T1,
      durationMs: 60_000,
      reason: "ok",
      counts: { actions: 40 },
      items: shots.map((p, i) => ({
        id: `screenshot-${i}`,
        kind: "screenshot",
        lifecycle: "completed",
        title: p,
        screenshotRef: { path: p, redaction: "none" },
      })),
    }),
    { kind: "actor-trace" },
  );
  await w.finalize({
    route: "browser",
    mode: "live",
    target: "local",
    createdAt: T0,
    completedAt: T1,
    lab: { id: "bench", source: { ref: "embedded:bench", sha256: "a".repeat(64) } },
    subject: { source: "app-url", appUrl: "http://127.0.0.1:8080/", provenance: "undeclared" },
    participants: [browserParticipant(60_000, { width: 720, height: 475 })],
    cleanup: [{ id: "d".repeat(64), provider: "docker", kind: "desktop", outcome: "released", reason: "inspect-404", at: T1 }],
  });
  const html = `<!doctype html>${b64s.map((b, i) => `<img alt="${i}" src="data:image/png;base64,${b.match(/.{1,16}/g)!.join("\n")}">`).join("\n")}`;
  await w.writeArtifact("report/index.html", html, { kind: "report" });
  await w.finalize();

  const files = walk(w.runDir);
  const totalBytes = files.reduce((n, f) => n + statSync(join(w.runDir, f)).size, 0);
  const v = await verifyRun(w.runDir);
  if (!v.ok) throw new Error(`bench bundle does not verify: ${JSON.stringify(v.checks.filter((c) => !c.ok))}`);

  // A. verify vs read + sha256 floor.
  const floor = await best(() => {
    for (const f of files)
      createHash("sha256")
        .update(readFileSync(join(w.runDir, f)))
        .digest("hex");
  }, 5);
  const floorPng = await best(() => {
    for (const f of files) {
      const bytes = readFileSync(join(w.runDir, f));
      createHash("sha256").update(bytes).digest("hex");
      if (f.endsWith(".png")) admitPng(new Uint8Array(bytes));
    }
  }, 5);
  const verify = await best(async () => {
    await verifyRun(w.runDir);
  }, 5);
  console.log(`A verifyRun: ${files.length} files, ${(totalBytes / 1048576).toFixed(1)} MiB`);
  console.log(`  read+sha256 floor ${floor.toFixed(1)} ms · read+sha256+admitPng floor ${floorPng.toFixed(1)} ms · verifyRun ${verify.toFixed(1)} ms`);
  console.log(`  ratio vs read+sha256 ${(verify / floor).toFixed(1)}× · ratio vs read+sha256+admitPng ${(verify / floorPng).toFixed(2)}×`);

  // B. redaction throughput.
  const r = createRedactor([secret, "canary-bench-123"]);
  const text = `${transcript}${transcript}`.slice(0, 1024 * 1024);
  const base = await best(() => {
    text.replaceAll("canary-bench-123", "[REDACTED_SECRET]");
  }, 10);
  const red = await best(() => {
    r.text(text);
  }, 10);
  const mib = text.length / 1048576;
  console.log(
    `B redact 1 MiB: single replaceAll ${(mib / (base / 1000)).toFixed(0)} MiB/s · redactor ${(mib / (red / 1000)).toFixed(0)} MiB/s · ratio ${(red / base).toFixed(1)}×`,
  );
  // B2. one 1 MiB token (a blob without whitespace) in text that also holds a `%`: the
  // percent-escape pass must stay linear (it once rescanned the token from every offset).
  const blob = `progress 100% ${"Zm9v".repeat(256 * 1024)}`;
  const blobPlain = blob.replace("%", " ");
  const noPct = await best(() => {
    r.text(blobPlain);
  }, 5);
  const withPct = await best(() => {
    r.text(blob);
  }, 5);
  console.log(
    `B2 redact a 1 MiB token: without a % ${noPct.toFixed(1)} ms · with a % elsewhere ${withPct.toFixed(1)} ms · ratio ${(withPct / noPct).toFixed(2)}×`,
  );

  // C. atomic artifact write vs Bun.write.
  const body = transcript.slice(0, 256 * 1024);
  let n = 0;
  const plain = await best(async () => {
    await Bun.write(join(cwd, `plain-${n++}.txt`), body);
  }, 10);
  const atomic = await best(async () => {
    await w.writeArtifact(`log-${n++}.txt`, body, { kind: "log" });
  }, 10);
  console.log(
    `C write 256 KiB: Bun.write ${plain.toFixed(2)} ms · writeArtifact (redact+fsync+rename) ${atomic.toFixed(2)} ms · ratio ${(atomic / plain).toFixed(1)}×`,
  );
  w.close();
  emitFigures([
    figure("verifyRun vs read+sha256+admitPng floor", verify, "ms", floorPng, { maxRatio: 1.2 }),
    figure("redact 1 MiB vs one replaceAll", red, "ms", base),
    figure("redact a 1 MiB token with a % vs without", withPct, "ms", noPct),
    figure("writeArtifact 256 KiB vs Bun.write", atomic, "ms", plain),
  ]);
} finally {
  rmSync(cwd, { recursive: true, force: true });
}

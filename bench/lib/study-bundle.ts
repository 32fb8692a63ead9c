/**
 * Synthetic study bundles for the evidence benches: a live many-seat browser study written by
 * the real bundle writer (so it is sealed, signed and verifies), with page-like 1280×800 frames.
 * Not a bench itself.
 */
import { deflateSync } from "node:zlib";
import { PNG } from "pngjs";
import { pngChunk } from "../../src/analysis/downscale.ts";
import { type ActorTrace, createRunWriter, digestText, type RunBundleInput, type Study } from "../../src/bundle/index.ts";
import { labBlock, scriptedTrace } from "../../test/support/bundles.ts";

const T0 = "2026-12-01T10:00:00.000Z";
const T1 = "2026-12-01T10:00:30.000Z";

/** A 1280×800 frame that looks like a page: white, text-like noise rows, a coloured header. */
export function frame(seed: number): Uint8Array {
  const w = 1280;
  const h = 800;
  const p = new PNG({ width: w, height: h });
  let s = seed * 2654435761;
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      const i = (y * w + x) * 4;
      s = (s * 1103515245 + 12345) >>> 0;
      const header = y < 60;
      const text = !header && y % 24 < 12 && x > 80 && x < 900 && s >>> 24 < 90;
      const v = header ? 40 + seed * 9 : text ? 30 : 255;
      p.data[i] = v;
      p.data[i + 1] = header ? 90 : v;
      p.data[i + 2] = header ? 200 : v;
      p.data[i + 3] = 255;
    }
  }
  return new Uint8Array(PNG.sync.write(p, { colorType: 2 }));
}

/** Shape of a synthetic study bundle: seats, screenshots per seat, and the PNG of seat `s`'s `k`-th frame (1-based). */
export interface StudyShape {
  runId: string;
  seats: number;
  shotsPerSeat: number;
  frameOf: (seat: number, k: number) => Uint8Array;
}

/**
 * Write a live 16-seat-style browser study bundle (traces referencing every screenshot, one
 * seat in four giving up, receipts and released cleanup, a study section) under `cwd`, sealed
 * and verifiable; returns its run directory.
 */
export async function writeStudy(cwd: string, shape: StudyShape): Promise<string> {
  const { runId, seats: SEATS, shotsPerSeat: SHOTS_PER_SEAT } = shape;
  const w = createRunWriter({ cwd, runId, secrets: [], route: "browser", mode: "live", lab: "todomvc-16", heartbeatMs: 0 });
  const participants: NonNullable<RunBundleInput["participants"]> = [];
  const tasks: NonNullable<RunBundleInput["tasks"]> = [];
  const cleanup: NonNullable<RunBundleInput["cleanup"]> = [];
  const seats: Study["seats"] = [];
  for (let s = 0; s < SEATS; s++) {
    const id = `p${s + 1}`;
    const container = (s + 1).toString(16).padStart(64, "0");
    await w.appendNdjson(
      "sandbox-receipts.ndjson",
      { at: T0, participantId: id, provider: "docker", id: container, kind: "desktop" },
      { kind: "sandbox-receipts", durable: true },
    );
    const items: ActorTrace["items"] = [];
    for (let k = 1; k <= SHOTS_PER_SEAT; k++) {
      const path = `screenshots/${id}/turn-${String(k).padStart(3, "0")}.png`;
      await w.writeArtifact(path, shape.frameOf(s, k), { kind: "screenshot" });
      items.push({
        id: `ui_action-${String(k).padStart(3, "0")}`,
        kind: "ui_action",
        lifecycle: "completed",
        title: `step ${k}`,
        at: T0,
        action: { type: "click", x: 100 + k, y: 200 },
      });
      items.push({
        id: `screenshot-${String(k).padStart(3, "0")}`,
        kind: "screenshot",
        lifecycle: "completed",
        title: `after step ${k}`,
        at: T0,
        screenshotRef: { path, redaction: "none" },
      });
    }
    const gaveUp = s % 4 === 3;
    const trace = scriptedTrace("browser", {
      participantId: id,
      startedAt: T0,
      completedAt: T1,
      durationMs: 30_000,
      counts: { actions: SHOTS_PER_SEAT, screenshots: SHOTS_PER_SEAT },
      items,
      ...(gaveUp ? { status: "abandoned" as const, completionReason: "gave_up" as const, reason: "could not find how to clear completed todos" } : {}),
      persona: { id: "newcomer", traitsApplied: [], promptDigest: digestText("steps") },
    });
    await w.writeJson(`seats/${id}/actor.json`, trace, { kind: "actor-trace" });
    participants.push({
      id,
      actorType: "scripted-browser",
      status: gaveUp ? "abandoned" : "passed",
      completionReason: gaveUp ? "gave_up" : "goal_satisfied",
      reason: gaveUp ? "could not find how to clear completed todos" : "ok",
      trace: `seats/${id}/actor.json`,
      startedAt: T0,
      completedAt: T1,
      durationMs: 30_000,
      desktopGeometry: { preset: "desktop", screen: { requested: { width: 1280, height: 800 } }, warnings: [] },
    });
    tasks.push({ id: "add-todo", goal: "Add a todo", participantId: id, status: "passed", passed: true });
    tasks.push({ id: "clear-completed", goal: "Clear completed", participantId: id, status: gaveUp ? "failed" : "passed", passed: !gaveUp });
    cleanup.push({ id: container, provider: "docker", kind: "desktop", participantId: id, outcome: "released", reason: "inspect-404", at: T1 });
    seats.push({
      id,
      index: s,
      state: "completed",
      phase: "done",
      folder: `seats/${id}/`,
      release: "released",
      containerId: container,
      reason: "released",
      startedAt: T0,
      durationMs: 30_000,
      usd: 0,
      jobs: 0,
    });
  }
  await w.finalize({
    route: "browser",
    mode: "live",
    target: "local",
    createdAt: T0,
    completedAt: T1,
    lab: labBlock("todomvc-16", "TodoMVC, sixteen seats", "c".repeat(64)),
    subject: { source: "app-url", appUrl: "http://127.0.0.1:8080/", provenance: "undeclared" },
    participants,
    tasks,
    cleanup,
    study: {
      schema: "humanish.study.v1",
      lane: "local-guest",
      declaredSeats: SEATS,
      concurrency: 4,
      waves: 4,
      maxTotalUsd: 0,
      seats,
      totals: { seats: SEATS, completed: SEATS, failed: 0, interrupted: 0, budgetReached: 0, knownUsd: 0, knownJobs: 0, heldSlots: 0 },
    },
  });
  w.close();
  return w.runDir;
}

/**
 * A distinct 1280×800 page-like frame (a coloured header, dense grey "text" rows) of about
 * 150 KiB, encoded directly (unfiltered rows, fast deflate): pngjs's encoder would take most of
 * a bench's set-up time at 1,664 frames. Every seed gives different bytes, so no admission is
 * shared between frames.
 */
export function distinctFrame(seed: number): Uint8Array {
  const w = 1280;
  const h = 800;
  const stride = 1 + w * 3;
  const rows = new Uint8Array(stride * h);
  let s = (seed * 2654435761 + 1) >>> 0;
  for (let y = 0; y < h; y++) {
    const o = y * stride;
    for (let x = 0; x < w; x++) {
      s = (s * 1103515245 + 12345) >>> 0;
      const header = y < 60;
      const text = !header && y % 24 < 19 && x > 40 && x < 1240 && s >>> 24 < 160;
      const v = header ? (40 + seed * 9) & 0xff : text ? (s >>> 8) & 0xff : 255;
      const i = o + 1 + x * 3;
      rows[i] = v;
      rows[i + 1] = header ? 90 : v;
      rows[i + 2] = header ? 200 : v;
    }
  }
  const ihdr = new Uint8Array(13);
  const dv = new DataView(ihdr.buffer);
  dv.setUint32(0, w);
  dv.setUint32(4, h);
  ihdr.set([8, 2, 0, 0, 0], 8);
  const signature = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  const parts = [signature, pngChunk("IHDR", ihdr), pngChunk("IDAT", deflateSync(rows, { level: 1 })), pngChunk("IEND", new Uint8Array(0))];
  return new Uint8Array(Buffer.concat(parts));
}

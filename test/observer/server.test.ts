/**
 * The Observer server against a real run directory written by the real run writer: the
 * loopback Host/Origin rule (DNS rebinding), a page that reconnects with Last-Event-ID (nothing
 * lost, nothing repeated), a port in use, frames re-admitted by the PNG gate, and no path out of
 * the run directory.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createRunWriter } from "../../src/bundle/writer.ts";
import { type Observer, startObserver } from "../../src/observer/index.ts";
import { makePng } from "../support/png.ts";

const dirs: string[] = [];
const observers: Observer[] = [];
afterEach(async () => {
  for (const o of observers.splice(0)) await o.stop();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

async function setup(seats = ["s1", "s2"]) {
  const cwd = mkdtempSync(join(tmpdir(), "humanish-observer-"));
  dirs.push(cwd);
  const runId = "observer-test-run";
  const writer = createRunWriter({ cwd, runId, secrets: ["sekrit-value-123"], route: "browser", mode: "live", lab: "obs", heartbeatMs: 0 });
  await writer.writeStatus({ phase: "participate" });
  const o = startObserver({
    runId,
    runDir: writer.runDir,
    cwd,
    secrets: ["sekrit-value-123"],
    plan: { seats, capUsdPerSeat: 1, capTotalUsd: 2, tasksPerSeat: 1 },
    port: 0,
  });
  observers.push(o);
  return { cwd, writer, o };
}

/** Reads SSE events from `url` until `until` says stop; returns them and the last id. */
async function readEvents(url: string, headers: Record<string, string>, until: (evs: { id: number; type: string; data: unknown }[]) => boolean) {
  const ctrl = new AbortController();
  const res = await fetch(url, { headers, signal: ctrl.signal });
  expect(res.headers.get("content-type")).toContain("text/event-stream");
  const reader = res.body!.getReader();
  const dec = new TextDecoder();
  let buf = "";
  const evs: { id: number; type: string; data: unknown }[] = [];
  while (!until(evs)) {
    const { value, done } = await reader.read();
    if (done) break;
    buf += dec.decode(value, { stream: true });
    let i: number;
    while ((i = buf.indexOf("\n\n")) >= 0) {
      const block = buf.slice(0, i);
      buf = buf.slice(i + 2);
      const f: Record<string, string> = {};
      for (const l of block.split("\n")) {
        const m = /^([a-z]+): (.*)$/.exec(l);
        if (m) f[m[1]!] = m[2]!;
      }
      if (f.id !== undefined) evs.push({ id: Number(f.id), type: f.event!, data: JSON.parse(f.data!) });
    }
  }
  ctrl.abort();
  return evs;
}

describe("observer server", () => {
  test("refuses a foreign Host or Origin (DNS rebinding) and non-GET methods", async () => {
    const { o } = await setup();
    const port = o.port;
    const get = (headers: Record<string, string>, path = "/", method = "GET") => fetch(`http://127.0.0.1:${port}${path}`, { headers, method });
    expect((await get({})).status).toBe(200);
    expect((await get({ host: `localhost:${port}` })).status).toBe(200);
    expect((await get({ host: `evil.example:${port}` })).status).toBe(421);
    expect((await get({ host: `127.0.0.1:${port + 1}` })).status).toBe(421);
    expect((await get({ host: `evil.example:${port}` }, "/events")).status).toBe(421);
    expect((await get({ origin: "http://evil.example" }, "/events")).status).toBe(421);
    expect((await get({ origin: `https://127.0.0.1:${port}` })).status).toBe(421);
    expect((await get({ origin: `http://127.0.0.1:${port}` })).status).toBe(200);
    expect((await get({}, "/", "POST")).status).toBe(405);
    const page = await get({});
    expect(page.headers.get("content-security-policy")).toContain("script-src 'sha256-");
    expect(page.headers.get("content-security-policy")).toContain("default-src 'none'");
  });

  test("a page that reconnects with Last-Event-ID gets every later event once", async () => {
    const { writer, o } = await setup();
    const url = `${o.url}events`;
    const first = await readEvents(url, {}, (e) => e.length >= 1);
    expect(first[0]!.type).toBe("snapshot");
    const lastId = first[0]!.id;
    // While disconnected: two frames of s1, one of s2.
    await writer.writeArtifact("screenshots/s1/01-a.png", makePng(8, 8, { seed: 10, fill: "flat", alpha: true }), { kind: "screenshot" });
    o.feed.scanNow();
    await writer.writeArtifact("screenshots/s2/01-a.png", makePng(8, 8, { seed: 20, fill: "flat", alpha: true }), { kind: "screenshot" });
    o.feed.scanNow();
    await writer.writeArtifact("screenshots/s1/02-b.png", makePng(8, 8, { seed: 30, fill: "flat", alpha: true }), { kind: "screenshot" });
    o.feed.scanNow();
    const missed = o.feed.since(lastId)!;
    expect(missed.length).toBeGreaterThanOrEqual(3);
    const again = await readEvents(url, { "last-event-id": String(lastId) }, (e) => e.length >= missed.length);
    expect(again.map((e) => e.id)).toEqual(missed.map((e) => e.id));
    expect(new Set(again.map((e) => e.id)).size).toBe(again.length);
    expect(again.every((e) => e.id > lastId && e.type !== "snapshot")).toBe(true);
    const s1 = again.filter((e) => e.type === "seat" && (e.data as { id: string }).id === "s1").at(-1)!.data as { frames: number; frame: { name: string } };
    expect(s1.frames).toBe(2);
    expect(s1.frame.name).toBe("02-b");
    // Up to date: nothing is repeated, the stream waits for the next change.
    const latest = again.at(-1)!.id;
    const tail = readEvents(url, { "last-event-id": String(latest) }, (e) => e.length >= 1);
    await writer.writeArtifact("screenshots/s2/02-b.png", makePng(8, 8, { seed: 40, fill: "flat", alpha: true }), { kind: "screenshot" });
    o.feed.scanNow();
    const next = await tail;
    expect(next[0]!.id).toBe(latest + 1);
    // An id older than the log (or garbage) gets a fresh snapshot.
    const fresh = await readEvents(url, { "last-event-id": "-5" }, (e) => e.length >= 1);
    expect(fresh[0]!.type).toBe("snapshot");
  });

  test("serves a frame only after the PNG gate admits it, and nothing outside the run", async () => {
    const { writer, o } = await setup();
    await writer.writeArtifact("screenshots/s1/01-a.png", makePng(8, 8, { seed: 10, fill: "flat", alpha: true }), { kind: "screenshot" });
    o.feed.scanNow();
    const ok = await fetch(`${o.url}frames/s1/01-a.png`);
    expect(ok.status).toBe(200);
    expect(ok.headers.get("content-type")).toBe("image/png");
    // A file that is not a PNG, dropped where a frame would be, is refused by the gate.
    writeFileSync(join(writer.runDir, "screenshots/s1/02-fake.png"), "not a png at all");
    o.feed.scanNow();
    expect((await fetch(`${o.url}frames/s1/02-fake.png`)).status).toBe(403);
    // A symlink to a file elsewhere is refused by the safe reader.
    symlinkSync("/etc/hostname", join(writer.runDir, "screenshots/s1/03-link.png"));
    o.feed.scanNow();
    expect([403, 404]).toContain((await fetch(`${o.url}frames/s1/03-link.png`)).status);
    expect((await fetch(`${o.url}frames/..%2f..%2fetc/passwd.png`)).status).toBe(404);
    expect((await fetch(`${o.url}report`)).status).toBe(404);
  });

  test("terminal output is shown through the bundle's redactor", async () => {
    const { writer, o } = await setup(["s1"]);
    await writer.appendNdjson("terminal-events.ndjson", {
      at: new Date().toISOString(),
      stream: "stdout",
      source: "jq .",
      chunk: "value sekrit-value-123 here\n",
    });
    o.feed.scanNow();
    const seat = o.feed.snapshot().view.seats.find((s) => s.id === "s1")!;
    expect(seat.terminal!.lines.join("\n")).toContain("value");
    expect(JSON.stringify(o.feed.snapshot().view)).not.toContain("sekrit-value-123");
  });

  test("a port in use is a clear error", async () => {
    const holder = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response("x") });
    try {
      const cwd = mkdtempSync(join(tmpdir(), "humanish-observer-"));
      dirs.push(cwd);
      expect(() => startObserver({ runId: "r", runDir: join(cwd, "r"), cwd, secrets: [], plan: null, port: holder.port! })).toThrow(
        expect.objectContaining({ code: "HUMANISH_PORT_IN_USE" }),
      );
    } finally {
      await holder.stop(true);
    }
  });
});

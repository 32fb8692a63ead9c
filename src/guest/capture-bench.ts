/**
 * Baseline for `bench/guest.ts`: inside a guest container, start a separate headless Chromium
 * (fresh profile, its sandbox on, `--remote-debugging-pipe`), open `url` at the same size and
 * time `n` bare CDP `Page.captureScreenshot` calls (PNG). Prints one JSON line
 * `{"schema":"humanish.capture-bench.v1","n","meanMs","minMs","bytes","startMs"}` and exits;
 * `startMs` is Chromium's spawn → the first capture returned (launch, page load, one capture). Runs as
 * `humanish guest bench-capture <url> <width> <height> <n>`; never part of a study.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import type { Readable, Writable } from "node:stream";
import { errorMessage, HumanishError } from "../errors.ts";
import { CdpPipe } from "./cdp.ts";
import { CHROMIUM_BINARY } from "./desktop.ts";
import { GuestPage } from "./page.ts";

/** Run the baseline; resolves with the process exit code (0 ok, 2 failure). */
export async function runGuestCaptureBench(args: string[]): Promise<number> {
  const [url, w, h, n] = args;
  const width = Number(w);
  const height = Number(h);
  const count = Number(n);
  if (
    !url ||
    !/^http:\/\/127\.0\.0\.1:[0-9]+\//.test(url) ||
    !Number.isInteger(width) ||
    !Number.isInteger(height) ||
    !Number.isInteger(count) ||
    count < 1 ||
    count > 1000
  ) {
    process.stderr.write("usage: humanish guest bench-capture <http://127.0.0.1:PORT/…> <width> <height> <n ≤ 1000>\ncode: HUMANISH_USAGE\n");
    return 1;
  }
  const profile = mkdtempSync("/tmp/humanish-bench-profile-");
  const t0 = performance.now();
  const chromium = spawn(
    CHROMIUM_BINARY,
    ["--headless=new", "--remote-debugging-pipe", `--user-data-dir=${profile}`, "--no-first-run", "--disable-gpu", `--window-size=${width},${height}`, url],
    { env: { PATH: "/usr/bin:/bin", HOME: profile, TMPDIR: "/tmp", LANG: "C.UTF-8" }, stdio: ["ignore", "ignore", "ignore", "pipe", "pipe"] },
  );
  try {
    const cdp = new CdpPipe(chromium.stdio[3] as Writable, chromium.stdio[4] as Readable);
    const page = await GuestPage.attach(cdp);
    await page.waitForLoad(url);
    const times: number[] = [];
    let bytes = 0;
    let startMs = 0;
    for (let i = 0; i < count; i++) {
      const t = performance.now();
      const { data } = (await cdp.send("Page.captureScreenshot", { format: "png" }, page.sessionId)) as { data: string };
      bytes = Buffer.from(data, "base64").length;
      times.push(performance.now() - t);
      if (i === 0) startMs = performance.now() - t0;
    }
    const mean = times.reduce((a, b) => a + b, 0) / times.length;
    process.stdout.write(`${JSON.stringify({ schema: "humanish.capture-bench.v1", n: count, meanMs: mean, minMs: Math.min(...times), bytes, startMs })}\n`);
    return 0;
  } catch (e) {
    const err = e instanceof HumanishError ? e : new HumanishError("HUMANISH_GUEST_BENCH_FAILED", errorMessage(e));
    process.stderr.write(`humanish guest bench-capture failed: ${err.message}\ncode: ${err.code}\n`);
    return 2;
  } finally {
    chromium.kill("SIGKILL");
    rmSync(profile, { recursive: true, force: true });
  }
}

/**
 * The floor for `bench/seat-cost.ts`: a bare headless Chromium (fresh profile, its sandbox on,
 * `--remote-debugging-pipe`) inside a guest container, running the same scripted steps a
 * scripted-browser seat runs, over plain CDP:
 * - `open <path>`: `Page.navigate`, wait for the load, then observe every 250 ms until the page is at the URL;
 * - `type`: `Input.insertText` (the seat's content-text road too);
 * - `press`: `Input.dispatchKeyEvent` down/up for Enter, Tab or space;
 * - `waitForText`: observe every 250 ms until the page text contains it;
 * - `wait`: sleep; `screenshot`: one observation; and a final observation, as the seat makes.
 * One observation = `Page.captureScreenshot` (PNG, viewport) + the page's URL and text.
 *
 * Runs as `humanish guest bench-bare <http://127.0.0.1:PORT/> <width> <height> <steps JSON>`
 * in a container whose io directory (`/run/humanish-io`) holds `app.sock` (the app, forwarded
 * to the port as for a seat). Writes `<io>/bare-ready.json` once the first page loaded and
 * `<io>/bare-done.json` (`{"schema":"humanish.bare-bench.v1","ok","observations","bytes",
 * "bootMs","stepsMs","error"?}`) after the steps, then keeps Chromium alive until SIGTERM so the
 * host can read the container's stats at the same point it reads a seat's. Never part of a study.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import type { Readable, Writable } from "node:stream";
import { errorMessage } from "../errors.ts";
import { type Forwarder, startForwarder } from "../forward/forward.ts";
import { CdpPipe } from "./cdp.ts";
import { CHROMIUM_BINARY } from "./desktop.ts";
import { GUEST_IO_DIR } from "./host-guest.ts";
import { GuestPage } from "./page.ts";

/** The step kinds the floor replays (a subset of the lab's scripted-browser steps). */
export type BareStep =
  | { kind: "open"; path: string }
  | { kind: "type"; text: string }
  | { kind: "press"; keys: string[] }
  | { kind: "wait"; ms: number }
  | { kind: "waitForText"; text: string; timeoutMs: number }
  | { kind: "screenshot"; label?: string };

/** Poll interval of `open` and `waitForText`, ms (the scripted-browser seat's). */
const POLL_MS = 250;

/** CDP key events of the keys a step may press (what Puppeteer sends for the same keys). */
const KEYS: Record<string, { key: string; code: string; windowsVirtualKeyCode: number; text?: string }> = {
  Enter: { key: "Enter", code: "Enter", windowsVirtualKeyCode: 13, text: "\r" },
  Tab: { key: "Tab", code: "Tab", windowsVirtualKeyCode: 9 },
  space: { key: " ", code: "Space", windowsVirtualKeyCode: 32, text: " " },
};

/** Parse and check the steps argument; undefined when it is not a list of {@link BareStep}. */
export function parseBareSteps(text: string): BareStep[] | undefined {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (!Array.isArray(raw) || raw.length > 200) return undefined;
  const str = (v: unknown) => typeof v === "string" && v.length <= 4096;
  const num = (v: unknown) => typeof v === "number" && Number.isFinite(v) && v >= 0 && v <= 60_000;
  const ok = raw.every((s: Record<string, unknown>) => {
    switch (s?.kind) {
      case "open":
        return str(s.path) && String(s.path).startsWith("/");
      case "type":
        return str(s.text);
      case "press":
        return Array.isArray(s.keys) && s.keys.length === 1 && typeof s.keys[0] === "string" && s.keys[0] in KEYS;
      case "wait":
        return num(s.ms);
      case "waitForText":
        return str(s.text) && num(s.timeoutMs);
      case "screenshot":
        return s.label === undefined || str(s.label);
      default:
        return false;
    }
  });
  return ok ? (raw as BareStep[]) : undefined;
}

/** What the run did: observations made, bytes of the last PNG. */
interface BareTally {
  observations: number;
  bytes: number;
}

/** Run the steps over CDP on `page`; throws on a step that cannot complete. */
async function runBareSteps(cdp: CdpPipe, page: GuestPage, origin: string, steps: readonly BareStep[], tally: BareTally): Promise<void> {
  const sid = page.sessionId;
  const observe = async (): Promise<{ url: string; text: string }> => {
    const [shot, facts] = await Promise.all([
      cdp.send("Page.captureScreenshot", { format: "png" }, sid) as Promise<{ data: string }>,
      page.facts().catch(() => ({ url: "", text: "" })),
    ]);
    tally.observations++;
    tally.bytes = Buffer.from(shot.data, "base64").length;
    return facts;
  };
  const until = async (done: (f: { url: string; text: string }) => boolean, timeoutMs: number, what: string) => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      if (done(await observe())) return;
      if (Date.now() > deadline) throw new Error(`${what} did not happen within ${timeoutMs} ms`);
      await Bun.sleep(POLL_MS);
    }
  };
  for (const step of steps) {
    switch (step.kind) {
      case "open": {
        const target = new URL(`${origin}${step.path}`).href;
        await cdp.send("Page.navigate", { url: target }, sid);
        // A headless capture fails while the new document is not painted yet (the seat's
        // Enter waits for the load the same way, in settleNavigation).
        await page.waitForLoad(target, 10_000);
        await until((f) => f.url === target, 10_000, `open ${step.path}`);
        break;
      }
      case "type":
        await cdp.send("Input.insertText", { text: step.text }, sid);
        break;
      case "press": {
        const k = KEYS[step.keys[0]!]!;
        await cdp.send("Input.dispatchKeyEvent", { type: k.text ? "keyDown" : "rawKeyDown", ...k }, sid);
        await cdp.send("Input.dispatchKeyEvent", { type: "keyUp", key: k.key, code: k.code, windowsVirtualKeyCode: k.windowsVirtualKeyCode }, sid);
        break;
      }
      case "wait":
        await Bun.sleep(step.ms);
        break;
      case "waitForText":
        await until((f) => f.text.includes(step.text), step.timeoutMs, "waitForText");
        break;
      case "screenshot":
        await observe();
        break;
    }
  }
  await observe();
}

/** Run the floor; resolves with the process exit code (0 ok, 1 usage, 2 failure). */
export async function runGuestBareBench(args: string[], io = GUEST_IO_DIR): Promise<number> {
  const [url, w, h, stepsJson] = args;
  const width = Number(w);
  const height = Number(h);
  const steps = parseBareSteps(stepsJson ?? "");
  const port = /^http:\/\/127\.0\.0\.1:([0-9]+)\/$/.exec(url ?? "")?.[1];
  if (!url || !port || !Number.isInteger(width) || !Number.isInteger(height) || !steps) {
    process.stderr.write("usage: humanish guest bench-bare <http://127.0.0.1:PORT/> <width> <height> <steps JSON>\ncode: HUMANISH_USAGE\n");
    return 1;
  }
  const t0 = performance.now();
  const profile = mkdtempSync("/tmp/humanish-bench-profile-");
  let forwarder: Forwarder | undefined;
  let chromium: ReturnType<typeof spawn> | undefined;
  const done = (record: Record<string, unknown>) =>
    writeFileSync(`${io}/bare-done.json`, JSON.stringify({ schema: "humanish.bare-bench.v1", ...record }), { mode: 0o600 });
  try {
    forwarder = await startForwarder({ host: "127.0.0.1", port: Number(port) }, { path: `${io}/app.sock` });
    chromium = spawn(
      CHROMIUM_BINARY,
      ["--headless=new", "--remote-debugging-pipe", `--user-data-dir=${profile}`, "--no-first-run", "--disable-gpu", `--window-size=${width},${height}`, url],
      { env: { PATH: "/usr/bin:/bin", HOME: profile, TMPDIR: "/tmp", LANG: "C.UTF-8" }, stdio: ["ignore", "ignore", "ignore", "pipe", "pipe"] },
    );
    const cdp = new CdpPipe(chromium.stdio[3] as Writable, chromium.stdio[4] as Readable);
    const page = await GuestPage.attach(cdp);
    await page.waitForLoad(url);
    const bootMs = performance.now() - t0;
    writeFileSync(`${io}/bare-ready.json`, JSON.stringify({ bootMs }), { mode: 0o600 });
    const tally: BareTally = { observations: 0, bytes: 0 };
    const t1 = performance.now();
    await runBareSteps(cdp, page, new URL(url).origin, steps, tally);
    done({ ok: true, ...tally, bootMs, stepsMs: performance.now() - t1 });
    // Chromium stays up until the host has read the container's stats (a seat's is read while it lives too).
    await new Promise<void>((resolve) => process.once("SIGTERM", () => resolve()));
    return 0;
  } catch (e) {
    done({ ok: false, error: errorMessage(e) });
    process.stderr.write(`humanish guest bench-bare failed: ${errorMessage(e)}\n`);
    return 2;
  } finally {
    chromium?.kill("SIGKILL");
    await forwarder?.close().catch(() => undefined);
    rmSync(profile, { recursive: true, force: true });
  }
}

/**
 * Real headless Chromium (Debian's `chromium`) for the `/web` test, driven over the DevTools
 * protocol (CDP over WebSocket).
 *
 * Chromium keeps its sandbox: running as root would need the sandbox-weakening switch, so the
 * test runs the browser as the non-root user `nobody` (via `runuser`) with a fresh
 * `--user-data-dir` it owns. When the tests themselves run as a non-root user, Chromium is
 * started directly as that user.
 */
import { chmodSync, chownSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { requireBinary, requireChromium } from "../support/prereq.ts";

export interface Browser {
  /** Evaluates an expression in the page and returns its JSON value. */
  evaluate<T = unknown>(expression: string): Promise<T>;
  /** Polls `expression` until it is truthy. */
  waitFor(expression: string, ms?: number): Promise<void>;
  close(): Promise<void>;
}

/** Launches Chromium on `url` and attaches to the page. */
export async function launchChromium(url: string): Promise<Browser> {
  const chromium = requireChromium();
  const dir = mkdtempSync(join(tmpdir(), "humanish-env-chromium-"));
  const asRoot = process.getuid?.() === 0;
  const argv = [
    chromium,
    "--headless",
    `--user-data-dir=${join(dir, "profile")}`,
    "--remote-debugging-port=0",
    "--disable-gpu",
    "--no-first-run",
    "--no-default-browser-check",
    "about:blank",
  ];
  let cmd = argv;
  if (asRoot) {
    const runuser = requireBinary("runuser", "util-linux");
    chownSync(dir, 65534, 65534);
    chmodSync(dir, 0o700);
    cmd = [runuser, "-u", "nobody", "--", "env", `HOME=${dir}`, ...argv];
  }
  const proc = Bun.spawn(cmd, { stdout: "ignore", stderr: "pipe", env: { ...process.env, HOME: dir } });
  const reader = proc.stderr.getReader();
  let text = "";
  let wsUrl: string | undefined;
  const deadline = Date.now() + 30_000;
  while (!wsUrl && Date.now() < deadline) {
    const { value, done } = await reader.read();
    if (done) break;
    text += new TextDecoder().decode(value);
    wsUrl = /DevTools listening on (ws:\/\/\S+)/.exec(text)?.[1];
  }
  // Keep draining stderr so Chromium never blocks on a full pipe.
  void (async () => {
    for (;;) if ((await reader.read().catch(() => ({ done: true }))).done) return;
  })();
  if (!wsUrl) {
    proc.kill("SIGKILL");
    rmSync(dir, { recursive: true, force: true });
    throw new Error(`Chromium did not print its DevTools URL: ${text.slice(-2000)}`);
  }

  const ws = new WebSocket(wsUrl);
  await new Promise<void>((resolve, reject) => {
    ws.onopen = () => resolve();
    ws.onerror = () => reject(new Error("CDP WebSocket failed"));
  });
  let nextId = 1;
  const pending = new Map<number, { resolve: (v: any) => void; reject: (e: Error) => void }>();
  ws.onmessage = (ev) => {
    const msg = JSON.parse(String(ev.data));
    if (msg.id !== undefined && pending.has(msg.id)) {
      const p = pending.get(msg.id)!;
      pending.delete(msg.id);
      if (msg.error) p.reject(new Error(`CDP: ${msg.error.message}`));
      else p.resolve(msg.result);
    }
  };
  const send = (method: string, params: Record<string, unknown> = {}, sessionId?: string): Promise<any> =>
    new Promise((resolve, reject) => {
      const id = nextId++;
      pending.set(id, { resolve, reject });
      ws.send(JSON.stringify({ id, method, params, ...(sessionId ? { sessionId } : {}) }));
    });

  const { targetId } = await send("Target.createTarget", { url });
  const { sessionId } = await send("Target.attachToTarget", { targetId, flatten: true });
  const evaluate = async <T>(expression: string): Promise<T> => {
    const r = await send("Runtime.evaluate", { expression, returnByValue: true, awaitPromise: true }, sessionId);
    if (r.exceptionDetails) throw new Error(`page threw: ${JSON.stringify(r.exceptionDetails).slice(0, 500)}`);
    return r.result.value as T;
  };
  return {
    evaluate,
    async waitFor(expression, ms = 30_000) {
      const end = Date.now() + ms;
      while (Date.now() < end) {
        try {
          if (await evaluate<boolean>(`Boolean(${expression})`)) return;
        } catch {
          // the page may still be loading
        }
        await Bun.sleep(100);
      }
      throw new Error(
        `timed out waiting for ${expression}; output: ${await evaluate<string>("document.getElementById('output')?.textContent ?? '(no page)'").catch(() => "?")}`,
      );
    },
    async close() {
      try {
        await send("Browser.close");
      } catch {
        // already gone
      }
      ws.close();
      const exited = await Promise.race([proc.exited.then(() => true), Bun.sleep(5_000).then(() => false)]);
      if (!exited) proc.kill("SIGKILL");
      await proc.exited;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

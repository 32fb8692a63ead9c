/**
 * One E2B desktop: created through `@e2b/desktop`, provisioned with Chromium at the app, and
 * handed out as a browser-control executor. Released by ./release.ts.
 *
 *   create     `Sandbox.create(template, opts)` — the two-argument form (the one-argument form
 *              ignores `template` and `display`) — with the device's resolution, E2B's own
 *              timeout as a hard lifetime (`lifecycle.onTimeout: kill`), and metadata from a
 *              positive allowlist (run, seat, lab ids: no paths, no host names). The sandbox id
 *              is handed to `onCreated` the moment it exists, before the SDK starts Xvfb and XFCE
 *              in it (the subclass hook below), so even a desktop whose start fails is released
 *              by its exact id.
 *   provision  a private 0700 directory; the launcher and facts programs; for a served app its
 *              files and a loopback static server inside the desktop; Chromium through the
 *              launcher; then wait until the page facts show the app's origin.
 *              Chromium's sandbox is then checked positively (its renderers run in namespaces
 *              of their own).
 *   live view  only when the owner asks for it: the SDK's noVNC stream with `requireAuth: true`;
 *              the URL (which carries the auth key) goes to the owner's callback only, never to a
 *              log, the bundle or stdout.
 */
import { randomUUID } from "node:crypto";
import { CommandExitError, Sandbox } from "@e2b/desktop";
import { HumanishError } from "../../errors.ts";
import { FACTS_PY, LAUNCHER_PY, parseFacts } from "./chromium.ts";
import { createE2BDesktopExecutor, type DesktopShell, type E2BDesktopExecutor } from "./executor.ts";
import { shellCommand } from "./plan.ts";
import type { AppPlacement } from "./reach.ts";

/** How to reach E2B (the key by value here only; it is never logged or written). */
export interface E2BConnection {
  apiKey: string;
  apiUrl?: string;
  sandboxUrl?: string;
  domain?: string;
}

/** The only metadata keys a desktop carries. */
export interface DesktopMetadata {
  "humanish.run": string;
  "humanish.seat": string;
  "humanish.lab": string;
}

/** Options of {@link openDesktop}. Units: px, ms. */
export interface OpenDesktopOptions {
  conn: E2BConnection;
  template: string;
  width: number;
  height: number;
  /** E2B's hard lifetime of the sandbox. */
  timeoutMs: number;
  metadata: DesktopMetadata;
  app: AppPlacement;
  /** For a served app: its files (URL path without leading `/` → bytes). */
  appFiles?: readonly { path: string; bytes: Uint8Array }[];
  /** Receives the exact sandbox id before anything runs in it; a throw stops the create. */
  onCreated: (id: string) => Promise<void>;
  /** Receives the live-view URL when given (the explicit flag); never called otherwise. */
  onLiveView?: (url: string) => void;
  signal?: AbortSignal;
}

/** A provisioned desktop. */
export interface E2BDesktop {
  id: string;
  executor: E2BDesktopExecutor;
  /** create → Chromium showing the app, ms. */
  startMs: number;
  /** The Chromium binary found in the template. */
  browser: string;
  liveView: boolean;
  /** What E2B allocated (from `getInfo`; its `network` field is never read), or undefined when unreported. */
  resources?: { cpuCount: number; memoryMB: number };
}

/** Deadline of Chromium showing the app, ms. */
const BROWSER_READY_MS = 60_000;
/** Deadline of the in-desktop static server answering, ms. */
const SERVER_READY_MS = 20_000;

/** The SDK sandbox behind the executor's two needs. */
export function sandboxShell(sbx: Sandbox): DesktopShell {
  return {
    async run(cmd, timeoutMs) {
      const r = await sbx.commands.run(cmd, { timeoutMs, requestTimeoutMs: timeoutMs + 5_000 });
      return { stdout: r.stdout };
    },
    async read(path, maxBytes) {
      const bytes = await sbx.files.read(path, { format: "bytes" });
      if (bytes.byteLength > maxBytes) throw new Error(`${path} is over ${maxBytes} bytes`);
      return bytes;
    },
  };
}

async function waitFor(what: string, ms: number, signal: AbortSignal | undefined, probe: () => Promise<boolean>): Promise<void> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (signal?.aborted) throw new HumanishError("HUMANISH_E2B_DESKTOP_ABORTED", `${what}: the study was stopped`, { next: "rerun the study" });
    if (await probe().catch(() => false)) return;
    await Bun.sleep(300);
  }
  throw new HumanishError("HUMANISH_E2B_DESKTOP_PROVISION_FAILED", `${what} did not happen within ${ms} ms`, {
    next: "check that the E2B template has python3 and chromium (see doctor --lab), then rerun",
  });
}

function failed(step: string, e: unknown): HumanishError {
  const detail = e instanceof CommandExitError ? `exit ${e.exitCode}` : e instanceof Error ? `${e.name}: ${e.message.slice(0, 200)}` : String(e);
  return new HumanishError("HUMANISH_E2B_DESKTOP_PROVISION_FAILED", `E2B desktop ${step} failed (${detail})`, {
    next: "check the template (python3, chromium, scrot, xdotool) with doctor --lab, then rerun",
    cause: e,
  });
}

/**
 * Create and provision one desktop (see the module comment).
 * @throws HumanishError `HUMANISH_E2B_DESKTOP_CREATE_FAILED` (the API refused or the desktop did
 *   not start), `HUMANISH_E2B_DESKTOP_PROVISION_FAILED`, `HUMANISH_E2B_DESKTOP_ABORTED`. The id,
 *   when one exists, was already handed to `onCreated`: the caller releases it.
 */
export async function openDesktop(o: OpenDesktopOptions): Promise<E2BDesktop> {
  const started = performance.now();
  const sbx = await createRecordedSandbox(o);
  const shell = sandboxShell(sbx);
  const resources = await sbx
    .getInfo({ requestTimeoutMs: 20_000 })
    .then((i) => (Number.isFinite(i.cpuCount) && Number.isFinite(i.memoryMB) ? { cpuCount: i.cpuCount, memoryMB: i.memoryMB } : undefined))
    .catch(() => undefined);
  const { dir, paths, browser } = await setUpDesktop(sbx, shell);
  if (o.app.kind === "served") await serveInDesktop(sbx, shell, dir, o.app.url, o.appFiles ?? [], o.signal);
  await launchChromium(sbx, o, { dir, socket: paths.socket, browser });
  const origin = o.app.url.origin;
  await waitFor("Chromium showing the app", BROWSER_READY_MS, o.signal, async () => {
    const f = parseFacts((await shell.run(`${shellCommand(["python3", "-I", paths.factsPy, paths.socket])} || true`, 15_000)).stdout);
    return f !== undefined && f !== "other-tabs" && new URL(f.url).origin === origin;
  });
  await verifyBrowserSandbox(shell);
  const liveView = o.onLiveView ? await startLiveView(sbx, o.onLiveView) : false;
  return {
    id: sbx.sandboxId,
    executor: createE2BDesktopExecutor({ shell, paths, width: o.width, height: o.height }),
    startMs: performance.now() - started,
    browser,
    liveView,
    ...(resources ? { resources } : {}),
  };
}

/**
 * Creates the desktop sandbox (killed on its timeout). The SDK starts Xvfb and XFCE inside
 * `create` before returning the sandbox; a hook on its start sees the id first, so a failed start
 * still leaves the exact id with the caller (`onCreated`).
 * @throws HumanishError `HUMANISH_E2B_DESKTOP_CREATE_FAILED`, or onCreated's own HumanishError
 */
async function createRecordedSandbox(o: OpenDesktopOptions): Promise<Sandbox> {
  const onCreated = o.onCreated;
  const Recorded = class extends Sandbox {
    protected override async _start(display: string, opts?: Parameters<Sandbox["_start"]>[1]): Promise<void> {
      await onCreated(this.sandboxId);
      return super._start(display, opts);
    }
  };
  try {
    return await Recorded.create(o.template, {
      apiKey: o.conn.apiKey,
      ...(o.conn.apiUrl ? { apiUrl: o.conn.apiUrl } : {}),
      ...(o.conn.sandboxUrl ? { sandboxUrl: o.conn.sandboxUrl } : {}),
      ...(o.conn.domain ? { domain: o.conn.domain } : {}),
      debug: false,
      timeoutMs: o.timeoutMs,
      lifecycle: { onTimeout: "kill" },
      metadata: { ...o.metadata },
      resolution: [o.width, o.height],
      dpi: 96,
      display: ":0",
      requestTimeoutMs: 60_000,
    });
  } catch (e) {
    if (e instanceof HumanishError) throw e;
    throw new HumanishError(
      "HUMANISH_E2B_DESKTOP_CREATE_FAILED",
      `E2B desktop create failed (${e instanceof Error ? `${e.name}: ${e.message.slice(0, 200)}` : String(e)})`,
      {
        next: "check E2B_API_KEY, the template name and the account's concurrency limit, then rerun",
        cause: e,
      },
    );
  }
}

/**
 * Makes the desktop's private working directory (mode 0700, with a Chromium profile), writes the
 * launcher and the facts probe into it, and finds the Chromium binary.
 * @throws HumanishError `HUMANISH_E2B_DESKTOP_PROVISION_FAILED` (step `setup`)
 */
async function setUpDesktop(
  sbx: Sandbox,
  shell: DesktopShell,
): Promise<{ dir: string; paths: { dir: string; socket: string; factsPy: string }; browser: string }> {
  const dir = `/tmp/humanish-${randomUUID()}`;
  const paths = { dir, socket: `${dir}/facts.sock`, factsPy: `${dir}/facts.py` };
  try {
    await shell.run(shellCommand(["install", "-d", "-m", "700", dir, `${dir}/profile`]), 15_000);
    await sbx.files.write([
      { path: `${dir}/launcher.py`, data: LAUNCHER_PY },
      { path: paths.factsPy, data: FACTS_PY },
    ]);
    const browser = (
      await shell.run("command -v chromium || command -v chromium-browser || command -v google-chrome-stable || command -v google-chrome", 15_000)
    ).stdout.trim();
    if (!browser.startsWith("/")) throw new Error("no chromium binary on PATH");
    return { dir, paths, browser };
  } catch (e) {
    throw failed("setup", e);
  }
}

/**
 * Starts the launcher in the background: Chromium (`browser`) at the app, the window the desktop's
 * size, its facts on `socket`.
 * @throws HumanishError `HUMANISH_E2B_DESKTOP_PROVISION_FAILED` (step `Chromium launch`)
 */
async function launchChromium(sbx: Sandbox, o: OpenDesktopOptions, at: { dir: string; socket: string; browser: string }): Promise<void> {
  try {
    const launch = shellCommand([
      "python3",
      "-I",
      `${at.dir}/launcher.py`,
      at.socket,
      at.browser,
      `${at.dir}/profile`,
      String(o.width),
      String(o.height),
      o.app.url.href,
    ]);
    const handle = await sbx.commands.run(launch, { background: true, timeoutMs: 0 });
    await handle.disconnect();
  } catch (e) {
    throw failed("Chromium launch", e);
  }
}

/**
 * Starts the desktop's view-only live stream with authentication and hands its URL (a secret)
 * to `onLiveView`; true once started.
 * @throws HumanishError `HUMANISH_E2B_DESKTOP_PROVISION_FAILED` (step `live view`)
 */
async function startLiveView(sbx: Sandbox, onLiveView: (url: string) => void): Promise<boolean> {
  try {
    await sbx.stream.start({ requireAuth: true });
    onLiveView(sbx.stream.getUrl({ authKey: sbx.stream.getAuthKey(), viewOnly: true }));
    return true;
  } catch (e) {
    throw failed("live view", e);
  }
}

/** Upload a served app's files and start a loopback static server inside the desktop. */
async function serveInDesktop(
  sbx: Sandbox,
  shell: DesktopShell,
  dir: string,
  url: URL,
  files: readonly { path: string; bytes: Uint8Array }[],
  signal?: AbortSignal,
) {
  if (files.length === 0) throw failed("app upload", new Error("the served app has no files"));
  try {
    await sbx.files.write(
      files.map((f) => ({
        path: `${dir}/app/${f.path}`,
        data: f.bytes.buffer.slice(f.bytes.byteOffset, f.bytes.byteOffset + f.bytes.byteLength) as ArrayBuffer,
      })),
    );
    const serve = shellCommand(["python3", "-I", "-m", "http.server", "--bind", "127.0.0.1", "--directory", `${dir}/app`, url.port || "80"]);
    const handle = await sbx.commands.run(`${serve} >/dev/null 2>&1`, { background: true, timeoutMs: 0 });
    await handle.disconnect();
  } catch (e) {
    throw failed("app upload", e);
  }
  const probe = shellCommand(["python3", "-I", "-c", "import sys, urllib.request; urllib.request.urlopen(sys.argv[1], timeout=2).read(1)", url.origin]);
  await waitFor("the app served inside the desktop", SERVER_READY_MS, signal, async () => {
    await shell.run(probe, 10_000);
    return true;
  });
}

/**
 * Positive evidence that Chromium's sandbox is on: its renderer processes live in a user or PID
 * namespace of their own (the namespace sandbox, or the setuid sandbox's PID namespace), not the
 * launcher's. The probe is a fixed script; its only output is `sandboxed` or `unsandboxed`.
 * @throws HumanishError `HUMANISH_E2B_DESKTOP_BROWSER_UNSANDBOXED` when no renderer is isolated.
 */
async function verifyBrowserSandbox(shell: DesktopShell): Promise<void> {
  const probe = [
    "u=$(readlink /proc/self/ns/user); p=$(readlink /proc/self/ns/pid)",
    "for r in $(pgrep -f -- '--type=renderer'); do",
    "  ru=$(readlink /proc/$r/ns/user 2>/dev/null) || continue; rp=$(readlink /proc/$r/ns/pid 2>/dev/null) || continue",
    '  if [ "$ru" != "$u" ] || [ "$rp" != "$p" ]; then echo sandboxed; exit 0; fi',
    "done; echo unsandboxed",
  ].join("\n");
  let verdict = "";
  try {
    verdict = (await shell.run(probe, 15_000)).stdout.trim();
  } catch (e) {
    throw failed("browser sandbox check", e);
  }
  if (verdict !== "sandboxed")
    throw new HumanishError("HUMANISH_E2B_DESKTOP_BROWSER_UNSANDBOXED", "Chromium on the E2B desktop shows no renderer in a sandbox namespace of its own", {
      next: "use a desktop template whose Chromium can sandbox itself (user namespaces or the setuid sandbox); humanish never switches Chromium's sandbox off",
    });
}

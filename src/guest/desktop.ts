/**
 * Boot of the guest desktop: an
 * Xauthority cookie, `Xvfb` at the device geometry, Chromium with a fresh profile and
 * `--remote-debugging-pipe` (its own sandbox on — never disabled), the single page attached over
 * CDP, the owner's initial navigation, a proof that Chromium's renderers are sandboxed, and the
 * X connection that fences native input (./xfence.ts).
 * `close()` stops everything this module started, by the child handles it owns.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync, readlinkSync } from "node:fs";
import type { Readable, Writable } from "node:stream";
import { HumanishError } from "../errors.ts";
import { CdpPipe } from "./cdp.ts";
import { createGuestExecutor, type GuestExecutor } from "./executor.ts";
import { checkNativeEnv, type NativeEnv, runHelper } from "./native.ts";
import { GuestPage } from "./page.ts";
import { XFence } from "./xfence.ts";

/** Chromium's real binary in Debian (the `/usr/bin/chromium` wrapper script is not used). */
export const CHROMIUM_BINARY = "/usr/lib/chromium/chromium";

/** Options of {@link bootDesktop}. */
export interface DesktopBootOptions {
  /** Screen size in px (device preset geometry). */
  width: number;
  height: number;
  /** URL the owner opens before handing the channel over (loopback app). */
  initialUrl: string;
  /** Writable private home (tmpfs), e.g. `/home/humanish`. */
  home: string;
  /** Display number, default 0. */
  display?: number;
  /** Called once when the desktop becomes unusable (a child exited, the executor ended). */
  onTerminal?: (why: string) => void;
}

/** Proof that Chromium's sandbox is on, read from the renderer processes' /proc status. */
export interface SandboxProof {
  /** Renderer processes inspected. */
  renderers: number;
  /** Each renderer runs under seccomp-BPF filter mode (Seccomp: 2). */
  seccompFilter: boolean;
  /** Each renderer lives in its own PID namespace (NSpid has ≥ 2 entries). */
  pidNamespace: boolean;
  /** Each renderer lives in a network namespace different from the browser's. */
  netNamespace: boolean;
}

/** A booted desktop. */
export interface GuestDesktop {
  executor: GuestExecutor;
  page: GuestPage;
  native: NativeEnv;
  sandbox: SandboxProof;
  /** Stop Chromium and Xvfb (idempotent; ≤ 4 s). */
  close(): Promise<void>;
}

function bootError(phase: string, detail: string, cause?: unknown): HumanishError {
  return new HumanishError("HUMANISH_GUEST_BOOT_FAILED", `guest desktop ${phase}: ${detail}`, {
    next: "inspect the guest container log; rebuild the guest image with `humanish runtime setup`",
    details: { phase },
    ...(cause === undefined ? {} : { cause }),
  });
}

/** Inspect every Chromium renderer's /proc status (the proof that every renderer runs inside Chromium's sandbox). */
export function inspectRendererSandbox(browserPid: number): SandboxProof {
  const ownNet = readlinkSafe(`/proc/${browserPid}/ns/net`);
  let renderers = 0;
  let seccompFilter = true;
  let pidNamespace = true;
  let netNamespace = true;
  for (const name of readdirSync("/proc")) {
    if (!/^[0-9]+$/.test(name)) continue;
    let cmdline: string;
    try {
      cmdline = readFileSync(`/proc/${name}/cmdline`, "utf8");
    } catch {
      continue;
    }
    if (!cmdline.startsWith(CHROMIUM_BINARY) || !cmdline.includes("--type=renderer")) continue;
    let status: string;
    try {
      status = readFileSync(`/proc/${name}/status`, "utf8");
    } catch {
      continue;
    }
    renderers++;
    if (!/^Seccomp:\s*2$/m.test(status)) seccompFilter = false;
    const nspid = /^NSpid:\s*(.+)$/m.exec(status)?.[1]?.trim().split(/\s+/) ?? [];
    if (nspid.length < 2) pidNamespace = false;
    const net = readlinkSafe(`/proc/${name}/ns/net`);
    if (net === undefined || net === ownNet) netNamespace = false;
  }
  return { renderers, seccompFilter: renderers > 0 && seccompFilter, pidNamespace: renderers > 0 && pidNamespace, netNamespace: renderers > 0 && netNamespace };
}

function readlinkSafe(path: string): string | undefined {
  try {
    return readlinkSync(path);
  } catch {
    return undefined;
  }
}

/**
 * Boot Xvfb + Chromium and return the executor.
 * @throws HumanishError `HUMANISH_GUEST_BOOT_FAILED` (details.phase ∈ layout, xauthority,
 *   display, browser, navigation, sandbox, fence); everything started so far is stopped first.
 */
export async function bootDesktop(opts: DesktopBootOptions): Promise<GuestDesktop> {
  const display = `:${opts.display ?? 0}`;
  const { width, height, home } = opts;
  const children: ChildProcess[] = [];
  let closing = false;
  let terminalFired = false;
  let fence: XFence | undefined;
  const fireTerminal = (why: string) => {
    if (closing || terminalFired) return;
    terminalFired = true;
    opts.onTerminal?.(why);
  };
  const close = async () => {
    closing = true;
    fence?.close();
    for (const c of children.reverse()) {
      if (c.exitCode === null && c.signalCode === null) {
        c.kill("SIGTERM");
        const exited = await Promise.race([new Promise((r) => c.once("exit", r)), Bun.sleep(2_000).then(() => "timeout")]);
        if (exited === "timeout") c.kill("SIGKILL");
      }
    }
  };
  try {
    const runtimeDir = `${home}/.humanish-runtime`;
    try {
      for (const d of [runtimeDir, `${home}/.cache`, `${home}/.config`, `${home}/profile`]) mkdirSync(d, { recursive: true, mode: 0o700 });
    } catch (e) {
      throw bootError("layout", "cannot create the private directories", e);
    }
    const xauthority = `${runtimeDir}/Xauthority`;
    const native: NativeEnv = checkNativeEnv({ display, xauthority, home: runtimeDir });
    try {
      await Bun.write(xauthority, "");
      await runHelper(native, ["/usr/bin/xauth", "-q", "-f", xauthority, "add", display, ".", randomBytes(16).toString("hex")], { timeoutMs: 2_000 });
    } catch (e) {
      throw bootError("xauthority", "xauth failed", e);
    }
    const baseEnv = {
      PATH: "/usr/bin:/bin",
      HOME: home,
      USER: "humanish",
      LOGNAME: "humanish",
      LANG: "C.UTF-8",
      LC_ALL: "C.UTF-8",
      DISPLAY: display,
      XAUTHORITY: xauthority,
      XDG_RUNTIME_DIR: runtimeDir,
      XDG_CACHE_HOME: `${home}/.cache`,
      XDG_CONFIG_HOME: `${home}/.config`,
      TMPDIR: "/tmp",
    };
    const xvfb = spawn("/usr/bin/Xvfb", [display, "-screen", "0", `${width}x${height}x24`, "-nolisten", "tcp", "-auth", xauthority, "-nocursor"], {
      env: baseEnv,
      stdio: ["ignore", "ignore", "ignore"],
    });
    children.push(xvfb);
    xvfb.once("exit", () => fireTerminal("xvfb_exited"));
    const sock = `/tmp/.X11-unix/X${opts.display ?? 0}`;
    const displayDeadline = Date.now() + 10_000;
    while (!existsSync(sock)) {
      if (xvfb.exitCode !== null || Date.now() > displayDeadline) throw bootError("display", "Xvfb did not start");
      await Bun.sleep(50);
    }
    const chromium = spawn(
      CHROMIUM_BINARY,
      [
        "--remote-debugging-pipe",
        `--user-data-dir=${home}/profile`,
        "--no-first-run",
        "--no-default-browser-check",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-default-apps",
        "--disable-breakpad",
        // Memory per seat: the WebUI omnibox popups keep a preloaded renderer of their own (about
        // 60 MiB), and a spare renderer waits for a navigation a seat on one origin never makes
        // (about 20 MiB). Without them the omnibox falls back to its native popup.
        "--disable-features=Translate,MediaRouter,OptimizationHints,AutofillServerCommunication,WebUIOmniboxPopup,WebUIOmniboxAimPopup,SpareRendererForSitePerProcess",
        "--password-store=basic",
        "--force-device-scale-factor=1",
        "--disable-gpu",
        `--window-position=0,0`,
        `--window-size=${width},${height}`,
        opts.initialUrl,
      ],
      { env: baseEnv, stdio: ["ignore", "ignore", "ignore", "pipe", "pipe"] },
    );
    children.push(chromium);
    chromium.once("exit", () => fireTerminal("chromium_exited"));
    const cdp = new CdpPipe(chromium.stdio[3] as Writable, chromium.stdio[4] as Readable);
    let page: GuestPage;
    try {
      page = await GuestPage.attach(cdp);
    } catch (e) {
      throw bootError("browser", "Chromium did not open its page over the debugging pipe", e);
    }
    try {
      await page.waitForLoad(opts.initialUrl);
    } catch (e) {
      throw bootError("navigation", "the app did not load", e);
    }
    let sandbox = inspectRendererSandbox(chromium.pid!);
    for (let i = 0; i < 20 && sandbox.renderers === 0; i++) {
      await Bun.sleep(100);
      sandbox = inspectRendererSandbox(chromium.pid!);
    }
    if (!sandbox.seccompFilter || !sandbox.pidNamespace || !sandbox.netNamespace) {
      throw bootError("sandbox", `Chromium's renderer sandbox is not active (${JSON.stringify(sandbox)})`);
    }
    try {
      fence = await XFence.open(opts.display ?? 0, xauthority);
    } catch (e) {
      throw bootError("fence", "Chromium's window does not answer the input fence", e);
    }
    const xfence = fence;
    const executor = createGuestExecutor({
      width,
      height,
      native,
      page,
      fence: () => xfence.fence(),
      onTerminal: () => fireTerminal("executor_terminal"),
    });
    return { executor, page, native, sandbox, close };
  } catch (e) {
    await close();
    throw e;
  }
}

/**
 * A page of real headless Debian Chromium driven over the DevTools pipe
 * (`--remote-debugging-pipe`), its sandbox kept: as root Chromium runs as `nobody` through
 * `setpriv`, with a fresh profile in a directory that user owns. Bounded by `timeout 600`.
 */
import { spawn } from "node:child_process";
import { chmodSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Readable, Writable } from "node:stream";
import { CdpPipe } from "../../src/guest/cdp.ts";
import { procStat, USER_HZ } from "../../src/proc.ts";
import { processGroupMembers } from "../../src/runtime/host-process.ts";
import { requireBinary, requireChromium } from "./prereq.ts";

/**
 * CPU time, ms, of every live process in process group `pgid` (the members
 * {@link processGroupMembers} finds), with the children each has reaped (utime + stime + cutime +
 * cstime of `/proc/<pid>/stat`).
 */
export function processGroupCpuMs(pgid: number): number {
  let ticks = 0;
  // A member that ended since it was listed adds nothing.
  for (const pid of processGroupMembers(pgid)) ticks += procStat(pid)?.cpuTicks ?? 0;
  return (ticks * 1000) / USER_HZ;
}

/**
 * Headless Chromium on `url`; returns an evaluator and a navigator in its page, and `cpuMs()`,
 * the CPU time its processes have used so far (ms). `cleanups` gets its teardown.
 */
export async function openCdpPage(url: string, cleanups: (() => void)[]) {
  const dir = mkdtempSync(join(tmpdir(), "humanish-observer-chromium-"));
  chmodSync(dir, 0o777);
  const asUser = process.getuid?.() === 0 ? [requireBinary("setpriv", "util-linux"), "--reuid=nobody", "--regid=nogroup", "--clear-groups", "--"] : [];
  const cmd = [
    ...asUser,
    requireChromium(),
    "--headless",
    "--disable-gpu",
    "--no-first-run",
    "--remote-debugging-pipe",
    `--user-data-dir=${join(dir, "profile")}`,
    url,
  ];
  // A process group of its own, killed whole: a KILL of `timeout` alone leaves Chromium running
  // with the pipes open, which keeps the caller's event loop (a bench, a test file) alive forever.
  const child = spawn("timeout", ["600", ...cmd], {
    stdio: ["ignore", "ignore", "pipe", "pipe", "pipe"],
    env: { HOME: dir, PATH: process.env.PATH ?? "/usr/bin:/bin" },
    detached: true,
  });
  cleanups.push(() => {
    try {
      if (child.pid) process.kill(-child.pid, "SIGKILL");
    } catch {
      // the group is already gone
    }
    rmSync(dir, { recursive: true, force: true });
  });
  const cdp = new CdpPipe(child.stdio[3] as Writable, child.stdio[4] as Readable);
  let sessionId: string | undefined;
  for (;;) {
    const { targetInfos } = (await cdp.send("Target.getTargets")) as { targetInfos: { targetId: string; type: string; url: string }[] };
    const page = targetInfos.find((t) => t.type === "page");
    if (page) {
      sessionId = String((await cdp.send("Target.attachToTarget", { targetId: page.targetId, flatten: true })).sessionId);
      break;
    }
    await Bun.sleep(100);
  }
  const evaluate = async <T>(expr: string): Promise<T> => {
    const r = (await cdp.send("Runtime.evaluate", { expression: expr, returnByValue: true, awaitPromise: true }, sessionId)) as { result: { value: T } };
    return r.result.value;
  };
  const navigate = (to: string) => cdp.send("Page.navigate", { url: to }, sessionId);
  const cpuMs = () => (child.pid ? processGroupCpuMs(child.pid) : 0);
  return { evaluate, navigate, cpuMs };
}

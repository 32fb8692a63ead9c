/**
 * The app-server child: its identity (pid plus start time from /proc, so a recycled pid is
 * never mistaken for it) and its bounded closure. Only the direct child is ever signalled.
 */
import type { Subprocess } from "bun";
import { hasEnded, procStat } from "../../proc.ts";

/** A process identity that survives pid reuse: pid plus its start time in clock ticks since boot. */
export interface ChildIdentity {
  pid: number;
  startTime: string;
}

/** Start time (field 22 of `/proc/<pid>/stat`, clock ticks since boot), or null when the process is gone. */
export function procStartTime(pid: number): string | null {
  const stat = procStat(pid);
  return stat && !hasEnded(stat) ? stat.startTicks : null;
}

/** True while exactly that process (same pid AND start time) is alive. */
export function isAlive(id: ChildIdentity): boolean {
  return procStartTime(id.pid) === id.startTime;
}

/** Waits up to `ms` for the promise; true when it settled in time. */
async function settledWithin(p: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const t = new Promise<false>((r) => {
    timer = setTimeout(() => r(false), ms);
  });
  try {
    return await Promise.race([p.then(() => true as const), t]);
  } finally {
    clearTimeout(timer);
  }
}

/** How the child was closed. */
export interface ChildClosure {
  confirmed: boolean;
  /** `exited`, `terminated`, `killed`, or `unconfirmed`. */
  how: "exited" | "terminated" | "killed" | "unconfirmed";
}

/**
 * Closes the direct child: end its stdin, SIGTERM, wait `termWaitMs`, SIGKILL, wait `killWaitMs`.
 * Confirmed only when Bun observed its exit (and so reaped it).
 */
export async function closeChild(proc: Subprocess<"pipe", "pipe", "pipe">, termWaitMs: number, killWaitMs: number): Promise<ChildClosure> {
  if (proc.exitCode !== null || proc.signalCode !== null) return { confirmed: true, how: "exited" };
  try {
    proc.stdin.end();
  } catch {
    // A closed pipe already told the child to go.
  }
  proc.kill("SIGTERM");
  if (await settledWithin(proc.exited, termWaitMs)) return { confirmed: true, how: "terminated" };
  proc.kill("SIGKILL");
  if (await settledWithin(proc.exited, killWaitMs)) return { confirmed: true, how: "killed" };
  return { confirmed: false, how: "unconfirmed" };
}

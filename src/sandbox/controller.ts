/**
 * Identity of the controlling humanish process, stamped on every guest container as the label
 * `humanish.controller=<host>:<pid>:<start ticks>`. A container whose controller is no longer
 * that exact process (pid gone, or reused by another process with a different start time) is an
 * orphan (see src/runtime/reconcile.ts). Every sandbox and guest container carries it. The start time
 * is field 22 of /proc/<pid>/stat (src/proc.ts).
 */
import { hostname } from "node:os";
import { procStat } from "../proc.ts";

/** Label key carrying the controller identity. */
export const CONTROLLER_LABEL = "humanish.controller";

/**
 * Label key carrying the absolute project directory of the run, so whichever later command finds
 * the orphan records the release in that run's own directory (not only when run from the same cwd).
 */
export const PROJECT_LABEL = "humanish.project";

/** Start time (clock ticks since boot) of `pid`, or undefined when it does not exist. */
export function processStartTicks(pid: number): string | undefined {
  return procStat(pid)?.startTicks;
}

/** This process's controller identity. */
export function controllerIdentity(pid: number = process.pid): string {
  return `${hostname()}:${pid}:${processStartTicks(pid) ?? "0"}`;
}

/**
 * Whether the controller named by a label value is still running: same host name, the pid
 * exists and its start time matches. A label from another host is treated as live (we cannot
 * judge it, so we never touch it).
 */
export function isControllerLive(label: string): boolean {
  const m = /^(.*):([0-9]+):([0-9]+)$/.exec(label);
  if (!m) return false;
  if (m[1] !== hostname()) return true;
  return processStartTicks(Number(m[2])) === m[3];
}

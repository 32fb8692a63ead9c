/**
 * A process as Linux's `/proc/<pid>/stat` describes it: the few fields humanish reads to tell one
 * process from a later one with the same pid (its start time), to find a process group's members,
 * and to measure CPU time. The command name (field 2) is parenthesised and may hold spaces and
 * parentheses itself, so fields are counted from after its last `)`.
 */
import { readFileSync } from "node:fs";

/** Clock ticks per second of `/proc/<pid>/stat` times (USER_HZ, 100 on every Linux humanish runs on). */
export const USER_HZ = 100;

/** The fields of one `/proc/<pid>/stat` line humanish reads. */
export interface ProcStat {
  /** Field 3: `R`, `S`, `D`, `Z` (zombie), `X` (dead), … */
  state: string;
  /** Field 4. */
  ppid: number;
  /** Field 5: the process group. */
  pgrp: number;
  /** Fields 14–17 summed: user and system time of the process and of the children it has reaped, clock ticks. */
  cpuTicks: number;
  /** Field 22: start time in clock ticks since boot, as written (a decimal string, compared as text). */
  startTicks: string;
}

/**
 * Parses one `/proc/<pid>/stat` line. Pure.
 * @returns the fields, or null when the line is not one (no `)`, too few fields).
 */
export function parseProcStat(line: string): ProcStat | null {
  const close = line.lastIndexOf(")");
  if (close < 0) return null;
  const f = line
    .slice(close + 2)
    .trim()
    .split(" ");
  const startTicks = f[19];
  if (startTicks === undefined || !/^[0-9]+$/.test(startTicks)) return null;
  return {
    state: f[0] as string,
    ppid: Number(f[1]),
    pgrp: Number(f[2]),
    cpuTicks: Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14]),
    startTicks,
  };
}

/** `/proc/<pid>/stat` of `pid`, or null when there is no such process (or it ended as it was read). */
export function procStat(pid: number | string): ProcStat | null {
  try {
    return parseProcStat(readFileSync(`/proc/${pid}/stat`, "utf8"));
  } catch {
    return null;
  }
}

/** True for a process that has ended and only awaits its parent's reaping (`Z`) or is dead (`X`). */
export function hasEnded(stat: ProcStat): boolean {
  return stat.state === "Z" || stat.state === "X";
}

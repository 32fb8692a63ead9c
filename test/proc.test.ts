import { describe, expect, test } from "bun:test";
import { hasEnded, parseProcStat, procStat } from "../src/proc.ts";

// A real line's shape: pid (comm) state ppid pgrp session tty tpgid flags minflt cminflt majflt
// cmajflt utime stime cutime cstime priority nice threads itrealvalue starttime vsize …
const line = (comm: string, state = "S") =>
  `4242 (${comm}) ${state} 1 4240 4240 0 -1 4194560 120 0 0 0 7 3 11 13 20 0 1 0 987654 1024 10 18446744073709551615\n`;

describe("parseProcStat", () => {
  test("reads state, ppid, pgrp, the four CPU times and the start time", () => {
    expect(parseProcStat(line("bun"))).toEqual({ state: "S", ppid: 1, pgrp: 4240, cpuTicks: 7 + 3 + 11 + 13, startTicks: "987654" });
  });

  test("a command name holding spaces and parentheses does not shift the fields", () => {
    const s = parseProcStat(line("a) (b c) Z 9 9"));
    expect(s?.pgrp).toBe(4240);
    expect(s?.startTicks).toBe("987654");
    expect(s?.state).toBe("S");
  });

  test("a line that is not one is null", () => {
    expect(parseProcStat("")).toBeNull();
    expect(parseProcStat("4242 bun S 1")).toBeNull();
    expect(parseProcStat("4242 (bun) S 1 2 3")).toBeNull();
  });

  test("a zombie or dead process has ended", () => {
    expect(hasEnded(parseProcStat(line("x", "Z")) as never)).toBe(true);
    expect(hasEnded(parseProcStat(line("x", "X")) as never)).toBe(true);
    expect(hasEnded(parseProcStat(line("x", "R")) as never)).toBe(false);
  });
});

describe("procStat", () => {
  test("this process: its parent, a start time, and CPU time that grows with work", () => {
    const before = procStat(process.pid);
    expect(before).not.toBeNull();
    expect(before?.ppid).toBe(process.ppid);
    expect(before?.startTicks).toMatch(/^[0-9]+$/);
    expect(hasEnded(before as never)).toBe(false);
    // A process only a few milliseconds old may not have been charged a single clock tick yet,
    // so the check spends CPU (measured by the process's own clock, not the wall) and then
    // expects the kernel's count to have moved.
    const start = process.cpuUsage();
    let spin = 0;
    while (process.cpuUsage(start).user < 40_000) spin += Math.sqrt(spin + 1);
    const after = procStat(process.pid);
    expect(spin).toBeGreaterThan(0);
    expect(after?.startTicks).toBe(before?.startTicks as string);
    expect(after?.cpuTicks).toBeGreaterThan(before?.cpuTicks as number);
  });

  test("a child nobody reaps reads as ended; a reaped one as gone", async () => {
    // The shell starts a short sleep in the background, prints its pid and becomes a long
    // `sleep`, which never waits for children: the short one, ending after the exec, stays a
    // zombie until the long one ends.
    const parent = Bun.spawn(["sh", "-c", "sleep 0.2 & echo $!; exec sleep 30"], { stdout: "pipe" });
    const reader = parent.stdout.getReader();
    const zombie = Number(new TextDecoder().decode((await reader.read()).value).trim());
    try {
      let s = procStat(zombie);
      for (let i = 0; i < 500 && s && !hasEnded(s); i++) {
        await Bun.sleep(10);
        s = procStat(zombie);
      }
      expect(s?.state).toBe("Z");
      expect(s?.ppid).toBe(parent.pid);
    } finally {
      parent.kill("SIGKILL");
      await parent.exited;
    }
    const reaped = Bun.spawn(["true"]);
    await reaped.exited;
    expect(procStat(reaped.pid)).toBeNull();
  });
});

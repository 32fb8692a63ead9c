/**
 * Participant commands in a real Docker sandbox: stdin closed, first-output deadline,
 * wall-clock deadline, interruption, argv passed byte-exact (cases/README.md "Behaviours with
 * no file": an idle open stdin makes `codex exec` hang silently; put a deadline on the first event).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { decodeText, runParticipantCommand, tailText, wrapParticipantArgv } from "../../../src/actors/terminal-participant/exec.ts";
import { TERMINAL_STUDY_DIR } from "../../../src/lab/schema.ts";
import type { Sandbox } from "../../../src/sandbox/types.ts";
import { testSandbox } from "../support.ts";

let sandbox: Sandbox;

beforeAll(async () => {
  ({ sandbox } = await testSandbox("exec"));
}, 300_000);

afterAll(async () => {
  const proof = await sandbox?.release();
  expect(proof?.outcome).toBe("released");
});

const run = (cmd: string[], o: { firstOutputMs?: number; inMs?: number; signal?: AbortSignal; onStdout?: (c: Uint8Array) => void } = {}) =>
  runParticipantCommand({
    sandbox,
    cmd,
    user: "user",
    cwd: TERMINAL_STUDY_DIR,
    env: { HOME: "/home/user" },
    firstOutputMs: o.firstOutputMs ?? 30_000,
    deadlineAt: Date.now() + (o.inMs ?? 60_000),
    signal: o.signal ?? new AbortController().signal,
    ...(o.onStdout ? { onStdout: o.onStdout } : {}),
  });

/** Pids of processes (other than the probe itself) whose command line contains `needle`. */
async function processesMatching(needle: string): Promise<string> {
  const r = await sandbox.exec({
    cmd: [
      "bash",
      "-c",
      `for d in /proc/[0-9]*; do c=$(tr '\\0' ' ' < $d/cmdline 2>/dev/null); case "$c" in *${needle}*) [ "\${d#/proc/}" != "$$" ] && echo "\${d#/proc/}: $c";; esac; done; true`,
    ],
    user: "root",
  });
  return decodeText(r.stdout)
    .split("\n")
    .filter((l) => l && !l.includes("for d in"))
    .join("\n");
}

describe("runParticipantCommand", () => {
  test("stdin is closed: `cat` ends at once instead of waiting, and fd 0 is /dev/null", async () => {
    // A `cat` left waiting would print nothing and be killed at the (default 30 s) first-output deadline.
    const r = await run(["bash", "-lc", "cat; echo after-cat; readlink /proc/self/fd/0; [ -t 0 ] && echo tty || echo no-tty"]);
    expect(r.deadline).toBeNull();
    expect(r.exitCode).toBe(0);
    expect(decodeText(r.stdout)).toBe("after-cat\n/dev/null\nno-tty\n");
  });

  test("a silent command is killed at the first-output deadline, with its process group", async () => {
    const r = await run(["bash", "-lc", "sleep 41; echo never"], { firstOutputMs: 1_500 });
    expect(r.deadline).toBe("first-output");
    expect(r.exitCode).toBe(137);
    expect(decodeText(r.stdout)).toBe("");
    expect(await processesMatching("sleep 41")).toBe("");
  });

  test("output before the first-output deadline disarms it", async () => {
    // The first line comes well inside the deadline even on a starved machine; the silence after
    // it outlasts the deadline, which would fire then if the output had not disarmed it.
    const r = await run(["bash", "-lc", "echo hi; sleep 12; echo bye"], { firstOutputMs: 10_000 });
    expect(r.deadline).toBeNull();
    expect(decodeText(r.stdout)).toBe("hi\nbye\n");
  });

  test("a command that keeps talking is killed at the wall-clock deadline", async () => {
    // The loop never ends by itself: only the wall-clock deadline can stop it (else the test times out).
    const r = await run(["bash", "-lc", "while true; do echo tick; sleep 0.5; done"], { firstOutputMs: 30_000, inMs: 8_000 });
    expect(r.deadline).toBe("max-minutes");
    expect(r.exitCode).toBe(137);
    expect(decodeText(r.stdout)).toContain("tick\n");
    expect(await processesMatching("while true")).toBe("");
  });

  test("an abort (SIGINT of the study) stops it and says so", async () => {
    // The abort comes once the command has printed: it is running, not about to start.
    const ac = new AbortController();
    const r = await run(["bash", "-lc", "echo start; sleep 42"], { signal: ac.signal, onStdout: () => ac.abort("SIGINT") });
    expect(r.deadline).toBe("interrupted");
    expect(r.exitCode).toBe(137);
    expect(await processesMatching("sleep 42")).toBe("");
  });

  test("nothing starts when the deadline has passed or the study is already interrupted", async () => {
    const passed = await runParticipantCommand({
      sandbox,
      cmd: ["true"],
      user: "user",
      cwd: TERMINAL_STUDY_DIR,
      firstOutputMs: 1000,
      deadlineAt: Date.now() - 1,
      signal: new AbortController().signal,
    });
    expect(passed).toMatchObject({ started: false, deadline: "max-minutes" });
    const ac = new AbortController();
    ac.abort("SIGINT");
    const aborted = await runParticipantCommand({
      sandbox,
      cmd: ["true"],
      user: "user",
      cwd: TERMINAL_STUDY_DIR,
      firstOutputMs: 1000,
      deadlineAt: Date.now() + 10_000,
      signal: ac.signal,
    });
    expect(aborted).toMatchObject({ started: false, deadline: "interrupted" });
  });

  test("argv reaches the program byte-exact (no shell re-quoting), as the participant user", async () => {
    const r = await run(["printf", "%s|", "a  b", "$HOME", "'q'", "`id`", "ünï"]);
    expect(decodeText(r.stdout)).toBe("a  b|$HOME|'q'|`id`|ünï|");
    const who = await run(["bash", "-c", "id -un; pwd"]);
    expect(decodeText(who.stdout)).toBe(`user\n${TERMINAL_STUDY_DIR}\n`);
  });
});

describe("helpers", () => {
  test("wrapper argv: KILL backstop a few seconds after the deadline, stdin from /dev/null", () => {
    expect(wrapParticipantArgv(["codex", "exec"], 60_000)).toEqual([
      "timeout",
      "-s",
      "KILL",
      "63s",
      "bash",
      "-c",
      'exec 0</dev/null; exec "$@"',
      "humanish-participant",
      "codex",
      "exec",
    ]);
  });
  test("tailText", () => {
    expect(tailText("")).toBe("(no output)");
    expect(tailText("abcdef", 3)).toBe("…ef");
    expect(tailText("abc", 3)).toBe("abc");
  });
});

describe("bounded results", () => {
  test("40 MiB of output: every byte reaches the callbacks, the result keeps only the 16 MiB tail", async () => {
    let seen = 0;
    const r = await runParticipantCommand({
      sandbox,
      cmd: ["bash", "-c", "head -c 41943040 /dev/zero | tr '\\0' a; printf END"],
      user: "user",
      cwd: TERMINAL_STUDY_DIR,
      env: { HOME: "/home/user" },
      firstOutputMs: 30_000,
      deadlineAt: Date.now() + 120_000,
      signal: new AbortController().signal,
      onStdout: (c) => {
        seen += c.byteLength;
      },
    });
    expect(seen).toBe(40 * 1024 * 1024 + 3);
    expect(r.stdout.byteLength).toBe(16 * 1024 * 1024);
    expect(new TextDecoder().decode(r.stdout.subarray(-3))).toBe("END");
  }, 120_000);
});

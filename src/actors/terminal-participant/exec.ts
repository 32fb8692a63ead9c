/**
 * Runs one participant command in a sandbox with the participant's guarantees:
 * - stdin is closed (`/dev/null`): `codex exec` given an idle open stdin prints nothing and
 *   waits forever (cases/README.md "Behaviours with no file");
 * - a first-output deadline: a command that prints nothing for `firstOutputMs` is killed;
 * - a wall-clock deadline (`deadlineAt`, from `scenario.caps.maxMinutes`), enforced twice: by a
 *   host timer that kills the exec, and inside the sandbox by coreutils `timeout -s KILL`, which
 *   kills the whole process group even if the host side were to stall;
 * - an abort signal (SIGINT/SIGTERM of the study) stops it the same way.
 * The result says which deadline fired.
 */

import type { DeadlineKind } from "../../actor-registry/types.ts";
import { DEFAULT_STREAM_TAIL_BYTES, TailBuffer } from "../../bytes/tail-buffer.ts";
import type { Sandbox } from "../../sandbox/types.ts";
import { tail } from "../../text/tail.ts";
import type { RunContext } from "./participant.ts";

/** Options of {@link runParticipantCommand}. Units: ms. */
export interface ParticipantCommandOptions {
  sandbox: Sandbox;
  /** argv of the participant's command (run without a shell unless it is `bash -lc …`). */
  cmd: string[];
  /** Per-command env (names and values); nothing else is forwarded. */
  env?: Record<string, string>;
  user: string;
  cwd: string;
  firstOutputMs: number;
  /** Epoch ms after which the command is killed. */
  deadlineAt: number;
  signal: AbortSignal;
  onStdout?: (chunk: Uint8Array) => void;
  onStderr?: (chunk: Uint8Array) => void;
  /** Clock (tests inject one); default `Date.now`. */
  now?: () => number;
}

/** What happened to the command. `exitCode` 137 = killed. */
export interface ParticipantCommandResult {
  exitCode: number;
  stdout: Uint8Array;
  stderr: Uint8Array;
  durationMs: number;
  /** Which deadline stopped it, or null when it ended on its own. */
  deadline: DeadlineKind | null;
  /** False when the deadline had already passed (or the study was interrupted) before it started. */
  started: boolean;
  /** The exact argv sent to the sandbox (with the stdin/timeout wrapper). */
  argv: string[];
}

/** Seconds of slack between the host wall-clock timer and the in-sandbox `timeout` backstop. */
const SANDBOX_BACKSTOP_SLACK_S = 3;

/**
 * {@link runParticipantCommand} for the participant of `ctx`: its sandbox, user, workdir,
 * first-output and wall-clock deadlines ({@link RunContext.deadlines}) and abort signal, with
 * `cmd` and `env`. Every output chunk is recorded to `ctx.recorder` as it arrives (stdout chunks
 * first go to `onStdout`). Returns the command's result and `terminalEvents`, the number of
 * chunks recorded (0 when the sandbox only returned buffered output).
 */
export async function runRecordedParticipantCommand(
  ctx: RunContext,
  cmd: string[],
  env: Record<string, string>,
  onStdout?: (chunk: Uint8Array) => void,
): Promise<ParticipantCommandResult & { terminalEvents: number }> {
  let terminalEvents = 0;
  const r = await runParticipantCommand({
    sandbox: ctx.sandbox,
    cmd,
    env,
    user: ctx.user,
    cwd: ctx.workdir,
    firstOutputMs: ctx.deadlines.firstOutputMs,
    deadlineAt: ctx.deadlines.deadlineAt,
    signal: ctx.signal,
    onStdout: (c) => {
      terminalEvents++;
      onStdout?.(c);
      ctx.recorder.output("stdout", c);
    },
    onStderr: (c) => {
      terminalEvents++;
      ctx.recorder.output("stderr", c);
    },
  });
  return { ...r, terminalEvents };
}

/**
 * The argv actually executed: `timeout -s KILL <s> bash -c 'exec 0</dev/null; exec "$@"' humanish-participant <cmd…>`.
 * `$@` keeps the participant's argv byte-exact (no re-quoting).
 */
export function wrapParticipantArgv(cmd: string[], remainingMs: number): string[] {
  const seconds = Math.max(1, Math.ceil(remainingMs / 1000) + SANDBOX_BACKSTOP_SLACK_S);
  return ["timeout", "-s", "KILL", `${seconds}s`, "bash", "-c", 'exec 0</dev/null; exec "$@"', "humanish-participant", ...cmd];
}

/**
 * Runs `opts.cmd` as the participant. Resolves when the command ended or was killed.
 * @throws HumanishError from the sandbox when the engine fails (not when a deadline fires).
 */
export async function runParticipantCommand(opts: ParticipantCommandOptions): Promise<ParticipantCommandResult> {
  const now = opts.now ?? Date.now;
  const start = now();
  const remaining = opts.deadlineAt - start;
  if (opts.signal.aborted || remaining <= 0) {
    return {
      exitCode: 137,
      stdout: new Uint8Array(),
      stderr: new Uint8Array(),
      durationMs: 0,
      deadline: opts.signal.aborted ? "interrupted" : "max-minutes",
      started: false,
      argv: [],
    };
  }
  const argv = wrapParticipantArgv(opts.cmd, remaining);
  // Bounded like the sandbox's own buffers: the callbacks (recorder, live events) see every
  // byte, the result keeps only the tail, so gigabytes of output cost at most the bound.
  const out = new TailBuffer(DEFAULT_STREAM_TAIL_BYTES);
  const err = new TailBuffer(DEFAULT_STREAM_TAIL_BYTES);
  const ac = new AbortController();
  let fired: DeadlineKind | null = null;
  const fire = (kind: DeadlineKind): void => {
    if (fired) return;
    fired = kind;
    ac.abort();
  };
  let firstTimer: ReturnType<typeof setTimeout> | undefined = setTimeout(() => fire("first-output"), opts.firstOutputMs);
  const sawOutput = (): void => {
    if (firstTimer !== undefined) {
      clearTimeout(firstTimer);
      firstTimer = undefined;
    }
  };
  const totalTimer = setTimeout(() => fire("max-minutes"), remaining);
  const onAbort = (): void => fire("interrupted");
  opts.signal.addEventListener("abort", onAbort, { once: true });
  try {
    const res = await opts.sandbox
      .exec({
        cmd: argv,
        env: opts.env,
        cwd: opts.cwd,
        user: opts.user,
        timeoutMs: remaining + (SANDBOX_BACKSTOP_SLACK_S + 5) * 1000,
        signal: ac.signal,
        onStdout: (c) => {
          if (c.byteLength > 0) sawOutput();
          out.push(c);
          opts.onStdout?.(c);
        },
        onStderr: (c) => {
          if (c.byteLength > 0) sawOutput();
          err.push(c);
          opts.onStderr?.(c);
        },
      })
      .then(
        (r) => ({ ok: true as const, r }),
        (e: unknown) => ({ ok: false as const, e }),
      );
    const deadline: DeadlineKind | null = fired ?? (res.ok && res.r.timedOut ? "max-minutes" : null);
    if (!res.ok) {
      if (deadline === null) throw res.e;
      return { exitCode: 137, stdout: out.bytes(), stderr: err.bytes(), durationMs: now() - start, deadline, started: true, argv };
    }
    // Exit code 137 from the in-sandbox `timeout -s KILL` backstop is the wall-clock deadline too.
    const backstop = deadline === null && res.r.exitCode === 137 && now() >= opts.deadlineAt ? "max-minutes" : deadline;
    return {
      exitCode: res.r.exitCode,
      // Prefer what streamed (identical when callbacks fired); fall back to the buffered result.
      stdout: out.size > 0 ? out.bytes() : res.r.stdout,
      stderr: err.size > 0 ? err.bytes() : res.r.stderr,
      durationMs: now() - start,
      deadline: backstop,
      started: true,
      argv,
    };
  } finally {
    if (firstTimer !== undefined) clearTimeout(firstTimer);
    clearTimeout(totalTimer);
    opts.signal.removeEventListener("abort", onAbort);
  }
}

/** Decodes bytes as UTF-8 (invalid sequences become U+FFFD). */
export function decodeText(bytes: Uint8Array): string {
  return new TextDecoder("utf-8", { fatal: false }).decode(bytes);
}

/**
 * At most `max` characters: the tail of `text` behind a leading `…` when cut, `(no output)` when
 * empty. Call AFTER redaction (literal scrub, then patterns, then truncation).
 */
export function tailText(text: string, max = 2000): string {
  return tail(text, max);
}

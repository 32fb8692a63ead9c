/**
 * One complete exec: create → start → drain the multiplexed stream → read the exit code.
 * The exit code is read only after the output stream has drained (ARCHITECTURE.md "Local runtime");
 * since an engine can still report `Running: true` for a moment after the stream closes, the
 * inspect is repeated (every 10 ms, up to `exitCodeWaitMs`) until the exec is no longer running.
 */
import { HumanishError } from "../errors.ts";
import type { DockerClient } from "./client.ts";
import type { DemuxCallbacks } from "./demux.ts";
import type { ExecCreateBody } from "./types.ts";

/** Result of `runExec`. `exitCode` is the process's exit status (137 = SIGKILL). */
export interface RunExecResult {
  execId: string;
  exitCode: number;
  stdout: Uint8Array;
  stderr: Uint8Array;
  /** Bytes dropped from the front of the buffered output (see `maxBufferedBytes`). */
  stdoutDroppedBytes: number;
  stderrDroppedBytes: number;
}

/** Options of `runExec`. */
export interface RunExecOptions extends DemuxCallbacks {
  /** Called with the exec id right after `execCreate`, before the process starts. */
  onExecId?: (execId: string) => void;
  /** Cancels reading the output (the process itself is not killed by this). */
  signal?: AbortSignal;
  /** How long to wait for the exit code after the stream drained, ms (default 5000; `Infinity` = until `signal`). */
  exitCodeWaitMs?: number;
}

/**
 * Runs `body.Cmd` in container `containerId` and returns its output and exit code.
 * Throws `DockerApiError` (e.g. 409 container not running, 404 no such container) or
 * `HUMANISH_DOCKER_EXEC_EXIT_UNKNOWN` when the engine never reports an exit code.
 */
export async function runExec(docker: DockerClient, containerId: string, body: ExecCreateBody, opts: RunExecOptions = {}): Promise<RunExecResult> {
  const execId = await docker.execCreate(containerId, body);
  opts.onExecId?.(execId);
  const out = await docker.execStart(execId, {
    ...(opts.onStdout ? { onStdout: opts.onStdout } : {}),
    ...(opts.onStderr ? { onStderr: opts.onStderr } : {}),
    ...(opts.maxBufferedBytes !== undefined ? { maxBufferedBytes: opts.maxBufferedBytes } : {}),
    ...(opts.signal ? { signal: opts.signal } : {}),
  });
  const exitCode = await waitExitCode(docker, execId, opts.exitCodeWaitMs ?? 5000, opts.signal);
  return {
    execId,
    exitCode,
    stdout: out.stdout,
    stderr: out.stderr,
    stdoutDroppedBytes: out.stdoutDroppedBytes ?? 0,
    stderrDroppedBytes: out.stderrDroppedBytes ?? 0,
  };
}

/**
 * Polls `execInspect` until the exec stopped and returns its exit code (every 10 ms, backing off to
 * 200 ms). A process can close its output and keep running, so callers that enforce their own
 * deadline pass `waitMs = Infinity` and a `signal`. Throws `HUMANISH_DOCKER_EXEC_EXIT_UNKNOWN` after
 * `waitMs`, `HUMANISH_DOCKER_ABORTED` when `signal` aborts.
 */
export async function waitExitCode(docker: DockerClient, execId: string, waitMs: number, signal?: AbortSignal): Promise<number> {
  const deadline = Date.now() + waitMs;
  let pause = 10;
  for (;;) {
    const info = await docker.execInspect(execId, signal ? { signal } : {});
    if (!info.Running && typeof info.ExitCode === "number") return info.ExitCode;
    if (signal?.aborted) {
      throw new HumanishError("HUMANISH_DOCKER_ABORTED", `waiting for the exit code of exec ${execId} was aborted`, {
        next: "nothing to do if the abort was intended",
      });
    }
    if (Date.now() >= deadline) {
      throw new HumanishError(
        "HUMANISH_DOCKER_EXEC_EXIT_UNKNOWN",
        `Exec ${execId} output drained but the engine reported no exit code within ${waitMs} ms (the process may have closed its output and kept running)`,
        {
          next: "check the container's processes with `docker top`; give the command a timeout",
          details: { execId, running: info.Running },
        },
      );
    }
    await Bun.sleep(pause);
    pause = Math.min(200, pause * 2);
  }
}

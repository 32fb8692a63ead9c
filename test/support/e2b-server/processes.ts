/**
 * The process table of one sandbox: what envd's process service manages. Each process is one
 * Docker exec in the sandbox's container, started through the project's Docker sandbox provider
 * (so a kill takes the whole process tree, like envd's SIGKILL of a process group).
 *
 * Like envd, a process belongs to the sandbox, not to the request that started it: a client that
 * disconnects (`CommandHandle.disconnect()`, or the SDK's own foreground timeout) leaves it running,
 * and `Connect` attaches a new listener to its later events.
 *
 * The pid is the process's real pid inside the container: each command starts under a one-line
 * `sh` that prints its own pid on stderr and then `exec`s the command, so the pid is kept. That
 * first stderr line is consumed here and never reaches the client.
 */
import type { Sandbox } from "../../../src/sandbox/types.ts";

/** What envd records of a started process (`ProcessConfig` in its protocol). */
export interface ProcessConfig {
  cmd: string;
  args: string[];
  envs: Record<string, string>;
  cwd?: string;
}

/** The end of a process, as envd's `EndEvent` reports it. */
export interface EndEvent {
  exitCode: number;
  exited: boolean;
  status: string;
  error?: string;
}

/** One event of a process stream (`ProcessEvent`): bytes are still raw here. */
export type ProcEvent =
  | { kind: "start"; pid: number }
  | { kind: "stdout" | "stderr"; data: Uint8Array }
  | { kind: "end"; end: EndEvent }
  | { kind: "lost"; message: string };

/** A process of the table. */
export interface Proc {
  /** Real pid inside the container (undefined until the wrapper reported it). */
  pid: number | undefined;
  readonly config: ProcessConfig;
  readonly tag: string | undefined;
  /** User the process runs as (`user` unless the client asked for another). */
  readonly user: string | undefined;
  /** Set once the process ended. */
  ended: EndEvent | undefined;
  /** Adds a listener of later events; returns its removal. */
  subscribe(listener: (e: ProcEvent) => void): () => void;
}

// Prints the shell's own pid on stderr, then replaces itself with the command (same pid).
const PID_WRAPPER = 'echo "$$" >&2; exec "$@"';

const dec = new TextDecoder();

class ProcImpl implements Proc {
  pid: number | undefined;
  ended: EndEvent | undefined;
  readonly abort = new AbortController();
  /** Signal the server sent, so the exit can be reported as envd does (`signal: killed`). */
  signalled: number | undefined;
  private readonly listeners = new Set<(e: ProcEvent) => void>();

  constructor(
    readonly config: ProcessConfig,
    readonly tag: string | undefined,
    readonly user: string | undefined,
  ) {}

  subscribe(listener: (e: ProcEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  emit(e: ProcEvent): void {
    for (const l of [...this.listeners]) l(e);
  }
}

/** Processes of one sandbox, by pid. */
export class ProcessTable {
  private readonly procs = new Map<number, ProcImpl>();

  /**
   * @param sandbox the container (the project's Docker sandbox).
   * @param sandboxEnv env of every process (the sandbox's `envVars`); a process's own envs win.
   */
  constructor(
    private readonly sandbox: Sandbox,
    private readonly sandboxEnv: Record<string, string>,
  ) {}

  /**
   * Starts `config` as `user`. Nothing is emitted before the caller's current task ends (the exec
   * is asynchronous), so a listener subscribed right away sees every event. `started` resolves
   * once the process has its pid, or rejects with the reason it could not start.
   */
  start(config: ProcessConfig, opts: { user?: string; tag?: string } = {}): { proc: Proc; started: Promise<number> } {
    const proc = new ProcImpl(config, opts.tag, opts.user);
    let resolvePid!: (pid: number) => void;
    let rejectPid!: (e: Error) => void;
    const started = new Promise<number>((resolve, reject) => {
      resolvePid = resolve;
      rejectPid = reject;
    });
    // Output before the pid line was parsed is held back, so `start` is always the first event.
    let head = new Uint8Array(0);
    const heldStdout: Uint8Array[] = [];
    const onPid = (pid: number) => {
      proc.pid = pid;
      this.procs.set(pid, proc);
      proc.emit({ kind: "start", pid });
      for (const c of heldStdout.splice(0)) proc.emit({ kind: "stdout", data: c });
      resolvePid(pid);
    };
    this.sandbox
      .exec({
        cmd: ["/bin/sh", "-c", PID_WRAPPER, "envd", config.cmd, ...config.args],
        env: { ...this.sandboxEnv, ...config.envs },
        ...(config.cwd ? { cwd: config.cwd } : {}),
        ...(opts.user ? { user: opts.user } : {}),
        signal: proc.abort.signal,
        maxBufferedBytes: 1,
        onStdout: (c) => {
          if (proc.pid === undefined) heldStdout.push(c);
          else proc.emit({ kind: "stdout", data: c });
        },
        onStderr: (c) => {
          if (proc.pid !== undefined) return proc.emit({ kind: "stderr", data: c });
          const joined = new Uint8Array(head.length + c.length);
          joined.set(head);
          joined.set(c, head.length);
          const nl = joined.indexOf(10);
          if (nl < 0) {
            head = joined;
            return;
          }
          const pid = Number(dec.decode(joined.subarray(0, nl)));
          if (!(Number.isSafeInteger(pid) && pid > 0)) {
            // Not the wrapper's line: something else ran first. Stop it; the exec's end reports the failure.
            proc.abort.abort();
            return;
          }
          onPid(pid);
          if (nl + 1 < joined.length) proc.emit({ kind: "stderr", data: joined.slice(nl + 1) });
        },
      })
      .then(
        (res) => {
          if (proc.pid === undefined) {
            // The wrapper never ran (e.g. the user or the working directory does not exist).
            const why = `process could not start: exit ${res.exitCode}`;
            rejectPid(new Error(why));
            proc.ended = { exitCode: res.exitCode, exited: true, status: why, error: why };
            proc.emit({ kind: "lost", message: why });
            return;
          }
          const killed = proc.signalled === 9 || (proc.signalled !== undefined && res.exitCode === 128 + proc.signalled);
          proc.ended = killed
            ? { exitCode: -1, exited: false, status: proc.signalled === 15 ? "signal: terminated" : "signal: killed" }
            : { exitCode: res.exitCode, exited: true, status: `exit status ${res.exitCode}` };
          proc.emit({ kind: "end", end: proc.ended });
        },
        (e: Error) => {
          const message = `process stream lost: ${e.message}`;
          if (proc.pid === undefined) rejectPid(new Error(message));
          proc.ended = { exitCode: -1, exited: false, status: message, error: message };
          proc.emit({ kind: "lost", message });
        },
      )
      .finally(() => {
        if (proc.pid !== undefined) this.procs.delete(proc.pid);
      });
    return { proc, started };
  }

  /** A running process by pid or tag. */
  find(sel: { pid: number } | { tag: string }): Proc | undefined {
    if ("pid" in sel) return this.procs.get(sel.pid);
    for (const p of this.procs.values()) if (p.tag === sel.tag) return p;
    return undefined;
  }

  /** Running processes (those with a pid that have not ended). */
  list(): Proc[] {
    return [...this.procs.values()].filter((p) => p.ended === undefined);
  }

  /**
   * Sends `signal` (9 or 15) to a running process. SIGKILL kills its whole process tree (through
   * the sandbox provider's exec abort); SIGTERM is delivered to the process alone with `kill -TERM`.
   * Returns false when no such process runs.
   */
  async signal(proc: Proc, signal: 9 | 15): Promise<boolean> {
    const p = proc as ProcImpl;
    if (p.ended !== undefined || p.pid === undefined) return false;
    p.signalled = signal;
    if (signal === 9) {
      p.abort.abort();
      return true;
    }
    const r = await this.sandbox.exec({ cmd: ["kill", "-TERM", String(p.pid)], ...(p.user ? { user: p.user } : {}), timeoutMs: 10_000 });
    return r.exitCode === 0;
  }
}

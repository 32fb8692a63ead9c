/**
 * The sandbox seam: one interface for every place a participant's commands run
 * (local Docker now, E2B later). Routes and the environment server only see this.
 */

/** Options for creating a sandbox. Units: bytes, ms, CPUs (fractional). */
export interface SandboxCreateOptions {
  /** Run id stamped on the resource as label `humanish.run=<runId>`. */
  runId: string;
  /** Image reference (Docker) or template id (E2B). */
  image: string;
  /** `none` (default) or `bridge` when the lab declares it needs network for `product.install`. */
  network?: "none" | "bridge";
  /** Memory limit in bytes (default 1 GiB). */
  memoryBytes?: number;
  /** CPU limit in CPUs (default 1). */
  cpus?: number;
  /** Max processes (default 256). */
  pidsLimit?: number;
  /**
   * Most bytes the sandbox may write (default 2 GiB): no file may grow past it, and a sandbox
   * whose writes add up past it is stopped (Docker: see src/sandbox/disk-watch.ts).
   */
  diskBytes?: number;
  /** Working directory inside the sandbox (default `/home/user`). */
  workdir?: string;
  /** Non-secret env for the whole sandbox. Secrets must go per-exec only. */
  env?: Record<string, string>;
  /** Extra labels (never secret). */
  labels?: Record<string, string>;
  /**
   * Host directories bind-mounted into the sandbox (Docker only), e.g. a model gateway's socket
   * directory. Never a secret-bearing path.
   */
  mounts?: { hostPath: string; containerPath: string; readOnly: boolean }[];
  /**
   * Seccomp profile JSON text (Docker only; default: the sandbox profile). A desktop whose
   * Chromium keeps its own sandbox needs one that allows user namespaces (runtime/seccomp/guest.json).
   */
  seccompProfile?: string;
  /** Size of /dev/shm in bytes (Docker only; default the engine's 64 MiB). Browsers want more. */
  shmBytes?: number;
  /** Docker only: join this existing network instead of `network`'s none/bridge (e.g. an internal test network). */
  dockerNetwork?: string;
  /** Docker only: extra `/etc/hosts` entries, `"<name>:<ip>"`. */
  extraHosts?: string[];
  /**
   * Docker only: capabilities given back to the container's root after every one is dropped.
   * Only the file-ownership ones, for a sandbox that stands in for a VM whose root has them
   * (the local E2B server); `no-new-privileges` still holds, so no other user ever gains them.
   */
  rootFileCaps?: readonly ("CHOWN" | "FOWNER" | "DAC_OVERRIDE")[];
  /**
   * Called with the exact resource id as soon as it exists, BEFORE any provisioning step,
   * so a crash can still be reconciled (ARCHITECTURE.md data flow step 4).
   */
  onCreated?: (id: string) => void | Promise<void>;
}

/** One command run in a sandbox. */
export interface ExecOptions {
  /** argv; run directly, no shell unless the caller passes `["bash","-lc",…]`. */
  cmd: string[];
  /** Per-command env (this is where a runtime key goes; never the container env). */
  env?: Record<string, string>;
  cwd?: string;
  /** Deadline in ms; on expiry the process is killed and `timedOut` is true. */
  timeoutMs?: number;
  /** Run as this user (default: the image's user). */
  user?: string;
  /** Streamed output as it arrives (already demultiplexed). */
  onStdout?: (chunk: Uint8Array) => void;
  onStderr?: (chunk: Uint8Array) => void;
  /** Abort: kills the process like a timeout. */
  signal?: AbortSignal;
  /**
   * Bound of each buffered stream in the result, bytes (default 16 MiB): beyond it the result
   * keeps the tail and counts what it dropped. Streaming callbacks still see every byte.
   */
  maxBufferedBytes?: number;
}

/** The result of one command. Exit code 137 = killed (SIGKILL). */
export interface ExecResult {
  exitCode: number;
  stdout: Uint8Array;
  stderr: Uint8Array;
  timedOut: boolean;
  /** Wall time in ms from exec create to exit code read. */
  durationMs: number;
  /** Bytes dropped from the front of `stdout` / `stderr` to respect `maxBufferedBytes` (0 when none). */
  stdoutDroppedBytes?: number;
  stderrDroppedBytes?: number;
}

/** How a release ended (ARCHITECTURE.md invariant 7). */
export type ReleaseOutcome = "released" | "retained" | "unconfirmed";

/** The recorded proof of a release, written into the run's cleanup ledger. */
export interface ReleaseProof {
  /** Exact resource id (Docker container id, E2B sandbox id, `host-process:<pid>:<start ticks>`). */
  id: string;
  /** `host`: a process humanish started on the host (a browser lab's serve.command). */
  provider: "docker" | "e2b" | "host";
  /** What the resource was, when not a sandbox: `desktop` (browser guest), `app-server` (host process). */
  kind?: "sandbox" | "desktop" | "app-server";
  outcome: ReleaseOutcome;
  /** How the outcome was confirmed, e.g. `inspect-404`, or why not. */
  reason: string;
  /** ISO time of the release attempt. */
  at: string;
}

/** A live sandbox. Every method throws `HumanishError` on an engine failure. */
export interface Sandbox {
  /** Exact id (Docker container id, 64 hex). */
  readonly id: string;
  readonly provider: "docker" | "e2b";
  exec(opts: ExecOptions): Promise<ExecResult>;
  writeFile(path: string, data: Uint8Array | string, mode?: number): Promise<void>;
  readFile(path: string, maxBytes?: number): Promise<Uint8Array>;
  /**
   * Take every network away from the running sandbox (e.g. after `product.install` needed one),
   * then confirm it has none. Providers that cannot do this leave it undefined; callers that
   * rely on it must refuse to go on without it.
   * @throws HumanishError `HUMANISH_SANDBOX_NETWORK_DETACH_FAILED` when detaching is unconfirmed.
   */
  detachNetwork?(): Promise<void>;
  /**
   * The disk bound in bytes and, once the sandbox was stopped for exceeding it, the breach (an
   * exec then throws `HUMANISH_SANDBOX_DISK_LIMIT_EXCEEDED`). Providers without one leave it undefined.
   */
  diskLimit?(): { limitBytes: number; breach?: { limitBytes: number; observedBytes: number; at: string; reason: string } };
  /** Remove by exact id and confirm it is gone. Never throws; the proof says what happened. */
  release(): Promise<ReleaseProof>;
}

/** Creates sandboxes of one provider. */
export interface SandboxProvider {
  readonly provider: "docker" | "e2b";
  create(opts: SandboxCreateOptions): Promise<Sandbox>;
}

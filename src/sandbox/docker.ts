/**
 * The Docker backend of the sandbox seam (ARCHITECTURE.md "Local runtime (Docker)").
 *
 * A sandbox is one container running a long-lived idle process (`sleep infinity` under Docker's init)
 * so every command is an exec inside it. Hardening: `no-new-privileges`, all capabilities dropped,
 * memory (no swap) / CPU / pids limits, network `none` unless `network: "bridge"`, and a disk bound
 * (default 2 GiB): `RLIMIT_FSIZE` per file, enforced by the kernel, plus a writable-layer watchdog
 * that stops the container once its total writes exceed the bound (./disk-watch.ts). Labels
 * `humanish.run=<runId>` and `humanish.owner=humanish` are for finding orphans; release is by exact id.
 *
 * Secrets go only into one exec's env (`ExecOptions.env`), never the container env, labels or files.
 * A timeout/abort kills the exec'd process tree: every exec carries a random `HUMANISH_EXEC_ID` in
 * its env, inherited by its children, and a second exec (as the same user) SIGKILLs every process
 * whose environment holds that id plus all their descendants — the Engine API has no exec kill.
 */

import { randomBytes } from "node:crypto";
import { posix } from "node:path";
import { type DockerClient, isDockerApiError, runExec, tarPack, tarUnpack } from "../docker/index.ts";
import { errorMessage, HumanishError } from "../errors.ts";
import { type DiskLimitBreach, type DiskWatch, watchDisk } from "./disk-watch.ts";
import { containerCreateBody, createLimits, rootFileCaps, type SandboxLimits } from "./docker-spec.ts";
import { type ReleaseDeadlines, releaseContainer } from "./release.ts";
import type { ExecOptions, ExecResult, ReleaseProof, Sandbox, SandboxCreateOptions, SandboxProvider } from "./types.ts";

export { DEFAULT_CPUS, DEFAULT_MEMORY_BYTES, DEFAULT_PIDS_LIMIT, DEFAULT_WORKDIR, SANDBOX_SECCOMP_PROFILE } from "./docker-spec.ts";

/** Options of `createDockerSandboxProvider`. */
export interface DockerSandboxProviderOptions {
  docker: DockerClient;
  /** Outer deadlines of the release steps (ms). */
  release?: ReleaseDeadlines;
  /** After a kill, how long to wait for the exec's output to drain before giving up, ms (default 10000). */
  killDrainMs?: number;
  /** Interval of the disk watchdog's writable-layer polls, ms (default 2000). */
  diskWatchMs?: number;
}

/**
 * Env var carrying the per-exec kill id (reserved: callers may not set it). Its name avoids
 * KEY/SECRET/TOKEN so tools that strip secret-looking variables from their children keep it.
 */
export const EXEC_TOKEN_ENV = "HUMANISH_EXEC_ID";
/** Default `readFile` bound, bytes (16 MiB). */
export const DEFAULT_READ_MAX_BYTES = 16 * 1024 * 1024;

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

// Kills the process tree of one exec: every process whose environment holds the exact entry
// HUMANISH_EXEC_ID=$1, plus every descendant of those (found through the parent pid in
// /proc/<pid>/stat), so a child that dropped the variable from its env is killed too. Three passes
// catch processes forked while the first pass ran. The id is passed as an argument, so this
// script's own environment does not match.
const KILL_SCRIPT = `
t="HUMANISH_EXEC_ID=$1"
pass() {
  marked=" "
  for d in /proc/[0-9]*; do
    if grep -qxzF -- "$t" "$d/environ" 2>/dev/null; then marked="$marked\${d#/proc/} "; fi
  done
  [ "$marked" = " " ] && return 0
  changed=1
  while [ "$changed" = 1 ]; do
    changed=0
    for d in /proc/[0-9]*; do
      p=\${d#/proc/}
      case "$marked" in *" $p "*) continue ;; esac
      s=$(cat "$d/stat" 2>/dev/null) || continue
      s=\${s##*) }
      set -- $s
      case "$marked" in *" $2 "*) marked="$marked$p "; changed=1 ;; esac
    done
  done
  # Freeze the whole tree first so no parent runs on (and prints) after its child died.
  for p in $marked; do kill -STOP "$p" 2>/dev/null; done
  for p in $marked; do kill -KILL "$p" 2>/dev/null; done
  return 0
}
pass; pass; pass
exit 0
`;

function envList(env: Record<string, string> | undefined, where: string): string[] {
  const out: string[] = [];
  for (const [k, v] of Object.entries(env ?? {})) {
    if (!ENV_NAME.test(k)) {
      throw new HumanishError("HUMANISH_SANDBOX_ENV_INVALID", `${where}: env name ${JSON.stringify(k)} is not a valid variable name`, {
        next: "use names matching [A-Za-z_][A-Za-z0-9_]*",
      });
    }
    if (k === EXEC_TOKEN_ENV) {
      throw new HumanishError("HUMANISH_SANDBOX_ENV_INVALID", `${where}: env name ${k} is reserved by humanish`, { next: `rename the variable ${k}` });
    }
    if (typeof v !== "string" || v.includes("\0")) {
      throw new HumanishError("HUMANISH_SANDBOX_ENV_INVALID", `${where}: value of env ${k} must be a string without NUL bytes`, {
        next: `fix the value of ${k}`,
      });
    }
    out.push(`${k}=${v}`);
  }
  return out;
}

function dockerCause(e: unknown): string {
  if (isDockerApiError(e)) return `HTTP ${e.status}: ${e.engineMessage}`;
  return errorMessage(e);
}

/** Rethrows engine-unreachable errors as they are; wraps the rest under `code`. */
function wrap(e: unknown, code: string, message: string, next: string): HumanishError {
  if (e instanceof HumanishError && (e.code === "HUMANISH_DOCKER_UNAVAILABLE" || e.code.startsWith("HUMANISH_SANDBOX_"))) return e;
  return new HumanishError(code, `${message}: ${dockerCause(e)}`, {
    next,
    cause: e,
    ...(isDockerApiError(e) ? { details: { status: e.status } } : {}),
  });
}

function diskLimitError(id: string, b: DiskLimitBreach): HumanishError {
  return new HumanishError("HUMANISH_SANDBOX_DISK_LIMIT_EXCEEDED", `sandbox ${id}: ${b.reason}`, {
    next: "the participant filled the disk: this is recorded as the reason the seat stopped; raise execution.limits.diskMiB if the product legitimately needs more",
    details: { limitBytes: b.limitBytes, observedBytes: b.observedBytes, at: b.at },
  });
}

class DockerSandbox implements Sandbox {
  readonly provider = "docker" as const;
  /** Set once the container runs (see `startDiskWatch`). */
  private watch: DiskWatch | undefined;

  constructor(
    readonly id: string,
    private readonly docker: DockerClient,
    private readonly opts: DockerSandboxProviderOptions,
    readonly diskLimitBytes: number,
    private readonly defaultUser?: string,
  ) {}

  /**
   * One exec in this container, as `body.User` or else the image's own user: a container whose
   * root keeps file capabilities runs as root itself (the engine grants an exec's root no
   * capability otherwise), and an exec that names no user must not become root by that.
   */
  private runIn(body: Parameters<typeof runExec>[2], o?: Parameters<typeof runExec>[3]): ReturnType<typeof runExec> {
    return runExec(this.docker, this.id, body.User === undefined && this.defaultUser !== undefined ? { ...body, User: this.defaultUser } : body, o);
  }

  /** Starts the disk watchdog (after the container started). */
  startDiskWatch(): void {
    this.watch = watchDisk(this.docker, this.id, { limitBytes: this.diskLimitBytes, ...(this.opts.diskWatchMs ? { intervalMs: this.opts.diskWatchMs } : {}) });
  }

  diskLimit(): { limitBytes: number; breach?: DiskLimitBreach } {
    const breach = this.watch?.breach();
    return { limitBytes: this.diskLimitBytes, ...(breach ? { breach } : {}) };
  }

  async exec(opts: ExecOptions): Promise<ExecResult> {
    const before = this.watch?.breach();
    if (before) throw diskLimitError(this.id, before);
    // The watchdog records its breach before it kills the container, so an exec ended by that
    // kill sees it here: its result says nothing about the product, the breach says why.
    let result: ExecResult;
    try {
      result = await this.execInner(opts);
    } catch (e) {
      const during = this.watch?.breach();
      if (!during) throw e;
      await this.watch?.stopped();
      throw diskLimitError(this.id, during);
    }
    const after = this.watch?.breach();
    if (after) {
      await this.watch?.stopped();
      throw diskLimitError(this.id, after);
    }
    return result;
  }

  private async execInner(opts: ExecOptions): Promise<ExecResult> {
    if (!Array.isArray(opts.cmd) || opts.cmd.length === 0 || opts.cmd.some((a) => typeof a !== "string" || a.includes("\0"))) {
      throw new HumanishError("HUMANISH_SANDBOX_EXEC_INVALID", "exec: cmd must be a non-empty argv of strings without NUL bytes", {
        next: 'pass cmd as e.g. ["bash", "-lc", "jq --help"]',
      });
    }
    if (opts.timeoutMs !== undefined && !(opts.timeoutMs > 0)) {
      throw new HumanishError("HUMANISH_SANDBOX_EXEC_INVALID", `exec: timeoutMs must be a positive number of ms (got ${opts.timeoutMs})`, {
        next: "omit timeoutMs or pass a positive value",
      });
    }
    const env = envList(opts.env, "exec");
    if (opts.signal?.aborted) {
      throw new HumanishError("HUMANISH_SANDBOX_EXEC_ABORTED", `exec of ${JSON.stringify(opts.cmd[0])} in sandbox ${this.id} was aborted before it started`, {
        next: "nothing ran; retry without aborting",
      });
    }
    const token = randomBytes(16).toString("hex");
    env.push(`${EXEC_TOKEN_ENV}=${token}`);
    const started = performance.now();
    const readAbort = new AbortController();
    let killedBy: "timeout" | "abort" | undefined;
    let killing: Promise<void> | undefined;
    let settled = false;

    const run = this.runIn(
      {
        Cmd: opts.cmd,
        Env: env,
        ...(opts.cwd !== undefined ? { WorkingDir: opts.cwd } : {}),
        ...(opts.user !== undefined ? { User: opts.user } : {}),
      },
      {
        ...(opts.onStdout ? { onStdout: opts.onStdout } : {}),
        ...(opts.onStderr ? { onStderr: opts.onStderr } : {}),
        ...(opts.maxBufferedBytes !== undefined ? { maxBufferedBytes: opts.maxBufferedBytes } : {}),
        signal: readAbort.signal,
        // The process may close its output and keep running: wait for its exit until the deadline kills it.
        exitCodeWaitMs: Number.POSITIVE_INFINITY,
      },
    ).finally(() => {
      settled = true;
    });

    const kill = (why: "timeout" | "abort") => {
      if (killedBy !== undefined || settled) return;
      killedBy = why;
      killing = this.killByToken(token, opts.user, () => settled).then((drained) => {
        if (!drained) readAbort.abort();
      });
    };
    const timer = opts.timeoutMs !== undefined ? setTimeout(() => kill("timeout"), opts.timeoutMs) : undefined;
    const onAbort = () => kill("abort");
    opts.signal?.addEventListener("abort", onAbort, { once: true });

    try {
      let result: Awaited<typeof run>;
      try {
        result = await run;
      } catch (e) {
        if (killedBy !== undefined && readAbort.signal.aborted) throw killFailed(this.id, opts.cmd, e);
        // Output is no longer read (a callback threw, the stream broke): the process must not live on.
        if (killedBy === undefined) await this.killOnce(token, opts.user);
        throw wrap(
          e,
          "HUMANISH_SANDBOX_EXEC_FAILED",
          `exec of ${JSON.stringify(opts.cmd[0])} in sandbox ${this.id} failed`,
          "check that the sandbox is still running (`docker inspect <id>`); release it and retry",
        );
      }
      return {
        exitCode: killedBy !== undefined ? 137 : result.exitCode,
        stdout: result.stdout,
        stderr: result.stderr,
        stdoutDroppedBytes: result.stdoutDroppedBytes,
        stderrDroppedBytes: result.stderrDroppedBytes,
        timedOut: killedBy === "timeout",
        durationMs: performance.now() - started,
      };
    } finally {
      clearTimeout(timer);
      opts.signal?.removeEventListener("abort", onAbort);
      readAbort.abort();
      await killing?.catch(() => {});
    }
  }

  /**
   * SIGKILLs every process of the exec identified by `token`, repeating (the process may not have
   * started yet, or may be forking) until the exec's stream drained or `killDrainMs` elapsed. When
   * it never drains, resolves false (the caller then stops reading and reports
   * `HUMANISH_SANDBOX_EXEC_KILL_FAILED`); resolves true once drained.
   */
  private async killByToken(token: string, user: string | undefined, done: () => boolean): Promise<boolean> {
    const deadline = Date.now() + (this.opts.killDrainMs ?? 10_000);
    while (!done() && Date.now() < deadline) {
      try {
        await this.runIn({ Cmd: ["/bin/sh", "-c", KILL_SCRIPT, "humanish-kill", token], ...(user !== undefined ? { User: user } : {}) });
      } catch {
        // The container may be gone or overloaded; retry until the deadline.
      }
      for (let i = 0; i < 20 && !done(); i++) await Bun.sleep(25);
    }
    return done();
  }

  /** One best-effort kill pass for the exec `token`, bounded to 5 s; never throws. */
  private async killOnce(token: string, user: string | undefined): Promise<void> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const bound = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, 5000);
    });
    const kill = this.runIn({
      Cmd: ["/bin/sh", "-c", KILL_SCRIPT, "humanish-kill", token],
      ...(user !== undefined ? { User: user } : {}),
    }).then(
      () => undefined,
      () => undefined,
    );
    await Promise.race([kill, bound]);
    clearTimeout(timer);
  }

  /**
   * Numeric uid/gid of the container's default user, resolved once with `id` inside the sandbox
   * (the engine's own `copyUIDGID` resolves names against the host's passwd database, so it is not used).
   */
  private owner: Promise<{ uid: number; gid: number }> | undefined;

  private resolveOwner(): Promise<{ uid: number; gid: number }> {
    this.owner ??= this.runIn({ Cmd: ["sh", "-c", "id -u; id -g"] }).then((r) => {
      const m = /^(\d+)\s+(\d+)\s*$/.exec(new TextDecoder().decode(r.stdout).replace(/\n/g, " "));
      if (r.exitCode !== 0 || !m) {
        throw new HumanishError(
          "HUMANISH_SANDBOX_FILE_WRITE_FAILED",
          `cannot resolve the default user of sandbox ${this.id} with \`id\` (exit ${r.exitCode})`,
          {
            next: "use an image that ships coreutils `id`",
          },
        );
      }
      return { uid: Number(m[1]), gid: Number(m[2]) };
    });
    this.owner.catch(() => {
      this.owner = undefined;
    });
    return this.owner;
  }

  async writeFile(path: string, data: Uint8Array | string, mode = 0o644): Promise<void> {
    const { dir, base } = splitPath(path, "writeFile");
    try {
      const { uid, gid } = await this.resolveOwner();
      const tar = tarPack([{ path: base, data, mode, uid, gid, mtime: Math.floor(Date.now() / 1000) }]);
      const put = () => this.docker.putArchive(this.id, dir, tar);
      try {
        await put();
      } catch (e) {
        if (!isDockerApiError(e, 404)) throw e;
        const mk = await this.runIn({ Cmd: ["mkdir", "-p", "--", dir] });
        if (mk.exitCode !== 0) {
          throw new HumanishError(
            "HUMANISH_SANDBOX_FILE_WRITE_FAILED",
            `writeFile ${path}: cannot create directory ${dir} in sandbox ${this.id}: ${new TextDecoder().decode(mk.stderr).trim()}`,
            {
              next: "write under a directory the sandbox user owns, e.g. /home/user",
            },
          );
        }
        await put();
      }
    } catch (e) {
      throw wrap(e, "HUMANISH_SANDBOX_FILE_WRITE_FAILED", `writeFile ${path} in sandbox ${this.id} failed`, "check the path and that the sandbox is running");
    }
  }

  async detachNetwork(): Promise<void> {
    const attached = async () => Object.keys((await this.docker.containerInspect(this.id)).NetworkSettings?.Networks ?? {});
    try {
      for (const name of await attached()) await this.docker.networkDisconnect(name, this.id, { force: true });
      const left = await attached();
      if (left.length === 0) return;
      throw new Error(`still attached to ${left.join(", ")}`);
    } catch (e) {
      throw wrap(
        e,
        "HUMANISH_SANDBOX_NETWORK_DETACH_FAILED",
        `could not take the network away from sandbox ${this.id}`,
        "the study cannot go on with network it did not grant; check the engine and retry",
      );
    }
  }

  async readFile(path: string, maxBytes = DEFAULT_READ_MAX_BYTES): Promise<Uint8Array> {
    splitPath(path, "readFile");
    const entry = await this.readEntry(path, maxBytes);
    if (entry.type === "symlink") {
      // The archive endpoint returns a link itself; resolve it inside the sandbox and read the target once.
      const r = await this.runIn({ Cmd: ["readlink", "-f", "--", path] }).catch(() => undefined);
      const target = r && r.exitCode === 0 ? new TextDecoder().decode(r.stdout).trim() : "";
      if (target.startsWith("/") && target !== path) {
        const resolved = await this.readEntry(target, maxBytes);
        if (resolved.type === "file") return resolved.data;
      }
    }
    if (entry.type !== "file") {
      throw new HumanishError("HUMANISH_SANDBOX_FILE_NOT_REGULAR", `readFile: ${path} in sandbox ${this.id} is a ${entry.type}, not a regular file`, {
        next: "read a regular file",
      });
    }
    return entry.data;
  }

  private async readEntry(path: string, maxBytes: number): Promise<{ type: string; data: Uint8Array }> {
    let tar: Uint8Array;
    try {
      tar = (await this.docker.getArchive(this.id, path, { maxBytes })).tar;
    } catch (e) {
      if (isDockerApiError(e, 404)) {
        throw new HumanishError("HUMANISH_SANDBOX_FILE_NOT_FOUND", `readFile: ${path} does not exist in sandbox ${this.id}`, {
          next: "check the path (absolute, inside the sandbox)",
        });
      }
      if (e instanceof HumanishError && e.code === "HUMANISH_DOCKER_ARCHIVE_TOO_LARGE") {
        throw new HumanishError("HUMANISH_SANDBOX_FILE_TOO_LARGE", `readFile: ${path} in sandbox ${this.id} is over the ${maxBytes}-byte bound`, {
          next: "raise maxBytes or read a smaller file",
          details: e.details,
        });
      }
      throw wrap(e, "HUMANISH_SANDBOX_FILE_READ_FAILED", `readFile ${path} in sandbox ${this.id} failed`, "check the path and that the sandbox is running");
    }
    let first: ReturnType<typeof tarUnpack>[number] | undefined;
    try {
      first = tarUnpack(tar, { maxFileBytes: maxBytes })[0];
    } catch (e) {
      if (e instanceof HumanishError && e.code === "HUMANISH_TAR_ENTRY_TOO_LARGE") {
        throw new HumanishError("HUMANISH_SANDBOX_FILE_TOO_LARGE", `readFile: ${path} in sandbox ${this.id} is over the ${maxBytes}-byte bound`, {
          next: "raise maxBytes or read a smaller file",
        });
      }
      throw wrap(
        e,
        "HUMANISH_SANDBOX_FILE_READ_FAILED",
        `readFile ${path} in sandbox ${this.id}: the archive could not be read`,
        "check the engine version and retry",
      );
    }
    if (!first) {
      throw new HumanishError("HUMANISH_SANDBOX_FILE_READ_FAILED", `readFile: the engine returned an empty archive for ${path} in sandbox ${this.id}`, {
        next: "retry; check the engine version",
      });
    }
    return first;
  }

  release(): Promise<ReleaseProof> {
    this.watch?.stop();
    return releaseContainer(this.docker, this.id, this.opts.release);
  }
}

function killFailed(id: string, cmd: string[], cause: unknown): HumanishError {
  return new HumanishError(
    "HUMANISH_SANDBOX_EXEC_KILL_FAILED",
    `exec of ${JSON.stringify(cmd[0])} in sandbox ${id} was killed but its output never ended: ${dockerCause(cause)}`,
    {
      next: "release the sandbox (its processes may still run until then)",
      cause,
    },
  );
}

function splitPath(path: string, op: string): { dir: string; base: string } {
  if (typeof path !== "string" || !path.startsWith("/") || path.includes("\0")) {
    throw new HumanishError("HUMANISH_SANDBOX_PATH_INVALID", `${op}: path ${JSON.stringify(path)} must be absolute`, {
      next: "pass an absolute path such as /home/user/data.json",
    });
  }
  const norm = posix.normalize(path);
  const base = posix.basename(norm);
  if (!base || norm.endsWith("/")) {
    throw new HumanishError("HUMANISH_SANDBOX_PATH_INVALID", `${op}: path ${JSON.stringify(path)} names a directory, not a file`, { next: "pass a file path" });
  }
  return { dir: posix.dirname(norm), base };
}

/**
 * Creates the container of `o` ({@link containerCreateBody}). With `rootCaps` it first reads the
 * image's own user: root keeps capabilities only in a container that itself runs as root, and
 * execs that name no user still run as the image's user. Returns the exact id and that user.
 * @throws HumanishError HUMANISH_SANDBOX_IMAGE_MISSING (404), HUMANISH_SANDBOX_CREATE_FAILED, HUMANISH_DOCKER_UNAVAILABLE
 */
async function createContainer(
  docker: DockerClient,
  o: SandboxCreateOptions,
  limits: SandboxLimits,
  env: string[],
  rootCaps: string[] | undefined,
): Promise<{ id: string; defaultUser: string | undefined }> {
  try {
    const defaultUser = rootCaps ? (await docker.imageInspect(o.image)).Config?.User || undefined : undefined;
    const created = await docker.containerCreate(containerCreateBody(o, limits, env, rootCaps));
    return { id: created.Id, defaultUser };
  } catch (e) {
    if (isDockerApiError(e, 404)) {
      throw new HumanishError("HUMANISH_SANDBOX_IMAGE_MISSING", `create: image ${o.image} is not present in the Docker engine (${e.engineMessage})`, {
        next: "build it with `humanish runtime setup` (or `bash scripts/setup-images.sh`)",
        cause: e,
      });
    }
    throw wrap(
      e,
      "HUMANISH_SANDBOX_CREATE_FAILED",
      `create: container for run ${o.runId} from image ${o.image} could not be created`,
      "check `docker info` and the image; retry",
    );
  }
}

/**
 * Tells the caller the new id (`o.onCreated`), then starts the container. Either failing releases
 * the container by its exact id before the error is rethrown (a start failure as
 * HUMANISH_SANDBOX_START_FAILED).
 */
async function startCreated(sandbox: DockerSandbox, docker: DockerClient, o: SandboxCreateOptions): Promise<void> {
  try {
    await o.onCreated?.(sandbox.id);
  } catch (e) {
    await sandbox.release();
    throw e;
  }
  try {
    await docker.containerStart(sandbox.id);
  } catch (e) {
    await sandbox.release();
    throw wrap(
      e,
      "HUMANISH_SANDBOX_START_FAILED",
      `create: container ${sandbox.id} for run ${o.runId} could not be started`,
      "check `docker info` and the image's entrypoint requirements (`sleep` must exist)",
    );
  }
}

/** One sandbox of the provider made with `opts` (see {@link createDockerSandboxProvider}). */
async function createSandbox(opts: DockerSandboxProviderOptions, o: SandboxCreateOptions): Promise<Sandbox> {
  const limits = createLimits(o);
  const env = envList(o.env, "create");
  const rootCaps = rootFileCaps(o);
  const { id, defaultUser } = await createContainer(opts.docker, o, limits, env, rootCaps);
  const sandbox = new DockerSandbox(id, opts.docker, opts, limits.diskBytes, defaultUser);
  await startCreated(sandbox, opts.docker, o);
  sandbox.startDiskWatch();
  return sandbox;
}

/**
 * Creates the Docker sandbox provider. `create` makes and starts a hardened container, calling
 * `onCreated(id)` right after the create call (before start or any provisioning). If `onCreated` or
 * start fails, the container is released by its exact id before the error is rethrown.
 * Errors: `HUMANISH_SANDBOX_IMAGE_MISSING` (404 on create), `HUMANISH_SANDBOX_CREATE_FAILED`
 * (e.g. 409), `HUMANISH_SANDBOX_START_FAILED`, `HUMANISH_DOCKER_UNAVAILABLE`, `HUMANISH_SANDBOX_ENV_INVALID`.
 */
export function createDockerSandboxProvider(opts: DockerSandboxProviderOptions): SandboxProvider {
  return {
    provider: "docker",
    create: (o: SandboxCreateOptions): Promise<Sandbox> => createSandbox(opts, o),
  };
}

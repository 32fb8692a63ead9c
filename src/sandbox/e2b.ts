/**
 * The E2B backend of the sandbox seam (`Sandbox`/`SandboxProvider` in ./types.ts), on the `e2b`
 * SDK. Besides src/sandbox/e2b this is the only module that imports `e2b` (ARCHITECTURE.md).
 *
 * - `create` needs an API key (`HUMANISH_E2B_KEY_MISSING` otherwise), passes the sandbox
 *   lifetime as the E2B timeout (E2B kills the sandbox when it expires) and reports the exact
 *   sandbox id through `onCreated` before anything runs in it.
 * - `exec` runs the argv (shell-quoted; E2B always runs `bash -l -c`) with our own deadline:
 *   on expiry the process is killed by pid and `timedOut` is true.
 * - Memory/CPU/pids limits of `SandboxCreateOptions` come from the E2B template, not from the
 *   call (E2B sizes sandboxes per template); `network: "none"` maps to no internet access.
 * - `release` kills by exact id under an outer deadline. It is `released` only on the API's
 *   real confirmation (DELETE answered 2xx, or 404 followed by a 404 from getInfo); never
 *   because a debug flag short-circuited the call — debug mode is always switched off here,
 *   whatever `E2B_DEBUG` says.
 */
import { CommandExitError, type CommandHandle, Sandbox as E2BSandbox, NotFoundError } from "e2b";
import { concatBytes } from "../bytes/concat.ts";
import { HumanishError } from "../errors.ts";
import type { ExecOptions, ExecResult, ReleaseProof, Sandbox, SandboxCreateOptions, SandboxProvider } from "./types.ts";

/** E2B's stock template (Debian-based, user `user`, home /home/user). */
export const DEFAULT_E2B_TEMPLATE = "base";

/** Where the SDK connects. Defaults are E2B's cloud; tests point both at local servers. */
export interface E2BConnection {
  /** REST API base, e.g. `https://api.e2b.app`. */
  apiUrl?: string;
  /** envd base URL for every sandbox (the SDK's `sandboxUrl`). */
  sandboxUrl?: string;
  /** E2B domain. */
  domain?: string;
  /** Per-request deadline of SDK API calls, ms (default 30 000). */
  requestTimeoutMs?: number;
}

/** Options of {@link createE2BSandboxProvider}. Units: ms. */
export interface E2BSandboxProviderOptions {
  /** The E2B API key (from `E2B_API_KEY`); checked at `create`. Never logged. */
  apiKey: string | undefined;
  /** Sandbox lifetime, passed to E2B as the sandbox timeout (default 300 000). */
  sandboxTimeoutMs?: number;
  /** Outer deadline of one kill (default 30 000). */
  killDeadlineMs?: number;
  connection?: E2BConnection;
}

const DEFAULT_SANDBOX_TIMEOUT_MS = 300_000;
const DEFAULT_KILL_DEADLINE_MS = 30_000;
/** Extra time the SDK stream may stay open past our own command deadline, ms. */
const STREAM_GRACE_MS = 15_000;
/** Deadline for killing a timed-out command and draining its stream, ms. */
const KILL_COMMAND_DEADLINE_MS = 10_000;

/** POSIX single-quote one argument. */
export function shellQuote(arg: string): string {
  if (/^[A-Za-z0-9_@%+=:,./-]+$/.test(arg)) return arg;
  return `'${arg.replace(/'/g, `'\\''`)}'`;
}

type Settled<T> = { kind: "value"; value: T } | { kind: "error"; error: unknown } | { kind: "deadline" };

/** Races `p` against a deadline; never throws. */
async function withDeadline<T>(p: Promise<T>, ms: number): Promise<Settled<T>> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const deadline = new Promise<Settled<T>>((resolve) => {
    timer = setTimeout(() => resolve({ kind: "deadline" }), ms);
  });
  const settled = p.then(
    (value): Settled<T> => ({ kind: "value", value }),
    (error): Settled<T> => ({ kind: "error", error }),
  );
  try {
    return await Promise.race([settled, deadline]);
  } finally {
    clearTimeout(timer);
  }
}

function message(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

class E2BSandboxHandle implements Sandbox {
  readonly provider = "e2b" as const;
  readonly id: string;

  constructor(
    private readonly sbx: E2BSandbox,
    private readonly connectionOpts: Record<string, unknown>,
    private readonly killDeadlineMs: number,
  ) {
    this.id = sbx.sandboxId;
  }

  async exec(opts: ExecOptions): Promise<ExecResult> {
    if (opts.cmd.length === 0)
      throw new HumanishError("HUMANISH_SANDBOX_EXEC_INVALID", "exec: cmd must not be empty", { next: 'pass an argv such as ["bash", "-c", "ls"]' });
    if (opts.timeoutMs !== undefined && !(opts.timeoutMs > 0)) {
      throw new HumanishError("HUMANISH_SANDBOX_EXEC_INVALID", `exec: timeoutMs must be a positive number of ms (got ${opts.timeoutMs})`, {
        next: "omit timeoutMs or pass a positive value",
      });
    }
    if (opts.signal?.aborted) {
      throw new HumanishError("HUMANISH_SANDBOX_EXEC_ABORTED", `exec in E2B sandbox ${this.id} was aborted before it started`, {
        next: "nothing ran; retry without aborting",
      });
    }
    const started = performance.now();
    const enc = new TextEncoder();
    const out: Uint8Array[] = [];
    const err: Uint8Array[] = [];
    let handle: CommandHandle;
    try {
      handle = await this.sbx.commands.run(opts.cmd.map(shellQuote).join(" "), {
        background: true,
        ...(opts.cwd !== undefined ? { cwd: opts.cwd } : {}),
        ...(opts.env !== undefined ? { envs: opts.env } : {}),
        ...(opts.user !== undefined ? { user: opts.user } : {}),
        timeoutMs: (opts.timeoutMs ?? 24 * 3_600_000) + STREAM_GRACE_MS,
        onStdout: (d: string) => {
          const b = enc.encode(d);
          out.push(b);
          opts.onStdout?.(b);
        },
        onStderr: (d: string) => {
          const b = enc.encode(d);
          err.push(b);
          opts.onStderr?.(b);
        },
      });
    } catch (e) {
      throw new HumanishError("HUMANISH_SANDBOX_EXEC_FAILED", `exec in E2B sandbox ${this.id} could not start: ${message(e)}`, {
        next: "check that the sandbox is still running (it may have reached its timeout); reset for a new one",
        cause: e,
      });
    }

    let killedBy: "timeout" | "abort" | null = null;
    let wake: (() => void) | null = null;
    const stop = new Promise<void>((resolve) => {
      wake = resolve;
    });
    const timer =
      opts.timeoutMs !== undefined
        ? setTimeout(() => {
            killedBy ??= "timeout";
            wake?.();
          }, opts.timeoutMs)
        : undefined;
    const onAbort = () => {
      killedBy ??= "abort";
      wake?.();
    };
    opts.signal?.addEventListener("abort", onAbort);
    const waited = handle.wait().then(
      (r) => ({ ok: true as const, exitCode: r.exitCode }),
      (e: unknown) => ({ ok: false as const, e }),
    );
    try {
      let first = await Promise.race([waited, stop.then(() => null)]);
      if (first === null) {
        await withDeadline(handle.kill(), KILL_COMMAND_DEADLINE_MS);
        const drained = await withDeadline(waited, KILL_COMMAND_DEADLINE_MS);
        if (drained.kind !== "value") await handle.disconnect().catch(() => undefined);
        first = drained.kind === "value" ? drained.value : { ok: false as const, e: new Error("killed") };
      }
      const durationMs = performance.now() - started;
      if (killedBy) {
        return { exitCode: 137, stdout: concatBytes(out), stderr: concatBytes(err), timedOut: true, durationMs };
      }
      if (first.ok) return { exitCode: first.exitCode, stdout: concatBytes(out), stderr: concatBytes(err), timedOut: false, durationMs };
      if (first.e instanceof CommandExitError) {
        return { exitCode: first.e.exitCode, stdout: concatBytes(out), stderr: concatBytes(err), timedOut: false, durationMs };
      }
      throw new HumanishError("HUMANISH_SANDBOX_EXEC_FAILED", `exec in E2B sandbox ${this.id} failed: ${message(first.e)}`, {
        next: "check that the sandbox is still running (it may have reached its timeout); reset for a new one",
        cause: first.e,
      });
    } finally {
      clearTimeout(timer);
      opts.signal?.removeEventListener("abort", onAbort);
    }
  }

  async writeFile(path: string, data: Uint8Array | string, mode?: number): Promise<void> {
    if (!path.startsWith("/"))
      throw new HumanishError("HUMANISH_SANDBOX_PATH_INVALID", `writeFile: path ${JSON.stringify(path)} must be absolute`, {
        next: "pass an absolute path such as /home/user/data.json",
      });
    try {
      const body = typeof data === "string" ? data : (data.buffer.slice(data.byteOffset, data.byteOffset + data.byteLength) as ArrayBuffer);
      await this.sbx.files.write(path, body);
    } catch (e) {
      throw new HumanishError("HUMANISH_SANDBOX_WRITE_FAILED", `writeFile ${path} in E2B sandbox ${this.id} failed: ${message(e)}`, {
        next: "write under /home/user; check the sandbox is running",
        cause: e,
      });
    }
    if (mode !== undefined) {
      const res = await this.exec({ cmd: ["chmod", mode.toString(8), path], timeoutMs: 30_000 });
      if (res.exitCode !== 0) {
        throw new HumanishError("HUMANISH_SANDBOX_WRITE_FAILED", `writeFile ${path}: chmod ${mode.toString(8)} exited ${res.exitCode}`, {
          next: "check the file's owner",
        });
      }
    }
  }

  async readFile(path: string, maxBytes = 16 * 1024 * 1024): Promise<Uint8Array> {
    if (!path.startsWith("/"))
      throw new HumanishError("HUMANISH_SANDBOX_PATH_INVALID", `readFile: path ${JSON.stringify(path)} must be absolute`, { next: "pass an absolute path" });
    // Size and type first (a FIFO or a huge file is never downloaded).
    const probe = await this.exec({ cmd: ["stat", "-L", "-c", "%F %s", "--", path], timeoutMs: 30_000 });
    const stat = new TextDecoder().decode(probe.stdout).trim();
    const m = /^(.*) ([0-9]+)$/.exec(stat);
    if (probe.exitCode !== 0 || !m) {
      throw new HumanishError("HUMANISH_SANDBOX_READ_FAILED", `readFile ${path} in E2B sandbox ${this.id}: no such file`, { next: "check the path" });
    }
    if (m[1] !== "regular file" && m[1] !== "regular empty file") {
      throw new HumanishError("HUMANISH_SANDBOX_READ_FAILED", `readFile ${path}: not a regular file (${m[1]})`, { next: "read a regular file" });
    }
    if (Number(m[2]) > maxBytes) {
      throw new HumanishError("HUMANISH_SANDBOX_READ_TOO_LARGE", `readFile ${path}: ${m[2]} bytes exceeds the ${maxBytes}-byte limit`, {
        next: "read a smaller file or raise maxBytes",
      });
    }
    try {
      const bytes = await this.sbx.files.read(path, { format: "bytes" });
      if (bytes.length > maxBytes) {
        throw new HumanishError("HUMANISH_SANDBOX_READ_TOO_LARGE", `readFile ${path}: ${bytes.length} bytes exceeds the ${maxBytes}-byte limit`, {
          next: "read a smaller file or raise maxBytes",
        });
      }
      return bytes;
    } catch (e) {
      if (e instanceof HumanishError) throw e;
      throw new HumanishError("HUMANISH_SANDBOX_READ_FAILED", `readFile ${path} in E2B sandbox ${this.id} failed: ${message(e)}`, {
        next: "check the path and that the sandbox is running",
        cause: e,
      });
    }
  }

  /** Kills by exact id; `released` only on the API's confirmation. Never throws. */
  async release(): Promise<ReleaseProof> {
    return releaseE2BSandbox(this.id, this.connectionOpts, this.killDeadlineMs);
  }
}

/**
 * Kills one E2B sandbox by exact id under an outer deadline and confirms it. Never throws.
 * `connectionOpts` are the SDK options (apiKey, apiUrl, …); debug is forced off.
 */
export async function releaseE2BSandbox(id: string, connectionOpts: Record<string, unknown>, killDeadlineMs = DEFAULT_KILL_DEADLINE_MS): Promise<ReleaseProof> {
  const at = new Date().toISOString();
  const proof = (outcome: ReleaseProof["outcome"], reason: string): ReleaseProof => ({ id, provider: "e2b", outcome, reason, at });
  const opts = { ...connectionOpts, debug: false };
  const killed = await withDeadline(E2BSandbox.kill(id, opts), killDeadlineMs);
  if (killed.kind === "deadline") return proof("unconfirmed", `kill did not settle within ${killDeadlineMs} ms; the id stays owned for retry`);
  if (killed.kind === "error") return proof("unconfirmed", `kill failed: ${message(killed.error)}`);
  if (killed.value === true) return proof("released", "kill confirmed (DELETE /sandboxes/{id} answered 2xx)");
  // 404 on kill: confirm it is really gone before calling it released.
  const info = await withDeadline(E2BSandbox.getInfo(id, opts), killDeadlineMs);
  if (info.kind === "error" && info.error instanceof NotFoundError) return proof("released", "already gone (kill 404, getInfo 404)");
  if (info.kind === "deadline") return proof("unconfirmed", `kill answered 404 but getInfo did not settle within ${killDeadlineMs} ms`);
  if (info.kind === "error") return proof("unconfirmed", `kill answered 404 and getInfo failed: ${message(info.error)}`);
  return proof("unconfirmed", "kill answered 404 but getInfo still lists the sandbox");
}

/**
 * Creates the E2B provider. `create` throws `HUMANISH_E2B_KEY_MISSING` without a key,
 * `HUMANISH_SANDBOX_CREATE_FAILED` when E2B refuses; if `onCreated` throws, the sandbox is
 * released by its exact id before the error is rethrown.
 */
export function createE2BSandboxProvider(opts: E2BSandboxProviderOptions): SandboxProvider {
  const sandboxTimeoutMs = opts.sandboxTimeoutMs ?? DEFAULT_SANDBOX_TIMEOUT_MS;
  const killDeadlineMs = opts.killDeadlineMs ?? DEFAULT_KILL_DEADLINE_MS;
  return {
    provider: "e2b",
    async create(o: SandboxCreateOptions): Promise<Sandbox> {
      const apiKey = opts.apiKey;
      if (!apiKey) {
        throw new HumanishError("HUMANISH_E2B_KEY_MISSING", "E2B_API_KEY is not set: the e2b backend needs it to create a sandbox", {
          next: "export E2B_API_KEY (or pass it with --env-file), then reset again (or use --backend docker)",
        });
      }
      const connectionOpts: Record<string, unknown> = {
        apiKey,
        debug: false,
        requestTimeoutMs: opts.connection?.requestTimeoutMs ?? 30_000,
        ...(opts.connection?.apiUrl ? { apiUrl: opts.connection.apiUrl } : {}),
        ...(opts.connection?.sandboxUrl ? { sandboxUrl: opts.connection.sandboxUrl } : {}),
        ...(opts.connection?.domain ? { domain: opts.connection.domain } : {}),
      };
      let sbx: E2BSandbox;
      try {
        sbx = await E2BSandbox.create(o.image || DEFAULT_E2B_TEMPLATE, {
          ...connectionOpts,
          timeoutMs: sandboxTimeoutMs,
          metadata: { ...(o.labels ?? {}), "humanish.run": o.runId, "humanish.owner": "humanish" },
          ...(o.env ? { envs: o.env } : {}),
          allowInternetAccess: o.network === "bridge",
        });
      } catch (e) {
        throw new HumanishError(
          "HUMANISH_SANDBOX_CREATE_FAILED",
          `create: E2B sandbox from template ${o.image || DEFAULT_E2B_TEMPLATE} for run ${o.runId} could not be created: ${message(e)}`,
          {
            next: "check E2B_API_KEY, the template id and your E2B quota; retry",
            cause: e,
          },
        );
      }
      const handle = new E2BSandboxHandle(sbx, connectionOpts, killDeadlineMs);
      try {
        await o.onCreated?.(handle.id);
      } catch (e) {
        await handle.release();
        throw e;
      }
      return handle;
    },
  };
}

/**
 * Native helpers of the guest desktop: `xdotool` for input and
 * `xwd` for capture, each spawned directly (no shell) with a minimal fixed environment, a 10 s
 * deadline and bounded output. Helper stderr is consumed and counted, never returned.
 */
import { HumanishError } from "../errors.ts";

/** Fixed paths of the helpers inside the guest image. */
export const XDOTOOL = "/usr/bin/xdotool";
export const XWD = "/usr/bin/xwd";

/** Environment handed to native helpers: display + auth only, nothing inherited. */
export interface NativeEnv {
  /** X display, `:N` (validated against `^:[0-9]{1,3}(\.[0-9])?$`). */
  display: string;
  /** Absolute path of the Xauthority file. */
  xauthority: string;
  /** Absolute HOME for the helper (a private directory). */
  home: string;
}

/** Result of one helper run. */
export interface HelperResult {
  stdout: Uint8Array;
  /** Bytes written to stderr (the text itself is discarded). */
  stderrBytes: number;
}

/** Options of {@link runHelper}. */
export interface HelperOptions {
  /** Bytes written to the helper's stdin, then closed. */
  stdin?: Uint8Array;
  /** Deadline in ms (default 10,000). */
  timeoutMs?: number;
  /** Max stdout bytes (default 16,384); more is a failure. */
  maxStdout?: number;
  /** Exact stdout size expected (capture); a different size is a failure. */
  exactStdout?: number;
}

/** Failure of a helper: the caller decides the executor disposition. */
export class HelperFailure extends HumanishError {
  /** `exit` (non-zero), `timeout`, `output` (over the bound), `stderr` (any stderr when forbidden), `spawn`. */
  readonly kind: "exit" | "timeout" | "output" | "stderr" | "spawn";
  constructor(kind: HelperFailure["kind"], helper: string, detail: string) {
    super("HUMANISH_GUEST_HELPER_FAILED", `${helper}: ${detail}`, { next: "inspect the guest image (xdotool, x11-apps) and the Xvfb display" });
    this.kind = kind;
  }
}

/** Validate a {@link NativeEnv}; throws `HUMANISH_GUEST_CONFIG_INVALID` naming the field. */
export function checkNativeEnv(env: NativeEnv): NativeEnv {
  if (!/^:[0-9]{1,3}(\.[0-9])?$/.test(env.display)) {
    throw new HumanishError("HUMANISH_GUEST_CONFIG_INVALID", "display must look like :0", { next: "pass a display such as :0" });
  }
  for (const k of ["xauthority", "home"] as const) {
    if (!env[k].startsWith("/"))
      throw new HumanishError("HUMANISH_GUEST_CONFIG_INVALID", `${k} must be an absolute path`, { next: `set ${k} to an absolute path` });
  }
  return env;
}

/**
 * Run one helper with `argv` (argv[0] an absolute path), bounded as described above.
 *
 * @throws HelperFailure on spawn failure, non-zero exit, deadline, oversize output, or (when
 *   `forbidStderr`) any stderr byte.
 */
export async function runHelper(env: NativeEnv, argv: string[], opts: HelperOptions & { forbidStderr?: boolean } = {}): Promise<HelperResult> {
  const name = argv[0]!.split("/").pop()!;
  const max = opts.exactStdout ?? opts.maxStdout ?? 16_384;
  let proc: ReturnType<typeof Bun.spawn>;
  try {
    proc = Bun.spawn(argv, {
      env: { PATH: "/usr/bin:/bin", HOME: env.home, DISPLAY: env.display, XAUTHORITY: env.xauthority, LANG: "C.UTF-8", LC_ALL: "C.UTF-8" },
      stdin: opts.stdin ? "pipe" : "ignore",
      stdout: "pipe",
      stderr: "pipe",
    });
  } catch (e) {
    throw new HelperFailure("spawn", name, `could not start (${(e as Error).message})`);
  }
  if (opts.stdin) {
    const sink = proc.stdin as import("bun").FileSink;
    sink.write(opts.stdin);
    await sink.end();
  }
  let timedOut = false;
  let over = false;
  const timer = setTimeout(() => {
    timedOut = true;
    proc.kill("SIGKILL");
  }, opts.timeoutMs ?? 10_000);
  const readAll = async (stream: ReadableStream<Uint8Array>, limit: number): Promise<{ chunks: Uint8Array[]; total: number }> => {
    const chunks: Uint8Array[] = [];
    let total = 0;
    for await (const chunk of stream) {
      total += chunk.length;
      if (total > limit) {
        over = true;
        proc.kill("SIGKILL");
        continue;
      }
      chunks.push(chunk);
    }
    return { chunks, total };
  };
  const [out, err] = await Promise.all([readAll(proc.stdout as ReadableStream<Uint8Array>, max), readAll(proc.stderr as ReadableStream<Uint8Array>, 16_384)]);
  const code = await proc.exited;
  clearTimeout(timer);
  if (timedOut) throw new HelperFailure("timeout", name, "deadline exceeded");
  if (over) throw new HelperFailure("output", name, "output over its bound");
  if (code !== 0) throw new HelperFailure("exit", name, `exited with ${code}`);
  if (opts.forbidStderr && err.total > 0) throw new HelperFailure("stderr", name, "wrote to stderr");
  if (opts.exactStdout !== undefined && out.total !== opts.exactStdout)
    throw new HelperFailure("output", name, "output size differs from the expected frame size");
  const stdout = new Uint8Array(out.total);
  let off = 0;
  for (const c of out.chunks) {
    stdout.set(c, off);
    off += c.length;
  }
  return { stdout, stderrBytes: err.total };
}

/** Run `xdotool <args…>`; args are fixed-syntax tokens built by the executor, never participant strings. */
export function xdotool(env: NativeEnv, args: string[], opts: HelperOptions & { forbidStderr?: boolean } = {}): Promise<HelperResult> {
  return runHelper(env, [XDOTOOL, ...args], opts);
}

/** Capture the whole root window as XWD bytes (`xwd -root -silent`); at most 80 MiB. */
export function captureXwd(env: NativeEnv): Promise<HelperResult> {
  return runHelper(env, [XWD, "-root", "-silent"], { maxStdout: 80 * 1024 * 1024 });
}

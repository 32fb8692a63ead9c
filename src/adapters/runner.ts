/**
 * The host side of the scorer's process (./child.ts). The request goes in a file, the replies
 * come back in a file the host polls (never a pipe: a process the scorer leaves behind holding
 * its stdout open keeps nobody waiting), within {@link MAX_CHILD_OUTPUT_BYTES}; at a deadline,
 * and when the child is done, everything the scorer started is killed.
 *
 * Two confinements (./confine.ts):
 * - `container`: a one-shot container of its own (src/sandbox/oneshot.ts) running this same
 *   Bun runtime, bind-mounted read-only, on ./child.ts — the compiled binary itself as
 *   `__scorer-child`, or from the source tree Bun on the child's two files. It sees, read-only,
 *   a copy of the scorer's folder at `/scorer` (dot-entries and symlinks left out), the request
 *   at `/in/request.json`, and writes only `/out/replies` and a small `/tmp`; it runs as
 *   `nobody` with `HOME=/tmp`. The container is killed at the deadline and removed by its exact
 *   id when the child ends; the proof (released / unconfirmed) comes back in the result.
 * - `unconfined` (opted in): this same program as a child process in a session and process
 *   group of its own with a scrubbed environment (PATH, HOME, TMPDIR, LANG); the whole group is
 *   SIGKILLed at the deadline and when the child ends.
 */
import { randomBytes } from "node:crypto";
import { chmodSync, copyFileSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, statSync, writeFileSync } from "node:fs";
import { open } from "node:fs/promises";
import { tmpdir } from "node:os";
import { basename, dirname, join, resolve } from "node:path";
import { sha256Hex } from "../bytes/sha256.ts";
import { startOneShot } from "../sandbox/oneshot.ts";
import type { ReleaseProof } from "../sandbox/types.ts";
import type { ChildRequest, HookReply } from "./child.ts";
import type { Confinement } from "./confine.ts";

/** Most bytes read from the child's replies (the adapter's files are at most 16 MiB together). */
export const MAX_CHILD_OUTPUT_BYTES = 24 * 1024 * 1024;

/** Deadline of importing the module in the child, ms. */
export const SCORER_LOAD_TIMEOUT_MS = 30_000;

/** The internal command the child runs. */
export const SCORER_CHILD_COMMAND = "__scorer-child";

/** Most bytes of the scorer's folder copied into its container. */
export const MAX_SCORER_FOLDER_BYTES = 64 * 1024 * 1024;
/** Most files and folders of the scorer's folder copied into its container. */
export const MAX_SCORER_FOLDER_ENTRIES = 4000;

/** Limits of the scorer's container: memory (no swap) bytes, processes, CPUs, `/tmp` bytes. */
export const SCORER_CONTAINER_LIMITS = { memoryBytes: 1024 ** 3, pidsLimit: 64, cpus: 1, tmpBytes: 64 * 1024 * 1024 } as const;

/** How often the replies file is read while the child runs, ms. */
const POLL_MS = 50;

/** What the child said after importing the module. */
export type LoadReply = { t: "loaded"; exports: string[]; notFunctions: string[]; hasDefault: boolean } | { t: "load-failed"; message: string };

/** How the child ended, beside its replies. */
export interface ChildResult {
  load?: LoadReply;
  hooks: HookReply[];
  /** Why the replies stopped early: a deadline (`timeout`), the byte bound (`overflow`), or the child exiting (`exited`). */
  stopped?: { kind: "timeout" | "overflow" | "exited"; detail: string };
  /** `container`: the proof of the container's removal. */
  release?: ReleaseProof;
}

/** True in the compiled binary (its modules live in Bun's embedded file system). */
function compiled(): boolean {
  return import.meta.path.startsWith("/$bunfs/") || import.meta.path.startsWith("B:/~BUN/");
}

/** The command line that runs the child on the host (compiled: the binary; source tree: bun on ./child.ts). */
export function selfCommand(): string[] {
  return compiled() ? [process.execPath, SCORER_CHILD_COMMAND] : [process.execPath, resolve(import.meta.dir, "child.ts"), SCORER_CHILD_COMMAND];
}

/** The only environment an unconfined scorer sees. */
export function scrubbedEnv(env: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const out: Record<string, string> = {};
  for (const k of ["PATH", "HOME", "TMPDIR", "LANG"]) if (env[k] !== undefined) out[k] = env[k]!;
  return out;
}

/** The whole environment of a confined scorer (nothing of the host's). */
export const CONTAINER_ENV: Readonly<Record<string, string>> = {
  PATH: "/usr/local/bin:/usr/bin:/bin",
  HOME: "/tmp",
  TMPDIR: "/tmp",
  LANG: "C.UTF-8",
  // The root file system is read-only: Bun keeps no transpiler cache.
  BUN_RUNTIME_TRANSPILER_CACHE_PATH: "0",
};

/**
 * Copy the folder `from` into `to` (created), world-readable so the container's `nobody` reads it:
 * regular files and folders only; dot-entries (`.env`, `.git`, `.humanish`) and symlinks are left
 * out. Throws an Error naming the bound when the folder is over {@link MAX_SCORER_FOLDER_BYTES}
 * or {@link MAX_SCORER_FOLDER_ENTRIES}.
 */
export function copyScorerFolder(from: string, to: string): void {
  let bytes = 0;
  let entries = 0;
  const walk = (src: string, dst: string) => {
    mkdirSync(dst);
    chmodSync(dst, 0o755);
    for (const e of readdirSync(src, { withFileTypes: true })) {
      if (e.name.startsWith(".")) continue;
      const s = join(src, e.name);
      const st = lstatSync(s);
      if (!st.isFile() && !st.isDirectory()) continue;
      entries += 1;
      bytes += st.isFile() ? st.size : 0;
      if (entries > MAX_SCORER_FOLDER_ENTRIES || bytes > MAX_SCORER_FOLDER_BYTES) {
        throw new Error(
          `the scorer's folder ${from} is over ${MAX_SCORER_FOLDER_ENTRIES} entries or ${MAX_SCORER_FOLDER_BYTES} bytes; it is copied into the scorer's sandbox, so keep the scorer in a small folder of its own`,
        );
      }
      if (st.isDirectory()) walk(s, join(dst, e.name));
      else {
        copyFileSync(s, join(dst, e.name));
        chmodSync(join(dst, e.name), 0o644);
      }
    }
  };
  walk(from, to);
}

/** A started child: when it ended, how to kill everything it started, and the release proof (container). */
interface Launched {
  exited: Promise<unknown>;
  killAll(): Promise<void>;
  finish(): Promise<ReleaseProof | undefined>;
}

/** Start the child in its container; `work` holds the request, the replies file and the copy of the scorer's folder. */
async function launchContainer(c: Extract<Confinement, { mode: "container" }>, work: string, modulePath: string, digest?: string): Promise<Launched> {
  copyScorerFolder(dirname(modulePath), join(work, "scorer"));
  // The copy is what runs: it must be the module that was checked, not one changed since.
  if (digest !== undefined && sha256Hex(new Uint8Array(readFileSync(join(work, "scorer", basename(modulePath))))) !== digest) {
    throw new Error(`${basename(modulePath)} changed on disk after it was loaded (its digest no longer matches), so it was not run`);
  }
  const runtime = realpathSync(process.execPath);
  const mounts = [
    { hostPath: join(work, "scorer"), containerPath: "/scorer", readOnly: true },
    { hostPath: join(work, "request.json"), containerPath: "/in/request.json", readOnly: true },
    { hostPath: join(work, "replies"), containerPath: "/out/replies", readOnly: false },
  ];
  // A runtime `nobody` cannot run is given as a world-executable copy.
  const usable = (statSync(runtime).mode & 0o005) === 0o005;
  const runtimeHost = usable ? runtime : join(work, "runtime");
  if (!usable) {
    copyFileSync(runtime, runtimeHost);
    chmodSync(runtimeHost, 0o755);
  }
  mounts.push({ hostPath: runtimeHost, containerPath: "/opt/humanish/runtime", readOnly: true });
  let cmd: string[];
  if (compiled()) cmd = ["/opt/humanish/runtime", SCORER_CHILD_COMMAND];
  else {
    for (const f of ["child.ts", "freeze.ts"])
      mounts.push({ hostPath: resolve(import.meta.dir, f), containerPath: `/opt/humanish/adapters/${f}`, readOnly: true });
    cmd = ["/opt/humanish/runtime", "--no-install", "/opt/humanish/adapters/child.ts", SCORER_CHILD_COMMAND];
  }
  const shot = await startOneShot(c.docker, {
    image: c.image,
    cmd: [...cmd, "/in/request.json", "/out/replies"],
    env: { ...CONTAINER_ENV },
    user: "65534:65534",
    workdir: "/tmp",
    mounts,
    ...SCORER_CONTAINER_LIMITS,
    fileBytes: MAX_CHILD_OUTPUT_BYTES + 1024 * 1024,
    labels: { "humanish.role": "scorer" },
  });
  return {
    exited: shot.exited,
    killAll: () => shot.kill(),
    finish: () => shot.release(),
  };
}

/** Start the child on the host, in a process group of its own. */
function launchUnconfined(work: string): Launched {
  const proc = Bun.spawn([...selfCommand(), join(work, "request.json"), join(work, "replies")], {
    cwd: work,
    env: scrubbedEnv(),
    stdin: "ignore",
    stdout: "ignore",
    stderr: "ignore",
    // setsid: the child leads a new process group, so one kill reaches what it started.
    detached: true,
  });
  const killAll = async () => {
    try {
      process.kill(-proc.pid, "SIGKILL");
    } catch {
      // the group is already empty
    }
  };
  return {
    exited: proc.exited,
    killAll,
    finish: async () => {
      await killAll();
      return undefined;
    },
  };
}

/**
 * Run the child on `req` (without its nonce) where `confinement` says. `loadMs` bounds the
 * import; `hookMs` each hook, counted from the previous reply. Never throws for what the scorer
 * does; throws when its container cannot be started, its folder not copied, or (with `digest`,
 * the module's SHA-256 hex) the copy is not the module that was loaded.
 */
export async function runChild(
  req: Omit<ChildRequest, "nonce">,
  o: { loadMs: number; hookMs: number; confinement: Confinement; digest?: string },
): Promise<ChildResult> {
  const nonce = randomBytes(12).toString("hex");
  const work = realpathSync(mkdtempSync(join(tmpdir(), "humanish-scorer-run-")));
  try {
    const inContainer = o.confinement.mode === "container";
    const path = inContainer ? `/scorer/${basename(req.path)}` : req.path;
    writeFileSync(join(work, "request.json"), JSON.stringify({ ...req, path, nonce }), { mode: 0o644 });
    chmodSync(join(work, "request.json"), 0o644);
    writeFileSync(join(work, "replies"), "");
    chmodSync(join(work, "replies"), 0o666);
    const child = o.confinement.mode === "container" ? await launchContainer(o.confinement, work, req.path, o.digest) : launchUnconfined(work);
    const result = await collect(child, join(work, "replies"), nonce, o);
    await child.killAll();
    const release = await child.finish();
    return { ...result, ...(release ? { release } : {}) };
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/** Read the replies while the child runs, re-arming the deadline on each; stop at its exit, the deadline or the byte bound. */
async function collect(child: Launched, repliesPath: string, nonce: string, o: { loadMs: number; hookMs: number }): Promise<Omit<ChildResult, "release">> {
  const result: Omit<ChildResult, "release"> = { hooks: [] };
  let deadline = Date.now() + o.loadMs;
  let deadlineWhat = `the module did not load within ${o.loadMs} ms`;
  let exited = false;
  let exitNote = "";
  void child.exited.then((code) => {
    exited = true;
    exitNote = `the scorer's process exited (code ${code ?? "unknown"})`;
  });
  const prefix = `${nonce} `;
  const decoder = new TextDecoder();
  let pending = "";
  let offset = 0;
  const take = (line: string) => {
    if (!line.startsWith(prefix)) return;
    let msg: { t?: string };
    try {
      msg = JSON.parse(line.slice(prefix.length)) as { t?: string };
    } catch {
      return;
    }
    if (msg.t === "loaded" || msg.t === "load-failed") result.load = msg as LoadReply;
    else if (msg.t === "hook") result.hooks.push(msg as HookReply);
    else return;
    deadline = Date.now() + o.hookMs;
    deadlineWhat = `a hook did not finish within ${o.hookMs} ms`;
  };
  const fh = await open(repliesPath, "r");
  try {
    for (;;) {
      const last = exited;
      const size = (await fh.stat()).size;
      if (size > MAX_CHILD_OUTPUT_BYTES) {
        result.stopped = { kind: "overflow", detail: `the scorer wrote more than ${MAX_CHILD_OUTPUT_BYTES} bytes` };
        break;
      }
      if (size > offset) {
        const buf = new Uint8Array(size - offset);
        const { bytesRead } = await fh.read(buf, 0, buf.byteLength, offset);
        offset += bytesRead;
        // Search only the new text for line ends, so a long reply costs linear time.
        const from = pending.length;
        pending += decoder.decode(buf.subarray(0, bytesRead), { stream: true });
        let nl = pending.indexOf("\n", from);
        while (nl >= 0) {
          take(pending.slice(0, nl));
          pending = pending.slice(nl + 1);
          nl = pending.indexOf("\n");
        }
      }
      // Read once more after the exit was seen, so the last reply is never lost.
      if (last) {
        result.stopped = { kind: "exited", detail: exitNote };
        break;
      }
      if (Date.now() >= deadline) {
        result.stopped = { kind: "timeout", detail: deadlineWhat };
        break;
      }
      await Promise.race([child.exited, Bun.sleep(POLL_MS)]);
    }
  } finally {
    await fh.close();
  }
  return result;
}

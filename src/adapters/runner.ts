/**
 * The host side of the scorer's process (./child.ts): spawn this same program (the compiled
 * binary itself, or `bun src/cli/main.ts` in the source tree) as `__scorer-child` with a scrubbed
 * environment (only PATH, HOME, TMPDIR, LANG: no provider key or other secret), send the request
 * on stdin, read the nonce-prefixed replies within {@link MAX_CHILD_OUTPUT_BYTES}, and kill the
 * child (SIGKILL, so a synchronous loop stops too) when a deadline passes.
 */
import { randomBytes } from "node:crypto";
import { tmpdir } from "node:os";
import { resolve } from "node:path";
import type { ChildRequest, HookReply } from "./child.ts";

/** Most bytes read from the child's stdout (the adapter's files are at most 16 MiB together). */
export const MAX_CHILD_OUTPUT_BYTES = 24 * 1024 * 1024;

/** Deadline of importing the module in the child, ms. */
export const SCORER_LOAD_TIMEOUT_MS = 30_000;

/** The internal command the child runs. */
export const SCORER_CHILD_COMMAND = "__scorer-child";

/** What the child said after importing the module. */
export type LoadReply = { t: "loaded"; exports: string[]; notFunctions: string[]; hasDefault: boolean } | { t: "load-failed"; message: string };

/** How the child ended, beside its replies. */
export interface ChildResult {
  load?: LoadReply;
  hooks: HookReply[];
  /** Why the replies stopped early: a deadline (`timeout`), the byte bound (`overflow`), or the child exiting (`exited`). */
  stopped?: { kind: "timeout" | "overflow" | "exited"; detail: string };
}

/** The command line that runs this program again (compiled: the binary; source tree: bun and the entry file). */
export function selfCommand(): string[] {
  const compiled = import.meta.path.startsWith("/$bunfs/") || import.meta.path.startsWith("B:/~BUN/");
  return compiled ? [process.execPath] : [process.execPath, resolve(import.meta.dir, "../cli/main.ts")];
}

/** The only environment the scorer sees. */
export function scrubbedEnv(env: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const out: Record<string, string> = {};
  for (const k of ["PATH", "HOME", "TMPDIR", "LANG"]) if (env[k] !== undefined) out[k] = env[k]!;
  return out;
}

/**
 * Run the child on `req` (without its nonce). `loadMs` bounds the import; `hookMs` each hook,
 * counted from the previous reply.
 */
export async function runChild(req: Omit<ChildRequest, "nonce">, o: { loadMs: number; hookMs: number }): Promise<ChildResult> {
  const nonce = randomBytes(12).toString("hex");
  const proc = Bun.spawn([...selfCommand(), SCORER_CHILD_COMMAND], {
    cwd: tmpdir(),
    env: scrubbedEnv(),
    stdin: new Blob([JSON.stringify({ ...req, nonce })]),
    stdout: "pipe",
    stderr: "ignore",
  });
  const result: ChildResult = { hooks: [] };
  let timer: ReturnType<typeof setTimeout> | undefined;
  const arm = (ms: number, what: string) => {
    clearTimeout(timer);
    timer = setTimeout(() => {
      result.stopped ??= { kind: "timeout", detail: what };
      proc.kill("SIGKILL");
    }, ms);
  };
  arm(o.loadMs, `the module did not load within ${o.loadMs} ms`);
  const prefix = `${nonce} `;
  let bytes = 0;
  let pending = "";
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
    arm(o.hookMs, `a hook did not finish within ${o.hookMs} ms`);
  };
  const decoder = new TextDecoder();
  try {
    for await (const chunk of proc.stdout) {
      bytes += chunk.byteLength;
      if (bytes > MAX_CHILD_OUTPUT_BYTES) {
        result.stopped ??= { kind: "overflow", detail: `the scorer wrote more than ${MAX_CHILD_OUTPUT_BYTES} bytes` };
        proc.kill("SIGKILL");
        break;
      }
      // Search only the new text for line ends, so a long reply costs linear time.
      const from = pending.length;
      pending += decoder.decode(chunk, { stream: true });
      let nl = pending.indexOf("\n", from);
      while (nl >= 0) {
        take(pending.slice(0, nl));
        pending = pending.slice(nl + 1);
        nl = pending.indexOf("\n");
      }
    }
  } finally {
    const code = await proc.exited;
    clearTimeout(timer);
    result.stopped ??= { kind: "exited", detail: `the scorer's process exited (code ${code}, signal ${proc.signalCode ?? "none"})` };
  }
  return result;
}

/**
 * The scorer's own process: the internal command `humanish __scorer-child REQUEST REPLIES` (never
 * listed in help; from the source tree, `bun src/adapters/child.ts __scorer-child REQUEST REPLIES`)
 * imports the scorer module and, when asked, runs its hooks, so nothing a scorer does —
 * `process.exit`, a synchronous loop, patching `JSON.stringify` — can reach the humanish process
 * that seals the bundle. The host side is ./runner.ts, which runs this in a sandbox container
 * of its own whenever a Docker engine is usable (./confine.ts). This file imports nothing of
 * humanish but ./freeze.ts, so those two files are all the container needs beside a Bun runtime.
 *
 * Protocol: one JSON request in the file REQUEST, {@link ChildRequest}; replies appended to the
 * file REPLIES (opened before the module is imported, so a scorer that closes or replaces stdout
 * cannot silence them; a file, not a pipe, so a process the scorer leaves behind holding stdout
 * keeps nobody waiting), one per line, each prefixed with the request's nonce (so a line the
 * scorer writes there itself is ignored):
 * first `{"t":"loaded",exports,notFunctions,hasDefault}` (or `{"t":"load-failed",message}`), then
 * for `op: "run"` one `{"t":"hook",name,...}` per requested hook, in order. A hook's value is sent
 * as JSON; a list is sent item by item, so one item that cannot be serialised (a cycle, a
 * throwing getter) is reported alone.
 */
import { openSync, readFileSync, writeSync } from "node:fs";
import { pathToFileURL } from "node:url";
import { deepFreeze } from "./freeze.ts";

/** The hook names, in the order they run. */
const HOOKS = ["score", "deriveArtifacts", "deriveFeedback"] as const;

/** What the host sends. */
export interface ChildRequest {
  nonce: string;
  op: "load" | "run";
  /** Real path of the module. */
  path: string;
  /** `op: "run"`: the hooks to run, in order, and the frozen context they receive. */
  hooks?: string[];
  ctx?: unknown;
}

/** One hook's reply: its value (a list item by item), or why there is none. */
export type HookReply =
  | { t: "hook"; name: string; ok: true; value: unknown }
  | { t: "hook"; name: string; ok: true; items: ({ ok: true; value: unknown } | { ok: false; message: string })[] }
  | { t: "hook"; name: string; ok: false; kind: "threw" | "unserializable"; message: string };

function describe(e: unknown): string {
  try {
    return (e instanceof Error ? `${e.name}: ${e.message}` : String(e)).slice(0, 1000);
  } catch {
    return "a value that cannot be printed";
  }
}

/**
 * Run the child: read the request file, import, run, append each reply to the replies file, exit.
 * `args` are the command's arguments after `__scorer-child`: the request and replies paths.
 */
export async function runScorerChild(args: readonly string[]): Promise<never> {
  // Taken before the module is imported, so a scorer that replaces them cannot forge the replies.
  const stringify = JSON.stringify;
  const exit = process.exit.bind(process);
  const write = writeSync;
  const [requestPath, repliesPath] = args;
  if (!requestPath || !repliesPath) {
    process.stderr.write("usage: __scorer-child REQUEST REPLIES\n");
    return exit(2);
  }
  const out = openSync(repliesPath, "a");
  const req = JSON.parse(readFileSync(requestPath, "utf8")) as ChildRequest;
  const send = async (o: unknown) => {
    write(out, `${req.nonce} ${stringify(o)}\n`);
  };
  const serialise = (v: unknown): { ok: true; value: unknown } | { ok: false; message: string } => {
    try {
      const text = stringify(v);
      return { ok: true, value: text === undefined ? null : JSON.parse(text) };
    } catch (e) {
      return { ok: false, message: describe(e) };
    }
  };

  let mod: Record<string, unknown>;
  try {
    mod = (await import(pathToFileURL(req.path).href)) as Record<string, unknown>;
  } catch (e) {
    await send({ t: "load-failed", message: describe(e) });
    return exit(0);
  }
  const exports: string[] = [];
  const notFunctions: string[] = [];
  for (const name of HOOKS) {
    const v = mod[name];
    if (typeof v === "function") exports.push(name);
    else if (v !== undefined) notFunctions.push(`${name} is a ${typeof v}`);
  }
  await send({ t: "loaded", exports, notFunctions, hasDefault: mod.default !== undefined });
  if (req.op !== "run") return exit(0);

  const ctx = deepFreeze(req.ctx);
  for (const name of req.hooks ?? []) {
    const hook = mod[name];
    if (typeof hook !== "function") continue;
    let value: unknown;
    try {
      value = await hook(ctx);
    } catch (e) {
      await send({ t: "hook", name, ok: false, kind: "threw", message: describe(e) } satisfies HookReply);
      continue;
    }
    let reply: HookReply;
    if (Array.isArray(value)) {
      let items: { ok: true; value: unknown }[] | undefined;
      try {
        items = value.map(serialise) as { ok: true; value: unknown }[];
      } catch (e) {
        reply = { t: "hook", name, ok: false, kind: "unserializable", message: describe(e) };
      }
      reply ??= { t: "hook", name, ok: true, items: items ?? [] };
    } else {
      const s = serialise(value);
      reply = s.ok ? { t: "hook", name, ok: true, value: s.value } : { t: "hook", name, ok: false, kind: "unserializable", message: s.message };
    }
    await send(reply);
  }
  return exit(0);
}

// Started as a file of its own (the source tree, or a sandbox container running it with Bun).
if (import.meta.main && process.argv[2] === "__scorer-child") await runScorerChild(process.argv.slice(3));

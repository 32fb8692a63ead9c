/**
 * The scorer's own process: the internal command `humanish __scorer-child` (never listed in help)
 * imports the scorer module and, when asked, runs its hooks, so nothing a scorer does —
 * `process.exit`, a synchronous loop, patching `JSON.stringify`, reading `process.env` — can reach
 * the humanish process that seals the bundle. The host side is ./runner.ts.
 *
 * Protocol: one JSON request on stdin, {@link ChildRequest}; replies on stdout, one per line,
 * each prefixed with the request's nonce (so a scorer's own `console.log` lines are ignored):
 * first `{"t":"loaded",exports,notFunctions,hasDefault}` (or `{"t":"load-failed",message}`), then
 * for `op: "run"` one `{"t":"hook",name,...}` per requested hook, in order. A hook's value is sent
 * as JSON; a list is sent item by item, so one item that cannot be serialised (a cycle, a
 * throwing getter) is reported alone.
 */
import { pathToFileURL } from "node:url";
import { deepFreeze } from "./context.ts";

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

/** Run the child: read the request, import, run, reply, exit. */
export async function runScorerChild(): Promise<never> {
  // Taken before the module is imported, so a scorer that replaces them cannot forge the replies.
  const stringify = JSON.stringify;
  const write = process.stdout.write.bind(process.stdout);
  const exit = process.exit.bind(process);
  const req = JSON.parse(await Bun.stdin.text()) as ChildRequest;
  const send = (o: unknown) => new Promise<void>((done) => write(`${req.nonce} ${stringify(o)}\n`, () => done()));
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

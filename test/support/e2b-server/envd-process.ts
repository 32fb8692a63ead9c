/**
 * envd's process service (`process.Process/*`) over Connect JSON: `Start` and `Connect` (server
 * streams of `start` → `data`… → `end` events, with `keepalive` events at the interval the client
 * asks for in `Keepalive-Ping-Interval`), `List`, `SendSignal`, and `SendInput`/`CloseStdin`.
 *
 * stdin is never opened (the sandbox provider's exec has no stdin channel): a `Start` asking for
 * `stdin: true` is refused with `unimplemented`, and `SendInput`/`CloseStdin` answer
 * `failed_precondition` as envd does for a process started without stdin. PTYs are not emulated.
 */

import { b64, type ConnectCode, decodeRequestEnvelope, endStream, envelope, selectorOf, signalNumber, unaryError } from "./connect-json.ts";
import type { SandboxRecord } from "./containers.ts";
import type { Proc, ProcEvent, ProcessConfig } from "./processes.ts";

const STREAM_HEADERS = { "content-type": "application/connect+json" };

/** The user a request runs as: `Authorization: Basic base64(<user>:)`, else the image's default. */
export function requestUser(req: Request): string | undefined {
  const auth = req.headers.get("authorization");
  if (!auth?.startsWith("Basic ")) return undefined;
  const user = Buffer.from(auth.slice(6), "base64").toString().replace(/:.*$/, "");
  return user || undefined;
}

/** Event JSON of the protocol's `ProcessEvent`. */
function eventJson(e: ProcEvent): unknown {
  if (e.kind === "start") return { event: { start: { pid: e.pid } } };
  if (e.kind === "stdout") return { event: { data: { stdout: b64(e.data) } } };
  if (e.kind === "stderr") return { event: { data: { stderr: b64(e.data) } } };
  if (e.kind === "end") return { event: { end: e.end } };
  return undefined;
}

/**
 * A server stream fed by a process's events. `attach` subscribes the stream's listener and returns
 * its removal; a client that goes away only unsubscribes, the process runs on.
 */
function processStream(req: Request, attach: (listener: (e: ProcEvent) => void) => () => void): Response {
  const interval = Number(req.headers.get("keepalive-ping-interval") ?? "0");
  let detach: (() => void) | undefined;
  let ping: ReturnType<typeof setInterval> | undefined;
  let closed = false;
  const stream = new ReadableStream<Uint8Array>({
    start(controller) {
      const finish = (error?: { code: ConnectCode; message: string }) => {
        if (closed) return;
        closed = true;
        clearInterval(ping);
        detach?.();
        controller.enqueue(endStream(error));
        controller.close();
      };
      detach = attach((e) => {
        if (closed) return;
        if (e.kind === "lost") return finish({ code: "unavailable", message: e.message });
        controller.enqueue(envelope(0, eventJson(e)));
        if (e.kind === "end") finish();
      });
      if (interval > 0) ping = setInterval(() => !closed && controller.enqueue(envelope(0, { event: { keepalive: {} } })), interval * 1000);
    },
    cancel() {
      closed = true;
      clearInterval(ping);
      detach?.();
    },
  });
  return new Response(stream, { headers: STREAM_HEADERS });
}

/** A stream that only says why it failed (Connect streams report errors in their last envelope). */
function failedStream(code: ConnectCode, message: string): Response {
  return new Response(endStream({ code, message }), { headers: STREAM_HEADERS });
}

function processInfo(p: Proc): unknown {
  return { config: p.config, pid: p.pid, ...(p.tag !== undefined ? { tag: p.tag } : {}) };
}

/** Serves `POST /process.Process/<method>` for one live sandbox. */
export async function processService(req: Request, method: string, sandbox: SandboxRecord): Promise<Response> {
  const table = sandbox.processes;
  if (method === "Start" || method === "Connect") {
    let msg: Record<string, unknown>;
    try {
      msg = decodeRequestEnvelope(new Uint8Array(await req.arrayBuffer())) as Record<string, unknown>;
    } catch (e) {
      return failedStream("invalid_argument", (e as Error).message);
    }
    if (method === "Connect") {
      const sel = selectorOf(msg);
      const proc = sel ? table.find(sel) : undefined;
      if (!proc || proc.pid === undefined) return failedStream("not_found", `process ${JSON.stringify(sel)} not found`);
      const pid = proc.pid;
      return processStream(req, (listener) => {
        const off = proc.subscribe(listener);
        listener({ kind: "start", pid });
        return off;
      });
    }
    const p = (msg.process ?? {}) as { cmd?: unknown; args?: unknown; envs?: unknown; cwd?: unknown };
    if (typeof p.cmd !== "string" || p.cmd === "") return failedStream("invalid_argument", "process.cmd is required");
    if (msg.stdin === true) return failedStream("unimplemented", "stdin is not emulated by this server: start the process with stdin off");
    if (msg.pty !== undefined) return failedStream("unimplemented", "PTY processes are not emulated by this server");
    const config: ProcessConfig = {
      cmd: p.cmd,
      args: Array.isArray(p.args) ? p.args.map(String) : [],
      envs: (p.envs ?? {}) as Record<string, string>,
      ...(typeof p.cwd === "string" && p.cwd ? { cwd: p.cwd } : {}),
    };
    const user = requestUser(req);
    const tag = typeof msg.tag === "string" ? msg.tag : undefined;
    return processStream(req, (listener) => {
      const { proc, started } = table.start(config, { ...(user ? { user } : {}), ...(tag ? { tag } : {}) });
      // A start failure reaches the client as the stream's `lost` end.
      started.catch(() => undefined);
      return proc.subscribe(listener);
    });
  }
  let msg: unknown;
  try {
    msg = await req.json();
  } catch {
    return unaryError("invalid_argument", "request body must be JSON");
  }
  if (method === "List") return Response.json({ processes: table.list().map(processInfo) });
  const sel = selectorOf(msg);
  const proc = sel ? table.find(sel) : undefined;
  if (method === "SendSignal") {
    const signal = signalNumber((msg as { signal?: unknown }).signal);
    if (signal !== 9 && signal !== 15) return unaryError("invalid_argument", `unsupported signal ${JSON.stringify((msg as { signal?: unknown }).signal)}`);
    if (!proc || !(await table.signal(proc, signal))) return unaryError("not_found", `process ${JSON.stringify(sel)} not found`);
    return Response.json({});
  }
  if (method === "SendInput" || method === "CloseStdin") {
    if (!proc) return unaryError("not_found", `process ${JSON.stringify(sel)} not found`);
    return unaryError("failed_precondition", `stdin of process ${proc.pid} is not open`);
  }
  return unaryError("unimplemented", `process.Process/${method} is not emulated by this server`);
}

/**
 * A local fake of E2B for tests, speaking the wire format the real `e2b` SDK uses, so the SDK
 * itself runs unmodified (pointed here with `apiUrl` + `sandboxUrl`, debug off):
 *   - REST API: `POST /v2/sandboxes`, `GET /sandboxes/{id}`, `DELETE /sandboxes/{id}`;
 *   - envd: Connect RPC with JSON codec — `process.Process/Start` (server stream, enveloped
 *     `application/connect+json`) and `process.Process/SendSignal` (unary `application/json`);
 *     `GET`/`POST /files`.
 * Each fake sandbox is a REAL Docker container made by our own Docker sandbox provider, so
 * commands really run (bash, files, exit codes, kills). Knobs let a test make DELETE hang or
 * answer 404 while the sandbox is still listed.
 */
import { randomUUID } from "node:crypto";
import { createDockerClient } from "../../src/docker/index.ts";
import { createDockerSandboxProvider } from "../../src/sandbox/index.ts";
import type { Sandbox } from "../../src/sandbox/types.ts";

export interface FakeE2B {
  url: string;
  apiKey: string;
  /** Requests seen, e.g. `DELETE /sandboxes/<id>`. */
  calls: string[];
  /** Bodies of `POST /v2/sandboxes`. */
  createBodies: Record<string, unknown>[];
  /** Ids of sandboxes the fake considers alive. */
  alive(): string[];
  /** Behaviour of `DELETE /sandboxes/{id}`. */
  deleteMode: "normal" | "hang" | "404-but-listed";
  /** Removes every container the fake made (exact ids) and stops. */
  close(): Promise<void>;
}

const enc = new TextEncoder();

function envelope(flags: number, obj: unknown): Uint8Array {
  const payload = enc.encode(JSON.stringify(obj));
  const out = new Uint8Array(5 + payload.length);
  out[0] = flags;
  new DataView(out.buffer).setUint32(1, payload.length);
  out.set(payload, 5);
  return out;
}

/** Starts the fake. `image` is the container image, `labels` mark the test run. */
export async function startFakeE2B(image: string, labels: Record<string, string>): Promise<FakeE2B> {
  const docker = createDockerClient();
  const provider = createDockerSandboxProvider({ docker });
  const apiKey = `e2b_${randomUUID().replace(/-/g, "")}`;
  const sandboxes = new Map<string, { sandbox: Sandbox; template: string; processes: Map<number, AbortController> }>();
  const made: Sandbox[] = [];
  const calls: string[] = [];
  const createBodies: Record<string, unknown>[] = [];
  let nextPid = 100;
  const state = { deleteMode: "normal" as FakeE2B["deleteMode"] };

  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    idleTimeout: 0,
    async fetch(req) {
      const url = new URL(req.url);
      calls.push(`${req.method} ${url.pathname}`);
      // ---- REST API ----
      if (url.pathname === "/v2/sandboxes" && req.method === "POST") {
        if (req.headers.get("x-api-key") !== apiKey) return Response.json({ code: 401, message: "Invalid API key" }, { status: 401 });
        const body = (await req.json()) as Record<string, unknown>;
        createBodies.push(body);
        const sandbox = await provider.create({ runId: `fake-e2b-${randomUUID()}`, image, labels });
        made.push(sandbox);
        const id = `sbx${sandbox.id.slice(0, 17)}`;
        sandboxes.set(id, { sandbox, template: String(body.templateID), processes: new Map() });
        return Response.json(
          { sandboxID: id, templateID: body.templateID, clientID: "fake", envdVersion: "0.4.2", envdAccessToken: null, domain: null },
          { status: 201 },
        );
      }
      const m = /^\/sandboxes\/([^/]+)$/.exec(url.pathname);
      if (m) {
        if (req.headers.get("x-api-key") !== apiKey) return Response.json({ code: 401, message: "Invalid API key" }, { status: 401 });
        const id = m[1]!;
        const entry = sandboxes.get(id);
        if (req.method === "GET") {
          if (!entry) return Response.json({ code: 404, message: `sandbox ${id} not found` }, { status: 404 });
          return Response.json({
            sandboxID: id,
            templateID: entry.template,
            clientID: "fake",
            startedAt: new Date().toISOString(),
            endAt: new Date(Date.now() + 300_000).toISOString(),
            state: "running",
            cpuCount: 1,
            memoryMB: 256,
            diskSizeMB: 1024,
            envdVersion: "0.4.2",
            metadata: {},
          });
        }
        if (req.method === "DELETE") {
          if (state.deleteMode === "hang") return new Promise<Response>(() => undefined);
          if (state.deleteMode === "404-but-listed" || !entry) return Response.json({ code: 404, message: `sandbox ${id} not found` }, { status: 404 });
          const proof = await entry.sandbox.release();
          if (proof.outcome !== "released") return Response.json({ code: 500, message: proof.reason }, { status: 500 });
          sandboxes.delete(id);
          return new Response(null, { status: 204 });
        }
      }
      // ---- envd ----
      const sid = req.headers.get("e2b-sandbox-id") ?? "";
      const entry = sandboxes.get(sid);
      if (url.pathname.startsWith("/process.Process/") || url.pathname === "/files") {
        if (!entry) return Response.json({ code: "unavailable", message: "sandbox not running" }, { status: 502 });
      }
      if (url.pathname === "/process.Process/Start" && entry) {
        const raw = new Uint8Array(await req.arrayBuffer());
        const msg = JSON.parse(new TextDecoder().decode(raw.subarray(5))) as {
          process: { cmd: string; args?: string[]; envs?: Record<string, string>; cwd?: string };
        };
        const pid = nextPid++;
        const abort = new AbortController();
        entry.processes.set(pid, abort);
        const auth = req.headers.get("authorization");
        const user = auth
          ? Buffer.from(auth.replace(/^Basic /, ""), "base64")
              .toString()
              .replace(/:$/, "")
          : undefined;
        const stream = new ReadableStream<Uint8Array>({
          async start(controller) {
            controller.enqueue(envelope(0, { event: { start: { pid } } }));
            const b64 = (u: Uint8Array) => Buffer.from(u).toString("base64");
            try {
              const res = await entry.sandbox.exec({
                cmd: [msg.process.cmd, ...(msg.process.args ?? [])],
                ...(msg.process.envs ? { env: msg.process.envs } : {}),
                ...(msg.process.cwd ? { cwd: msg.process.cwd } : {}),
                ...(user && user !== "user" ? { user } : {}),
                signal: abort.signal,
                onStdout: (c) => controller.enqueue(envelope(0, { event: { data: { stdout: b64(c) } } })),
                onStderr: (c) => controller.enqueue(envelope(0, { event: { data: { stderr: b64(c) } } })),
              });
              const killed = abort.signal.aborted;
              controller.enqueue(
                envelope(0, {
                  event: { end: { exitCode: killed ? -1 : res.exitCode, exited: !killed, status: killed ? "signal: killed" : `exit status ${res.exitCode}` } },
                }),
              );
              controller.enqueue(envelope(2, {}));
            } catch (e) {
              controller.enqueue(envelope(2, { error: { code: "unavailable", message: (e as Error).message } }));
            } finally {
              entry.processes.delete(pid);
              controller.close();
            }
          },
        });
        return new Response(stream, { headers: { "content-type": "application/connect+json" } });
      }
      if (url.pathname === "/process.Process/SendSignal" && entry) {
        const body = (await req.json()) as { process: { pid: number }; signal: string };
        const p = entry.processes.get(body.process.pid);
        if (!p) return Response.json({ code: "not_found", message: "process not found" }, { status: 404 });
        p.abort();
        return Response.json({});
      }
      if (url.pathname === "/files" && entry) {
        const path = url.searchParams.get("path") ?? "";
        if (req.method === "GET") {
          try {
            const bytes = await entry.sandbox.readFile(path);
            return new Response(bytes, { headers: { "content-type": "application/octet-stream" } });
          } catch (e) {
            return Response.json({ code: 404, message: (e as Error).message }, { status: 404 });
          }
        }
        if (req.method === "POST") {
          let data: Uint8Array;
          let target = path;
          if ((req.headers.get("content-type") ?? "").startsWith("multipart/form-data")) {
            const form = await req.formData();
            const file = form.get("file") as File;
            target = path || file.name;
            data = new Uint8Array(await file.arrayBuffer());
          } else data = new Uint8Array(await req.arrayBuffer());
          await entry.sandbox.writeFile(target, data);
          return Response.json([{ name: target.split("/").pop(), type: "file", path: target }]);
        }
      }
      if (url.pathname === "/health") return new Response(null, { status: 204 });
      return Response.json({ code: 404, message: `fake e2b: no route ${req.method} ${url.pathname}` }, { status: 404 });
    },
  });

  return {
    url: `http://127.0.0.1:${server.port}`,
    apiKey,
    calls,
    createBodies,
    alive: () => [...sandboxes.keys()],
    get deleteMode() {
      return state.deleteMode;
    },
    set deleteMode(v) {
      state.deleteMode = v;
    },
    async close() {
      for (const s of made) await s.release();
      server.stop(true);
    },
  };
}

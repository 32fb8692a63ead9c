/**
 * A fake Docker engine on a Unix socket (Bun.serve({ unix })) for the status-code cases a real engine
 * cannot be made to produce on demand. Each test supplies the answer per route; every
 * request is recorded (method, path without the version prefix, body bytes).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** One recorded request. */
export interface FakeRequest {
  method: string;
  path: string;
  /** The path as sent, including the API version prefix. */
  rawPath: string;
  query: URLSearchParams;
  body: Uint8Array;
}

/** A route handler: return a Response, or undefined to fall through to a 404. */
export type FakeHandler = (req: FakeRequest) => Response | Promise<Response> | undefined;

/** A running fake engine. */
export interface FakeEngine {
  socketPath: string;
  requests: FakeRequest[];
  stop(): Promise<void>;
}

/** Starts a fake engine answering `routes` (`"METHOD /path"` → handler; the `/v1.41` prefix is stripped). */
export function startFakeEngine(routes: Record<string, FakeHandler>): FakeEngine {
  const dir = mkdtempSync(join(tmpdir(), "humanish-fake-engine-"));
  const socketPath = join(dir, "docker.sock");
  const requests: FakeRequest[] = [];
  const server = Bun.serve({
    unix: socketPath,
    async fetch(request) {
      const url = new URL(request.url);
      const path = url.pathname.replace(/^\/v1\.\d+/, "");
      const rec: FakeRequest = {
        method: request.method,
        path,
        rawPath: url.pathname,
        query: url.searchParams,
        body: new Uint8Array(await request.arrayBuffer()),
      };
      requests.push(rec);
      for (const [key, handler] of Object.entries(routes)) {
        const [method, pattern] = key.split(" ") as [string, string];
        if (method !== request.method) continue;
        const re = new RegExp(`^${pattern.replace(/\{[^}]+\}/g, "[^/]+")}$`);
        if (!re.test(path)) continue;
        const res = await handler(rec);
        if (res) return res;
      }
      return Response.json({ message: `fake engine: no route for ${request.method} ${path}` }, { status: 404 });
    },
  });
  return {
    socketPath,
    requests,
    async stop() {
      await server.stop(true);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A response whose body is delivered in chunks of `size` bytes (separate writes). */
export function chunkedResponse(bytes: Uint8Array, size: number, headers: Record<string, string>): Response {
  let at = 0;
  const stream = new ReadableStream<Uint8Array>({
    async pull(c) {
      if (at >= bytes.length) {
        c.close();
        return;
      }
      c.enqueue(bytes.slice(at, at + size));
      at += size;
      await Bun.sleep(0);
    },
  });
  return new Response(stream, { status: 200, headers });
}

/**
 * A pass-through proxy in front of the real Docker engine's Unix socket, for a test that needs the
 * engine to be slow at a moment the test chooses (e.g. hold a release open while it signals the
 * process doing it). Every byte is forwarded both ways unchanged — hijacked exec and attach
 * streams included — except that the bytes of a request the test has armed a hold for are kept
 * back until the test lets them go. Give the process under test `DOCKER_HOST=<dockerHost>`.
 *
 * A request is recognised by its request line (`DELETE /v1.41/containers/<id>?force=1 HTTP/1.1`)
 * at the start of a line in what the client wrote; the project's client sends each request's
 * head in one write and never pipelines, so that line arrives whole.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { connect, createServer, type Server, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { dockerSocketPath } from "./prereq.ts";

/** A hold armed with {@link EngineProxy.hold}. */
export interface Hold {
  /** Resolves with the held request line once a matching request has arrived and is being kept back. */
  held: Promise<string>;
  /** Forwards the held request (and anything the client sent after it); a no-op before it arrived. */
  release(): void;
}

/** A running proxy. */
export interface EngineProxy {
  /** The proxy's socket path. */
  socketPath: string;
  /** `unix://<socketPath>`, for `DOCKER_HOST`. */
  dockerHost: string;
  /** Holds the next request whose request line matches `requestLine` (one request; later ones pass). */
  hold(requestLine: RegExp): Hold;
  /** Stops listening, ends every connection and removes the socket's directory. */
  close(): Promise<void>;
}

const REQUEST_LINE = /^[A-Z]+ \S+ HTTP\/1\.[01]\r?$/gm;

interface Armed {
  pattern: RegExp;
  taken: boolean;
  onHeld: (line: string) => void;
  onRelease: Array<() => void>;
  released: boolean;
}

/** Starts a proxy to the engine socket humanish would use (`DOCKER_HOST` or the default). */
export async function startEngineProxy(): Promise<EngineProxy> {
  const upstreamPath = dockerSocketPath();
  const dir = mkdtempSync(join(tmpdir(), "humanish-engine-proxy-"));
  const socketPath = join(dir, "docker.sock");
  const sockets = new Set<Socket>();
  const holds: Armed[] = [];

  const server: Server = createServer((client) => {
    const upstream = connect(upstreamPath);
    sockets.add(client);
    sockets.add(upstream);
    let queue: Buffer[] | null = null;
    client.on("data", (chunk: Buffer) => {
      if (queue) {
        queue.push(chunk);
        return;
      }
      const lines = chunk.toString("latin1").match(REQUEST_LINE) ?? [];
      const armed = holds.find((h) => !h.taken && lines.some((l) => h.pattern.test(l)));
      if (!armed) {
        upstream.write(chunk);
        return;
      }
      armed.taken = true;
      const held: Buffer[] = [chunk];
      queue = held;
      const flush = () => {
        for (const c of held) upstream.write(c);
        queue = null;
      };
      if (armed.released) flush();
      else armed.onRelease.push(flush);
      armed.onHeld((lines.find((l) => armed.pattern.test(l)) ?? "").trim());
    });
    upstream.on("data", (chunk: Buffer) => client.write(chunk));
    client.on("end", () => upstream.end());
    upstream.on("end", () => client.end());
    const drop = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on("error", drop);
    upstream.on("error", drop);
    client.on("close", drop);
    upstream.on("close", drop);
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(socketPath, () => resolve());
  });

  return {
    socketPath,
    dockerHost: `unix://${socketPath}`,
    hold(requestLine) {
      let onHeld!: (line: string) => void;
      const held = new Promise<string>((r) => {
        onHeld = r;
      });
      const armed: Armed = { pattern: requestLine, taken: false, onHeld, onRelease: [], released: false };
      holds.push(armed);
      return {
        held,
        release() {
          armed.released = true;
          for (const f of armed.onRelease.splice(0)) f();
        },
      };
    },
    async close() {
      for (const h of holds) {
        h.released = true;
        for (const f of h.onRelease.splice(0)) f();
      }
      for (const s of sockets) s.destroy();
      await new Promise<void>((r) => server.close(() => r()));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

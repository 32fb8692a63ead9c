/**
 * Shared helpers of the environment-server tests: a server on the real Docker engine with a
 * per-run label, HTTP/WebSocket clients, and cleanup by exact container id.
 */
import { randomUUID } from "node:crypto";
import { createDockerClient } from "../../src/docker/index.ts";
import { envBackendFromProvider } from "../../src/env/backends.ts";
import type { EnvBackend } from "../../src/env/environment.ts";
import { type EnvServerHandle, type EnvServerOptions, startEnvServer } from "../../src/env/server.ts";
import { ensureImage } from "../../src/runtime/images.ts";
import { sandboxRecipe } from "../../src/runtime/recipes.ts";
import { createDockerSandboxProvider } from "../../src/sandbox/index.ts";
import { requireDocker, requireImage } from "../support/prereq.ts";

let imageTag: Promise<string> | undefined;
/**
 * Image every test episode runs in: the humanish sandbox image (runtime/sandbox recipe: Debian
 * bookworm, bash/coreutils/nodejs, user `user`, home /home/user), built through the Engine API
 * only when absent. `HUMANISH_ENV_TEST_IMAGE` names another image.
 */
export function testImage(): Promise<string> {
  imageTag ??= (async () => {
    await requireDocker();
    const override = process.env.HUMANISH_ENV_TEST_IMAGE;
    if (override) {
      await requireImage(override);
      return override;
    }
    return (await ensureImage(createDockerClient(), sandboxRecipe)).tag;
  })();
  return imageTag;
}

/** Label key that marks containers of one test run. */
export const TEST_RUN_LABEL = "humanish.test-run";

export interface TestServer {
  server: EnvServerHandle;
  runLabel: string;
  logs: string[];
  /** Ids of containers with this run's label (from the engine, exact ids). */
  containers(): Promise<string[]>;
  /** Stops the server and force-removes any container of this run left behind, by exact id. */
  cleanup(): Promise<void>;
}

async function dockerJson(path: string, init: RequestInit = {}): Promise<{ status: number; body: unknown }> {
  const socket = await requireDocker();
  const res = await fetch(`http://localhost/v1.41${path}`, { ...init, unix: socket } as RequestInit);
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
}

/** Ids of containers carrying `humanish.test-run=<runLabel>` (including stopped ones). */
export async function containersWithRunLabel(runLabel: string): Promise<string[]> {
  const filters = encodeURIComponent(JSON.stringify({ label: [`${TEST_RUN_LABEL}=${runLabel}`] }));
  const { body } = await dockerJson(`/containers/json?all=1&filters=${filters}`);
  return (body as { Id: string }[]).map((c) => c.Id);
}

/** Engine status of `GET /containers/{id}/json` (404 = gone). */
export async function inspectStatus(id: string): Promise<number> {
  return (await dockerJson(`/containers/${id}/json`)).status;
}

/**
 * Starts a server on the docker backend with small limits and a fresh run label. `wrapBackend`
 * lets a test inject a fault around the real backend (e.g. a release that is not confirmed).
 */
export async function startTestServer(overrides: Partial<EnvServerOptions> & { wrapBackend?: (b: EnvBackend) => EnvBackend } = {}): Promise<TestServer> {
  const { wrapBackend, ...serverOverrides } = overrides;
  const image = await testImage();
  const runLabel = `env-${randomUUID()}`;
  const docker = createDockerClient();
  const real = envBackendFromProvider(createDockerSandboxProvider({ docker }), {
    image,
    memoryBytes: 256 * 1024 * 1024,
    cpus: 0.5,
    pidsLimit: 128,
    labels: { [TEST_RUN_LABEL]: runLabel },
  });
  const backend = wrapBackend ? wrapBackend(real) : real;
  const logs: string[] = [];
  const server = await startEnvServer({
    backend,
    host: "127.0.0.1",
    port: 0,
    maxConcurrent: 2,
    commandTimeoutMs: 20_000,
    log: (line) => logs.push(line),
    ...serverOverrides,
  });
  return {
    server,
    runLabel,
    logs,
    containers: () => containersWithRunLabel(runLabel),
    async cleanup() {
      await server.stop();
      for (const id of await containersWithRunLabel(runLabel)) {
        await dockerJson(`/containers/${id}?force=1&v=1`, { method: "DELETE" });
      }
    },
  };
}

/** POSTs JSON and returns status + parsed body. */
export async function post(base: string, path: string, body: unknown): Promise<{ status: number; body: any }> {
  const res = await fetch(`${base}${path}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
}

/** GETs JSON. */
export async function get(base: string, path: string): Promise<{ status: number; body: any }> {
  const res = await fetch(`${base}${path}`);
  return { status: res.status, body: await res.json() };
}

/** `call_tool terminal` step body. */
export function terminal(args: { command?: string; final_answer?: string }, extra: Record<string, unknown> = {}) {
  return { action: { type: "call_tool", tool_name: "terminal", arguments: args }, ...extra };
}

/** A WebSocket client that answers one message per request, in order. */
export class WsClient {
  private queue: any[] = [];
  private waiters: ((m: any) => void)[] = [];
  closed = false;
  private constructor(readonly ws: WebSocket) {
    ws.onmessage = (ev) => {
      const msg = JSON.parse(String(ev.data));
      const w = this.waiters.shift();
      if (w) w(msg);
      else this.queue.push(msg);
    };
    ws.onclose = () => {
      this.closed = true;
    };
  }

  static async connect(baseUrl: string): Promise<WsClient> {
    const ws = new WebSocket(`${baseUrl.replace(/^http/, "ws")}/ws`);
    await new Promise<void>((resolve, reject) => {
      ws.onopen = () => resolve();
      ws.onerror = () => reject(new Error("WebSocket connection failed"));
    });
    return new WsClient(ws);
  }

  /** Next message from the server (waits up to `ms`). */
  next(ms = 60_000): Promise<any> {
    const m = this.queue.shift();
    if (m !== undefined) return Promise.resolve(m);
    return new Promise((resolve, reject) => {
      const t = setTimeout(() => reject(new Error(`no WebSocket message within ${ms} ms`)), ms);
      this.waiters.push((msg) => {
        clearTimeout(t);
        resolve(msg);
      });
    });
  }

  /** Sends a message and waits for the reply. */
  async request(msg: unknown, ms?: number): Promise<any> {
    this.ws.send(typeof msg === "string" ? msg : JSON.stringify(msg));
    return this.next(ms);
  }

  /** `reset` on this socket's session; the reply's `data` (an error reply is returned as is). */
  async reset(data: Record<string, unknown> = {}): Promise<any> {
    const r = await this.request({ type: "reset", data });
    return r.type === "observation" ? r.data : r;
  }

  /** A step with the HTTP body shape (`{action, timeout_s?}`); the reply's `data`. */
  async step(body: Record<string, unknown>): Promise<any> {
    const r = await this.request({ type: "step", data: body });
    return r.type === "observation" ? r.data : r;
  }

  /** This session's state. */
  async state(): Promise<any> {
    return (await this.request({ type: "state" })).data;
  }

  close(): void {
    this.ws.close();
  }
}

/**
 * A raw TCP WebSocket client that can go silent without closing — the server sees a
 * half-open session (no close frame, no FIN, no pong). `destroy()` ends it for cleanup.
 */
export class HalfOpenWs {
  private buf = Buffer.alloc(0);
  private waiters: (() => void)[] = [];
  private constructor(private readonly sock: import("node:net").Socket) {
    sock.on("data", (d: Buffer) => {
      this.buf = Buffer.concat([this.buf, d]);
      for (const w of this.waiters.splice(0)) w();
    });
  }

  static async open(baseUrl: string): Promise<HalfOpenWs> {
    const net = await import("node:net");
    const u = new URL(baseUrl);
    const sock = net.connect(Number(u.port), u.hostname);
    await new Promise<void>((resolve, reject) => {
      sock.once("connect", () => resolve());
      sock.once("error", reject);
    });
    const c = new HalfOpenWs(sock);
    const key = Buffer.from(crypto.getRandomValues(new Uint8Array(16))).toString("base64");
    sock.write(
      `GET /ws HTTP/1.1\r\nHost: ${u.host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: ${key}\r\nSec-WebSocket-Version: 13\r\n\r\n`,
    );
    await c.until(() => c.buf.indexOf("\r\n\r\n") >= 0);
    const head = c.buf.subarray(0, c.buf.indexOf("\r\n\r\n") + 4).toString();
    if (!head.startsWith("HTTP/1.1 101")) throw new Error(`upgrade refused: ${head}`);
    c.buf = c.buf.subarray(head.length);
    return c;
  }

  private until(ok: () => boolean, ms = 60_000): Promise<void> {
    if (ok()) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const t = setTimeout(() => reject(new Error("raw WebSocket: timed out")), ms);
      const check = () => {
        if (ok()) {
          clearTimeout(t);
          resolve();
        } else this.waiters.push(check);
      };
      this.waiters.push(check);
    });
  }

  /** Sends one masked text frame. */
  sendText(text: string): void {
    const payload = Buffer.from(text);
    const mask = Buffer.from(crypto.getRandomValues(new Uint8Array(4)));
    let header: Buffer;
    if (payload.length < 126) header = Buffer.from([0x81, 0x80 | payload.length]);
    else {
      header = Buffer.alloc(4);
      header[0] = 0x81;
      header[1] = 0x80 | 126;
      header.writeUInt16BE(payload.length, 2);
    }
    const masked = Buffer.from(payload.map((b, i) => b ^ mask[i % 4]!));
    this.sock.write(Buffer.concat([header, mask, masked]));
  }

  /** Reads the next text frame (skipping pings). */
  async readText(ms = 60_000): Promise<string> {
    for (;;) {
      await this.until(() => this.frameLength() !== null, ms);
      const len = this.frameLength()!;
      const op = this.buf[0]! & 0x0f;
      const hdr = this.buf[1]! & 0x7f;
      const off = hdr < 126 ? 2 : hdr === 126 ? 4 : 10;
      const payload = this.buf.subarray(off, off + len);
      this.buf = this.buf.subarray(off + len);
      if (op === 0x1) return payload.toString();
    }
  }

  private frameLength(): number | null {
    if (this.buf.length < 2) return null;
    const hdr = this.buf[1]! & 0x7f;
    let len = hdr;
    let off = 2;
    if (hdr === 126) {
      if (this.buf.length < 4) return null;
      len = this.buf.readUInt16BE(2);
      off = 4;
    } else if (hdr === 127) {
      if (this.buf.length < 10) return null;
      len = Number(this.buf.readBigUInt64BE(2));
      off = 10;
    }
    return this.buf.length >= off + len ? len : null;
  }

  /** True once the server closed the TCP connection. */
  get ended(): boolean {
    return this.sock.destroyed || this.sock.readableEnded;
  }

  destroy(): void {
    this.sock.destroy();
  }
}

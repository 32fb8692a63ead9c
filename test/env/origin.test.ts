/**
 * Browser-reachability of `humanish env serve`: a web page the user happens to visit must not
 * drive the environment (cross-origin "simple" requests need no CORS preflight, and a DNS
 * rebinding page reaches 127.0.0.1 under a foreign Host name). Requests from another origin are
 * refused with 403 and a Host header that is not the loopback origin with 421 — before any
 * sandbox exists. Same-origin requests (the /web page) and clients without an Origin (SDKs,
 * curl) keep working.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { request } from "node:http";
import { startTestServer, type TestServer } from "./support.ts";

interface Raw {
  status: number;
  body: string;
}

/** One HTTP request with exact headers (fetch would not let us set Host). */
function raw(port: number, method: string, path: string, headers: Record<string, string>, body?: string): Promise<Raw> {
  return new Promise((resolve, reject) => {
    const req = request(
      { host: "127.0.0.1", port, method, path, headers: { ...headers, ...(body === undefined ? {} : { "content-length": String(Buffer.byteLength(body)) }) } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString("utf8") }));
        res.on("error", reject);
      },
    );
    req.on("error", reject);
    if (body !== undefined) req.write(body);
    req.end();
  });
}

describe("env serve refuses other origins and foreign Host names", () => {
  let t: TestServer;
  let port: number;
  beforeAll(async () => {
    t = await startTestServer();
    port = Number(new URL(t.server.url).port);
  }, 120_000);
  afterAll(async () => {
    await t.cleanup();
  });

  test("a cross-origin text/plain POST /reset (no preflight) is refused and creates no sandbox", async () => {
    const r = await raw(port, "POST", "/reset", { host: `127.0.0.1:${port}`, origin: "http://evil.example", "content-type": "text/plain" }, "{}");
    expect(r.status).toBe(403);
    expect(JSON.parse(r.body).code).toBe("FORBIDDEN_ORIGIN");
    expect(t.server.stats().slotsInUse).toBe(0);
    expect(await t.containers()).toEqual([]);
  });

  test("a cross-origin POST /step and /mcp are refused", async () => {
    const step = await raw(
      port,
      "POST",
      "/step",
      { host: `127.0.0.1:${port}`, origin: "http://evil.example" },
      JSON.stringify({ action: { type: "list_tools" } }),
    );
    expect(step.status).toBe(403);
    const mcp = await raw(port, "POST", "/mcp", { host: `127.0.0.1:${port}`, origin: "null" }, JSON.stringify({ jsonrpc: "2.0", method: "tools/list", id: 1 }));
    expect(mcp.status).toBe(403);
  });

  test("a cross-origin WebSocket upgrade is refused", async () => {
    const r = await raw(port, "GET", "/ws", {
      host: `127.0.0.1:${port}`,
      origin: "http://evil.example",
      connection: "Upgrade",
      upgrade: "websocket",
      "sec-websocket-version": "13",
      "sec-websocket-key": "dGhlIHNhbXBsZSBub25jZQ==",
    });
    expect(r.status).toBe(403);
  });

  test("a foreign Host name (DNS rebinding) is refused with 421", async () => {
    const r = await raw(port, "GET", "/state", { host: `evil.example:${port}` });
    expect(r.status).toBe(421);
    const post = await raw(port, "POST", "/reset", { host: `rebind.evil.example:${port}`, "content-type": "application/json" }, "{}");
    expect(post.status).toBe(421);
    expect(await t.containers()).toEqual([]);
  });

  test("same-origin requests (the /web page) and clients without an Origin still work", async () => {
    const same = await raw(
      port,
      "POST",
      "/step",
      { host: `127.0.0.1:${port}`, origin: `http://127.0.0.1:${port}`, "content-type": "application/json" },
      JSON.stringify({ action: { type: "list_tools" } }),
    );
    expect(same.status).toBe(200);
    expect(JSON.parse(same.body).observation.tools[0].name).toBe("terminal");
    const local = await raw(port, "GET", "/health", { host: `localhost:${port}` });
    expect(local.status).toBe(200);
    const sdk = await raw(port, "GET", "/state", { host: `127.0.0.1:${port}` });
    expect(sdk.status).toBe(200);
  });
});

/**
 * The loopback ↔ Unix-socket forwarder both sides of the guest boundary run: bytes cross
 * unchanged in both directions (the guest's TCP port → the io socket; the io socket → the
 * host's app port), `close()` ends open connections, and a busy listen address is a
 * `HUMANISH_FORWARD_LISTEN_FAILED` naming it.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { type AddressInfo, createConnection, createServer, type Server, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { isHumanishError } from "../../src/errors.ts";
import { startForwarder } from "../../src/forward/forward.ts";

const dir = mkdtempSync(join(tmpdir(), "humanish-forward-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** An echo server on a free loopback port that upper-cases what it receives. */
async function upperEcho(): Promise<{ server: Server; port: number }> {
  const server = createServer((s) => s.on("data", (d) => s.write(d.toString("utf8").toUpperCase())));
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  return { server, port: (server.address() as AddressInfo).port };
}

function roundTrip(socket: Socket, text: string): Promise<string> {
  return new Promise((resolve, reject) => {
    let got = "";
    socket.on("data", (d) => {
      got += d.toString("utf8");
      if (got.length >= text.length) resolve(got);
    });
    socket.on("error", reject);
    socket.write(text);
  });
}

describe("startForwarder", () => {
  test("Unix socket → TCP port and TCP port → Unix socket, chained, carry bytes both ways", async () => {
    const app = await upperEcho();
    const sock = join(dir, "app.sock");
    const host = await startForwarder({ path: sock }, { host: "127.0.0.1", port: app.port });
    const probe = createServer();
    await new Promise<void>((r) => probe.listen(0, "127.0.0.1", () => r()));
    const guestPort = (probe.address() as AddressInfo).port;
    await new Promise<void>((r) => probe.close(() => r()));
    const guest = await startForwarder({ host: "127.0.0.1", port: guestPort }, { path: sock });
    try {
      const client = createConnection({ host: "127.0.0.1", port: guestPort });
      const text = `hello ${"x".repeat(100_000)}`;
      expect(await roundTrip(client, text)).toBe(text.toUpperCase());
      expect(guest.accepted).toBe(1);
      expect(host.accepted).toBe(1);
      const closed = new Promise<void>((r) => client.on("close", () => r()));
      await guest.close();
      await closed;
    } finally {
      await host.close();
      await new Promise<void>((r) => app.server.close(() => r()));
    }
  });

  test("a listen address already in use is HUMANISH_FORWARD_LISTEN_FAILED naming it", async () => {
    const busy = createServer();
    await new Promise<void>((r) => busy.listen(0, "127.0.0.1", () => r()));
    const port = (busy.address() as AddressInfo).port;
    try {
      const e = await startForwarder({ host: "127.0.0.1", port }, { path: join(dir, "none.sock") }).catch((x: unknown) => x);
      expect(isHumanishError(e) && e.code).toBe("HUMANISH_FORWARD_LISTEN_FAILED");
      expect((e as Error).message).toContain(`127.0.0.1:${port}`);
    } finally {
      await new Promise<void>((r) => busy.close(() => r()));
    }
  });
});

/**
 * The host's browser-control dialer (src/runtime/transport.ts): a refused connection is a
 * `transport_failed` / `not_dispatched` error naming the socket (nothing reached the guest), and
 * a connection that is accepted is handed to the pure framed transport, whose frames cross a
 * real kernel socket.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, unlinkSync, writeFileSync } from "node:fs";
import { createServer, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { encodeFrame, isBrowserControlError } from "../../src/browser-control/index.ts";
import { connectUnixSocketTransport, connectWhenAccepting } from "../../src/runtime/transport.ts";

const dir = mkdtempSync(join(tmpdir(), "humanish-rt-transport-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("connectUnixSocketTransport", () => {
  test("no socket at the path: transport_failed, not_dispatched, naming the path", async () => {
    const path = join(dir, "absent.sock");
    const e = await connectUnixSocketTransport(path).catch((x: unknown) => x);
    expect(isBrowserControlError(e)).toBe(true);
    if (!isBrowserControlError(e)) return;
    expect(e.errorCode).toBe("transport_failed");
    expect(e.code).toBe("HUMANISH_BROWSER_CONTROL_TRANSPORT_FAILED");
    expect(e.disposition).toBe("not_dispatched");
    expect(e.message).toContain(path);
  });

  test("a plain file at the path is refused the same way", async () => {
    const path = join(dir, "plain.sock");
    writeFileSync(path, "");
    const e = await connectUnixSocketTransport(path).catch((x: unknown) => x);
    expect(isBrowserControlError(e) && e.errorCode).toBe("transport_failed");
    expect((e as Error).message).toContain("(ECONNREFUSED)");
  });

  test("an accepted connection frames JSON both ways", async () => {
    const path = join(dir, "echo.sock");
    const accepted: Socket[] = [];
    const server = createServer((s) => {
      accepted.push(s);
      s.write(encodeFrame({ hello: "from the guest side" }));
    });
    await new Promise<void>((r) => server.listen(path, () => r()));
    try {
      const transport = await connectUnixSocketTransport(path);
      const got = new Promise<unknown>((resolve) => transport.start({ onMessage: resolve, onClose: () => {} }));
      expect(await got).toEqual({ hello: "from the guest side" });
      transport.close("transport_failed");
    } finally {
      for (const s of accepted) s.destroy();
      await new Promise<void>((r) => server.close(() => r()));
    }
  });
});

describe("connectWhenAccepting", () => {
  test("a path that refuses at first and then accepts: connected, with no error", async () => {
    // A plain file refuses a dial the way a socket that is bound but not listening does.
    const path = join(dir, "late.sock");
    writeFileSync(path, "");
    const server = createServer((s) => s.write(encodeFrame({ late: true })));
    const dialled = connectWhenAccepting(path, 5_000);
    await Bun.sleep(300);
    unlinkSync(path);
    await new Promise<void>((r) => server.listen(path, () => r()));
    try {
      const transport = await dialled;
      const got = new Promise<unknown>((resolve) => transport.start({ onMessage: resolve, onClose: () => {} }));
      expect(await got).toEqual({ late: true });
      transport.close("transport_failed");
    } finally {
      await new Promise<void>((r) => server.close(() => r()));
    }
  });

  test("a path that never accepts: the refusal once the time is up, naming the path", async () => {
    const path = join(dir, "never.sock");
    writeFileSync(path, "");
    const t0 = Date.now();
    const e = await connectWhenAccepting(path, 400).catch((x: unknown) => x);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(300);
    expect(isBrowserControlError(e) && e.disposition).toBe("not_dispatched");
    expect((e as Error).message).toContain(path);
  });

  test("an aborted signal ends the dialling at the next refusal", async () => {
    const path = join(dir, "aborted.sock");
    writeFileSync(path, "");
    const e = await connectWhenAccepting(path, 60_000, AbortSignal.abort()).catch((x: unknown) => x);
    expect(isBrowserControlError(e) && e.errorCode).toBe("transport_failed");
  });
});

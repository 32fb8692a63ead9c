/**
 * Port forwarding between a loopback TCP port and a Unix socket, used on both sides of the
 * guest boundary (ARCHITECTURE.md "Local runtime"): inside the guest, `127.0.0.1:<appPort>`
 * → `<io>/app.sock`; on the host, `<io>/app.sock` → the lab's real `127.0.0.1:<appPort>`. Bytes
 * are piped opaquely (HTTP, WebSocket and TLS are never parsed), so Chromium keeps the app's
 * own origin `http://127.0.0.1:<port>`.
 *
 * It sits in its own folder, below both `guest/` and `runtime/`, because both sides run it:
 * neither side then imports the other's internals.
 */
import { createConnection, createServer, type Server, type Socket } from "node:net";
import { HumanishError } from "../errors.ts";

/** A running forwarder. */
export interface Forwarder {
  /** Connections accepted so far. */
  readonly accepted: number;
  /** Stop listening and destroy every open connection. */
  close(): Promise<void>;
}

type Target = { host: string; port: number } | { path: string };

function pipeBoth(a: Socket, b: Socket): void {
  a.pipe(b);
  b.pipe(a);
  const end = () => {
    a.destroy();
    b.destroy();
  };
  a.on("error", end);
  b.on("error", end);
  a.on("close", end);
  b.on("close", end);
}

function listen(server: Server, on: { host: string; port: number } | { path: string }): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once("error", (e) =>
      reject(
        new HumanishError("HUMANISH_FORWARD_LISTEN_FAILED", `cannot listen on ${"path" in on ? on.path : `${on.host}:${on.port}`} (${(e as Error).message})`, {
          next: "free the port or socket path",
        }),
      ),
    );
    if ("path" in on) server.listen(on.path, () => resolve());
    else server.listen(on.port, on.host, () => resolve());
  });
}

/**
 * Listen on `from` (TCP `host:port` or a Unix socket `path`) and pipe each connection to `to`.
 * @throws HumanishError `HUMANISH_FORWARD_LISTEN_FAILED` when the listener cannot bind.
 */
export async function startForwarder(from: Target, to: Target): Promise<Forwarder> {
  const open = new Set<Socket>();
  let accepted = 0;
  const server = createServer((inbound) => {
    accepted++;
    const outbound = "path" in to ? createConnection(to.path) : createConnection({ host: to.host, port: to.port });
    open.add(inbound);
    open.add(outbound);
    inbound.on("close", () => open.delete(inbound));
    outbound.on("close", () => open.delete(outbound));
    pipeBoth(inbound, outbound);
  });
  await listen(server, from);
  return {
    get accepted() {
      return accepted;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of open) s.destroy();
        server.close(() => resolve());
      }),
  };
}

/**
 * The host's dialer for the browser-control channel: connects to the guest's control socket
 * (a Unix socket forwarded out of the guest container) and hands the connection to the pure
 * framed transport of `browser-control/`, which never dials itself.
 */
import { createConnection, type Socket } from "node:net";
import { type BrowserControlTransport, type BrowserControlTransportOptions, browserControlError, createSocketTransport } from "../browser-control/index.ts";

/** Spacing between dial attempts while a socket is not yet accepting, ms. */
const REDIAL_SPACING_MS = 50;

/**
 * Connect to a Unix socket at `path` and wrap the connection as a transport.
 * @throws (rejects) a browser-control executor error `transport_failed` with disposition
 *   `not_dispatched` when the connection cannot be established (nothing was written), naming
 *   the socket path.
 */
export function connectUnixSocketTransport(path: string, opts: BrowserControlTransportOptions = {}): Promise<BrowserControlTransport> {
  return new Promise((resolve, reject) => {
    const socket: Socket = createConnection({ path });
    const fail = (err: Error) => {
      socket.destroy();
      reject(browserControlError("transport_failed", "not_dispatched", `browser-control: cannot connect to Unix socket ${path}${errnoOf(err)}`, err));
    };
    socket.once("error", fail);
    socket.once("connect", () => {
      socket.off("error", fail);
      try {
        resolve(createSocketTransport(socket, opts));
      } catch (e) {
        socket.destroy();
        reject(e);
      }
    });
  });
}

/** ` (ECONNREFUSED)` and the like, for the message; empty when the error has no code. */
function errnoOf(err: Error): string {
  const code = (err as NodeJS.ErrnoException).code;
  return typeof code === "string" ? ` (${code})` : "";
}

/**
 * Like {@link connectUnixSocketTransport}, but a socket that is not accepting yet is dialled
 * again until `withinMs` (ms) has passed. A server's socket file appears when it binds, before it
 * listens; on a starved host that gap is long enough for a first dial to be refused, and the
 * guest is healthy. Only a refusal or a missing path is retried: nothing was written then, so a
 * second dial cannot repeat an input.
 * @throws (rejects) the last dial's `transport_failed` / `not_dispatched` error once `withinMs`
 *   has passed or `signal` aborts; any other dial error at once.
 */
export async function connectWhenAccepting(
  path: string,
  withinMs: number,
  signal?: AbortSignal,
  opts: BrowserControlTransportOptions = {},
): Promise<BrowserControlTransport> {
  const deadline = Date.now() + withinMs;
  for (;;) {
    try {
      return await connectUnixSocketTransport(path, opts);
    } catch (e) {
      const errno = (e as { cause?: { code?: unknown } }).cause?.code;
      const notYet = errno === "ECONNREFUSED" || errno === "ENOENT";
      if (!notYet || signal?.aborted || Date.now() + REDIAL_SPACING_MS > deadline) throw e;
      await Bun.sleep(REDIAL_SPACING_MS);
    }
  }
}

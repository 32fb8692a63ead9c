/**
 * The host's dialer for the browser-control channel: connects to the guest's control socket
 * (a Unix socket forwarded out of the guest container) and hands the connection to the pure
 * framed transport of `browser-control/`, which never dials itself.
 */
import { createConnection, type Socket } from "node:net";
import { type BrowserControlTransport, type BrowserControlTransportOptions, browserControlError, createSocketTransport } from "../browser-control/index.ts";

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
      reject(browserControlError("transport_failed", "not_dispatched", `browser-control: cannot connect to Unix socket ${path}`, err));
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

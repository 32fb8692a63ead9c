/**
 * An upstream that reads a whole HTTP request, counts it as billed (the real service may run a
 * request whose connection then breaks), and resets the connection before sending a byte back.
 */

/** A running reset upstream. */
export interface ResetUpstream {
  /** Base URL including `/v1`. */
  readonly baseURL: string;
  /** Requests read completely (each one the service would have run). */
  readonly billed: number;
  close(): void;
}

/** Starts the reset upstream on 127.0.0.1 (a free port). */
export function startResetUpstream(): ResetUpstream {
  let billed = 0;
  const buffers = new WeakMap<object, Buffer>();
  const listener = Bun.listen({
    hostname: "127.0.0.1",
    port: 0,
    socket: {
      data(sock, chunk) {
        const buf = Buffer.concat([buffers.get(sock) ?? Buffer.alloc(0), Buffer.from(chunk)]);
        buffers.set(sock, buf);
        const end = buf.indexOf("\r\n\r\n");
        if (end < 0) return;
        const length = Number(/content-length:\s*(\d+)/i.exec(buf.subarray(0, end).toString("latin1"))?.[1] ?? "0");
        if (buf.length < end + 4 + length) return;
        billed++;
        sock.terminate();
      },
    },
  });
  return {
    baseURL: `http://127.0.0.1:${listener.port}/v1`,
    get billed() {
      return billed;
    },
    close: () => listener.stop(true),
  };
}

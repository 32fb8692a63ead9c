/** Helpers shared by the browser-route tests. */

/** Raw HTTP/1.1 GET of `target` exactly as written (no client-side path normalisation). */
export async function rawGet(port: number, target: string): Promise<number> {
  const chunks: Buffer[] = [];
  await new Promise<void>((resolve, reject) => {
    Bun.connect({
      hostname: "127.0.0.1",
      port,
      socket: {
        open(s) {
          s.write(`GET ${target} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`);
        },
        data(_s, d) {
          chunks.push(Buffer.from(d));
        },
        close() {
          resolve();
        },
        error(_s, e) {
          reject(e);
        },
      },
    }).catch(reject);
  });
  const head = Buffer.concat(chunks).toString("latin1");
  return Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1] ?? 0);
}

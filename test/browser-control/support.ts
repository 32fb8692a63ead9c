/**
 * Test support for browser control: in-memory duplex streams whose writes can be inspected,
 * delayed (a lost acknowledgement) or failed, and real PNG screenshots made with pngjs.
 */
import { Duplex } from "node:stream";
import type { BrowserControlIdentity } from "../../src/browser-control/index.ts";

/** How a {@link TestStream} answers writes. */
export type WriteMode = "deliver" | "hold" | "fail";

/**
 * One end of an in-memory byte channel. Bytes written are recorded in `written` and, in
 * `deliver` mode, pushed to the peer; `hold` never calls the write callback (a lost
 * acknowledgement); `fail` calls it with an error.
 */
export class TestStream extends Duplex {
  peer: TestStream | null = null;
  written: Uint8Array[] = [];
  writeMode: WriteMode = "deliver";
  /** Deliver to the peer even when holding the callback (bytes out, ack lost). */
  deliverWhenHeld = true;
  /** Deliver written bytes to the peer one byte per chunk. */
  drip = false;

  constructor() {
    super({ allowHalfOpen: false });
  }

  override _read(): void {}

  override _write(chunk: Buffer, _enc: BufferEncoding, cb: (err?: Error | null) => void): void {
    const bytes = new Uint8Array(chunk);
    this.written.push(bytes);
    if (this.writeMode === "fail") return cb(new Error("test write failure"));
    if (this.writeMode === "hold") {
      if (this.deliverWhenHeld) this.peer?.push(Buffer.from(bytes));
      return;
    }
    if (this.drip) for (const b of bytes) this.peer?.push(Buffer.of(b));
    else this.peer?.push(Buffer.from(bytes));
    cb();
  }

  override _final(cb: (err?: Error | null) => void): void {
    this.peer?.push(null);
    cb();
  }

  override _destroy(err: Error | null, cb: (err?: Error | null) => void): void {
    const peer = this.peer;
    if (peer && !peer.destroyed) queueMicrotask(() => peer.push(null));
    cb(err);
  }

  /** Total bytes written so far. */
  get bytesWritten(): number {
    return this.written.reduce((n, b) => n + b.byteLength, 0);
  }
}

/** A connected pair of {@link TestStream}s. */
export function streamPair(): { host: TestStream; guest: TestStream } {
  const host = new TestStream();
  const guest = new TestStream();
  host.peer = guest;
  guest.peer = host;
  return { host, guest };
}

/** A fixed, valid identity. */
export const IDENTITY: BrowserControlIdentity = {
  generation: "gen-0001",
  challenge: "chal.abc_DEF",
  runtimeRevision: `guest-api1-${"ab".repeat(32)}`,
};

/** Resolve after `ms` milliseconds. */
export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/** Concatenate byte arrays (the shared helper of src/bytes). */
export { concatBytes as concat } from "../../src/bytes/concat.ts";

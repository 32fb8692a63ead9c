/**
 * An input fence through Chromium's browser process, spoken as raw X11 over the display's Unix
 * socket (no X library in the guest image, and none is needed for five requests).
 *
 * Why: native input (xdotool → XTEST) and page input over CDP reach the renderer by two roads.
 * xdotool returns once the X server has queued the events for Chromium; Chromium's UI thread
 * reads them later. Under CPU starvation a CDP command sent right after (`Input.insertText` of
 * the next typed text) can be handled first, so a pressed Enter lands after the text that was
 * typed after it. The fence closes that road:
 *
 * 1. xdotool has exited, and Xlib's close is a round trip, so the X server has processed every
 *    fake input event and queued the resulting events on Chromium's connection.
 * 2. We then send Chromium's window a `_NET_WM_PING` client message (window managers use it to
 *    ask "are you alive?"). The server queues it on the same connection, behind those events.
 * 3. Chromium's UI thread reads its connection in order and answers the ping — by sending the
 *    message back to the root window — only when it reaches it, i.e. after it has dispatched
 *    every earlier input event: pointer and key events to the browser's own views, or into the
 *    renderer's input channel for the page.
 * 4. We see the answer (we listen for SubstructureNotify on the root) and only then return.
 *
 * Every later CDP input command (`Input.insertText`, `Input.dispatchMouseEvent`) is handled by
 * that same UI thread and travels the same renderer input channel, behind the fenced events,
 * so the renderer applies the two roads' input in the order it was sent. The ping has no effect
 * on the page or the browser beyond the reply.
 */
import { createConnection, type Socket } from "node:net";
import { HumanishError } from "../errors.ts";

/** Deadline of one fence round trip, ms (the browser's UI thread must reach the ping). */
export const FENCE_TIMEOUT_MS = 10_000;

/** The core X11 request opcodes the fence sends. */
const OP = { changeWindowAttributes: 2, queryTree: 15, internAtom: 16, getProperty: 20, sendEvent: 25 } as const;
const CLIENT_MESSAGE = 33;
const CW_EVENT_MASK = 0x800;
const SUBSTRUCTURE_NOTIFY = 0x80000;
const ATOM_TYPE = 4;

function fenceError(detail: string, cause?: unknown): HumanishError {
  return new HumanishError("HUMANISH_GUEST_FENCE_FAILED", `input fence: ${detail}`, {
    next: "the browser did not confirm earlier input; see the guest log",
    ...(cause === undefined ? {} : { cause }),
  });
}

const pad4 = (n: number) => (4 - (n % 4)) % 4;

/** Parse an Xauthority file and return the MIT-MAGIC-COOKIE-1 data for display `number`. */
export function cookieFromXauthority(bytes: Uint8Array, number: number): Uint8Array | undefined {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let off = 0;
  const field = (): Uint8Array | undefined => {
    if (off + 2 > bytes.length) return undefined;
    const len = view.getUint16(off); // Xauthority fields are big-endian
    off += 2;
    if (off + len > bytes.length) return undefined;
    const out = bytes.subarray(off, off + len);
    off += len;
    return out;
  };
  while (off + 2 <= bytes.length) {
    off += 2; // family
    const address = field();
    const num = field();
    const name = field();
    const data = field();
    if (!address || !num || !name || !data) return undefined;
    if (new TextDecoder().decode(num) === String(number) && new TextDecoder().decode(name) === "MIT-MAGIC-COOKIE-1") return data;
  }
  return undefined;
}

/** One raw X11 connection that can fence Chromium's input. */
export class XFence {
  private buf: Buffer = Buffer.alloc(0);
  private seq = 0;
  private readonly replies = new Map<number, { resolve: (b: Buffer) => void; reject: (e: Error) => void }>();
  private readonly pings = new Map<number, () => void>();
  private nextToken = 1;
  private failure: Error | undefined;
  private setup: ((b: Buffer) => void) | undefined;
  private root = 0;
  private wmProtocols = 0;
  private netWmPing = 0;
  private target = 0;

  private constructor(private readonly sock: Socket) {
    sock.on("data", (chunk: Buffer) => this.onData(chunk));
    const end = (e?: Error) => this.fail(fenceError("the X connection closed", e));
    sock.on("error", end);
    sock.on("close", () => end());
  }

  /**
   * Connect to display `:number` with the cookie in `xauthority`, and find Chromium's top-level
   * window (the first child of the root that speaks `_NET_WM_PING`).
   * @throws HumanishError `HUMANISH_GUEST_FENCE_FAILED` when the display refuses us or no
   *   Chromium window answers pings.
   */
  static async open(number: number, xauthority: string): Promise<XFence> {
    const cookie = cookieFromXauthority(new Uint8Array(await Bun.file(xauthority).arrayBuffer()), number);
    if (!cookie) throw fenceError("no cookie for the display in the Xauthority file");
    const sock = createConnection(`/tmp/.X11-unix/X${number}`);
    const f = new XFence(sock);
    await new Promise<void>((resolve, reject) => {
      sock.once("connect", () => resolve());
      sock.once("error", (e) => reject(fenceError("cannot connect to the display", e)));
    });
    await f.handshake(cookie);
    f.wmProtocols = await f.internAtom("WM_PROTOCOLS");
    f.netWmPing = await f.internAtom("_NET_WM_PING");
    // Listen on the root for the pings Chromium sends back.
    f.request(OP.changeWindowAttributes, 0, u32(f.root, CW_EVENT_MASK, SUBSTRUCTURE_NOTIFY));
    for (const child of await f.children(f.root)) {
      if ((await f.atomsOf(child, f.wmProtocols)).includes(f.netWmPing)) {
        f.target = child;
        break;
      }
    }
    if (f.target === 0) {
      f.close();
      throw fenceError("no Chromium window answers _NET_WM_PING");
    }
    return f;
  }

  /**
   * Resolve once Chromium's UI thread has dispatched every X input event queued before this call
   * (see the module comment); reject after `timeoutMs` or when the connection fails.
   */
  async fence(timeoutMs = FENCE_TIMEOUT_MS): Promise<void> {
    if (this.failure) throw this.failure;
    const token = this.nextToken++ >>> 0;
    const answered = new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pings.delete(token);
        reject(fenceError(`the browser did not answer within ${timeoutMs} ms`));
      }, timeoutMs);
      this.pings.set(token, () => {
        clearTimeout(timer);
        resolve();
      });
    });
    const event = Buffer.alloc(32);
    event.writeUInt8(CLIENT_MESSAGE, 0);
    event.writeUInt8(32, 1);
    event.writeUInt32LE(this.target, 4);
    event.writeUInt32LE(this.wmProtocols, 8);
    event.writeUInt32LE(this.netWmPing, 12); // data[0]: the protocol
    event.writeUInt32LE(0, 16); // data[1]: timestamp (CurrentTime)
    event.writeUInt32LE(this.target, 20); // data[2]: the window, as the protocol asks
    event.writeUInt32LE(token, 24); // data[3]: our token, echoed back unchanged
    // Event mask 0: delivered to the client that created the window — Chromium.
    this.request(OP.sendEvent, 0, Buffer.concat([u32(this.target, 0), event]));
    await answered;
  }

  /** Close the connection (idempotent). */
  close(): void {
    this.failure ??= fenceError("closed");
    this.sock.destroy();
  }

  private fail(e: Error): void {
    if (this.failure && this.replies.size === 0 && this.pings.size === 0) return;
    this.failure ??= e;
    for (const r of this.replies.values()) r.reject(this.failure);
    this.replies.clear();
    for (const p of this.pings.keys()) this.pings.delete(p);
  }

  private handshake(cookie: Uint8Array): Promise<void> {
    const name = Buffer.from("MIT-MAGIC-COOKIE-1");
    const head = Buffer.alloc(12);
    head.write("l", 0, "latin1"); // little-endian requests and replies
    head.writeUInt16LE(11, 2);
    head.writeUInt16LE(0, 4);
    head.writeUInt16LE(name.length, 6);
    head.writeUInt16LE(cookie.length, 8);
    this.sock.write(Buffer.concat([head, name, Buffer.alloc(pad4(name.length)), Buffer.from(cookie), Buffer.alloc(pad4(cookie.length))]));
    return new Promise((resolve, reject) => {
      this.setup = (b) => {
        if (b[0] !== 1) return reject(fenceError("the display refused the connection"));
        // Additional data starts at byte 8: vendor length at 24, format count at 29, vendor at 40.
        const vendorLen = b.readUInt16LE(24);
        const formats = b.readUInt8(29);
        const screen = 40 + vendorLen + pad4(vendorLen) + 8 * formats;
        this.root = b.readUInt32LE(screen);
        resolve();
      };
    });
  }

  private onData(chunk: Buffer): void {
    this.buf = this.buf.length ? Buffer.concat([this.buf, chunk]) : chunk;
    for (;;) {
      if (this.setup) {
        if (this.buf.length < 8) return;
        const total = 8 + 4 * this.buf.readUInt16LE(6);
        if (this.buf.length < total) return;
        const done = this.setup;
        this.setup = undefined;
        done(this.buf.subarray(0, total));
        this.buf = this.buf.subarray(total);
        continue;
      }
      if (this.buf.length < 32) return;
      const kind = this.buf[0]!;
      const total = kind === 1 ? 32 + 4 * this.buf.readUInt32LE(4) : 32;
      if (this.buf.length < total) return;
      const msg = this.buf.subarray(0, total);
      this.buf = this.buf.subarray(total);
      if (kind === 0 || kind === 1) {
        const r = this.replies.get(msg.readUInt16LE(2));
        if (r) {
          this.replies.delete(msg.readUInt16LE(2));
          if (kind === 0) r.reject(fenceError(`X error ${msg[1]}`));
          else r.resolve(Buffer.from(msg));
        } else if (kind === 0) {
          this.fail(fenceError(`X error ${msg[1]} on a request without a reply`));
        }
      } else if ((kind & 0x7f) === CLIENT_MESSAGE && msg.readUInt32LE(8) === this.wmProtocols && msg.readUInt32LE(12) === this.netWmPing) {
        this.pings.get(msg.readUInt32LE(24))?.();
        this.pings.delete(msg.readUInt32LE(24));
      }
    }
  }

  /** Send one request (`body` after the 4-byte header); returns its sequence number. */
  private request(opcode: number, data: number, body: Buffer): number {
    const head = Buffer.alloc(4);
    head.writeUInt8(opcode, 0);
    head.writeUInt8(data, 1);
    head.writeUInt16LE((4 + body.length) / 4, 2);
    this.sock.write(Buffer.concat([head, body]));
    this.seq = (this.seq + 1) & 0xffff;
    return this.seq;
  }

  private withReply(opcode: number, data: number, body: Buffer): Promise<Buffer> {
    if (this.failure) return Promise.reject(this.failure);
    return new Promise((resolve, reject) => {
      const seq = this.request(opcode, data, body);
      this.replies.set(seq, { resolve, reject });
    });
  }

  private async internAtom(name: string): Promise<number> {
    const n = Buffer.from(name, "latin1");
    const body = Buffer.concat([Buffer.from([n.length & 0xff, n.length >> 8, 0, 0]), n, Buffer.alloc(pad4(n.length))]);
    return (await this.withReply(OP.internAtom, 0, body)).readUInt32LE(8);
  }

  private async children(window: number): Promise<number[]> {
    const r = await this.withReply(OP.queryTree, 0, u32(window));
    const n = r.readUInt16LE(16);
    return Array.from({ length: n }, (_, i) => r.readUInt32LE(32 + 4 * i));
  }

  private async atomsOf(window: number, property: number): Promise<number[]> {
    const r = await this.withReply(OP.getProperty, 0, u32(window, property, ATOM_TYPE, 0, 64));
    if (r[1] !== 32) return [];
    const n = r.readUInt32LE(16);
    return Array.from({ length: n }, (_, i) => r.readUInt32LE(32 + 4 * i));
  }
}

function u32(...values: number[]): Buffer {
  const b = Buffer.alloc(4 * values.length);
  for (const [i, v] of values.entries()) b.writeUInt32LE(v >>> 0, 4 * i);
  return b;
}

/**
 * Framed message transport over an already-owned byte stream.
 *
 * It never dials, reconnects or retries: the owner hands over a connected Node `Duplex`
 * (a `net.Socket`, a Unix-socket connection, a test duplex) and the transport frames JSON
 * messages on it until it closes, once, with an executor error code. Dialing is I/O and lives
 * with its owner (the host side: src/runtime/transport.ts), which keeps this folder pure.
 */
import type { Duplex } from "node:stream";
import { type BrowserControlErrorCode, browserControlError } from "./errors.ts";
import { encodeFrame, FrameDecoder } from "./framing.ts";

/** Frame assembly deadline: 35 s from the first header byte, non-renewing. */
export const FRAME_ASSEMBLY_MS = 35_000;

/** Callbacks of the single consumer of a transport (the client or the dispatcher). */
export interface TransportHandlers {
  /** One decoded JSON message (not yet schema-checked). */
  onMessage(message: unknown): void;
  /** The transport closed; called exactly once with the closing code. */
  onClose(code: BrowserControlErrorCode): void;
}

/** Options of {@link BrowserControlTransport}. */
export interface BrowserControlTransportOptions {
  /** Per-frame assembly deadline in ms, 1…35,000 (default 35,000). */
  frameDeadlineMs?: number;
}

/**
 * Frames JSON messages on a Duplex. Close codes: bad length/UTF-8/JSON, object-mode
 * chunk or end/close mid-frame → `invalid_response`; stream error, write error, or end/close
 * between frames → `transport_failed`; assembly deadline → `deadline_exceeded`; a stream already
 * destroyed, ended or in object mode at construction → `transport_failed` as soon as started.
 * An `error` listener stays attached until the stream closes, so stream errors never escape.
 */
export class BrowserControlTransport {
  private readonly stream: Duplex;
  private readonly decoder = new FrameDecoder();
  private readonly frameDeadlineMs: number;
  private handlers: TransportHandlers | null = null;
  private timer: ReturnType<typeof setTimeout> | null = null;
  private closedWith: BrowserControlErrorCode | null = null;
  private closingWith: BrowserControlErrorCode | null = null;
  private notified = false;
  private readonly onData = (chunk: unknown) => this.handleData(chunk);
  private readonly onEnd = () => this.close(this.decoder.midFrame ? "invalid_response" : "transport_failed");
  private readonly onError = () => this.close("transport_failed");

  /** Wrap `stream`; throws `invalid_request`/ND for an out-of-range `frameDeadlineMs`. */
  constructor(stream: Duplex, opts: BrowserControlTransportOptions = {}) {
    const ms = opts.frameDeadlineMs ?? FRAME_ASSEMBLY_MS;
    if (!Number.isInteger(ms) || ms < 1 || ms > FRAME_ASSEMBLY_MS)
      throw browserControlError("invalid_request", "not_dispatched", `browser-control transport: frameDeadlineMs must be an integer in 1…${FRAME_ASSEMBLY_MS}`);
    this.frameDeadlineMs = ms;
    this.stream = stream;
    stream.on("error", this.onError);
    const s = stream as Duplex & { readableObjectMode?: boolean; writableObjectMode?: boolean };
    if (stream.destroyed || stream.readableEnded || stream.writableEnded || s.readableObjectMode || s.writableObjectMode) {
      this.closedWith = "transport_failed";
      return;
    }
    stream.on("end", this.onEnd);
    stream.on("close", this.onEnd);
  }

  /** True once closed (by either side, a fault or a deadline). */
  get closed(): boolean {
    return this.closedWith !== null;
  }

  /** The code the transport closed with, or null while open. */
  get closeCode(): BrowserControlErrorCode | null {
    return this.closedWith;
  }

  /** Attach the single consumer and start reading. Throws `invalid_request`/ND if called twice. */
  start(handlers: TransportHandlers): void {
    if (this.handlers) throw browserControlError("invalid_request", "not_dispatched", "browser-control transport: start() was already called");
    this.handlers = handlers;
    if (this.closedWith !== null) {
      const code = this.closedWith;
      queueMicrotask(() => this.notify(code));
      return;
    }
    this.stream.on("data", this.onData);
  }

  /**
   * Encode and write one message. Synchronous pre-checks never write: closed transport →
   * `executor_closed`/ND; unserialisable or > 12 MiB → `invalid_request`/ND (both thrown).
   * `beforeWrite` runs immediately before `stream.write` (from then on the bytes may be out).
   * The promise resolves when the write callback fires; a write error closes the transport
   * and rejects with `transport_failed`/`outcome_uncertain`.
   */
  send(message: unknown, beforeWrite?: () => void): Promise<void> {
    if (this.closedWith !== null) throw browserControlError("executor_closed", "not_dispatched", "browser-control transport is closed");
    const bytes = encodeFrame(message);
    beforeWrite?.();
    return new Promise<void>((resolve, reject) => {
      try {
        this.stream.write(bytes, (err) => {
          if (err) {
            this.close("transport_failed");
            reject(browserControlError("transport_failed", "outcome_uncertain", "browser-control transport: write failed", err));
          } else resolve();
        });
      } catch (err) {
        this.close("transport_failed");
        reject(browserControlError("transport_failed", "outcome_uncertain", "browser-control transport: write threw", err));
      }
    });
  }

  /**
   * Announce that the owner is about to close with `code` (e.g. after writing a final error
   * reply): incoming frames are ignored from now on, and a peer hang-up that races the final
   * write closes with `code` instead of `transport_failed`.
   */
  closing(code: BrowserControlErrorCode): void {
    if (this.closingWith === null) this.closingWith = code;
  }

  /** Close once with `code` (default `executor_closed`): stop reading, destroy the stream, notify. */
  close(code: BrowserControlErrorCode = "executor_closed"): void {
    if (this.closedWith === null) this.closedWith = this.closingWith ?? code;
    this.clearTimer();
    this.stream.off("data", this.onData);
    this.stream.off("end", this.onEnd);
    this.stream.off("close", this.onEnd);
    if (!this.stream.destroyed) this.stream.destroy();
    if (this.handlers) this.notify(this.closedWith);
  }

  private notify(code: BrowserControlErrorCode): void {
    if (this.notified || !this.handlers) return;
    this.notified = true;
    this.handlers.onClose(code);
  }

  private handleData(chunk: unknown): void {
    if (this.closedWith !== null || this.closingWith !== null) return;
    if (!(chunk instanceof Uint8Array)) {
      this.close("invalid_response");
      return;
    }
    const { messages, fault } = this.decoder.push(chunk);
    if (messages.length > 0) this.clearTimer();
    for (const m of messages) {
      if (this.closedWith !== null || this.closingWith !== null) return;
      try {
        this.handlers?.onMessage(m);
      } catch {
        this.close("invalid_response");
        return;
      }
    }
    if (this.closedWith !== null) return;
    if (fault) {
      this.close("invalid_response");
      return;
    }
    if (this.decoder.midFrame) {
      if (this.timer === null) {
        this.timer = setTimeout(() => this.close("deadline_exceeded"), this.frameDeadlineMs);
        this.timer.unref?.();
      }
    } else this.clearTimer();
  }

  private clearTimer(): void {
    if (this.timer !== null) {
      clearTimeout(this.timer);
      this.timer = null;
    }
  }
}

/**
 * Adapter: turn a connected `net.Socket` (TCP or Unix-socket connection, Bun or Node) or any
 * byte-mode Duplex into the transport that `createBrowserControlClient` and
 * `attachBrowserControlDispatcher` take.
 */
export function createSocketTransport(socket: Duplex, opts: BrowserControlTransportOptions = {}): BrowserControlTransport {
  return new BrowserControlTransport(socket, opts);
}

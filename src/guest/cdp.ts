/**
 * A Chrome DevTools Protocol connection over Chromium's `--remote-debugging-pipe` (fd 3 = the
 * browser reads commands, fd 4 = it writes replies/events; each message is JSON followed by a
 * NUL byte). Flattened sessions (`Target.attachToTarget {flatten: true}`) carry `sessionId`.
 *
 * Used only inside the guest by the owner: participants never reach CDP; the executor uses a
 * fixed set of methods (navigation by the owner, isolated-world focus probe, `Input.insertText`).
 */
import type { Readable, Writable } from "node:stream";
import { HumanishError } from "../errors.ts";

/** A CDP event as delivered to listeners. */
export interface CdpEvent {
  method: string;
  params: Record<string, unknown>;
  sessionId?: string;
}

/** Maximum accepted size of one inbound CDP message (bytes). */
export const MAX_CDP_MESSAGE = 64 * 1024 * 1024;

/** The pipe connection. `send` rejects with `HUMANISH_GUEST_CDP_FAILED` on a CDP error or closure. */
export class CdpPipe {
  private nextId = 1;
  private readonly pending = new Map<number, { resolve: (v: Record<string, unknown>) => void; reject: (e: Error) => void; method: string }>();
  private readonly listeners = new Set<(e: CdpEvent) => void>();
  private buffered: Buffer[] = [];
  private bufferedBytes = 0;
  private closedError: Error | undefined;

  constructor(
    private readonly writer: Writable,
    reader: Readable,
  ) {
    reader.on("data", (chunk: Buffer) => this.onData(chunk));
    const end = () => this.fail(new HumanishError("HUMANISH_GUEST_CDP_FAILED", "CDP pipe closed", { next: "Chromium exited; see the guest log" }));
    reader.on("end", end);
    reader.on("close", end);
    reader.on("error", end);
    writer.on("error", end);
  }

  /** True once the pipe closed or failed. */
  get closed(): boolean {
    return this.closedError !== undefined;
  }

  private onData(chunk: Buffer): void {
    let start = 0;
    for (;;) {
      const nul = chunk.indexOf(0, start);
      if (nul < 0) break;
      const part = chunk.subarray(start, nul);
      const whole = this.buffered.length ? Buffer.concat([...this.buffered, part]) : part;
      this.buffered = [];
      this.bufferedBytes = 0;
      this.onMessage(whole.toString("utf8"));
      start = nul + 1;
    }
    if (start < chunk.length) {
      this.buffered.push(chunk.subarray(start));
      this.bufferedBytes += chunk.length - start;
      if (this.bufferedBytes > MAX_CDP_MESSAGE)
        this.fail(new HumanishError("HUMANISH_GUEST_CDP_FAILED", "CDP message over 64 MiB", { next: "restart the desktop" }));
    }
  }

  private onMessage(text: string): void {
    let msg: {
      id?: number;
      result?: Record<string, unknown>;
      error?: { message?: string };
      method?: string;
      params?: Record<string, unknown>;
      sessionId?: string;
    };
    try {
      msg = JSON.parse(text);
    } catch {
      this.fail(new HumanishError("HUMANISH_GUEST_CDP_FAILED", "CDP sent malformed JSON", { next: "restart the desktop" }));
      return;
    }
    if (typeof msg.id === "number") {
      const p = this.pending.get(msg.id);
      if (!p) return;
      this.pending.delete(msg.id);
      if (msg.error) p.reject(new HumanishError("HUMANISH_GUEST_CDP_FAILED", `CDP ${p.method} failed`, { next: "see the guest log" }));
      else p.resolve(msg.result ?? {});
      return;
    }
    if (typeof msg.method === "string") {
      const ev: CdpEvent = { method: msg.method, params: msg.params ?? {}, ...(msg.sessionId ? { sessionId: msg.sessionId } : {}) };
      for (const l of this.listeners) l(ev);
    }
  }

  private fail(e: Error): void {
    if (this.closedError) return;
    this.closedError = e;
    for (const p of this.pending.values()) p.reject(e);
    this.pending.clear();
    for (const l of this.listeners) l({ method: "humanish.pipeClosed", params: {} });
  }

  /** Subscribe to events; returns an unsubscribe function. */
  on(listener: (e: CdpEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * Send one command and await its result.
   * @param timeoutMs deadline (default 10,000 ms) → `HUMANISH_GUEST_CDP_TIMEOUT`.
   */
  send(method: string, params: Record<string, unknown> = {}, sessionId?: string, timeoutMs = 10_000): Promise<Record<string, unknown>> {
    if (this.closedError) return Promise.reject(this.closedError);
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new HumanishError("HUMANISH_GUEST_CDP_TIMEOUT", `CDP ${method} timed out after ${timeoutMs} ms`, { next: "check guest load" }));
      }, timeoutMs);
      this.pending.set(id, {
        method,
        resolve: (v) => {
          clearTimeout(timer);
          resolve(v);
        },
        reject: (e) => {
          clearTimeout(timer);
          reject(e);
        },
      });
      this.writer.write(`${JSON.stringify({ id, method, params, ...(sessionId ? { sessionId } : {}) })}\0`);
    });
  }

  /** Resolve with the first event matching `pred`, or reject after `timeoutMs`. */
  waitFor(pred: (e: CdpEvent) => boolean, timeoutMs: number): Promise<CdpEvent> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        off();
        reject(new HumanishError("HUMANISH_GUEST_CDP_TIMEOUT", `no matching CDP event within ${timeoutMs} ms`, { next: "check the app and guest load" }));
      }, timeoutMs);
      const off = this.on((e) => {
        if (e.method === "humanish.pipeClosed") {
          clearTimeout(timer);
          off();
          reject(this.closedError!);
        } else if (pred(e)) {
          clearTimeout(timer);
          off();
          resolve(e);
        }
      });
    });
  }
}

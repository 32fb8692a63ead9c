/**
 * Newline-delimited JSON-RPC with the app-server over its stdio pipes, bounded: one frame at
 * most `frameBytes`, stdout in total at most the budget (plus echoes the host paid for), stderr
 * counted and discarded past its budget, at most `notifications` notifications, every host RPC
 * answered within `rpcMs`. A breach is fatal: the connection reports it once and stops reading.
 */
import type { FileSink } from "bun";

type Json = Record<string, unknown>;

/** A request the server sent the host. */
export interface ServerRequest {
  id: number | string;
  method: string;
  params: unknown;
}

/** Why a connection stopped (the launcher rule that fired, or the child's end). */
export interface RpcFatal {
  rule: "frame_too_large" | "stdout_budget" | "stderr_budget" | "notification_budget" | "malformed_frame" | "process_exited";
  detail: string;
}

/** An RPC error reply. */
export class RpcError extends Error {
  constructor(
    readonly method: string,
    readonly rpcCode: number | null,
    message: string,
    readonly timedOut = false,
  ) {
    super(message);
  }
}

/** Limits of one connection. Units: bytes, counts, ms. */
export interface RpcLimits {
  frameBytes: number;
  stdoutBytes: number;
  stderrBytes: number;
  notifications: number;
  rpcMs: number;
}

/** The host end of the app-server's stdio. */
export class AppServerConnection {
  private nextId = 1;
  private readonly pending = new Map<
    number,
    { method: string; resolve: (v: unknown) => void; reject: (e: Error) => void; timer: ReturnType<typeof setTimeout> }
  >();
  private stdoutSeen = 0;
  private stdoutAllowance = 0;
  private stderrSeen = 0;
  private notificationsSeen = 0;
  private fatalReason: RpcFatal | null = null;
  private readonly fatalWaiters: Array<(f: RpcFatal) => void> = [];
  /** Called for every notification (method, params). */
  onNotification: (method: string, params: Json) => void = () => {};
  /** Called for every server→host request; must answer it with {@link respond} or {@link respondError}. */
  onServerRequest: (req: ServerRequest) => void = () => {};

  constructor(
    private readonly stdin: FileSink,
    stdout: ReadableStream<Uint8Array>,
    stderr: ReadableStream<Uint8Array>,
    private readonly limits: RpcLimits,
  ) {
    void this.readStdout(stdout);
    void this.drainStderr(stderr);
  }

  /** The fatal breach, if one happened. */
  get fatal(): RpcFatal | null {
    return this.fatalReason;
  }

  /** Resolves with the first fatal breach (never resolves on a healthy connection). */
  whenFatal(): Promise<RpcFatal> {
    if (this.fatalReason) return Promise.resolve(this.fatalReason);
    return new Promise((r) => this.fatalWaiters.push(r));
  }

  /** Lets `bytes` more of stdout through: the server echoes what the host sent (tool results, input). */
  allowEcho(bytes: number): void {
    this.stdoutAllowance += bytes;
  }

  /** Sends a request; rejects with {@link RpcError} on an error reply, a timeout or a fatal breach. */
  request<T = Json>(method: string, params: unknown, timeoutMs: number = this.limits.rpcMs): Promise<T> {
    if (this.fatalReason) return Promise.reject(new RpcError(method, null, `connection closed: ${this.fatalReason.rule}: ${this.fatalReason.detail}`));
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new RpcError(method, null, `${method} got no reply within ${timeoutMs} ms`, true));
      }, timeoutMs);
      this.pending.set(id, { method, resolve: resolve as (v: unknown) => void, reject, timer });
      this.write({ id, method, params });
    });
  }

  /** Sends a notification. */
  notify(method: string, params: unknown): void {
    this.write({ method, params });
  }

  /** Answers a server request. */
  respond(id: number | string, result: unknown): void {
    this.write({ id, result });
  }

  /** Refuses a server request with a JSON-RPC error. */
  respondError(id: number | string, code: number, message: string): void {
    this.write({ id, error: { code, message } });
  }

  /** Stops the connection with a rule (e.g. when the child exits). */
  stop(f: RpcFatal): void {
    this.setFatal(f);
  }

  private write(msg: Json): void {
    if (this.fatalReason) return;
    try {
      this.stdin.write(`${JSON.stringify(msg)}\n`);
      this.stdin.flush();
    } catch {
      this.setFatal({ rule: "process_exited", detail: "the app-server's stdin is closed" });
    }
  }

  private setFatal(f: RpcFatal): void {
    if (this.fatalReason) return;
    this.fatalReason = f;
    for (const [, p] of this.pending) {
      clearTimeout(p.timer);
      p.reject(new RpcError(p.method, null, `connection closed: ${f.rule}: ${f.detail}`));
    }
    this.pending.clear();
    for (const w of this.fatalWaiters.splice(0)) w(f);
  }

  private async readStdout(stdout: ReadableStream<Uint8Array>): Promise<void> {
    const parts: Uint8Array[] = [];
    let partBytes = 0;
    const reader = stdout.getReader();
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done || this.fatalReason) break;
        this.stdoutSeen += value.length;
        if (this.stdoutSeen > this.limits.stdoutBytes + this.stdoutAllowance) {
          this.setFatal({ rule: "stdout_budget", detail: `stdout exceeded ${this.limits.stdoutBytes + this.stdoutAllowance} bytes` });
          break;
        }
        let start = 0;
        for (let i = 0; i < value.length; i++) {
          if (value[i] !== 0x0a) continue;
          const piece = value.subarray(start, i);
          start = i + 1;
          if (partBytes + piece.length > this.limits.frameBytes)
            return this.setFatal({ rule: "frame_too_large", detail: `a frame exceeded ${this.limits.frameBytes} bytes` });
          parts.push(piece);
          const line = Buffer.concat(parts).toString("utf8");
          parts.length = 0;
          partBytes = 0;
          if (line.trim()) this.dispatch(line);
          if (this.fatalReason) return;
        }
        const rest = value.subarray(start);
        if (partBytes + rest.length > this.limits.frameBytes)
          return this.setFatal({ rule: "frame_too_large", detail: `a frame exceeded ${this.limits.frameBytes} bytes` });
        if (rest.length > 0) {
          parts.push(rest.slice());
          partBytes += rest.length;
        }
      }
    } catch {
      // A read error is the child's end; reported below.
    } finally {
      reader.releaseLock();
    }
    this.setFatal({ rule: "process_exited", detail: "the app-server closed its stdout" });
  }

  private async drainStderr(stderr: ReadableStream<Uint8Array>): Promise<void> {
    try {
      for await (const c of stderr) {
        // Stderr carries the CLI's own logs: counted, never kept (it may name local paths).
        this.stderrSeen += c.length;
        if (this.stderrSeen > this.limits.stderrBytes) {
          this.setFatal({ rule: "stderr_budget", detail: `stderr exceeded ${this.limits.stderrBytes} bytes` });
          return;
        }
      }
    } catch {
      // The child's end is reported by stdout.
    }
  }

  private dispatch(line: string): void {
    let msg: Json;
    try {
      const v = JSON.parse(line);
      if (!v || typeof v !== "object" || Array.isArray(v)) throw new Error("not an object");
      msg = v as Json;
    } catch {
      this.setFatal({ rule: "malformed_frame", detail: "a frame was not a JSON object" });
      return;
    }
    const hasId = typeof msg.id === "number" || typeof msg.id === "string";
    if (typeof msg.method === "string") {
      if (hasId) {
        this.onServerRequest({ id: msg.id as number | string, method: msg.method, params: msg.params });
        return;
      }
      this.notificationsSeen++;
      if (this.notificationsSeen > this.limits.notifications) {
        this.setFatal({ rule: "notification_budget", detail: `more than ${this.limits.notifications} notifications` });
        return;
      }
      this.onNotification(msg.method, (msg.params && typeof msg.params === "object" ? msg.params : {}) as Json);
      return;
    }
    if (typeof msg.id !== "number") return;
    const p = this.pending.get(msg.id);
    if (!p) return;
    this.pending.delete(msg.id);
    clearTimeout(p.timer);
    if (msg.error && typeof msg.error === "object") {
      const e = msg.error as Json;
      p.reject(new RpcError(p.method, typeof e.code === "number" ? e.code : null, typeof e.message === "string" ? e.message.slice(0, 500) : "error reply"));
    } else p.resolve(msg.result);
  }
}

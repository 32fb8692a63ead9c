/**
 * Sessions and capacity (reference openenv-wire.md "Sessions").
 *
 * Each WebSocket connection is one session with its own environment; the HTTP routes and
 * `POST /mcp` share one server-wide HTTP session. A session takes a capacity slot when a reset
 * is about to create a sandbox and gives it back when its sandbox is released. The slot is
 * reserved synchronously (a critical section in the single-threaded event loop, i.e. under the
 * lock) BEFORE the sandbox is created, and given back if creation fails.
 *
 * Calls on one session run one at a time (a promise queue), so a step never overlaps a reset.
 */
import { HumanishError } from "../errors.ts";
import type { ReleaseProof } from "../sandbox/types.ts";
import { type EnvironmentConfig, TerminalEnvironment } from "./environment.ts";

/** Counts capacity slots. */
export class SlotPool {
  private used = 0;
  constructor(readonly max: number) {}

  /** Slots in use. */
  get inUse(): number {
    return this.used;
  }

  /** Takes a slot or throws `HumanishError("HUMANISH_ENV_CAPACITY")`. Synchronous: atomic. */
  reserve(): void {
    if (this.used >= this.max) {
      throw new HumanishError(
        "HUMANISH_ENV_CAPACITY",
        `capacity reached: ${this.used} of ${this.max} environments are in use (--max-concurrent / MAX_CONCURRENT_ENVS)`,
        { next: "retry after a session closes, or start the server with a larger --max-concurrent" },
      );
    }
    this.used += 1;
  }

  /** Gives a slot back. */
  release(): void {
    if (this.used > 0) this.used -= 1;
  }
}

/** One session: an environment, its activity clock and its call queue. */
export class Session {
  readonly env: TerminalEnvironment;
  /** ms epoch of the last message or completed call. */
  lastActivity = Date.now();
  /** Calls queued or running. */
  pending = 0;
  closed = false;
  private queue: Promise<unknown> = Promise.resolve();
  /** Called when the reaper or shutdown ends the session (e.g. to close the socket). */
  onEvict: (() => void) | null = null;

  constructor(
    readonly id: string,
    readonly kind: "ws" | "http",
    cfg: Omit<EnvironmentConfig, "sessionId">,
  ) {
    this.env = new TerminalEnvironment({ ...cfg, sessionId: id });
  }

  /** Runs `fn` after every earlier call of this session has finished. */
  run<T>(fn: () => Promise<T>): Promise<T> {
    this.pending += 1;
    this.lastActivity = Date.now();
    const next = this.queue.then(fn, fn);
    this.queue = next.then(
      () => undefined,
      () => undefined,
    );
    return next.finally(() => {
      this.pending -= 1;
      this.lastActivity = Date.now();
    });
  }

  /** Marks activity without a call (e.g. a state read). */
  touch(): void {
    this.lastActivity = Date.now();
  }

  /** Ends the session: releases its sandbox and slot. Idempotent. */
  async close(): Promise<ReleaseProof | null> {
    if (this.closed) return null;
    this.closed = true;
    return this.env.close();
  }
}

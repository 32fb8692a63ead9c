/**
 * Sessions and capacity.
 *
 * The limit (`--max-concurrent` / `MAX_CONCURRENT_ENVS`) counts concurrent sessions, as OpenEnv's
 * `max_concurrent_envs` does. A slot is held by:
 * - each persistent session (a WebSocket connection, an MCP session over `POST /mcp`) from its
 *   creation until its close has released its sandbox;
 * - each temporary environment (a stateless `POST /reset`, a `tools/call` without a session id)
 *   while it has a sandbox;
 * - each sandbox whose release was not confirmed, until a later release confirms it, because a
 *   sandbox that may still run must never have its capacity handed to someone else.
 *
 * A slot whose release is in flight (a session closing) is not offered again until that release
 * settles, but a newcomer that finds the pool full waits for in-flight releases rather than being
 * refused: an immediate reset after a close therefore never gets `CAPACITY_REACHED`.
 *
 * Slots are taken synchronously inside the single-threaded event loop (the critical section that
 * OpenEnv guards with a lock), so simultaneous requests at the limit admit exactly the free count.
 * Calls on one session run one at a time (a promise queue), so a step never overlaps a reset.
 */
import { HumanishError } from "../errors.ts";
import type { ReleaseProof } from "../sandbox/types.ts";
import { type EnvironmentConfig, TerminalEnvironment } from "./environment.ts";
import { Slot } from "./slot.ts";
import type { ResetRequest } from "./wire.ts";

export { Slot, type SlotStatus } from "./slot.ts";

/** Counts capacity slots; {@link acquire} waits for in-flight releases instead of refusing early. */
export class SlotPool {
  private readonly slots = new Set<Slot>();
  private waiters: (() => void)[] = [];

  /**
   * @param max slots in all (a positive integer)
   * @param waitMs how long an acquirer that found the pool full waits for in-flight releases, ms
   */
  constructor(
    readonly max: number,
    private readonly waitMs: number,
  ) {}

  /** Slots counted against the limit (held or releasing). */
  get inUse(): number {
    return this.slots.size;
  }

  /** Slots whose release is in flight. */
  get releasingCount(): number {
    let n = 0;
    for (const s of this.slots) if (s.status === "releasing") n += 1;
    return n;
  }

  /** Takes a free slot now, or returns null. Synchronous, hence atomic. */
  tryAcquire(): Slot | null {
    if (this.slots.size >= this.max) return null;
    const slot: Slot = new Slot(() => this.changed(slot));
    this.slots.add(slot);
    return slot;
  }

  /**
   * Takes a slot, waiting (at most `waitMs`) while the pool is full but some slot's release is in
   * flight. Throws `HumanishError("HUMANISH_ENV_CAPACITY")` (details `active_sessions`,
   * `max_sessions`) when the pool is full and nothing is being released, or the wait ran out.
   */
  async acquire(): Promise<Slot> {
    const deadline = Date.now() + this.waitMs;
    for (;;) {
      const slot = this.tryAcquire();
      if (slot) return slot;
      const left = deadline - Date.now();
      if (this.releasingCount === 0 || left <= 0) throw this.capacityError();
      await new Promise<void>((resolve) => {
        const timer = setTimeout(done, left);
        function done() {
          clearTimeout(timer);
          resolve();
        }
        this.waiters.push(done);
      });
    }
  }

  /** The capacity refusal, with the counts OpenEnv clients read (`active_sessions`, `max_sessions`). */
  capacityError(): HumanishError {
    const held = this.inUse - this.releasingCount;
    return new HumanishError(
      "HUMANISH_ENV_CAPACITY",
      `capacity reached: ${this.inUse} of ${this.max} sessions are active (${held} held, ${this.releasingCount} releasing; --max-concurrent / MAX_CONCURRENT_ENVS)`,
      {
        next: "retry after a session closes, or start the server with a larger --max-concurrent",
        details: { active_sessions: this.inUse, max_sessions: this.max },
      },
    );
  }

  private changed(slot: Slot): void {
    if (slot.status === "free") this.slots.delete(slot);
    for (const w of this.waiters.splice(0)) w();
  }
}

/** What created a session: a WebSocket connection, an MCP session, or one stateless request. */
export type SessionKind = "ws" | "mcp" | "temp";

/** One session: an environment, its activity clock and its call queue. */
export class Session {
  readonly env: TerminalEnvironment;
  /** ms epoch of the last message or completed call. */
  lastActivity = Date.now();
  /** Calls queued or running. */
  pending = 0;
  closed = false;
  private closing: Promise<ReleaseProof | null> | null = null;
  private queue: Promise<unknown> = Promise.resolve();
  /** Called when the reaper or shutdown ends the session (e.g. to close the socket). */
  onEvict: (() => void) | null = null;

  /**
   * @param slot the session's capacity slot (persistent sessions take it at creation; a temporary
   *   environment gets none and takes one when its reset creates a sandbox)
   * @param lazyReset for MCP over HTTP: the reset that starts the episode on the first terminal
   *   call when nothing reset this environment before (MCP has no reset method)
   */
  constructor(
    readonly id: string,
    readonly kind: SessionKind,
    cfg: Omit<EnvironmentConfig, "sessionId">,
    slot: Slot | null = null,
    readonly lazyReset: ResetRequest | null = null,
  ) {
    this.env = new TerminalEnvironment({ ...cfg, sessionId: id }, slot);
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

  /**
   * Ends the session: marks its slot as releasing at once (so a newcomer waits for it instead of
   * being refused), then, after the calls already queued, releases its sandbox and slot. With
   * `abandonInFlight` (server shutdown) the sandbox is released at once: the command in flight
   * ends with its container instead of holding SIGTERM up for as long as it runs.
   * Idempotent: later calls join the first close.
   */
  close(opts: { abandonInFlight?: boolean } = {}): Promise<ReleaseProof | null> {
    if (this.closing) return this.closing;
    this.closed = true;
    this.env.markClosing();
    this.closing = opts.abandonInFlight ? this.env.close() : this.run(() => this.env.close());
    return this.closing;
  }
}

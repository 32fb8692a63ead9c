/**
 * The state a run writer works on, and the one queue every mutation of it goes through. The
 * functions of the writer's parts (writer-artifacts.ts, writer-ndjson.ts, writer-status.ts,
 * writer-seal.ts) take this state explicitly; `makeWriter` (./writer.ts) assembles them.
 */
import type { z } from "zod";
import type { Redactor } from "./redact.ts";
import type { ArtifactKind, RunBundleInputSchema, RunStatus } from "./schemas.ts";

/** What a writer starts from: a new run, or a reopened sealed one (./reopen.ts). */
export interface WriterState {
  cwd: string;
  runId: string;
  runDir: string;
  redactor: Redactor;
  tracked: Map<string, ArtifactKind>;
  input: z.output<typeof RunBundleInputSchema> | undefined;
  reopened: boolean;
  status: RunStatus | undefined;
  heartbeatMs: number;
  now: () => Date;
}

/** A writer's state while it runs: where it started from, plus its own bookkeeping. */
export interface LiveWriterState extends WriterState {
  /** The tail of the mutation queue (see {@link serial}); never rejects. */
  chain: Promise<unknown>;
  /** The status heartbeat, while one runs. */
  timer: ReturnType<typeof setInterval> | undefined;
  /** Set by `close` (and the first finalize of a new run): no heartbeat starts again. */
  closed: boolean;
  /** Whether a new run has been finalized once (status finished, latest.json written). */
  finalizedOnce: boolean;
  /** Set once the bundle is signed: from then on every status rewrite re-signs it (the signature covers status.json). */
  sealed: boolean;
}

/**
 * The live state of a writer that starts from `st`, with an empty queue and no heartbeat.
 * The same object is extended (not copied), so the tracked map the redactor was given a view
 * of stays the one the writer lists.
 */
export function liveWriterState(st: WriterState): LiveWriterState {
  return Object.assign(st, { chain: Promise.resolve() as Promise<unknown>, timer: undefined, closed: false, finalizedOnce: false, sealed: false });
}

/**
 * Run `fn` after every mutation queued before it, so appends and renames never interleave.
 * Resolves or rejects with `fn`'s result; a failure does not stop the queue.
 */
export function serial<T>(w: LiveWriterState, fn: () => Promise<T>): Promise<T> {
  const p = w.chain.then(fn, fn);
  w.chain = p.catch(() => undefined);
  return p;
}

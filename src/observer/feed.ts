/**
 * The Observer's feed: a watcher of one run directory that turns what changed into numbered
 * events (`seat` — one seat's card replaced; `study` — the study line replaced) kept in a bounded
 * log, so a page that reconnects with `Last-Event-ID: n` gets exactly the events after `n` —
 * nothing lost, nothing repeated — or, when `n` is older than the log, one `snapshot` of the
 * whole view that replaces everything it had.
 *
 * It never slows a seat: it only reads (see ./scan.ts), and a scan runs at most once per
 * {@link COALESCE_MS} however many file events arrive, on an `fs.watch` of the run directory
 * (recursive) with a bounded re-scan every {@link RESCAN_MS} as a fallback for the moments the
 * watch cannot see (the directory does not exist yet, or an event was dropped). Progress events
 * from an in-process study only update a map and schedule a scan.
 */
import { type FSWatcher, watch } from "node:fs";
import type { ProgressEvent } from "../study/context.ts";
import { createRunScanner } from "./scan.ts";
import { buildView, type ObserverPlan, type ObserverView, type SeatProgress, type SeatView, type StudyView } from "./view.ts";

/** Delay that coalesces a burst of file events into one scan, ms. */
export const COALESCE_MS = 40;
/** Fallback re-scan period, ms. */
export const RESCAN_MS = 500;
/** Events kept for reconnecting pages. */
export const LOG_SIZE = 2000;

/** One numbered event of the feed. */
export type FeedEvent =
  | { id: number; type: "seat"; data: SeatView }
  | { id: number; type: "study"; data: StudyView }
  | { id: number; type: "snapshot"; data: ObserverView };

/** Options of {@link createObserverFeed}. */
export interface ObserverFeedOptions {
  runId: string;
  /** Absolute run directory (it may not exist yet). */
  runDir: string;
  plan: ObserverPlan | null;
  /** The bundle's redactor for every text shown. */
  redact: (s: string) => string;
  /** Clock, ms since epoch (tests). */
  now?: () => number;
}

/** A running feed. */
export interface ObserverFeed {
  /** The current view and the id of the last event it includes. */
  snapshot(): { id: number; view: ObserverView };
  /** Events after `lastId`, or null when `lastId` is older than the log (send a snapshot instead). */
  since(lastId: number): FeedEvent[] | null;
  /** Calls `fn` for every new event; returns the unsubscribe. */
  subscribe(fn: (e: FeedEvent) => void): () => void;
  /** One progress event of an in-process study. Never throws. */
  progress(e: ProgressEvent): void;
  /** The bundle path of seat `seat`'s frame `name` as last scanned, or null when there is none. */
  framePath(seat: string, name: string): string | null;
  /** Scan now (synchronously) and publish what changed. */
  scanNow(): void;
  /** Stop watching. Idempotent. */
  close(): void;
}

/** Starts watching `runDir`. */
export function createObserverFeed(o: ObserverFeedOptions): ObserverFeed {
  const now = o.now ?? Date.now;
  const scanner = createRunScanner(o.runDir, o.plan?.seats ?? []);
  const progress = new Map<string, SeatProgress>();
  const log: FeedEvent[] = [];
  const subs = new Set<(e: FeedEvent) => void>();
  let seq = 0;
  let files = scanner.scan();
  let view: ObserverView = buildView({ runId: o.runId, files, plan: o.plan, progress, redact: o.redact, now: now() });
  let lastSeat = new Map(view.seats.map((s) => [s.id, JSON.stringify(s)]));
  let lastStudy = JSON.stringify(view.study);
  let watcher: FSWatcher | undefined;
  let pending: ReturnType<typeof setTimeout> | undefined;
  let closed = false;

  const publish = (e: FeedEvent) => {
    log.push(e);
    if (log.length > LOG_SIZE) log.splice(0, log.length - LOG_SIZE);
    for (const fn of [...subs]) {
      try {
        fn(e);
      } catch {
        // a broken page connection never stops the feed
      }
    }
  };

  const scanNow = () => {
    if (closed) return;
    let next: ObserverView;
    try {
      files = scanner.scan();
      next = buildView({ runId: o.runId, files, plan: o.plan, progress, redact: o.redact, now: now() });
    } catch {
      return;
    }
    const seats = new Map<string, string>();
    for (const s of next.seats) {
      const j = JSON.stringify(s);
      seats.set(s.id, j);
      if (lastSeat.get(s.id) !== j) publish({ id: ++seq, type: "seat", data: s });
    }
    const study = JSON.stringify(next.study);
    if (study !== lastStudy) publish({ id: ++seq, type: "study", data: next.study });
    view = next;
    lastSeat = seats;
    lastStudy = study;
    attachWatch();
  };

  const schedule = () => {
    if (closed || pending) return;
    pending = setTimeout(() => {
      pending = undefined;
      scanNow();
    }, COALESCE_MS);
  };

  const attachWatch = () => {
    if (watcher || closed) return;
    try {
      watcher = watch(o.runDir, { recursive: true }, schedule);
      watcher.on("error", () => {
        watcher?.close();
        watcher = undefined;
      });
    } catch {
      // not there yet: the fallback re-scan attaches it once the directory exists
    }
  };

  const timer = setInterval(scanNow, RESCAN_MS);
  timer.unref?.();
  attachWatch();

  return {
    snapshot: () => ({ id: seq, view }),
    since(lastId) {
      if (lastId >= seq) return [];
      const first = log[0];
      if (!first || lastId < first.id - 1) return null;
      return log.filter((e) => e.id > lastId);
    },
    subscribe(fn) {
      subs.add(fn);
      return () => subs.delete(fn);
    },
    progress(e) {
      try {
        const t = now();
        // A one-seat study labels its events with the actor type; they belong to its one seat.
        const planned = o.plan?.seats ?? [];
        const id = planned.length === 1 && !planned.includes(e.participant) ? planned[0]! : e.participant;
        // Before its seats start a many-seat study reports its own steps (preflight) under a
        // label that is no seat: the study line shows those from status.json.
        if (planned.length > 1 && !planned.includes(id)) return;
        const prev = progress.get(id);
        progress.set(id, {
          phase: e.phase,
          ...(e.detail !== undefined ? { detail: e.detail } : {}),
          ...(e.tasksPassed !== undefined ? { tasksPassed: e.tasksPassed } : prev?.tasksPassed !== undefined ? { tasksPassed: prev.tasksPassed } : {}),
          ...(e.tasksTotal !== undefined ? { tasksTotal: e.tasksTotal } : prev?.tasksTotal !== undefined ? { tasksTotal: prev.tasksTotal } : {}),
          ...(e.status !== undefined ? { status: e.status } : {}),
          firstAt: prev?.firstAt ?? t,
          at: t,
        });
        schedule();
      } catch {
        // progress is best effort and never throws into the study
      }
    },
    framePath: (seat, name) => files.seats.get(seat)?.frames.find((f) => f.name === name)?.path ?? null,
    scanNow,
    close() {
      if (closed) return;
      closed = true;
      clearInterval(timer);
      if (pending) clearTimeout(pending);
      watcher?.close();
      subs.clear();
    },
  };
}

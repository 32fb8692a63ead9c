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
import { createRunScanner, type RunFiles, type RunScanner } from "./scan.ts";
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

/** What one feed keeps between scans; every step below takes it. */
interface FeedState {
  readonly o: ObserverFeedOptions;
  readonly now: () => number;
  readonly scanner: RunScanner;
  /** The latest progress of each seat, from an in-process study. */
  readonly progress: Map<string, SeatProgress>;
  /** The last {@link LOG_SIZE} events, oldest first. */
  readonly log: FeedEvent[];
  readonly subs: Set<(e: FeedEvent) => void>;
  /** Id of the last event published. */
  seq: number;
  /** The files as last scanned. */
  files: RunFiles;
  /** The view as last published. */
  view: ObserverView;
  /** Each seat's card as last published, as JSON. */
  lastSeat: Map<string, string>;
  /** The study line as last published, as JSON. */
  lastStudy: string;
  watcher: FSWatcher | undefined;
  /** The coalescing timer of a scheduled scan. */
  pending: ReturnType<typeof setTimeout> | undefined;
  /** The fallback re-scan timer. */
  timer: ReturnType<typeof setInterval> | undefined;
  closed: boolean;
}

/** Starts watching `runDir`. */
export function createObserverFeed(o: ObserverFeedOptions): ObserverFeed {
  const now = o.now ?? Date.now;
  const scanner = createRunScanner(o.runDir, o.plan?.seats ?? []);
  const progress = new Map<string, SeatProgress>();
  const files = scanner.scan();
  const view: ObserverView = buildView({ runId: o.runId, files, plan: o.plan, progress, redact: o.redact, now: now() });
  const s: FeedState = {
    o,
    now,
    scanner,
    progress,
    log: [],
    subs: new Set(),
    seq: 0,
    files,
    view,
    lastSeat: new Map(view.seats.map((seat) => [seat.id, JSON.stringify(seat)])),
    lastStudy: JSON.stringify(view.study),
    watcher: undefined,
    pending: undefined,
    timer: undefined,
    closed: false,
  };
  s.timer = setInterval(() => scanNow(s), RESCAN_MS);
  s.timer.unref?.();
  attachWatch(s);

  return {
    snapshot: () => ({ id: s.seq, view: s.view }),
    since: (lastId) => eventsSince(s, lastId),
    subscribe(fn) {
      s.subs.add(fn);
      return () => s.subs.delete(fn);
    },
    progress: (e) => recordProgress(s, e),
    framePath: (seat, name) => s.files.seats.get(seat)?.frames.find((f) => f.name === name)?.path ?? null,
    scanNow: () => scanNow(s),
    close: () => closeFeed(s),
  };
}

/** Appends `e` to the bounded log and hands it to every subscriber (a throwing one is ignored). */
function publish(s: FeedState, e: FeedEvent): void {
  s.log.push(e);
  if (s.log.length > LOG_SIZE) s.log.splice(0, s.log.length - LOG_SIZE);
  for (const fn of [...s.subs]) {
    try {
      fn(e);
    } catch {
      // a broken page connection never stops the feed
    }
  }
}

/**
 * One scan: rebuilds the view, publishes a `seat` event for each card that changed and a `study`
 * event when the study line did, then (re)attaches the watch. A scan that throws publishes nothing.
 */
function scanNow(s: FeedState): void {
  if (s.closed) return;
  const { o } = s;
  let next: ObserverView;
  try {
    s.files = s.scanner.scan();
    next = buildView({ runId: o.runId, files: s.files, plan: o.plan, progress: s.progress, redact: o.redact, now: s.now() });
  } catch {
    return;
  }
  const seats = new Map<string, string>();
  for (const seat of next.seats) {
    const j = JSON.stringify(seat);
    seats.set(seat.id, j);
    if (s.lastSeat.get(seat.id) !== j) publish(s, { id: ++s.seq, type: "seat", data: seat });
  }
  const study = JSON.stringify(next.study);
  if (study !== s.lastStudy) publish(s, { id: ++s.seq, type: "study", data: next.study });
  s.view = next;
  s.lastSeat = seats;
  s.lastStudy = study;
  attachWatch(s);
}

/** Schedules one scan {@link COALESCE_MS} from now, unless one is already pending. */
function scheduleScan(s: FeedState): void {
  if (s.closed || s.pending) return;
  s.pending = setTimeout(() => {
    s.pending = undefined;
    scanNow(s);
  }, COALESCE_MS);
}

/** Watches the run directory (recursive) when it exists and no watch is attached; a watch that errors is dropped. */
function attachWatch(s: FeedState): void {
  if (s.watcher || s.closed) return;
  try {
    s.watcher = watch(s.o.runDir, { recursive: true }, () => scheduleScan(s));
    s.watcher.on("error", () => {
      s.watcher?.close();
      s.watcher = undefined;
    });
  } catch {
    // not there yet: the fallback re-scan attaches it once the directory exists
  }
}

/** Events after `lastId`, or null when the log no longer reaches back to it. */
function eventsSince(s: FeedState, lastId: number): FeedEvent[] | null {
  if (lastId >= s.seq) return [];
  const first = s.log[0];
  if (!first || lastId < first.id - 1) return null;
  return s.log.filter((e) => e.id > lastId);
}

/**
 * Records one progress event of an in-process study under its seat (keeping the task counts
 * it does not repeat) and schedules a scan. Never throws.
 */
function recordProgress(s: FeedState, e: ProgressEvent): void {
  try {
    const t = s.now();
    // A one-seat study labels its events with the actor type; they belong to its one seat.
    const planned = s.o.plan?.seats ?? [];
    const id = planned.length === 1 && !planned.includes(e.participant) ? planned[0]! : e.participant;
    // Before its seats start a many-seat study reports its own steps (preflight) under a
    // label that is no seat: the study line shows those from status.json.
    if (planned.length > 1 && !planned.includes(id)) return;
    const prev = s.progress.get(id);
    s.progress.set(id, {
      phase: e.phase,
      ...(e.detail !== undefined ? { detail: e.detail } : {}),
      ...(e.tasksPassed !== undefined ? { tasksPassed: e.tasksPassed } : prev?.tasksPassed !== undefined ? { tasksPassed: prev.tasksPassed } : {}),
      ...(e.tasksTotal !== undefined ? { tasksTotal: e.tasksTotal } : prev?.tasksTotal !== undefined ? { tasksTotal: prev.tasksTotal } : {}),
      ...(e.status !== undefined ? { status: e.status } : {}),
      firstAt: prev?.firstAt ?? t,
      at: t,
    });
    scheduleScan(s);
  } catch {
    // progress is best effort and never throws into the study
  }
}

/** Stops the timers and the watch and drops every subscriber. Idempotent. */
function closeFeed(s: FeedState): void {
  if (s.closed) return;
  s.closed = true;
  clearInterval(s.timer);
  if (s.pending) clearTimeout(s.pending);
  s.watcher?.close();
  s.subs.clear();
}

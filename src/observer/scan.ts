/**
 * What a run directory holds while its study runs, read for the Observer: the study's
 * `status.json`, the sandbox receipts (a seat's machine exists), each seat's admitted
 * screenshots, a terminal seat's `terminal-events.ndjson`, a seat's trace and model ledger once
 * it ended, and `run.json` once the bundle is sealed.
 *
 * Every file goes through the bundle's safe bounded reader (regular files only, no links, FIFOs
 * or devices, bounded size), and a file is read again only when its size or mtime changed, so
 * one scan costs a few `lstat`s when nothing moved. A file that is refused is treated as absent:
 * the Observer shows less, never more than the bundle would hold. Nothing here writes.
 */
import { lstatSync, readdirSync, type Stats } from "node:fs";
import { join } from "node:path";
import { safeReadFile } from "../bundle/safe-read.ts";

/** Largest `status.json`, receipts or trace read, bytes. */
const MAX_SMALL_BYTES = 1024 * 1024;
/** Largest `terminal-events.ndjson` read live, bytes (a larger one shows its seat without output). */
const MAX_EVENTS_BYTES = 4 * 1024 * 1024;
/** Largest `run.json` read, bytes. */
const MAX_RUN_BYTES = 32 * 1024 * 1024;
/** Most directory entries looked at in one folder (a folder with more is read in part). */
const MAX_ENTRIES = 4096;

/** One frame file of a seat: its bundle path, name, and when it appeared (mtime, ms since epoch). */
export interface FrameFile {
  path: string;
  name: string;
  mtimeMs: number;
  size: number;
}

/** What the files say about one seat. */
export interface SeatFiles {
  id: string;
  /** When its machine's receipt was written (ms since epoch), or null. */
  allocatedAt: number | null;
  /** Its admitted frames in order (oldest first). */
  frames: FrameFile[];
  /** Its terminal output events, when it is a terminal seat with an events file. */
  terminal: { chunks: { stream: string; source?: string; chunk: string }[] } | null;
  /** Its participant's status from its trace, once written. */
  traceStatus: string | null;
  /** When its trace appeared (ms since epoch): the participant ended. */
  endedAt: number | null;
  /** Known model spend of the seat in USD from its ledger; null when no ledger or unknown. */
  usd: number | null;
}

/** What the files say about the whole study. */
export interface RunFiles {
  status: {
    state?: string;
    phase?: string;
    detail?: string;
    lab?: string;
    route?: string;
    startedAt?: string;
    completedAt?: string;
    outcome?: { verdict?: string; participants?: { total: number; reachedGoal: number } };
  } | null;
  seats: Map<string, SeatFiles>;
  /** The sealed bundle's per-seat facts, once `run.json` exists. */
  sealed: {
    verdict: string | null;
    participants: { id: string; status: string }[];
    tasks: { participantId?: string; passed: boolean }[];
    costUsd: number | null;
  } | null;
  /** `report/index.html` exists as a regular file. */
  report: boolean;
}

interface CacheEntry {
  key: string;
  value: unknown;
}

/** A scanner of one run directory (see {@link createRunScanner}). */
export interface RunScanner {
  /** One scan of the directory (synchronous; bounded by the file bounds above). */
  scan(): RunFiles;
}

/** What one scanner keeps between scans; every step below takes it. */
interface ScanState {
  /** Absolute run directory; every `rel` below is inside it. */
  readonly runDir: string;
  /** The seats the study planned. */
  readonly seatIds: readonly string[];
  /** Each file's last parse, keyed by its relative path. */
  readonly cache: Map<string, CacheEntry>;
}

/**
 * A scanner of one run directory that remembers what it parsed, so an unchanged file costs an
 * `lstat`. `seatIds` are the seats the study planned (they show before any file of theirs exists).
 */
export function createRunScanner(runDir: string, seatIds: readonly string[] = []): RunScanner {
  const s: ScanState = { runDir, seatIds, cache: new Map() };
  return { scan: () => scanRun(s) };
}

/** One scan: the study's files, then every seat known from the plan, the receipts, the folders or the sealed bundle. */
function scanRun(s: ScanState): RunFiles {
  const status = cached(s, "status.json", MAX_SMALL_BYTES, (t) => JSON.parse(t) as RunFiles["status"]);
  const receipts = cached(s, "sandbox-receipts.ndjson", MAX_SMALL_BYTES, ndjson) ?? [];
  const ids = seatIdsOnDisk(s, receipts);
  const sealedRaw = cached(s, "run.json", MAX_RUN_BYTES, (t) => JSON.parse(t) as Record<string, unknown>);
  const sealed = sealedRaw ? sealedFacts(sealedRaw) : null;
  for (const p of sealed?.participants ?? []) ids.add(p.id);
  const many = ids.size > 1 || list(s, "seats").length > 0;
  const seats = new Map<string, SeatFiles>();
  for (const id of ids) seats.set(id, seatFiles(s, id, many, receipts));
  const rep = stat(s, "report/index.html");
  return { status, seats, sealed, report: !!rep && rep.isFile() };
}

/** The planned seats plus every seat a receipt, a `seats/` folder or a `screenshots/` folder names. */
function seatIdsOnDisk(s: ScanState, receipts: Record<string, unknown>[]): Set<string> {
  const ids = new Set<string>(s.seatIds);
  for (const r of receipts) if (typeof r.participantId === "string") ids.add(r.participantId);
  for (const d of list(s, "seats")) ids.add(d);
  for (const d of list(s, "screenshots")) if (stat(s, `screenshots/${d}`)?.isDirectory()) ids.add(d);
  return ids;
}

/** What the files say about seat `id`: in `seats/<id>/` when the study has `many` seats, else the one-seat layout. */
function seatFiles(s: ScanState, id: string, many: boolean, receipts: Record<string, unknown>[]): SeatFiles {
  const folder = many ? `seats/${id}/` : "";
  const receipt = receipts.find((r) => r.participantId === id);
  const frames = many ? frameFiles(s, `screenshots/${id}`, "") : frameFiles(s, "screenshots", `${id}-`);
  const events = cached(s, `${folder}terminal-events.ndjson`, MAX_EVENTS_BYTES, ndjson);
  const tracePath = many ? `${folder}actor.json` : `actors/${id}.json`;
  const trace = cached(s, tracePath, MAX_SMALL_BYTES, (t) => JSON.parse(t) as { status?: unknown });
  const ledger = cached(s, many ? `${folder}model-ledger.json` : `model-ledger-${id}.json`, MAX_SMALL_BYTES, (t) => JSON.parse(t) as { usd?: unknown });
  const traceStat = trace ? stat(s, tracePath) : null;
  return {
    id,
    allocatedAt: typeof receipt?.at === "string" ? Date.parse(receipt.at) : null,
    frames,
    terminal: events ? { chunks: terminalChunks(events) } : null,
    traceStatus: typeof trace?.status === "string" ? trace.status : null,
    endedAt: traceStat ? traceStat.mtimeMs : null,
    usd: typeof ledger?.usd === "number" ? ledger.usd : null,
  };
}

/** The output chunks of a terminal seat's events (events without a text chunk are skipped). */
function terminalChunks(events: Record<string, unknown>[]): { stream: string; source?: string; chunk: string }[] {
  return events.flatMap((e) =>
    typeof e.chunk === "string" ? [{ stream: String(e.stream), ...(typeof e.source === "string" ? { source: e.source } : {}), chunk: e.chunk }] : [],
  );
}

/** `lstat` of `rel`, or null when it cannot be read. */
function stat(s: ScanState, rel: string): Stats | null {
  try {
    return lstatSync(join(s.runDir, rel));
  } catch {
    return null;
  }
}

/** The parsed value of `rel` (re-read only when its size or mtime changed), or null. */
function cached<T>(s: ScanState, rel: string, max: number, parse: (text: string) => T): T | null {
  const st = stat(s, rel);
  if (!st?.isFile()) {
    s.cache.delete(rel);
    return null;
  }
  const key = `${st.size}:${st.mtimeMs}:${st.ino}`;
  const hit = s.cache.get(rel);
  if (hit && hit.key === key) return hit.value as T | null;
  const r = safeReadFile(join(s.runDir, rel), max);
  let value: T | null = null;
  if (r.ok) {
    try {
      value = parse(new TextDecoder().decode(r.bytes));
    } catch {
      value = null;
    }
  }
  s.cache.set(rel, { key, value });
  return value;
}

/** The sorted names in directory `rel` (at most {@link MAX_ENTRIES}), or none when it is no directory. */
function list(s: ScanState, rel: string): string[] {
  const st = stat(s, rel);
  if (!st?.isDirectory()) return [];
  try {
    return readdirSync(join(s.runDir, rel)).slice(0, MAX_ENTRIES).sort();
  } catch {
    return [];
  }
}

/** The JSON objects of an NDJSON text; a line that does not parse (yet) is skipped. */
function ndjson(text: string): Record<string, unknown>[] {
  return text
    .split("\n")
    .filter((l) => l.trim() !== "")
    .flatMap((l) => {
      try {
        const v = JSON.parse(l) as unknown;
        return v && typeof v === "object" ? [v as Record<string, unknown>] : [];
      } catch {
        // a line being appended right now is complete on the next scan
        return [];
      }
    });
}

/** The `.png` frames in `dir` whose names start with `prefix`, named without the prefix and extension. */
function frameFiles(s: ScanState, dir: string, prefix: string): FrameFile[] {
  return list(s, dir)
    .filter((f) => f.startsWith(prefix) && f.endsWith(".png"))
    .flatMap((f) => {
      const rel = dir ? `${dir}/${f}` : f;
      const st = stat(s, rel);
      if (!st?.isFile()) return [];
      return [{ path: rel, name: f.slice(prefix.length, -".png".length), mtimeMs: st.mtimeMs, size: st.size }];
    });
}

function sealedFacts(run: Record<string, unknown>): NonNullable<RunFiles["sealed"]> {
  const review = run.review as { verdict?: unknown } | undefined;
  const cost = run.cost as { estimatedTotalUsd?: unknown } | undefined;
  const participants = Array.isArray(run.participants) ? (run.participants as Record<string, unknown>[]) : [];
  const tasks = Array.isArray(run.tasks) ? (run.tasks as Record<string, unknown>[]) : [];
  const usd = cost?.estimatedTotalUsd;
  return {
    verdict: typeof review?.verdict === "string" ? review.verdict : null,
    participants: participants.flatMap((p) => (typeof p.id === "string" ? [{ id: p.id, status: String(p.status) }] : [])),
    tasks: tasks.map((t) => ({ ...(typeof t.participantId === "string" ? { participantId: t.participantId } : {}), passed: t.passed === true })),
    costUsd: typeof usd === "number" ? usd : null,
  };
}

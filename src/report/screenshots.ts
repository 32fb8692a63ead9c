/**
 * The report's screenshots: which listed screenshots it shows, in which order, and which of them
 * it inlines (read and admitted) within the inline budget; the rest are linked.
 */
import { createHash } from "node:crypto";
import { type ActorTrace, admitPngBytes, type RunBundle, type VerifyResult } from "../bundle/index.ts";
import { HumanishError } from "../errors.ts";
import { readContainedOrThrow } from "./files.ts";
import { chooseInlined } from "./inline.ts";
import type { ReportScreenshot } from "./model.ts";
import { seatOfPath } from "./seats.ts";

/** Largest screenshot inlined, in bytes. */
const MAX_SCREENSHOT_BYTES = 12 * 1024 * 1024;

/** A screenshot to show: its bundle path, its caption and the seat it belongs to, if any. */
interface ShotRef {
  path: string;
  caption: string;
  participantId?: string;
}

/** An artifact as run.json lists it (the fields read here). */
type Listed = RunBundle["artifacts"][number];

/**
 * Orders the screenshots: seat by seat in participant order, each seat's in the order its trace
 * references them; a listed screenshot no trace references goes to the seat its path names (else
 * none), by path. Grouping by seat is what the report's per-seat strips show. Returns the order
 * and how many belong to each seat id.
 */
export function orderScreenshots(
  b: RunBundle,
  listed: ReadonlyMap<string, Listed>,
  traces: ReadonlyMap<string, ActorTrace>,
): { shots: ShotRef[]; perSeat: Map<string, number> } {
  const seatIds = b.participants.map((p) => p.id);
  const seen = new Set<string>();
  const byTrace = new Map<string, ShotRef[]>();
  for (const p of b.participants) {
    const trace = traces.get(p.id);
    const mine: ShotRef[] = [];
    byTrace.set(p.id, mine);
    if (!trace) continue;
    for (const item of trace.items) {
      const ref = item.screenshotRef?.path;
      if (ref && !seen.has(ref) && listed.get(ref)?.kind === "screenshot") {
        seen.add(ref);
        mine.push({ path: ref, caption: item.title, participantId: p.id });
      }
    }
  }
  const unattributed: ShotRef[] = [];
  for (const a of [...b.artifacts].filter((x) => x.kind === "screenshot").sort((x, y) => x.path.localeCompare(y.path))) {
    if (seen.has(a.path)) continue;
    seen.add(a.path);
    const caption = a.path.split("/").pop() ?? a.path;
    const owner = seatOfPath(a.path, seatIds);
    if (owner) byTrace.get(owner)?.push({ path: a.path, caption, participantId: owner });
    else unattributed.push({ path: a.path, caption });
  }
  const shots: ShotRef[] = [];
  for (const id of seatIds) shots.push(...(byTrace.get(id) ?? []));
  shots.push(...unattributed);
  return { shots, perSeat: new Map([...byTrace].map(([id, list]) => [id, list.length])) };
}

/**
 * The pixel size of a screenshot about to be inlined; only an admitted PNG is inlined. When the
 * bundle verified just now (`verifiedSha256` is the listed digest) and these bytes still have that
 * digest, they are the bytes verify admitted, so the IHDR is read instead of decoding again — a
 * decode is ~4 MB of pixels per frame the report never shows. Otherwise the PNG is admitted here.
 * @throws HumanishError HUMANISH_INVALID_RUN_BUNDLE when the PNG is not admitted
 */
async function inlinableSize(png: Uint8Array, path: string, verifiedSha256: string | undefined): Promise<{ width: number; height: number }> {
  if (verifiedSha256 !== undefined && png.byteLength >= 24 && createHash("sha256").update(png).digest("hex") === verifiedSha256) {
    const ihdr = new DataView(png.buffer, png.byteOffset + 16, 8);
    return { width: ihdr.getUint32(0), height: ihdr.getUint32(4) };
  }
  const admitted = await admitPngBytes(png);
  if (!admitted.ok) {
    throw new HumanishError("HUMANISH_INVALID_RUN_BUNDLE", `Screenshot ${path} is not an admitted PNG (${admitted.code}: ${admitted.detail}).`, {
      next: "Run `humanish verify --run <id>`; verify re-admits every screenshot.",
    });
  }
  return { width: admitted.width, height: admitted.height };
}

/**
 * The screenshots of the report, in `shots` order. Only those chosen within `budgetBytes` (PNG
 * bytes as listed) are read from `runDir` and inlined with their pixel size; the rest are
 * linked, so the report's memory is bounded by the inline budget, not by the study's length
 * (verify re-admits every screenshot on its own pass). A verified `verify` lets the listed
 * digest stand for a decode.
 * @throws HumanishError HUMANISH_INVALID_RUN_BUNDLE when an inlined screenshot cannot be read or is not an admitted PNG
 */
export async function readScreenshots(
  runDir: string,
  shots: readonly ShotRef[],
  listed: ReadonlyMap<string, Listed>,
  budgetBytes: number,
  verify: VerifyResult | null,
): Promise<ReportScreenshot[]> {
  const screenshots: ReportScreenshot[] = [];
  const inlined = chooseInlined(
    shots.map((s) => ({ ...s, bytes: listed.get(s.path)?.bytes ?? 0 })),
    budgetBytes,
  );
  for (const s of shots) {
    if (!inlined.has(s.path)) {
      screenshots.push({ path: s.path, caption: s.caption, ...(s.participantId ? { participantId: s.participantId } : {}) });
      continue;
    }
    const png = readContainedOrThrow(runDir, s.path, MAX_SCREENSHOT_BYTES);
    const size = await inlinableSize(png, s.path, verify?.ok === true ? listed.get(s.path)?.sha256 : undefined);
    screenshots.push({ path: s.path, caption: s.caption, png, ...size, ...(s.participantId ? { participantId: s.participantId } : {}) });
  }
  return screenshots;
}

/**
 * Evidence selection for `humanish analyze` — pure: a verified bundle's files in (screenshots
 * through the view's reader), a bounded packet out. Every item has a stable evidence id the model cites:
 *
 *   run/summary, run/lifecycle, run/screenshot/0003 (a frame no seat claims)
 *   <seat>/status, <seat>/reason, <seat>/claim (what it claimed vs what the checks say),
 *   <seat>/task/<task>, <seat>/trace/<item>,
 *   <seat>/transcript#L41-L80, <seat>/screenshot/0007
 *
 * `<seat>` is the participant id when it is a plain word (`p2`), else `seat-<n>` (n = its place
 * in run.json). Ids depend only on the bundle, so a rerun cites the same ids.
 *
 * Bounds (count, text bytes, images, image bytes, participants) are shared out by taking, in
 * tiers, one item per seat in turn: first every seat's status, reason and task results, then its
 * ending and beginning, then the context of failures, then the rest spread evenly (the middle
 * first, then the quarters…). A seat that runs out of items leaves its share to the others. What
 * does not fit is listed in `omitted` with the bound it hit — never silently dropped. Screenshots
 * are read and decoded only when selected, one at a time, and sent downscaled.
 */
import type { ActorTrace, EvidenceBasis, EvidenceKind, EvidenceRef, OmittedEvidence, RunBundle, TraceItem } from "../bundle/index.ts";
import { ActorTraceSchema, CONTRADICTION_FINDING, claimContradicted, contradictionLine } from "../bundle/index.ts";
import { scratchWindow } from "../bytes/scratch.ts";
import { sha256Hex } from "../bytes/sha256.ts";
import { downscalePng } from "./downscale.ts";

/**
 * Scratch bytes the selection lets pile up while it decodes and downscales the frames it takes:
 * one full-frame decode (1280×800 RGBA is 4 MiB) leaves its file, its pixels, its reduced rows
 * and its deflate output behind, outside the JavaScript heap, so forty selected frames would
 * otherwise hold a few hundred MiB until the collector noticed.
 */
const DECODE_WINDOW_BYTES = 16 * 1024 * 1024;

/** Bounds of one packet (counts, bytes, pixels). */
export interface SelectionLimits {
  maxParticipants: number;
  maxItems: number;
  /** UTF-8 bytes of all text blocks together. */
  maxTextBytes: number;
  maxImages: number;
  /** Bytes of all downscaled PNGs together. */
  maxImageBytes: number;
  /** Box a screenshot is fitted into, pixels. */
  imageMaxWidth: number;
  imageMaxHeight: number;
  /** Lines of one transcript excerpt. */
  transcriptWindowLines: number;
  /** Characters kept of one transcript line. */
  maxLineChars: number;
  /** Characters kept of one trace item or reason. */
  maxItemChars: number;
}

/** The default bounds: 16 participants, 800 items, 160 KiB of text, 40 images, 20 MiB of images. */
export const SELECTION_LIMITS: SelectionLimits = {
  maxParticipants: 16,
  maxItems: 800,
  maxTextBytes: 160 * 1024,
  maxImages: 40,
  maxImageBytes: 20 * 1024 * 1024,
  imageMaxWidth: 1024,
  imageMaxHeight: 768,
  transcriptWindowLines: 40,
  maxLineChars: 400,
  maxItemChars: 3000,
};

/**
 * A verified bundle as the selector reads it: run.json parsed, the files held in memory by
 * bundle path, and the screenshots that are not held (most of a bundle's bytes) by their size,
 * read one at a time when one is selected.
 */
export interface BundleView {
  bundle: RunBundle;
  /** Files held, by bundle path: the text files (and, in a view built from bytes, screenshots too). */
  files: ReadonlyMap<string, Uint8Array>;
  /**
   * Screenshots not in `files`: their size in bytes by path, and `read`, which returns exactly
   * the bytes verify checked.
   * @throws from `read` when the file is no longer what verify checked (the caller's code)
   */
  images?: { sizes: ReadonlyMap<string, number>; read: (path: string) => Uint8Array };
}

/** Whether the view has the file at `path` (held or readable). */
function hasFile(view: BundleView, path: string): boolean {
  return view.files.has(path) || (view.images?.sizes.has(path) ?? false);
}

/** A screenshot to send, by path and size (bytes); its bytes are read only when it is selected. */
interface ShotRef {
  path: string;
  bytes: number;
}

function shotRef(view: BundleView, path: string): ShotRef {
  return { path, bytes: view.files.get(path)?.byteLength ?? view.images?.sizes.get(path) ?? 0 };
}

/** The bytes of a screenshot of the view. */
function shotBytes(view: BundleView, shot: ShotRef): Uint8Array {
  return view.files.get(shot.path) ?? view.images!.read(shot.path);
}

/** One item of the packet: its stored reference and what is sent (a text block, or a caption plus an image). */
export interface SelectedItem {
  ref: EvidenceRef;
  /** The text block sent (for an image: its caption). */
  text: string;
  image?: { png: Uint8Array; width: number; height: number };
}

/** The packet. `seats` maps each participant id to its evidence seat name. */
export interface EvidenceSelection {
  items: SelectedItem[];
  omitted: OmittedEvidence[];
  seats: Map<string, string>;
  participants: string[];
  tasks: string[];
  textBytes: number;
  imageBytes: number;
  images: number;
}

interface Candidate {
  id: string;
  kind: EvidenceKind;
  basis: EvidenceBasis;
  participantId: string | null;
  source: EvidenceRef["source"];
  /** Text of a text item, or the caption of a screenshot. */
  text: string;
  png?: ShotRef;
}

const enc = new TextEncoder();
const SAFE_WORD = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

/** A plain id word, or the fallback. */
function safeWord(id: string, fallback: string): string {
  return SAFE_WORD.test(id) ? id : fallback;
}

function clip(text: string, max: number): string {
  if (text.length <= max) return text;
  const half = Math.floor(max / 2);
  return `${text.slice(0, half)}\n…[${text.length - 2 * half} characters cut]…\n${text.slice(-half)}`;
}

/** The order that spreads picks over `n` items: the middle first, then the quarters, and so on. */
export function spreadOrder(n: number): number[] {
  const out: number[] = [];
  const seen = new Set<number>();
  let spans: [number, number][] = [[0, n - 1]];
  while (spans.length && out.length < n) {
    const next: [number, number][] = [];
    for (const [a, b] of spans) {
      if (a > b) continue;
      const m = Math.floor((a + b) / 2);
      if (!seen.has(m)) {
        seen.add(m);
        out.push(m);
      }
      next.push([a, m - 1], [m + 1, b]);
    }
    spans = next;
  }
  return out;
}

function decode(bytes: Uint8Array | undefined): string | null {
  if (!bytes) return null;
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    return null;
  }
}

function traceOf(view: BundleView, path: string | null): ActorTrace | null {
  const text = path ? decode(view.files.get(path)) : null;
  if (text === null) return null;
  try {
    const r = ActorTraceSchema.safeParse(JSON.parse(text));
    return r.success ? r.data : null;
  } catch {
    return null;
  }
}

/** How a trace item reads in the packet, and whose voice it is. */
function traceItemText(item: TraceItem, max: number): { text: string; basis: EvidenceBasis } | null {
  const status = item.status ? ` [${item.status}]` : "";
  const at = item.at ? ` at ${item.at}` : "";
  switch (item.kind) {
    case "command": {
      const c = item.command ?? {};
      const exit = c.exitCode === undefined ? "" : `\nexit ${c.exitCode}${c.timedOut ? " (timed out)" : ""}`;
      return { basis: "observed", text: clip(`command${status}${at}: $ ${c.text ?? item.title}${exit}${c.outputTail ? `\n${c.outputTail}` : ""}`, max) };
    }
    case "ui_action":
      return {
        basis: "observed",
        text: clip(`action${status}${at}: ${item.action ? JSON.stringify(item.action) : item.title}${item.text ? `\n${item.text}` : ""}`, max),
      };
    case "message":
    case "reasoning":
    case "plan":
      // The participant's own words: narration, never observation.
      return { basis: "participant", text: clip(`${item.kind} (the participant's own words)${at}: ${item.title}${item.text ? `\n${item.text}` : ""}`, max) };
    case "notice":
      return { basis: "harness", text: clip(`notice${status}${at}: ${item.title}${item.text ? `\n${item.text}` : ""}`, max) };
    case "tool_call":
    case "file_change":
    case "approval":
      return { basis: "observed", text: clip(`${item.kind}${status}${at}: ${item.title}${item.text ? `\n${item.text}` : ""}`, max) };
    case "screenshot":
    case "usage":
      return null;
  }
}

function failed(item: TraceItem): boolean {
  const exit = item.command?.exitCode;
  return item.status === "failed" || item.status === "error" || (typeof exit === "number" && exit !== 0) || item.command?.timedOut === true;
}

/** The seat's folder prefix (`seats/p1/`, or `` for the root layout of a one-seat bundle). */
function seatPrefix(b: RunBundle, p: RunBundle["participants"][number]): string {
  const folder = b.study?.seats.find((s) => s.id === p.id)?.folder;
  if (folder) return folder.endsWith("/") ? folder : `${folder}/`;
  const fromTrace = p.trace ? /^(seats\/[^/]+\/)/.exec(p.trace)?.[1] : undefined;
  if (fromTrace) return fromTrace;
  return b.participants.length === 1 ? "" : `seats/${p.id}/`;
}

interface SeatCandidates {
  participantId: string;
  seat: string;
  tiers: Candidate[][];
}

/** One participant as the candidate builders see it. */
interface Seat {
  view: BundleView;
  p: RunBundle["participants"][number];
  /** The evidence-id prefix (`p2` or `seat-2`). */
  seat: string;
  limits: SelectionLimits;
}

/** Status, the participant's reason and its hidden-check results: what every seat sends first. */
function headCandidates({ view, p, seat, limits }: Seat): Candidate[] {
  const b = view.bundle;
  const pid = p.id;
  const seatRow = b.study?.seats.find((s) => s.id === pid);
  const harness = p.completionReason === "harness_error" || seatRow?.state === "failed";
  const statusText = [
    `participant ${pid} (${p.actorType}${p.persona ? `, persona ${p.persona}` : ""}${p.device ? `, device ${p.device}` : ""})`,
    `status ${p.status}; completion reason ${p.completionReason ?? "none"}${p.durationMs !== undefined ? `; ${Math.round(p.durationMs)} ms` : ""}`,
    ...(p.deadlineFired ? [`deadline fired: ${p.deadlineFired}`] : []),
    ...(p.reportedFriction ? ["the participant reported friction"] : []),
    ...(seatRow ? [`seat ended ${seatRow.state} in phase ${seatRow.phase}${seatRow.error ? `: ${seatRow.error.code} ${seatRow.error.message}` : ""}`] : []),
  ].join("\n");
  const out: Candidate[] = [
    { id: `${seat}/status`, kind: "status", basis: harness ? "harness" : "observed", participantId: pid, source: { path: "run.json" }, text: statusText },
  ];
  if (p.reason.trim()) {
    // A model participant's reason is its own account of how it ended: narration, not observation.
    const basis: EvidenceBasis = harness ? "harness" : p.actorType.startsWith("scripted-") ? "observed" : "participant";
    const voice = basis === "participant" ? "the participant's own account" : basis === "harness" ? "the harness's account" : "the scripted run's account";
    out.push({
      id: `${seat}/reason`,
      kind: "reason",
      basis,
      participantId: pid,
      source: { path: "run.json" },
      text: clip(`reason (${voice}): ${p.reason}`, limits.maxItemChars),
    });
  }
  if (p.claimed && p.claimed !== "none") {
    // Observed against the participant's word: what it claimed, and what the checks say of it.
    const contradicted = claimContradicted(p);
    const checks = p.goalCheck ? `the hidden checks say the goal was ${p.goalCheck.reached ? "reached" : "not reached"} (${p.goalCheck.detail})` : "";
    out.push({
      id: `${seat}/claim`,
      kind: "status",
      basis: harness ? "harness" : "observed",
      participantId: pid,
      source: { path: "run.json" },
      text: clip(
        `claim vs checks: the participant claimed ${p.claimed}${checks ? `; ${checks}` : ""}${contradicted ? ` — ${CONTRADICTION_FINDING} (a finding of its own)` : ""}`,
        limits.maxItemChars,
      ),
    });
  }
  b.tasks
    .filter((t) => t.participantId === pid)
    .forEach((t, i) => {
      out.push({
        id: `${seat}/task/${safeWord(t.id, `task-${i + 1}`)}`,
        kind: "task",
        basis: "observed",
        participantId: pid,
        source: { path: "run.json", item: t.id },
        text: `hidden check of task ${t.id} (${t.goal}): ${t.status}${t.detail ? ` — ${t.detail}` : ""}`,
      });
    });
  return out;
}

/** The trace's items, the failed ones, and the screenshots it references in order (with those just after a failure). */
function traceCandidates({ view, p, seat, limits }: Seat): { items: Candidate[]; failures: Candidate[]; shotPaths: string[]; nearFailure: Set<string> } {
  const items: Candidate[] = [];
  const failures: Candidate[] = [];
  const shotPaths: string[] = [];
  const nearFailure = new Set<string>();
  let lastFailure = -10;
  (traceOf(view, p.trace)?.items ?? []).forEach((item, i) => {
    if (failed(item)) lastFailure = i;
    const ref = item.screenshotRef?.path;
    if (ref && hasFile(view, ref) && !shotPaths.includes(ref)) {
      shotPaths.push(ref);
      if (i - lastFailure <= 2) nearFailure.add(ref);
    }
    const rendered = traceItemText(item, limits.maxItemChars);
    if (!rendered || !p.trace) return;
    const c: Candidate = {
      id: `${seat}/trace/${safeWord(item.id, `item-${i + 1}`)}`,
      kind: "trace",
      basis: rendered.basis,
      participantId: p.id,
      source: { path: p.trace, item: item.id },
      text: rendered.text,
    };
    items.push(c);
    if (failed(item)) failures.push(c);
  });
  return { items, failures, shotPaths, nearFailure };
}

/**
 * The seat's screenshots: those its trace references, then listed frames its folder or id
 * claims (every frame, in a one-seat bundle); each frame goes to the first seat that claims it.
 */
function screenshotCandidates({ view, p, seat }: Seat, referenced: string[], claimed: Set<string>): Candidate[] {
  const b = view.bundle;
  const prefix = seatPrefix(b, p);
  const paths = referenced.filter((path) => !claimed.has(path));
  for (const a of b.artifacts) {
    if (a.kind !== "screenshot" || paths.includes(a.path) || claimed.has(a.path)) continue;
    if (a.path.split("/").includes(p.id) || (prefix && a.path.startsWith(prefix)) || b.participants.length === 1) paths.push(a.path);
  }
  return paths.map((path, i) => {
    claimed.add(path);
    const n = String(i + 1).padStart(4, "0");
    return {
      id: `${seat}/screenshot/${n}`,
      kind: "screenshot",
      basis: "observed",
      participantId: p.id,
      source: { path, item: n },
      text: `screenshot ${i + 1} of ${paths.length} of participant ${p.id}`,
      png: shotRef(view, path),
    };
  });
}

/** The seat's terminal transcript cut into numbered windows of `transcriptWindowLines` lines. */
function transcriptCandidates({ view, p, seat, limits }: Seat): Candidate[] {
  const b = view.bundle;
  const path = `${seatPrefix(b, p)}terminal-transcript.txt`;
  if (!b.artifacts.some((a) => a.kind === "terminal-transcript" && a.path === path)) return [];
  const lines = (decode(view.files.get(path)) ?? "").split("\n");
  if (lines.length && lines[lines.length - 1] === "") lines.pop();
  const out: Candidate[] = [];
  const w = limits.transcriptWindowLines;
  for (let a = 0; a < lines.length; a += w) {
    const z = Math.min(lines.length, a + w);
    const body = lines
      .slice(a, z)
      .map((l, k) => `${String(a + k + 1).padStart(5)}| ${l.length > limits.maxLineChars ? `${l.slice(0, limits.maxLineChars)}…` : l}`)
      .join("\n");
    out.push({
      id: `${seat}/transcript#L${a + 1}-L${z}`,
      kind: "transcript",
      basis: "observed",
      participantId: p.id,
      source: { path, lines: [a + 1, z] },
      text: `terminal transcript lines ${a + 1}–${z} of ${lines.length}:\n${body}`,
    });
  }
  return out;
}

/** Every candidate of one participant, in tiers: head; ending then beginning; failure context; the rest spread out. */
function seatCandidates(view: BundleView, index: number, limits: SelectionLimits, claimed: Set<string>): SeatCandidates {
  const p = view.bundle.participants[index]!;
  const seat: Seat = { view, p, seat: safeWord(p.id, `seat-${index + 1}`), limits };
  const trace = traceCandidates(seat);
  const shots = screenshotCandidates(seat, trace.shotPaths, claimed);
  const windows = transcriptCandidates(seat);
  const taken = new Set<Candidate>();
  const pick = (into: Candidate[], c: Candidate | undefined) => {
    if (c && !taken.has(c)) {
      taken.add(c);
      into.push(c);
    }
  };
  const edges: Candidate[] = [];
  pick(edges, windows.at(-1));
  pick(edges, shots.at(-1));
  for (const c of trace.items.slice(-2)) pick(edges, c);
  pick(edges, windows[0]);
  pick(edges, shots[0]);
  pick(edges, trace.items[0]);
  const failureCtx: Candidate[] = [];
  for (const c of trace.failures) pick(failureCtx, c);
  for (const c of shots) if (trace.nearFailure.has(c.source.path)) pick(failureCtx, c);
  const spread = [trace.items, shots, windows].map((list) =>
    spreadOrder(list.length)
      .map((i) => list[i]!)
      .filter((c) => !taken.has(c)),
  );
  const rest: Candidate[] = [];
  for (let i = 0; spread.some((l) => i < l.length); i++) for (const l of spread) if (i < l.length) pick(rest, l[i]);
  return { participantId: p.id, seat: seat.seat, tiers: [headCandidates(seat), edges, failureCtx, rest] };
}

function runCandidates(view: BundleView): Candidate[] {
  const b = view.bundle;
  const funnel = new Map<string, { passed: number; total: number; goal: string }>();
  for (const t of b.tasks) {
    const f = funnel.get(t.id) ?? { passed: 0, total: 0, goal: t.goal };
    f.total++;
    if (t.passed) f.passed++;
    funnel.set(t.id, f);
  }
  const summary = [
    `lab ${b.lab.id}${b.lab.title ? ` (${b.lab.title})` : ""}; route ${b.route}; target ${b.target}; mode ${b.mode}`,
    `product: ${b.subject.name ?? b.subject.appUrl ?? b.subject.source}`,
    `run outcome ${b.outcome.state}${b.outcome.error ? ` (${b.outcome.error.code}: ${b.outcome.error.message})` : ""}; verdict ${b.review.verdict}`,
    `${b.review.participants.reachedGoal}/${b.review.participants.total} participants reached the goal; abandoned ${b.review.participants.abandoned}, ran out ${b.review.participants.ranOut}, blocked ${b.review.participants.blocked}, harness failures ${b.review.participants.harnessFailed} (a harness failure is never a finding about the product)`,
    ...(contradictionLine(b.participants) ? [`${contradictionLine(b.participants)} (each seat's claim vs checks item says how)`] : []),
    `participant ids: ${b.participants.map((p) => p.id).join(", ") || "none"}`,
    `task ids: ${[...funnel.keys()].join(", ") || "none"}`,
    ...[...funnel].map(([id, f]) => `task ${id} (${f.goal}): ${f.passed}/${f.total} passed`),
    ...(b.review.summary ? [`review: ${b.review.summary}`] : []),
  ].join("\n");
  const out: Candidate[] = [{ id: "run/summary", kind: "run", basis: "observed", participantId: null, source: { path: "run.json" }, text: summary }];
  if (b.lifecycle.length) {
    const lines = b.lifecycle.slice(-40).map((l) => `${l.at} ${l.event}${l.message ? `: ${l.message}` : ""}`);
    out.push({
      id: "run/lifecycle",
      kind: "run",
      basis: "harness",
      participantId: null,
      source: { path: "run.json" },
      text: clip(`run lifecycle (the harness's record${b.lifecycle.length > 40 ? `, last 40 of ${b.lifecycle.length}` : ""}):\n${lines.join("\n")}`, 6000),
    });
  }
  return out;
}

/** The text block of an item as sent: a header naming its id, kind, basis and participant, then its text. */
export function blockOf(c: Pick<Candidate, "id" | "kind" | "basis" | "participantId" | "text">): string {
  return `### ${c.id} · ${c.kind} · ${c.basis}${c.participantId !== null ? ` · participant ${c.participantId}` : ""}\n${c.text}\n`;
}

/** Select the packet from a verified bundle (see the module doc). Pure. */
export function selectEvidence(view: BundleView, limits: SelectionLimits = SELECTION_LIMITS): EvidenceSelection {
  const b = view.bundle;
  const sel: EvidenceSelection = {
    items: [],
    omitted: [],
    seats: new Map(),
    participants: b.participants.map((p) => p.id),
    tasks: [...new Set(b.tasks.map((t) => t.id))],
    textBytes: 0,
    imageBytes: 0,
    images: 0,
  };
  const scratch = scratchWindow(DECODE_WINDOW_BYTES);
  const omit = (c: Candidate, reason: OmittedEvidence["reason"], bytes: number): false => {
    sel.omitted.push({ id: c.id, kind: c.kind, participantId: c.participantId, reason, bytes });
    return false;
  };
  /** Adds `c` to the packet when it fits (true), else lists it as omitted (false). */
  const take = (c: Candidate): boolean => {
    const block = blockOf(c);
    const textBytes = enc.encode(block).byteLength;
    if (sel.items.length >= limits.maxItems) return omit(c, "item_budget", c.png?.bytes ?? textBytes);
    if (sel.textBytes + textBytes > limits.maxTextBytes) return omit(c, "text_budget", c.png?.bytes ?? textBytes);
    const ref: EvidenceRef = { id: c.id, kind: c.kind, basis: c.basis, participantId: c.participantId, source: c.source, bytes: textBytes, sha256: "" };
    if (c.png) {
      if (sel.images >= limits.maxImages) return omit(c, "image_budget", c.png.bytes);
      // Outside the try: bytes that are no longer what verify checked refuse the analysis, not one frame.
      const png = shotBytes(view, c.png);
      let small: ReturnType<typeof downscalePng>;
      try {
        small = downscalePng(png, limits.imageMaxWidth, limits.imageMaxHeight);
      } catch {
        return omit(c, "unreadable", c.png.bytes);
      } finally {
        scratch.add(png.byteLength);
      }
      scratch.add(small.originalWidth * small.originalHeight * 4 + small.png.byteLength);
      if (sel.imageBytes + small.png.byteLength > limits.maxImageBytes) return omit(c, "image_bytes", small.png.byteLength);
      const caption = `${c.text} (captured ${small.originalWidth}×${small.originalHeight}, sent ${small.width}×${small.height})`;
      const cap = { ...c, text: caption };
      sel.images++;
      sel.imageBytes += small.png.byteLength;
      sel.textBytes += enc.encode(blockOf(cap)).byteLength;
      ref.bytes = small.png.byteLength;
      ref.sha256 = sha256Hex(small.png);
      ref.image = { width: small.width, height: small.height, originalWidth: small.originalWidth, originalHeight: small.originalHeight };
      sel.items.push({ ref, text: blockOf(cap), image: { png: small.png, width: small.width, height: small.height } });
      return true;
    }
    sel.textBytes += textBytes;
    ref.sha256 = sha256Hex(block);
    ref.preview = c.text.slice(0, 600);
    sel.items.push({ ref, text: block });
    return true;
  };

  for (const c of runCandidates(view)) take(c);
  const claimed = new Set<string>();
  const seats = b.participants.map((_, i) => seatCandidates(view, i, limits, claimed));
  for (const s of seats) sel.seats.set(s.participantId, s.seat);
  const admitted = seats.slice(0, limits.maxParticipants);
  for (const s of seats.slice(limits.maxParticipants))
    for (const c of s.tiers.flat()) omit(c, "participant_budget", c.png?.bytes ?? enc.encode(blockOf(c)).byteLength);
  // Frames no seat claims are the run's own, taken last.
  const orphanShots = b.artifacts.filter((a) => a.kind === "screenshot" && !claimed.has(a.path) && hasFile(view, a.path));
  const runShots: Candidate[] = orphanShots.map((a, i) => ({
    id: `run/screenshot/${String(i + 1).padStart(4, "0")}`,
    kind: "screenshot",
    basis: "observed",
    participantId: null,
    source: { path: a.path, item: String(i + 1).padStart(4, "0") },
    text: `screenshot ${i + 1} of ${orphanShots.length} that no participant's trace or folder claims`,
    png: shotRef(view, a.path),
  }));
  for (let tier = 0; tier < 4; tier++) {
    const queues = admitted.map((s) => [...s.tiers[tier]!]);
    if (tier === 3) queues.push(runShots);
    while (queues.some((q) => q.length)) for (const q of queues) if (q.length) take(q.shift()!);
  }
  return sel;
}

/** The packet's digest: every item's id and content digest, in order. */
export function selectionDigest(sel: EvidenceSelection): string {
  return sha256Hex(sel.items.map((i) => `${i.ref.id}\u0000${i.ref.sha256}`).join("\n"));
}

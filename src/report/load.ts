/**
 * Builds a {@link ReportModel} from a run directory: `run.json` (`humanish.run-bundle.v1`, as
 * src/bundle/schemas.ts defines it), the participants' actor traces, the
 * terminal transcript, and the listed screenshots. Every file is read through the contained,
 * no-follow reader (files.ts), only when `run.json` lists it.
 */

import { createHash } from "node:crypto";
import { contradictionLine, GOAL_RULE } from "../bundle/goal.ts";
import {
  type ActorTrace,
  ActorTraceSchema,
  admitPngBytes,
  type RunBundle,
  RunBundleSchema,
  stakeholderLine,
  type TraceItem,
  type VerifyResult,
} from "../bundle/index.ts";
import { HumanishError } from "../errors.ts";
import { loadCombined } from "./combined.ts";
import { readContainedFile, readContainedOrThrow } from "./files.ts";
import { loadFindings } from "./findings.ts";
import { chooseInlined, INLINE_BUDGET_BYTES } from "./inline.ts";
import type { ReportCleanup, ReportCostLine, ReportModel, ReportParticipant, ReportScreenshot, ReportTask, ReportTimelineEntry } from "./model.ts";
import { seatOfPath, seatRow } from "./seats.ts";

/** Largest `run.json` / trace / transcript read, in bytes. */
const MAX_JSON_BYTES = 32 * 1024 * 1024;
/** Largest transcript shown, in bytes (the route caps it at 512 KiB of raw input). */
const MAX_TRANSCRIPT_BYTES = 4 * 1024 * 1024;
/** Largest screenshot inlined, in bytes. */
const MAX_SCREENSHOT_BYTES = 12 * 1024 * 1024;

function decodeText(bytes: Uint8Array): string {
  return new TextDecoder("utf-8", { fatal: false }).decode(bytes);
}

/** Reads and validates `run.json`; throws `HUMANISH_INVALID_RUN_BUNDLE` naming the first bad field. */
export function readRunBundle(runDir: string): RunBundle {
  const bytes = readContainedFile(runDir, "run.json", MAX_JSON_BYTES);
  if (!bytes.ok) {
    throw new HumanishError(
      bytes.reason === "not_found" ? "HUMANISH_RUN_NOT_FOUND" : "HUMANISH_INVALID_RUN_BUNDLE",
      `run.json in the run directory cannot be read: ${bytes.reason.replace(/_/g, " ")}.`,
      { next: "Run `humanish runs` to list the runs of this project." },
    );
  }
  let json: unknown;
  try {
    json = JSON.parse(decodeText(bytes.bytes));
  } catch (err) {
    throw new HumanishError("HUMANISH_INVALID_RUN_BUNDLE", `run.json is not valid JSON: ${(err as Error).message}`, {
      next: "Run `humanish verify --run <id>` for details.",
    });
  }
  const parsed = RunBundleSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue ? issue.path.join(".") || "(root)" : "(root)";
    throw new HumanishError("HUMANISH_INVALID_RUN_BUNDLE", `run.json does not match humanish.run-bundle.v1 at ${where}: ${issue?.message ?? "invalid"}`, {
      next: "Run `humanish verify --run <id>` for details.",
    });
  }
  return parsed.data;
}

function readTrace(runDir: string, rel: string): ActorTrace | null {
  const r = readContainedFile(runDir, rel, MAX_JSON_BYTES);
  if (!r.ok) return null;
  try {
    const parsed = ActorTraceSchema.safeParse(JSON.parse(decodeText(r.bytes)));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}

function describeAction(action: { type: string } & Record<string, unknown>): string {
  const params = Object.entries(action)
    .filter(([k]) => k !== "type")
    .map(([k, v]) => `${k}=${typeof v === "string" ? JSON.stringify(v) : JSON.stringify(v ?? null)}`);
  return params.length ? `${action.type} ${params.join(" ")}` : action.type;
}

function timelineOfItem(item: TraceItem, participant: string, multi: boolean): ReportTimelineEntry | null {
  const who = multi ? `${participant}: ` : "";
  const base = { ...(item.at ? { at: item.at } : {}) };
  switch (item.kind) {
    case "command": {
      const exit = item.command?.exitCode;
      return {
        ...base,
        kind: "command",
        title: `${who}$ ${item.command?.text ?? item.title}`,
        ...(item.command?.outputTail ? { detail: item.command.outputTail } : {}),
        ...(exit !== undefined ? { exitCode: exit } : {}),
        problem: (typeof exit === "number" && exit !== 0) || item.command?.timedOut === true || item.status === "failed",
      };
    }
    case "ui_action":
      return {
        ...base,
        kind: "action",
        title: `${who}${item.action ? describeAction(item.action as { type: string } & Record<string, unknown>) : item.title}`,
        ...(item.text ? { detail: item.text } : {}),
        problem: item.status === "failed" || item.status === "error",
      };
    case "message":
    case "reasoning":
    case "plan":
      return { ...base, kind: item.kind, title: `${who}${item.title}`, ...(item.text ? { detail: item.text } : {}) };
    case "notice":
      return {
        ...base,
        kind: "notice",
        title: `${who}${item.title}`,
        ...(item.text ? { detail: item.text } : {}),
        problem: item.status === "error",
      };
    case "screenshot":
      return { ...base, kind: "screenshot", title: `${who}${item.title}${item.screenshotRef ? ` (${item.screenshotRef.path})` : ""}` };
    case "tool_call":
    case "file_change":
    case "approval":
      return { ...base, kind: item.kind, title: `${who}${item.title}`, ...(item.text ? { detail: item.text } : {}) };
    case "usage":
      return null;
  }
}

/**
 * The denominator line: `5/8 reached the goal (1 harness failure: not a finding); tasks: add-todo
 * 8/8 · clear-completed 5/8`, the same words `humanish runs` prints; a dry run says nobody ran.
 */
function verdictLineOf(b: RunBundle, tasks: ReportTask[], total: number): string {
  const funnel = tasks.length ? `; tasks: ${tasks.map((t) => `${t.id} ${t.passed}/${t.total}`).join(" · ")}` : "";
  if (b.mode === "dry-run") return `dry run (contract only): 0/${total} participants ran${funnel}`;
  // The head only (no tasks part): the funnel above is the report's own, per task in task order.
  const head = stakeholderLine({ participants: { ...b.review.participants, total }, tasks: { sessions: 0, tasks: [] } });
  return `${head}${funnel}`;
}

function costLabel(line: RunBundle["cost"]["lines"][number]): string {
  const parts: string[] = [line.kind];
  if (line.participantId) parts.push(line.participantId);
  if (line.modelId) parts.push(line.modelId);
  return parts.join(" · ");
}

/** Options of {@link loadReportModel}. */
export interface LoadReportOptions {
  /** The verify result to show (the caller ran `verifyRun`); null when verify could not run. */
  verify: VerifyResult | null;
  /** Clock for `generatedAt` (ISO); default now. */
  now?: () => Date;
  /** Most PNG bytes to inline (the rest are linked); default {@link INLINE_BUDGET_BYTES}. */
  inlineBudgetBytes?: number;
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
 * Reads the run directory `runDir` (absolute) into a report model.
 *
 * @throws HumanishError `HUMANISH_RUN_NOT_FOUND` when run.json is missing,
 *   `HUMANISH_INVALID_RUN_BUNDLE` when it is unreadable, malformed or refused (symlink, hard link)
 *   or a listed transcript/screenshot cannot be read or a screenshot is not an admitted PNG.
 */
export async function loadReportModel(runDir: string, opts: LoadReportOptions): Promise<ReportModel> {
  const b = readRunBundle(runDir);
  const listed = new Map(b.artifacts.map((a) => [a.path, a]));
  const multi = b.participants.length > 1;

  // Participants (seats) and their traces.
  const traces = new Map<string, ActorTrace>();
  const participants: ReportParticipant[] = b.participants.map((p) => {
    const trace = p.trace && listed.has(p.trace) ? readTrace(runDir, p.trace) : null;
    if (trace) traces.set(p.id, trace);
    return seatRow(
      p,
      trace,
      b.tasks,
      b.cost.lines,
      b.study?.seats.find((s) => s.id === p.id),
    );
  });
  const reached = b.review.participants.reachedGoal;
  const total = Math.max(b.review.participants.total, b.participants.length);

  // Task funnel: one row per task id, counted over participants.
  const taskOrder: string[] = [];
  const byId = new Map<string, ReportTask>();
  const sessions = Math.max(1, b.participants.length);
  for (const t of b.tasks) {
    let row = byId.get(t.id);
    if (!row) {
      row = { id: t.id, goal: t.goal, passed: 0, total: 0, status: t.status };
      byId.set(t.id, row);
      taskOrder.push(t.id);
    }
    row.total += 1;
    if (t.passed) row.passed += 1;
    // Seats often share one detail ("check exited 1"): each distinct detail is listed once.
    if (t.detail && !(row.detail ?? "").split("; ").includes(t.detail)) row.detail = row.detail ? `${row.detail}; ${t.detail}` : t.detail;
    if (row.total > 1)
      row.status =
        row.passed === row.total ? "passed" : row.passed === 0 ? (t.status === "not_run" && row.status === "not_run" ? "not_run" : "failed") : "partial";
  }
  for (const rt of b.review.tasks.tasks) {
    if (!byId.has(rt.id)) {
      byId.set(rt.id, { id: rt.id, goal: "", passed: rt.completed, total: rt.sessions || sessions, status: rt.completed > 0 ? "passed" : "not_run" });
      taskOrder.push(rt.id);
    }
  }
  const tasks = taskOrder.map((id) => byId.get(id)!);

  // Timeline: lifecycle + trace items, ordered by time where known (stable).
  const entries: { t: number; seq: number; e: ReportTimelineEntry }[] = [];
  let seq = 0;
  const push = (e: ReportTimelineEntry): void => {
    const t = e.at ? Date.parse(e.at) : NaN;
    entries.push({ t: Number.isFinite(t) ? t : Number.POSITIVE_INFINITY, seq: seq++, e });
  };
  for (const l of b.lifecycle) {
    push({
      at: l.at,
      kind: "lifecycle",
      title: l.event,
      ...(l.message ? { detail: l.message } : {}),
      problem: /error|fail|timed_out|exceeded|unconfirmed/.test(l.event),
    });
  }
  for (const p of b.participants) {
    const trace = traces.get(p.id);
    if (!trace) continue;
    for (const item of trace.items) {
      const e = timelineOfItem(item, p.id, multi);
      if (e) push(e);
    }
  }
  entries.sort((a, c) => (a.t === c.t ? a.seq - c.seq : a.t - c.t));
  const timeline = entries.map((x) => x.e);
  for (const t of b.tasks) {
    timeline.push({
      kind: "check",
      title: `${t.participantId && multi ? `${t.participantId}: ` : ""}task ${t.id}: ${t.status}`,
      ...(t.detail ? { detail: t.detail } : {}),
      problem: t.status === "failed",
    });
  }

  // Transcript (terminal route): the listed terminal-transcript artifact.
  const transcriptEntry = b.artifacts.find((a) => a.kind === "terminal-transcript");
  const transcript = transcriptEntry ? decodeText(readContainedOrThrow(runDir, transcriptEntry.path, MAX_TRANSCRIPT_BYTES)) : null;

  // Screenshots: seat by seat in participant order, each seat's in the order its trace references
  // them; a listed screenshot no trace references goes to the seat its path names (else none),
  // by path. Grouping by seat is what the report's per-seat strips show.
  const seatIds = b.participants.map((p) => p.id);
  const shotPaths: { path: string; caption: string; participantId?: string }[] = [];
  const seen = new Set<string>();
  const byTrace = new Map<string, { path: string; caption: string; participantId: string }[]>();
  for (const p of b.participants) {
    const trace = traces.get(p.id);
    const mine: { path: string; caption: string; participantId: string }[] = [];
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
  const unattributed: { path: string; caption: string }[] = [];
  for (const a of [...b.artifacts].filter((x) => x.kind === "screenshot").sort((x, y) => x.path.localeCompare(y.path))) {
    if (seen.has(a.path)) continue;
    seen.add(a.path);
    const caption = a.path.split("/").pop() ?? a.path;
    const owner = seatOfPath(a.path, seatIds);
    if (owner) byTrace.get(owner)?.push({ path: a.path, caption, participantId: owner });
    else unattributed.push({ path: a.path, caption });
  }
  for (const id of seatIds) shotPaths.push(...(byTrace.get(id) ?? []));
  shotPaths.push(...unattributed);
  for (const row of participants) row.screenshotCount = byTrace.get(row.id)?.length ?? 0;
  const screenshots: ReportScreenshot[] = [];
  // Only the inlined ones are read: the rest are linked, so the report's memory is bounded by the
  // inline budget, not by the study's length (verify re-admits every screenshot on its own pass).
  const inlined = chooseInlined(
    shotPaths.map((s) => ({ ...s, bytes: listed.get(s.path)?.bytes ?? 0 })),
    opts.inlineBudgetBytes ?? INLINE_BUDGET_BYTES,
  );
  for (const s of shotPaths) {
    if (!inlined.has(s.path)) {
      screenshots.push({ path: s.path, caption: s.caption, ...(s.participantId ? { participantId: s.participantId } : {}) });
      continue;
    }
    const png = readContainedOrThrow(runDir, s.path, MAX_SCREENSHOT_BYTES);
    const size = await inlinableSize(png, s.path, opts.verify?.ok === true ? listed.get(s.path)?.sha256 : undefined);
    screenshots.push({ path: s.path, caption: s.caption, png, ...size, ...(s.participantId ? { participantId: s.participantId } : {}) });
  }

  // Cost.
  const cost: ReportCostLine[] = b.cost.lines.map((l) => ({
    label: costLabel(l),
    usd: l.usd,
    ratesAsOf: l.ratesAsOf,
    source: l.usd === null ? (l.reason ?? l.basis) : (l.source ?? l.basis),
    ...(l.note ? { note: l.note } : {}),
  }));
  const fullyMeasured = b.cost.lines.length > 0 && b.cost.lines.every((l) => l.usd !== null);

  const cleanup: ReportCleanup[] = b.cleanup.map((c) => ({
    resource: `${c.provider} ${c.kind ?? "sandbox"}${c.participantId ? ` (${c.participantId})` : ""}`,
    id: c.id,
    outcome: c.outcome,
    reason: c.reason,
  }));

  const warnings = [
    ...b.warnings.map((w) => ({ code: w.code, message: w.path ? `${w.message} (${w.path})` : w.message })),
    ...(opts.verify?.warnings ?? []).map((w) => ({ code: "VERIFY_WARNING", message: w })),
  ];
  if (b.outcome.error) warnings.unshift({ code: b.outcome.error.code, message: b.outcome.error.message });
  if (b.outcome.interrupted) warnings.unshift({ code: "INTERRUPTED", message: `The run was interrupted by ${b.outcome.interrupted}.` });

  const v = opts.verify;
  const combined = await loadCombined(runDir, b);
  return {
    runId: b.runId,
    labId: b.lab.id,
    ...(b.lab.title ? { labTitle: b.lab.title } : {}),
    route: b.route,
    mode: b.mode,
    createdAt: b.createdAt,
    completedAt: b.completedAt,
    durationMs: b.durationMs,
    verdict: b.review.verdict,
    verdictLine: verdictLineOf(b, tasks, total),
    reached,
    total,
    ...(contradictionLine(b.participants) ? { contradictions: contradictionLine(b.participants) } : {}),
    ...(b.mode === "live" && b.study?.goalRule !== GOAL_RULE ? { olderGoalRule: true } : {}),
    harnessFailed: b.review.participants.harnessFailed,
    ...(b.study
      ? {
          study: {
            lane: b.study.lane,
            declaredSeats: b.study.declaredSeats,
            concurrency: b.study.concurrency,
            waves: b.study.waves,
            maxTotalUsd: b.study.maxTotalUsd,
            knownUsd: b.study.totals.knownUsd,
            heldSlots: b.study.totals.heldSlots,
          },
        }
      : {}),
    summary: b.review.summary,
    gaps: b.review.gaps,
    participants,
    tasks,
    timeline,
    transcript,
    screenshots,
    cost,
    costTotal: { usd: b.cost.estimatedTotalUsd, fullyMeasured },
    cleanup,
    warnings,
    verify: v ? { ok: v.ok, shareSafety: v.shareSafety.status, shareReasons: v.shareSafety.reasons, checks: v.checks } : null,
    generatedAt: (opts.now ?? (() => new Date()))().toISOString(),
    findings: loadFindings(runDir, b),
    transcriptPath: transcriptEntry?.path ?? null,
    ...(combined ? { combined } : {}),
  };
}

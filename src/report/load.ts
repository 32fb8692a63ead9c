/**
 * Builds a {@link ReportModel} from a run directory: `run.json` (`humanish.run-bundle.v1`, as
 * src/bundle/schemas.ts defines it), the participants' actor traces, the
 * terminal transcript, and the listed screenshots. Every file is read through the contained,
 * no-follow reader (files.ts), only when `run.json` lists it.
 */

import { contradictionLine, GOAL_RULE } from "../bundle/goal.ts";
import { type ActorTrace, ActorTraceSchema, type RunBundle, RunBundleSchema, stakeholderLine, type VerifyResult } from "../bundle/index.ts";
import { HumanishError } from "../errors.ts";
import { loadCombined } from "./combined.ts";
import { readContainedFile, readContainedOrThrow } from "./files.ts";
import { loadFindings } from "./findings.ts";
import { INLINE_BUDGET_BYTES } from "./inline.ts";
import type { ReportCleanup, ReportCostLine, ReportModel, ReportParticipant, ReportTask } from "./model.ts";
import { orderScreenshots, readScreenshots } from "./screenshots.ts";
import { seatRow } from "./seats.ts";
import { timelineOf } from "./timeline.ts";

/** Largest `run.json` / trace / transcript read, in bytes. */
const MAX_JSON_BYTES = 32 * 1024 * 1024;
/** Largest transcript shown, in bytes (the route caps it at 512 KiB of raw input). */
const MAX_TRANSCRIPT_BYTES = 4 * 1024 * 1024;

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

/** An artifact as run.json lists it. */
type ListedArtifact = RunBundle["artifacts"][number];

/**
 * One row per participant (seat) with its trace, read only when run.json lists it; an unreadable
 * or invalid trace is left out. Returns the rows and the traces read, by participant id.
 */
function participantsOf(
  runDir: string,
  b: RunBundle,
  listed: ReadonlyMap<string, ListedArtifact>,
): { participants: ReportParticipant[]; traces: Map<string, ActorTrace> } {
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
  return { participants, traces };
}

/**
 * The task funnel: one row per task id in first-seen order, counted over participants, then the
 * review's tasks no seat's check names (counted over `sessions`, at least 1).
 */
function taskFunnel(b: RunBundle): ReportTask[] {
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
  return taskOrder.map((id) => byId.get(id)!);
}

/** The cost lines (USD; null = unmeasured, never 0) and whether every line was measured. */
function costOf(b: RunBundle): { cost: ReportCostLine[]; fullyMeasured: boolean } {
  const cost: ReportCostLine[] = b.cost.lines.map((l) => ({
    label: costLabel(l),
    usd: l.usd,
    ratesAsOf: l.ratesAsOf,
    source: l.usd === null ? (l.reason ?? l.basis) : (l.source ?? l.basis),
    ...(l.note ? { note: l.note } : {}),
  }));
  return { cost, fullyMeasured: b.cost.lines.length > 0 && b.cost.lines.every((l) => l.usd !== null) };
}

/** One row per released, retained or unconfirmed resource, by exact id. */
function cleanupOf(b: RunBundle): ReportCleanup[] {
  return b.cleanup.map((c) => ({
    resource: `${c.provider} ${c.kind ?? "sandbox"}${c.participantId ? ` (${c.participantId})` : ""}`,
    id: c.id,
    outcome: c.outcome,
    reason: c.reason,
  }));
}

/** The warnings shown: an interruption first, then the run's error, the bundle's warnings and verify's. */
function warningsOf(b: RunBundle, verify: VerifyResult | null): ReportModel["warnings"] {
  const warnings = [
    ...b.warnings.map((w) => ({ code: w.code, message: w.path ? `${w.message} (${w.path})` : w.message })),
    ...(verify?.warnings ?? []).map((w) => ({ code: "VERIFY_WARNING", message: w })),
  ];
  if (b.outcome.error) warnings.unshift({ code: b.outcome.error.code, message: b.outcome.error.message });
  if (b.outcome.interrupted) warnings.unshift({ code: "INTERRUPTED", message: `The run was interrupted by ${b.outcome.interrupted}.` });
  return warnings;
}

/** The study runner's plan and totals (USD), when the bundle has a study section. */
function studyOf(b: RunBundle): Pick<ReportModel, "study"> {
  if (!b.study) return {};
  return {
    study: {
      lane: b.study.lane,
      declaredSeats: b.study.declaredSeats,
      concurrency: b.study.concurrency,
      waves: b.study.waves,
      maxTotalUsd: b.study.maxTotalUsd,
      knownUsd: b.study.totals.knownUsd,
      heldSlots: b.study.totals.heldSlots,
    },
  };
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
  const { participants, traces } = participantsOf(runDir, b, listed);
  const total = Math.max(b.review.participants.total, b.participants.length);
  const tasks = taskFunnel(b);
  const timeline = timelineOf(b, traces, multi);
  // Transcript (terminal route): the listed terminal-transcript artifact.
  const transcriptEntry = b.artifacts.find((a) => a.kind === "terminal-transcript");
  const transcript = transcriptEntry ? decodeText(readContainedOrThrow(runDir, transcriptEntry.path, MAX_TRANSCRIPT_BYTES)) : null;
  const order = orderScreenshots(b, listed, traces);
  for (const row of participants) row.screenshotCount = order.perSeat.get(row.id) ?? 0;
  const screenshots = await readScreenshots(runDir, order.shots, listed, opts.inlineBudgetBytes ?? INLINE_BUDGET_BYTES, opts.verify);
  const { cost, fullyMeasured } = costOf(b);
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
    reached: b.review.participants.reachedGoal,
    total,
    ...(contradictionLine(b.participants) ? { contradictions: contradictionLine(b.participants) } : {}),
    ...(b.mode === "live" && b.study?.goalRule !== GOAL_RULE ? { olderGoalRule: true } : {}),
    harnessFailed: b.review.participants.harnessFailed,
    ...studyOf(b),
    summary: b.review.summary,
    gaps: b.review.gaps,
    participants,
    tasks,
    timeline,
    transcript,
    screenshots,
    cost,
    costTotal: { usd: b.cost.estimatedTotalUsd, fullyMeasured },
    cleanup: cleanupOf(b),
    warnings: warningsOf(b, v),
    verify: v ? { ok: v.ok, shareSafety: v.shareSafety.status, shareReasons: v.shareSafety.reasons, checks: v.checks } : null,
    generatedAt: (opts.now ?? (() => new Date()))().toISOString(),
    findings: loadFindings(runDir, b),
    transcriptPath: transcriptEntry?.path ?? null,
    ...(combined ? { combined } : {}),
  };
}

/**
 * The Observer's view of a study (pure): what the page shows of every seat and of the study,
 * folded from the run directory's files and, when the Observer runs inside `lab run`, the
 * study's own progress events. Text is passed through the caller's redactor (the bundle's) and
 * bounded; nothing the lab keeps from its participants (hidden check commands, the brief) is
 * part of the inputs, so nothing of it can reach the page.
 */
import type { RunFiles, SeatFiles } from "./scan.ts";

/** Lines of terminal output a seat card shows. */
export const TERMINAL_LINES = 12;
/** Commands (event sources) a seat card shows. */
export const TERMINAL_COMMANDS = 5;
/** Longest line shown, in characters. */
const MAX_LINE = 240;

/** What the plan says before any file exists: the seats, and the caps (USD; null = none declared). */
export interface ObserverPlan {
  seats: readonly string[];
  capUsdPerSeat: number | null;
  capTotalUsd: number | null;
  /** Hidden tasks per seat (their count only). */
  tasksPerSeat: number;
}

/** The latest progress event of one seat (the study's own progress sink). */
export interface SeatProgress {
  phase: string;
  detail?: string;
  tasksPassed?: number;
  tasksTotal?: number;
  status?: string;
  /** First and latest event time, ms since epoch. */
  firstAt: number;
  at: number;
}

/** One seat card. Times are ms since the epoch; USD amounts null when unknown. */
export interface SeatView {
  id: string;
  phase: string;
  detail: string | null;
  startedAt: number | null;
  endedAt: number | null;
  frames: number;
  /** The latest admitted frame: its name, when it appeared, and a version key for the image URL. */
  frame: { name: string; at: number; v: string } | null;
  terminal: { commands: string[]; lines: string[] } | null;
  spendUsd: number | null;
  capUsd: number | null;
  /** Hidden tasks checked so far (null: not checked yet). */
  tasks: { passed: number; total: number } | null;
  /** Hidden tasks the seat will be checked on (a count; null when the plan is unknown). */
  tasksDeclared: number | null;
  status: string | null;
}

/** The study line: phase, running denominator, spend, and whether the report exists. */
export interface StudyView {
  runId: string;
  lab: string | null;
  phase: string;
  state: "waiting" | "running" | "finished";
  seats: number;
  done: number;
  reached: number;
  verdict: string | null;
  spendUsd: number | null;
  capTotalUsd: number | null;
  report: boolean;
}

/** The whole view. */
export interface ObserverView {
  study: StudyView;
  seats: SeatView[];
}

function line(s: string, redact: (s: string) => string): string {
  const clean = redact(s)
    .replace(/\u001b\[[0-?]*[ -/]*[@-~]/g, "")
    .replace(/[\u0000-\u0008\u000b-\u001f\u007f]/g, "");
  return clean.length > MAX_LINE ? `${clean.slice(0, MAX_LINE)}…` : clean;
}

function terminalOf(t: SeatFiles["terminal"], redact: (s: string) => string) {
  if (!t) return null;
  const text = t.chunks.map((c) => c.chunk).join("");
  const lines = text
    .split(/\r?\n/)
    .filter((l) => l.trim() !== "")
    .slice(-TERMINAL_LINES)
    .map((l) => line(l, redact));
  const commands: string[] = [];
  for (const c of t.chunks) if (c.source && commands.at(-1) !== c.source) commands.push(c.source);
  return { commands: commands.slice(-TERMINAL_COMMANDS).map((c) => line(c, redact)), lines };
}

function phaseFromFiles(s: SeatFiles): string {
  if (s.traceStatus !== null) return "teardown";
  if (s.frames.length > 0 || (s.terminal && s.terminal.chunks.length > 0)) return "participate";
  if (s.allocatedAt !== null) return "provision";
  return "waiting";
}

/**
 * Fold files and progress into the view. `progress` wins for phase, detail and tasks while the
 * study runs; the sealed `run.json` wins once it exists.
 */
export function buildView(o: {
  runId: string;
  files: RunFiles;
  plan: ObserverPlan | null;
  progress: ReadonlyMap<string, SeatProgress>;
  redact: (s: string) => string;
  now: number;
}): ObserverView {
  const { files, plan } = o;
  const ids: string[] = [...(plan?.seats ?? [])];
  for (const id of [...files.seats.keys(), ...o.progress.keys()]) if (!ids.includes(id)) ids.push(id);
  const sealed = files.sealed;
  const seats: SeatView[] = ids.map((id) => {
    const f = files.seats.get(id);
    const p = o.progress.get(id);
    const sealedP = sealed?.participants.find((x) => x.id === id);
    const sealedTasks = sealed?.tasks.filter((t) => t.participantId === id);
    const last = f?.frames.at(-1);
    const status = sealedP?.status ?? (p?.phase === "done" ? (p.status ?? null) : null) ?? f?.traceStatus ?? null;
    const phase = sealedP ? "done" : p ? p.phase : f ? phaseFromFiles(f) : "waiting";
    const startedAt = p?.firstAt ?? f?.allocatedAt ?? null;
    const endedAt = phase === "done" ? (f?.endedAt ?? p?.at ?? null) : null;
    const tasks = sealedTasks?.length
      ? { passed: sealedTasks.filter((t) => t.passed).length, total: sealedTasks.length }
      : p?.tasksTotal !== undefined
        ? { passed: p.tasksPassed ?? 0, total: p.tasksTotal }
        : null;
    return {
      id: line(id, o.redact),
      phase,
      detail: p?.detail !== undefined && !sealedP ? line(p.detail, o.redact) : null,
      startedAt,
      endedAt,
      frames: f?.frames.length ?? 0,
      frame: last ? { name: last.name, at: last.mtimeMs, v: `${last.size}-${Math.round(last.mtimeMs)}` } : null,
      terminal: f ? terminalOf(f.terminal, o.redact) : null,
      spendUsd: f?.usd ?? null,
      capUsd: plan?.capUsdPerSeat ?? null,
      tasks,
      tasksDeclared: plan?.tasksPerSeat ?? null,
      status,
    };
  });
  const done = seats.filter((s) => s.phase === "done").length;
  const reached = seats.filter((s) => s.phase === "done" && s.status === "passed").length;
  const st = files.status;
  const known = seats.map((s) => s.spendUsd).filter((u): u is number => u !== null);
  const finished = st?.state === "finished" || sealed !== null;
  return {
    study: {
      runId: o.runId,
      lab: st?.lab ?? null,
      phase: finished ? "done" : (st?.phase ?? "waiting"),
      state: finished ? "finished" : st ? "running" : "waiting",
      seats: seats.length,
      done,
      reached: sealed && st?.outcome?.participants ? st.outcome.participants.reachedGoal : reached,
      verdict: sealed?.verdict ? line(sealed.verdict, o.redact) : null,
      spendUsd: sealed ? sealed.costUsd : known.length ? known.reduce((a, b) => a + b, 0) : null,
      capTotalUsd: plan?.capTotalUsd ?? null,
      report: files.report && finished,
    },
    seats,
  };
}

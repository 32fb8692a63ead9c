/**
 * The live per-participant progress display a study shows on stderr in human mode
 * (ARCHITECTURE.md "The three people").
 *
 * One line per participant (seat): label, phase, elapsed time since that participant's first
 * event, tasks passed so far, and the current step or command. With two seats or more, a summary
 * line follows, fed by the same events: `3/8 seats done · 2 running · 3 waiting · 2/3 reached the
 * goal so far`. On a TTY the block of lines is redrawn in place (cursor-up + clear-line); on a
 * pipe or file each change of phase or detail is appended as a plain line (the summary as a
 * `study  …` line whenever its counts change), so logs stay readable. Participant text is already redacted by the
 * route; this module also drops ANSI sequences and escapes every other control character
 * (see {@link sanitizeProgressText}) so a participant's output can never move the cursor,
 * retitle or recolour the terminal.
 *
 * `--json` mode never creates a display: the CLI passes a no-op progress sink instead.
 */
import type { ProgressEvent } from "../study/context.ts";
import { inertText } from "./output.ts";

/** A writable text sink (process.stderr, or a test buffer). `columns` is the TTY width, if known. */
export interface ProgressStream {
  write(chunk: string): unknown;
  columns?: number;
}

/** Options of {@link createProgressDisplay}. */
export interface ProgressDisplayOptions {
  /** Where to draw (the CLI passes process.stderr). */
  stream: ProgressStream;
  /** True when `stream` is a terminal: redraw in place; false: append one line per change. */
  isTTY: boolean;
  /** Clock in ms since the epoch (tests inject one); default `Date.now`. */
  now?: () => number;
  /** Redraw period on a TTY so elapsed time keeps ticking, in ms; default 1000; 0 disables the timer. */
  tickMs?: number;
}

/** The handle a route's progress sink feeds. */
export interface ProgressDisplay {
  /** Record one event and redraw (TTY) or append a line when something visible changed (non-TTY). */
  update(event: ProgressEvent): void;
  /** Stop the tick timer and leave the final state on screen; later updates are ignored. Idempotent. */
  done(): void;
}

interface ParticipantState {
  participant: string;
  phase: string;
  /** Whether the seat reached the goal, once an event said how it ended. */
  reachedGoal: boolean | undefined;
  detail: string | undefined;
  tasksPassed: number | undefined;
  tasksTotal: number | undefined;
  startedAt: number;
  lastLine: string;
}

const ESCAPE_SEQUENCE = /\u001b(?:\[[0-?]*[ -/]*[@-~]|\][^\u0007\u001b]*(?:\u0007|\u001b\\)?|[@-Z\\-_])/g;

/**
 * One display line of participant text: complete ANSI sequences (colours, cursor moves, titles)
 * are dropped, newlines and tabs become spaces, and every other active character (a lone ESC or
 * BEL, C1, DEL, bidi controls) is shown escaped by the CLI's shared {@link inertText}.
 */
export function sanitizeProgressText(text: string): string {
  return inertText(text.replace(ESCAPE_SEQUENCE, " ").replace(/[\n\t\r]/g, " "))
    .replace(/ {2,}/g, " ")
    .trim();
}

/** Phases in which a seat has not started yet (a runner may announce planned seats with one). */
const WAITING_PHASES: ReadonlySet<string> = new Set(["waiting", "queued", "planned", "pending"]);

/**
 * How a seat's latest event counts in the summary line: `waiting` before it starts (a waiting
 * phase, or a detail that says it is `waiting …` for a capacity slot), `done` once its `done`
 * event came, `running` for every other phase — an unknown phase name is shown as plain text on
 * the seat's line and counts as running.
 */
export function seatStateOf(phase: string, detail?: string): "waiting" | "running" | "done" {
  if (WAITING_PHASES.has(phase) || (phase !== "done" && /^waiting\b/i.test(detail ?? ""))) return "waiting";
  return phase === "done" ? "done" : "running";
}

/**
 * Whether an event says its seat reached the goal: `completionReason: goal_satisfied` or
 * `status: passed` (fields a study runner may add to a seat's events); undefined when the event
 * says neither. Tasks passed are not the goal (a participant can reach it with a task failed).
 */
function reachedGoalOf(event: ProgressEvent): boolean | undefined {
  const e = event as ProgressEvent & { status?: unknown; completionReason?: unknown };
  if (typeof e.completionReason === "string" && e.completionReason !== "") return e.completionReason === "goal_satisfied";
  if (typeof e.status === "string" && e.status !== "") return e.status === "passed";
  return undefined;
}

/** The summary line of `seats` (see module doc), or null for fewer than two seats. */
export function summaryLine(
  seats: readonly {
    phase: string;
    detail?: string | undefined;
    reachedGoal: boolean | undefined;
    tasksPassed?: number | undefined;
    tasksTotal?: number | undefined;
  }[],
): string | null {
  if (seats.length < 2) return null;
  // Seats by state; the goal is known only of done seats, tasks of any seat that has some.
  const by = { done: 0, running: 0, waiting: 0 };
  const goal = { known: 0, reached: 0 };
  const tasks = { passed: 0, total: 0 };
  for (const s of seats) {
    const state = seatStateOf(s.phase, s.detail);
    by[state]++;
    if (state === "done" && s.reachedGoal !== undefined) {
      goal.known++;
      if (s.reachedGoal) goal.reached++;
    }
    if (s.tasksTotal !== undefined && s.tasksTotal > 0) {
      tasks.passed += s.tasksPassed ?? 0;
      tasks.total += s.tasksTotal;
    }
  }
  const { done, running, waiting } = by;
  const { known, reached } = goal;
  const { passed, total } = tasks;
  const parts = [`${done}/${seats.length} seats done`];
  if (running > 0) parts.push(`${running} running`);
  if (waiting > 0) parts.push(`${waiting} waiting`);
  if (known > 0) parts.push(`${reached}/${known} reached the goal so far`);
  else if (total > 0) parts.push(`tasks ${passed}/${total} passed so far`);
  return parts.join(" · ");
}

/** `m:ss` (or `h:mm:ss`) for a duration in ms. */
export function formatElapsed(ms: number): string {
  const total = Math.max(0, Math.floor(ms / 1000));
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const s = total % 60;
  const ss = String(s).padStart(2, "0");
  return h > 0 ? `${h}:${String(m).padStart(2, "0")}:${ss}` : `${m}:${ss}`;
}

/** Cuts `text` to at most `width` characters, ending with `…` when cut. */
function clip(text: string, width: number): string {
  const chars = Array.from(text);
  if (chars.length <= width) return text;
  if (width <= 1) return chars.slice(0, Math.max(0, width)).join("");
  return `${chars.slice(0, width - 1).join("")}…`;
}

/**
 * Creates the progress display (see module doc). Never throws on a malformed event: missing
 * fields render as blanks. Writes only to `stream`.
 */
export function createProgressDisplay(opts: ProgressDisplayOptions): ProgressDisplay {
  const now = opts.now ?? Date.now;
  const participants = new Map<string, ParticipantState>();
  let drawnLines = 0;
  let finished = false;
  let lastSummary = "";
  let timer: ReturnType<typeof setInterval> | undefined;

  const lineOf = (p: ParticipantState, width: number): string => {
    const tasks = p.tasksTotal !== undefined && p.tasksTotal > 0 ? `tasks ${p.tasksPassed ?? 0}/${p.tasksTotal}` : "";
    const parts = [p.participant, p.phase, formatElapsed(now() - p.startedAt)];
    if (tasks) parts.push(tasks);
    const head = parts.join("  ");
    const line = p.detail ? `${head}  ${p.detail}` : head;
    return clip(line, width);
  };

  const width = (): number => Math.max(20, (opts.stream.columns ?? 100) - 1);

  const redraw = (): void => {
    const w = width();
    let out = "";
    if (drawnLines > 0) out += `\u001b[${drawnLines}A`;
    const lines = [...participants.values()].map((p) => lineOf(p, w));
    const summary = summaryLine([...participants.values()]);
    if (summary !== null) lines.push(clip(summary, w));
    for (const line of lines) out += `\r\u001b[2K${line}\n`;
    drawnLines = lines.length;
    opts.stream.write(out);
  };

  const ensureTimer = (): void => {
    const tickMs = opts.tickMs ?? 1000;
    if (!opts.isTTY || timer !== undefined || tickMs <= 0) return;
    timer = setInterval(() => {
      if (!finished && participants.size > 0) redraw();
    }, tickMs);
    (timer as { unref?: () => void }).unref?.();
  };

  return {
    update(event: ProgressEvent): void {
      if (finished) return;
      const name = sanitizeProgressText(String(event.participant ?? "")) || "participant";
      let p = participants.get(name);
      if (!p) {
        p = {
          participant: name,
          phase: "",
          reachedGoal: undefined,
          detail: undefined,
          tasksPassed: undefined,
          tasksTotal: undefined,
          startedAt: now(),
          lastLine: "",
        };
        participants.set(name, p);
      }
      p.phase = sanitizeProgressText(String(event.phase ?? "")) || p.phase;
      if (event.detail !== undefined) {
        const d = sanitizeProgressText(String(event.detail));
        p.detail = d.length > 0 ? d : undefined;
      } else if (event.phase !== undefined) {
        p.detail = undefined;
      }
      if (typeof event.tasksPassed === "number" && Number.isFinite(event.tasksPassed)) p.tasksPassed = event.tasksPassed;
      if (typeof event.tasksTotal === "number" && Number.isFinite(event.tasksTotal)) p.tasksTotal = event.tasksTotal;
      const reached = reachedGoalOf(event);
      if (reached !== undefined) p.reachedGoal = reached;

      if (opts.isTTY) {
        redraw();
        ensureTimer();
        return;
      }
      // Non-TTY: append a line only when what a reader sees (apart from the clock) changed.
      const key = `${p.phase}\u0000${p.detail ?? ""}\u0000${p.tasksPassed ?? ""}/${p.tasksTotal ?? ""}`;
      if (key === p.lastLine) return;
      p.lastLine = key;
      opts.stream.write(`${lineOf(p, width())}\n`);
      const summary = summaryLine([...participants.values()]);
      if (summary !== null && summary !== lastSummary) {
        lastSummary = summary;
        opts.stream.write(`${clip(`study  ${summary}`, width())}\n`);
      }
    },
    done(): void {
      if (finished) return;
      if (opts.isTTY && participants.size > 0) redraw();
      finished = true;
      if (timer !== undefined) clearInterval(timer);
      timer = undefined;
    },
  };
}

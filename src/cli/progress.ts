/**
 * The live per-participant progress display a study shows on stderr in human mode
 * (ARCHITECTURE.md "The three people").
 *
 * One line per participant: label, phase, elapsed time since that participant's first event,
 * tasks passed so far, and the current step or command. On a TTY the block of lines is redrawn
 * in place (cursor-up + clear-line); on a pipe or file each change of phase or detail is
 * appended as a plain line, so logs stay readable. Participant text is already redacted by the
 * route; this module also drops ANSI sequences and escapes every other control character
 * (see {@link sanitizeProgressText}) so a participant's output can never move the cursor,
 * retitle or recolour the terminal.
 *
 * `--json` mode never creates a display: the CLI passes a no-op progress sink instead.
 */
import type { ProgressEvent } from "../routes/types.ts";
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

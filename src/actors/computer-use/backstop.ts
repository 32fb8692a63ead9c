/**
 * The friction backstop: a pure fold over acted turns that ends a seat going nowhere.
 *
 * - An idle turn dispatches only `screenshot`/`wait`. The idle streak resets on any other turn;
 *   an idle turn during which the frame changed is forgiven up to twice in a row (a page still
 *   loading is not the participant idling).
 * - The progress key is the observation's `stateSignature` plus its scroll position bucketed
 *   to 200 px. A turn progressed when the key changed or its action fingerprint (kinds and
 *   coordinates bucketed to 24 px; typed text by length only) is not one of the last three: a
 *   stale frame alone never counts as stuck, repeating the same gesture on it does.
 * - A nudge hint is staged when a streak reaches min(max(1, limit − 1), 3) and is below its limit.
 */
import type { BrowserAction } from "../../browser-control/index.ts";

/** Default consecutive idle turns that end a seat. */
export const DEFAULT_IDLE_STEPS = 24;
/** Default consecutive no-progress turns that end a seat. */
export const DEFAULT_NO_PROGRESS_STEPS = 20;

/** The fold's state. */
export interface BackstopState {
  idle: number;
  noProgress: number;
  forgiven: number;
  lastKey: string | null;
  recent: string[];
  idleTurns: number;
  noProgressTurns: number;
}

/** A fresh state (before the first acted turn), keyed to the start frame. */
export function startBackstop(startKey: string): BackstopState {
  return { idle: 0, noProgress: 0, forgiven: 0, lastKey: startKey, recent: [], idleTurns: 0, noProgressTurns: 0 };
}

/** The progress key of an observation. */
export function progressKey(o: { stateSignature: string; scrollY?: number }): string {
  return `${o.stateSignature}#s${Math.round((o.scrollY ?? 0) / 200)}`;
}

const bucket = (n: number) => Math.round(n / 24);

/** The fingerprint of one turn's dispatched actions. */
export function fingerprint(actions: readonly BrowserAction[]): string {
  return actions
    .map((a) => {
      switch (a.kind) {
        case "type":
          return `type:${a.text.length}`;
        case "keypress":
          return `key:${a.keys.join("+").toUpperCase()}`;
        case "drag":
          return `drag:${a.path.map((p) => `${bucket(p.x)},${bucket(p.y)}`).join(";")}`;
        case "scroll":
          return `scroll:${bucket(a.x)},${bucket(a.y)}:${a.dx},${a.dy}`;
        case "wait":
        case "screenshot":
          return a.kind;
        default:
          return `${a.kind}:${bucket(a.x)},${bucket(a.y)}${a.kind === "click" && a.button ? `:${a.button}` : ""}`;
      }
    })
    .join("|");
}

/** What one acted turn did to the streaks. */
export interface BackstopStep {
  state: BackstopState;
  /** `idle` / `no_progress` when that streak reached its limit. */
  tripped: "idle" | "no_progress" | null;
  /** A nudge to send with the next request, or null. */
  nudge: string | null;
}

/** Folds one acted turn (its dispatched actions and the frame after them). */
export function foldTurn(
  s: BackstopState,
  actions: readonly BrowserAction[],
  key: string,
  limits: { idleSteps: number; noProgressSteps: number },
): BackstopStep {
  const isIdle = actions.every((a) => a.kind === "screenshot" || a.kind === "wait");
  const changed = key !== s.lastKey;
  const fp = fingerprint(actions);
  const progressed = changed || !s.recent.includes(fp);
  let { idle, forgiven } = s;
  if (!isIdle) {
    idle = 0;
    forgiven = 0;
  } else if (changed && forgiven < 2) forgiven++;
  else idle++;
  const noProgress = progressed ? 0 : s.noProgress + 1;
  const state: BackstopState = {
    idle,
    noProgress,
    forgiven,
    lastKey: key,
    recent: [...s.recent, fp].slice(-3),
    idleTurns: s.idleTurns + (isIdle ? 1 : 0),
    noProgressTurns: s.noProgressTurns + (progressed ? 0 : 1),
  };
  if (idle >= limits.idleSteps) return { state, tripped: "idle", nudge: null };
  if (noProgress >= limits.noProgressSteps) return { state, tripped: "no_progress", nudge: null };
  const at = (limit: number) => Math.min(Math.max(1, limit - 1), 3);
  let nudge: string | null = null;
  if (isIdle && idle >= at(limits.idleSteps))
    nudge = "You have only waited or looked for several turns. If the task is done, say so; if you are stuck, say what is in your way; otherwise act.";
  else if (noProgress >= at(limits.noProgressSteps))
    nudge = "Your last actions did not change the page. Try a different approach, or say that you are stuck and why.";
  return { state, tripped: null, nudge };
}

/** What one acted turn means for a seat: the folded state, and the seat's give-up stop or the nudge to pass on. */
export interface BackstopTurn {
  state: BackstopState;
  /** The seat gave up when a streak reached its limit (a seat stop). */
  stop?: { status: "abandoned"; completionReason: "gave_up"; reason: string };
  nudge?: string;
}

/**
 * Folds one acted turn with the seat's limits (turns; absent: {@link DEFAULT_IDLE_STEPS},
 * {@link DEFAULT_NO_PROGRESS_STEPS}): a tripped streak becomes the give-up stop that names it.
 */
export function backstopTurn(
  s: BackstopState,
  actions: readonly BrowserAction[],
  after: { stateSignature: string; scrollY?: number },
  o: { idleSteps?: number | undefined; noProgressSteps?: number | undefined },
): BackstopTurn {
  const limits = { idleSteps: o.idleSteps ?? DEFAULT_IDLE_STEPS, noProgressSteps: o.noProgressSteps ?? DEFAULT_NO_PROGRESS_STEPS };
  const fold = foldTurn(s, actions, progressKey(after), limits);
  if (fold.tripped === "idle")
    return { state: fold.state, stop: { status: "abandoned", completionReason: "gave_up", reason: `${limits.idleSteps} idle turns in a row` } };
  if (fold.tripped === "no_progress")
    return {
      state: fold.state,
      stop: { status: "abandoned", completionReason: "gave_up", reason: `${limits.noProgressSteps} turns in a row without progress` },
    };
  return fold.nudge ? { state: fold.state, nudge: fold.nudge } : { state: fold.state };
}

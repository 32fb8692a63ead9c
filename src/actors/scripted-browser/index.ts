/**
 * `scripted-browser`: a participant with no model that drives the same browser-control executor
 * an LLM participant would. Each lab step becomes executor actions:
 * - `open <path>` → keypress Ctrl+L, type `<origin><path>` (address bar, printable ASCII), Enter,
 *   then observe until the page URL is the target (10 s);
 * - `click {x,y,button}` → click; `type` → type; `press` → keypress; `scroll` → scroll at (x, y)
 *   (absent: frame centre); `wait` → wait; `waitForText` → observe every 250 ms until the page
 *   text contains it; `screenshot [label]` → observe, kept as evidence.
 * Every action is a `ui_action` trace item; every observation (its url/text, in memory only) is
 * kept for the hidden task checks the route evaluates after the participant ends. A failed step
 * ends the participant with `step_failed` (a finding); an executor failure that is not an
 * `action_rejected`/`not_dispatched` refusal is a harness failure (`harness_error`), and so is a
 * wait that timed out while the host was starved (`HUMANISH_HOST_STARVED`, measured by
 * runtime/host-pressure.ts over the step, its figures in a `notice` trace item).
 */
import type { BrowserAction, BrowserControlExecutor, BrowserObservation } from "../../browser-control/index.ts";
import { isBrowserControlError } from "../../browser-control/index.ts";
import type { ActorStatus, CompletionReason, TraceItem } from "../../bundle/index.ts";
import type { BrowserStep } from "../../lab/schema.ts";
import { classifyStarvation, startPressureProbe } from "../../runtime/host-pressure.ts";

/** Default `waitForText` poll interval, ms. */
export const WAIT_FOR_TEXT_POLL_MS = 250;
/** How long `open` waits for the URL to change, ms. */
export const OPEN_SETTLE_MS = 10_000;

/** One observation the participant made (text/url are runtime-only, never persisted). */
export interface ObservationRecord {
  at: string;
  url?: string;
  text?: string;
  stateSignature: string;
}

/** The in-memory record of one observation (its url and text are for the hidden checks, never persisted). */
export function observationRecord(obs: BrowserObservation, at = new Date().toISOString()): ObservationRecord {
  return {
    at,
    stateSignature: obs.stateSignature,
    ...(obs.url !== undefined ? { url: obs.url } : {}),
    ...(obs.text !== undefined ? { text: obs.text } : {}),
  };
}

/** A screenshot the participant kept as evidence. */
export interface KeptScreenshot {
  /** `NN-label` (no extension), unique within the participant. */
  name: string;
  png: Uint8Array;
  at: string;
}

/** Options of {@link runScriptedBrowser}. */
export interface ScriptedBrowserOptions {
  executor: BrowserControlExecutor;
  steps: readonly BrowserStep[];
  /** App origin, e.g. `http://127.0.0.1:41731` (no trailing slash). */
  origin: string;
  /** Screen in px (for the scroll default point). */
  width: number;
  height: number;
  /** Stops the participant between steps (deadline or SIGINT/SIGTERM). */
  signal?: AbortSignal;
  /** Progress hook per step (already safe to print: no typed text). */
  onStep?: (index: number, step: BrowserStep) => void;
  /**
   * Called with each frame the moment it is kept (so the lane can write it into the bundle while
   * the study runs); never awaited, and a hook that throws changes nothing.
   */
  onScreenshot?: (shot: KeptScreenshot) => void;
}

/** What every browser participant's outcome says alike (times ISO, duration ms); `R` is its set of completion reasons. */
export interface BrowserOutcomeCore<R extends string = CompletionReason> {
  status: ActorStatus;
  completionReason: R;
  reason: string;
  startedAt: string;
  completedAt: string;
  durationMs: number;
  items: TraceItem[];
  observations: ObservationRecord[];
  screenshots: KeptScreenshot[];
  /** Set when a harness fault (not a participant finding) ended the session. */
  harnessError?: { code: string; message: string };
}

/** What the participant did. */
export type ScriptedBrowserOutcome = BrowserOutcomeCore<CompletionReason | "interrupted">;

class StepFailed extends Error {
  /** True when the step failed by waiting out its deadline for the page (a starved host can cause that). */
  constructor(
    message: string,
    readonly timedOut = false,
  ) {
    super(message);
  }
}

/**
 * The URL an `open <path>` step navigates to, as the browser will show it: `origin + path`
 * parsed by the WHATWG URL parser (dot segments such as `/a/../b` resolved, non-ASCII
 * percent-encoded, so the address-bar text is printable ASCII and the settle check compares
 * like with like). `undefined` when the result would leave `origin` (the path is appended to
 * the origin, never resolved against it, so `/\\host` stays a path on `origin`).
 */
export function openTarget(origin: string, path: string): string | undefined {
  let url: URL;
  try {
    url = new URL(`${origin}${path}`);
  } catch {
    return undefined;
  }
  return url.origin === new URL(origin).origin ? url.href : undefined;
}

function describeStep(step: BrowserStep): string {
  switch (step.kind) {
    case "open":
      return `open ${step.path}`;
    case "click":
      return `click (${step.x}, ${step.y})${step.button !== "left" ? ` ${step.button}` : ""}`;
    case "type":
      return `type ${step.text.length} chars`;
    case "press":
      return `press ${step.keys.join("+")}`;
    case "scroll":
      return `scroll ${step.scrollX},${step.scrollY}`;
    case "wait":
      return `wait ${step.ms} ms`;
    case "waitForText":
      return `waitForText`;
    case "screenshot":
      return `screenshot${step.label ? ` ${step.label}` : ""}`;
  }
}

/**
 * Run the steps in order. Never throws for participant or executor failures: the outcome says
 * what happened.
 */
export async function runScriptedBrowser(opts: ScriptedBrowserOptions): Promise<ScriptedBrowserOutcome> {
  const { executor } = opts;
  const items: TraceItem[] = [];
  const observations: ObservationRecord[] = [];
  const screenshots: KeptScreenshot[] = [];
  const keep = (shot: KeptScreenshot) => {
    screenshots.push(shot);
    try {
      opts.onScreenshot?.(shot);
    } catch {
      // the hook is the lane's; the participant's outcome never depends on it
    }
  };
  const started = Date.now();
  const startedAt = new Date(started).toISOString();
  let n = 0;
  const nextId = (kind: string) => `${kind}-${String(++n).padStart(3, "0")}`;

  const observe = async (): Promise<BrowserObservation> => {
    const o = await executor.observe(opts.signal);
    observations.push(observationRecord(o));
    return o;
  };
  const act = async (action: BrowserAction, title: string) => {
    const at = new Date().toISOString();
    const recorded: Record<string, unknown> = { type: action.kind };
    if ("x" in action) recorded.x = action.x;
    if ("y" in action) recorded.y = action.y;
    if (action.kind === "click" && action.button) recorded.button = action.button;
    if (action.kind === "keypress") recorded.keys = action.keys;
    if (action.kind === "scroll") Object.assign(recorded, { dx: action.dx, dy: action.dy });
    if (action.kind === "wait" && action.ms !== undefined) recorded.ms = action.ms;
    if (action.kind === "type") recorded.chars = action.text.length;
    try {
      await executor.execute(action, opts.signal);
      items.push({
        id: nextId("ui_action"),
        kind: "ui_action",
        lifecycle: "completed",
        status: "dispatched",
        title,
        at,
        action: recorded as { type: string },
        ...("x" in action && "y" in action ? { coord: { x: action.x, y: action.y } } : {}),
      });
    } catch (e) {
      items.push({
        id: nextId("ui_action"),
        kind: "ui_action",
        lifecycle: "completed",
        status: isBrowserControlError(e) ? `${e.errorCode}/${e.disposition}` : "failed",
        title,
        at,
        action: recorded as { type: string },
      });
      throw e;
    }
  };

  const runStep = async (step: BrowserStep, index: number) => {
    const title = describeStep(step);
    switch (step.kind) {
      case "open": {
        const target = openTarget(opts.origin, step.path);
        if (target === undefined) throw new StepFailed(`step ${index + 1} (${title}): ${step.path} does not resolve to a URL on ${opts.origin}`);
        await act({ kind: "keypress", keys: ["ctrl", "l"] }, `${title}: focus the address bar`);
        await act({ kind: "type", text: target }, `${title}: type the URL`);
        await act({ kind: "keypress", keys: ["Enter"] }, `${title}: go`);
        const deadline = Date.now() + OPEN_SETTLE_MS;
        for (;;) {
          const o = await observe();
          if (o.url === target || (o.url?.startsWith(target) && step.path === "/")) break;
          if (Date.now() > deadline) {
            const where =
              o.url === undefined
                ? "the page reported no URL (a JavaScript dialog may be blocking it, or it is still loading)"
                : `the page is at ${safeUrlPath(o.url)}`;
            throw new StepFailed(`step ${index + 1} (${title}): the page did not reach ${step.path} within ${OPEN_SETTLE_MS} ms; ${where}`, true);
          }
          await Bun.sleep(WAIT_FOR_TEXT_POLL_MS);
        }
        return;
      }
      case "click":
        return act({ kind: "click", x: step.x, y: step.y, ...(step.button !== "left" ? { button: step.button } : {}) }, title);
      case "type":
        return act({ kind: "type", text: step.text }, title);
      case "press":
        return act({ kind: "keypress", keys: step.keys }, title);
      case "scroll":
        return act(
          { kind: "scroll", x: step.x ?? Math.floor(opts.width / 2), y: step.y ?? Math.floor(opts.height / 2), dx: step.scrollX, dy: step.scrollY },
          title,
        );
      case "wait":
        return act({ kind: "wait", ms: step.ms }, title);
      case "waitForText": {
        const deadline = Date.now() + step.timeoutMs;
        for (;;) {
          const o = await observe();
          if (o.text?.includes(step.text)) return;
          if (Date.now() > deadline) throw new StepFailed(`step ${index + 1} (waitForText): the text did not appear within ${step.timeoutMs} ms`, true);
          await Bun.sleep(WAIT_FOR_TEXT_POLL_MS);
        }
      }
      case "screenshot": {
        const o = await observe();
        const at = new Date().toISOString();
        const name = `${String(screenshots.length + 1).padStart(2, "0")}-${step.label ?? "step"}`;
        keep({ name, png: o.png, at });
        items.push({ id: nextId("screenshot"), kind: "screenshot", lifecycle: "completed", title, at });
        return;
      }
    }
  };

  let status: ActorStatus = "passed";
  let completionReason: ScriptedBrowserOutcome["completionReason"] = "turn_completed";
  let reason = `all ${opts.steps.length} steps ran`;
  let harnessError: ScriptedBrowserOutcome["harnessError"];
  let starved = false;
  for (let i = 0; i < opts.steps.length; i++) {
    if (opts.signal?.aborted) {
      status = "incomplete";
      completionReason = "interrupted";
      reason = `stopped before step ${i + 1}`;
      break;
    }
    const step = opts.steps[i]!;
    opts.onStep?.(i, step);
    const pressure = startPressureProbe();
    try {
      await runStep(step, i);
    } catch (e) {
      const verdict = e instanceof StepFailed && e.timedOut ? classifyStarvation(pressure.stop()) : undefined;
      if (verdict?.starved) {
        starved = true;
        status = "failed";
        completionReason = "harness_error";
        reason = `${(e as Error).message}, while the host was starved (${verdict.summary}): a harness condition, not a finding about the product`;
        harnessError = { code: "HUMANISH_HOST_STARVED", message: reason };
        items.push({
          id: nextId("notice"),
          kind: "notice",
          lifecycle: "completed",
          status: "host_starved",
          title: `step ${i + 1}: host starved`,
          text: verdict.summary,
        });
      } else if (e instanceof StepFailed) {
        status = "incomplete";
        completionReason = "step_failed";
        reason = e.message;
      } else if (isBrowserControlError(e) && e.errorCode === "action_rejected" && e.disposition === "not_dispatched") {
        status = "incomplete";
        completionReason = "step_failed";
        reason = `step ${i + 1} (${describeStep(step)}) was refused by the desktop before any input: ${e.message.slice(0, 200)}`;
      } else if (opts.signal?.aborted) {
        status = "incomplete";
        completionReason = "interrupted";
        reason = `stopped during step ${i + 1}`;
      } else {
        status = "failed";
        completionReason = "harness_error";
        const code = isBrowserControlError(e) ? e.code : "HUMANISH_BROWSER_PARTICIPANT_FAILED";
        reason = `step ${i + 1} (${describeStep(step)}) failed in the desktop: ${isBrowserControlError(e) ? `${e.errorCode}/${e.disposition}` : "unexpected error"}`;
        harnessError = { code, message: reason };
      }
      break;
    } finally {
      pressure.stop();
    }
  }
  if (status === "passed" || completionReason === "step_failed" || starved) {
    // The final frame is evidence (after a failed step: what the participant was looking at)
    // and a last observation for the hidden checks.
    try {
      const o = await observe();
      keep({ name: `${String(screenshots.length + 1).padStart(2, "0")}-final`, png: o.png, at: new Date().toISOString() });
    } catch (e) {
      // After a failed step the frame is best effort: the step's failure stays the outcome.
      if (status !== "passed") return finish();
      status = "failed";
      completionReason = "harness_error";
      reason = "the final observation failed";
      harnessError = { code: isBrowserControlError(e) ? e.code : "HUMANISH_BROWSER_PARTICIPANT_FAILED", message: reason };
    }
  }
  return finish();

  function finish(): ScriptedBrowserOutcome {
    const completed = Date.now();
    return {
      status,
      completionReason,
      reason,
      startedAt,
      completedAt: new Date(completed).toISOString(),
      durationMs: completed - started,
      items,
      observations,
      screenshots,
      ...(harnessError ? { harnessError } : {}),
    };
  }
}

function onOrigin(url: string | undefined, origin: string): boolean {
  if (url === undefined) return false;
  try {
    return new URL(url).origin === origin;
  } catch {
    return false;
  }
}

/** The path of `url` for messages; never its query, fragment or credentials. */
function safeUrlPath(url: string): string {
  try {
    return new URL(url).pathname;
  } catch {
    return "an unparseable URL";
  }
}

/** A browser task's hidden check (normalised lists), as in the lab schema. */
export interface BrowserCheck {
  textIncludes?: string[];
  textExcludes?: string[];
  urlIncludes?: string;
  urlPathEquals?: string;
}

/**
 * Evaluate a hidden check over the observations: passes when ONE observation satisfies ALL
 * present conditions. With `origin` (e.g. `http://127.0.0.1:41731`), only observations whose URL
 * is on that origin count: text of a `file:`/`chrome:` page or another site the participant
 * reached is not the app's. Returns the index of the first satisfying observation, or -1.
 */
export function evaluateCheck(check: BrowserCheck, observations: readonly ObservationRecord[], origin?: string): number {
  return observations.findIndex((o) => {
    if (origin !== undefined && !onOrigin(o.url, origin)) return false;
    if (check.textIncludes && !(o.text !== undefined && check.textIncludes.every((t) => o.text!.includes(t)))) return false;
    if (check.textExcludes && !(o.text !== undefined && check.textExcludes.every((t) => !o.text!.includes(t)))) return false;
    if (check.urlIncludes !== undefined && !o.url?.includes(check.urlIncludes)) return false;
    if (check.urlPathEquals !== undefined) {
      if (o.url === undefined) return false;
      try {
        if (new URL(o.url).pathname !== check.urlPathEquals) return false;
      } catch {
        return false;
      }
    }
    return true;
  });
}

/**
 * The `humanish_ui` dynamic tool of a `local-agent` seat, and its final answer. Pure.
 *
 * The model sees the browser desktop only through this tool: each call carries a short
 * narration (≤ {@link MAX_NARRATION_CHARS} chars, what the participant is thinking — recorded,
 * scrubbed) and 1–{@link MAX_UI_ACTIONS} browser-control actions (`{kind, …}`, the same union
 * the computer-use participant dispatches). Its result carries one acknowledgement per action,
 * the new frame as an admitted PNG data URL, and a hint.
 *
 * A call is judged before anything is dispatched:
 * - refused (nothing dispatched, `success: false`): not an object with exactly `narration` and
 *   `actions`, a narration over the bound, no or too many actions, or an action that cannot be
 *   read (unknown kind, bad fields, beyond the browser-control wire bounds). A model that keeps
 *   sending unreadable calls is ended by the seat, not by this module.
 * - rejected (well-formed, not dispatchable here): a point outside the frame, a key the guest
 *   has no name for. The batch is dispatched up to that action; it and the rest are
 *   acknowledged `rejected` / `not_dispatched`, and the hint says why.
 * The module never adds an action of its own.
 */

import { PNG } from "pngjs";
import { type BrowserAction, browserActionSchema } from "../../browser-control/index.ts";
import { admitPng } from "../../png/index.ts";
import { describeAction, type Frame, guestKeyName } from "../computer-use/actions.ts";
import { CLOSING_REPORT_FORMAT, type ClosingReport, type DeclaredOutcome, parseClosingReport } from "../computer-use/outcome.ts";
import type { CodexDynamicTool, CodexDynamicToolResult } from "./types.ts";

/** The one tool a local-agent seat may call. */
export const UI_TOOL_NAME = "humanish_ui";
/** Longest narration of one call, chars. */
export const MAX_NARRATION_CHARS = 2_000;
/** Most actions one call may carry. */
export const MAX_UI_ACTIONS = 4;
/** Longest hint a result carries, chars (the rest is cut: a hint is advice, not evidence). */
export const MAX_HINT_CHARS = 2_000;

const KINDS = ["click", "double_click", "move", "scroll", "type", "keypress", "drag", "wait", "screenshot"] as const;

/**
 * The tool as declared to the thread. The action schema is one flat object keyed by `kind`
 * rather than a union: every model and every CLI schema sanitiser reads a flat object, and
 * humanish checks the exact per-kind shape itself before anything is dispatched.
 */
export const UI_TOOL: CodexDynamicTool = {
  name: UI_TOOL_NAME,
  description: [
    "Act on the browser desktop you see in the latest screenshot, then get the new screenshot back.",
    `Each call: a short narration (at most ${MAX_NARRATION_CHARS} characters) of what you see and intend, and 1–${MAX_UI_ACTIONS} actions run in order.`,
    "Coordinates are pixels of the latest screenshot (the whole screen, browser chrome included), origin top-left.",
    "Actions by kind: click {x, y, button?: left|right|middle}; double_click {x, y}; move {x, y}; scroll {x, y, dx, dy} (pixels, positive = right/down);",
    "type {text} (into the focused field); keypress {keys: [names pressed together, e.g. CTRL, A or ENTER]}; drag {path: [{x, y}, …]}; wait {ms?}; screenshot {}.",
  ].join(" "),
  inputSchema: {
    type: "object",
    additionalProperties: false,
    required: ["narration", "actions"],
    properties: {
      narration: { type: "string", description: `What you see and what you are about to do (at most ${MAX_NARRATION_CHARS} characters).` },
      actions: {
        type: "array",
        minItems: 1,
        maxItems: MAX_UI_ACTIONS,
        items: {
          type: "object",
          required: ["kind"],
          properties: {
            kind: { type: "string", enum: [...KINDS] },
            x: { type: "number" },
            y: { type: "number" },
            button: { type: "string", enum: ["left", "right", "middle"] },
            dx: { type: "number" },
            dy: { type: "number" },
            text: { type: "string" },
            keys: { type: "array", items: { type: "string" } },
            path: {
              type: "array",
              items: { type: "object", required: ["x", "y"], properties: { x: { type: "number" }, y: { type: "number" } } },
            },
            ms: { type: "number" },
          },
        },
      },
    },
  },
};

/** One action of a call, judged against the frame the model saw. */
export type JudgedAction = { ok: true; action: BrowserAction; label: string } | { ok: false; label: string; reason: string; hint: string };

/** A judged call: refused as a whole, or its actions in order (stop dispatching at the first not ok). */
export type JudgedCall = { ok: true; narration: string; actions: JudgedAction[] } | { ok: false; reason: string };

type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);

/** A point outside the frame, or undefined. */
function offFrame(a: BrowserAction, f: Frame): { x: number; y: number } | undefined {
  const pts = a.kind === "drag" ? a.path : "x" in a ? [{ x: a.x, y: a.y }] : [];
  return pts.find((p) => p.x < 0 || p.y < 0 || p.x >= f.width || p.y >= f.height);
}

/** One raw action → a dispatchable action, a rejection, or (string) why it cannot be read. */
function judgeAction(raw: unknown, index: number, f: Frame): JudgedAction | string {
  if (!isObject(raw)) return `actions[${index}] must be an object`;
  // A model filling a flat schema may send irrelevant fields as null: they carry nothing.
  const clean = Object.fromEntries(Object.entries(raw).filter(([, v]) => v !== null));
  const parsed = browserActionSchema.safeParse(clean);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue?.path.length ? `.${issue.path.join(".")}` : "";
    return `actions[${index}]${where}: ${issue?.message ?? "not a browser action"}`;
  }
  const action = parsed.data;
  const label = describeAction(action);
  const out = offFrame(action, f);
  if (out)
    return {
      ok: false,
      label,
      reason: `(${out.x}, ${out.y}) is outside the ${f.width}×${f.height} frame`,
      hint: `actions[${index}] (${label}) points at (${out.x}, ${out.y}), outside the ${f.width}×${f.height} screenshot; choose a point from the new screenshot`,
    };
  if (action.kind === "keypress") {
    const keys: string[] = [];
    for (const k of action.keys) {
      const g = guestKeyName(k);
      if (g === undefined)
        return {
          ok: false,
          label: "keypress",
          reason: "a key name is not a key of this desktop",
          hint: `actions[${index}] names a key this desktop does not have; use names such as CTRL, ALT, SHIFT, ENTER, TAB, ESC, BACKSPACE, DELETE, ARROWLEFT, PAGEDOWN, HOME, END, F1–F12, a letter, digit or punctuation`,
        };
      keys.push(g);
    }
    return { ok: true, action: { kind: "keypress", keys }, label };
  }
  return { ok: true, action, label };
}

/**
 * Judges one `humanish_ui` call's arguments against frame `f` (the screenshot the model saw).
 * Never throws.
 */
export function judgeUiCall(args: unknown, f: Frame): JudgedCall {
  if (!isObject(args)) return { ok: false, reason: "the arguments must be an object {narration, actions}" };
  const extra = Object.keys(args).filter((k) => k !== "narration" && k !== "actions");
  if (extra.length) return { ok: false, reason: `unknown argument ${JSON.stringify(extra[0]!.slice(0, 40))}; only narration and actions` };
  const { narration, actions } = args;
  if (typeof narration !== "string") return { ok: false, reason: "narration must be a string" };
  if (narration.length > MAX_NARRATION_CHARS) return { ok: false, reason: `narration is ${narration.length} characters; at most ${MAX_NARRATION_CHARS}` };
  if (!Array.isArray(actions) || actions.length < 1 || actions.length > MAX_UI_ACTIONS)
    return {
      ok: false,
      reason: `actions must list 1–${MAX_UI_ACTIONS} actions${Array.isArray(actions) ? ` (got ${actions.length})` : ""}`,
    };
  const judged: JudgedAction[] = [];
  for (const [i, raw] of actions.entries()) {
    const j = judgeAction(raw, i, f);
    if (typeof j === "string") return { ok: false, reason: j };
    judged.push(j);
  }
  return { ok: true, narration, actions: judged };
}

/** How one action of a call ended, as the model is told. */
export type AckStatus = "completed" | "rejected" | "not_dispatched";

/** A PNG as a data URL, after the PNG gate; a string saying why not. */
export function frameDataUrl(png: Uint8Array): { url: string; frame: Frame } | string {
  const a = admitPng(png);
  if (!a.ok) return `the frame was not admitted (${a.code}: ${a.detail})`;
  return {
    url: `data:image/png;base64,${Buffer.from(png.buffer, png.byteOffset, png.byteLength).toString("base64")}`,
    frame: { width: a.width, height: a.height },
  };
}

/**
 * The same pixels re-encoded as compactly as a screenshot PNG gets (RGB, deflate level 9 with the
 * default strategy, Sub filter), admitted again, as a data URL. The guest encodes for speed; this
 * is the fallback for a frame whose fast encoding does not fit the session's tool-output bound.
 * A string says why not.
 */
export function compactFrameDataUrl(png: Uint8Array): string | { url: string } {
  const decoded = admitPng(png, { includePixels: true });
  if (!decoded.ok || !decoded.pixels) return `the frame was not admitted (${decoded.ok ? "no pixels" : decoded.code})`;
  const img = new PNG({ width: decoded.width, height: decoded.height });
  img.data.set(decoded.pixels);
  const out = new Uint8Array(PNG.sync.write(img, { colorType: 2, inputColorType: 6, inputHasAlpha: true, deflateLevel: 9, deflateStrategy: 0, filterType: 1 }));
  const again = frameDataUrl(out);
  return typeof again === "string" ? again : { url: again.url };
}

/**
 * The tool result: a JSON text `{acknowledgements: [{index, status}], frame: {width, height},
 * hint}` (or `{refused, hint}`) and the frame as an image item. `url` must come from
 * {@link frameDataUrl}.
 */
export function uiToolResult(
  r:
    | { acks: { index: number; status: AckStatus }[]; hint: string | undefined; url: string; frame: Frame }
    | { refused: string; hint: string; url: string; frame: Frame },
): CodexDynamicToolResult {
  const hint = (h: string | undefined) => (h && h.length > MAX_HINT_CHARS ? `${h.slice(0, MAX_HINT_CHARS)}…` : h);
  const body =
    "refused" in r
      ? { refused: r.refused, hint: hint(r.hint), frame: r.frame }
      : { acknowledgements: r.acks, frame: r.frame, ...(r.hint ? { hint: hint(r.hint) } : {}) };
  return {
    success: !("refused" in r),
    contentItems: [
      { type: "inputText", text: JSON.stringify(body) },
      { type: "inputImage", imageUrl: r.url },
    ],
  };
}

/** The participant's final answer: its declared outcome and closing account. */
export interface FinalAnswer extends ClosingReport {
  outcome: DeclaredOutcome;
}

/** JSON Schema of the final answer (the turn's structured output). */
export const FINAL_ANSWER_SCHEMA: Record<string, unknown> = {
  type: "object",
  additionalProperties: false,
  required: ["outcome", ...CLOSING_REPORT_FORMAT.schema.required],
  properties: {
    outcome: { type: "string", enum: ["reached", "not_reached", "blocked"] },
    ...CLOSING_REPORT_FORMAT.schema.properties,
  },
};

/**
 * Reads the final answer: exactly `outcome` (reached | not_reached | blocked), `summary` and
 * `frictionReports` under the closing-account rules. Returns the answer or why not.
 */
export function parseFinalAnswer(text: string): FinalAnswer | string {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return "the final answer is not JSON";
  }
  if (!isObject(v)) return "the final answer is not a JSON object";
  const { outcome, ...rest } = v;
  if (outcome !== "reached" && outcome !== "not_reached" && outcome !== "blocked") return "outcome must be reached, not_reached or blocked";
  const report = parseClosingReport(JSON.stringify(rest));
  if (typeof report === "string") return report.replace("the reply must have exactly", "the final answer must have exactly outcome,");
  return { outcome, ...report };
}

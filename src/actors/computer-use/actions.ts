/**
 * OpenAI computer-use actions → the browser-control action union. Pure.
 *
 * The model's actions arrive as `{type, …}` objects (GA `computer` tool: `actions[]`; the
 * preview tool: one `action`). Each is mapped to one {@link BrowserAction} or refused:
 * - `rejected`: well-formed but not dispatchable here (a key name outside the guest's closed
 *   key table, a point outside the observed frame, held keys on a pointer action). Nothing is
 *   sent; the model gets a hint and a fresh screenshot, the seat goes on.
 * - `malformed`: not an action we can read (unknown type, missing or non-numeric coordinates,
 *   bounds of the browser-control wire exceeded). Nothing is sent; the seat ends as a harness
 *   failure with the reason, because a model that emits unreadable actions is not a finding
 *   about the product.
 * The mapper never adds an action of its own: nothing a model returns can reach the address
 * bar except through the model's own explicit actions (Ctrl+L, a click on the chrome).
 */
import { type BrowserAction, browserActionSchema, MAX_DRAG_POINTS, MAX_KEYS } from "../../browser-control/index.ts";
import { keysymFor } from "../../guest/host-guest.ts";

/** Most actions one computer call may carry; a longer batch is malformed (a runaway reply). */
export const MAX_BATCH_ACTIONS = 32;

/** The frame the model saw, in screen px (the full guest screen, browser chrome included). */
export interface Frame {
  width: number;
  height: number;
}

/** One mapped model action. */
export type MappedAction =
  | { ok: true; action: BrowserAction; label: string }
  | { ok: false; refusal: "rejected" | "malformed"; label: string; reason: string; hint: string };

/**
 * CUA key names the guest table spells differently. Everything else goes to the guest table
 * as is (case-insensitive there): `CTRL`, `ArrowLeft`, `PAGEDOWN`, `/`, single letters…
 */
const KEY_ALIASES: Readonly<Record<string, string>> = Object.freeze({
  OPTION: "ALT",
  COMMAND: "CMD",
  WIN: "META",
  WINDOWS: "META",
  PGUP: "PAGEUP",
  PGDN: "PAGEDOWN",
  PAGE_UP: "PAGEUP",
  PAGE_DOWN: "PAGEDOWN",
  DEL: "DELETE",
  SPACEBAR: "SPACE",
  ARROW_UP: "ARROWUP",
  ARROW_DOWN: "ARROWDOWN",
  ARROW_LEFT: "ARROWLEFT",
  ARROW_RIGHT: "ARROWRIGHT",
});

/** The guest-table name of a CUA key name, or undefined when the guest has no such key. */
export function guestKeyName(name: string): string | undefined {
  const alias = KEY_ALIASES[name.toUpperCase()];
  const candidate = alias ?? name;
  return keysymFor(candidate) === undefined ? undefined : candidate;
}

/** A key name as it may appear in a hint or trace: short printable names only. */
function shownKey(name: string): string {
  return /^[A-Za-z0-9_+\-=,./\\;'[\]`]{1,24}$/.test(name) ? name : "(an unprintable name)";
}

type Json = Record<string, unknown>;

function num(v: unknown): number | undefined {
  return typeof v === "number" && Number.isFinite(v) ? v : undefined;
}

function malformed(label: string, reason: string): MappedAction {
  return { ok: false, refusal: "malformed", label, reason, hint: `your action (${label}) could not be read: ${reason}` };
}

function rejected(label: string, reason: string, hint: string): MappedAction {
  return { ok: false, refusal: "rejected", label, reason, hint };
}

function offFrame(x: number, y: number, f: Frame): boolean {
  return x < 0 || y < 0 || x >= f.width || y >= f.height;
}

/** A label for the trace and hints: kind and coordinates, never typed text. */
export function describeAction(a: BrowserAction): string {
  switch (a.kind) {
    case "click":
      return `click (${a.x}, ${a.y})${a.button && a.button !== "left" ? ` ${a.button}` : ""}`;
    case "double_click":
      return `double_click (${a.x}, ${a.y})`;
    case "move":
      return `move (${a.x}, ${a.y})`;
    case "scroll":
      return `scroll (${a.x}, ${a.y}) by ${a.dx},${a.dy}`;
    case "type":
      return `type ${a.text.length} chars`;
    case "keypress":
      return `keypress ${a.keys.map(shownKey).join("+")}`;
    case "drag":
      return `drag ${a.path.length} points`;
    case "wait":
      return `wait${a.ms !== undefined ? ` ${a.ms} ms` : ""}`;
    case "screenshot":
      return "screenshot";
  }
}

function point(raw: Json, label: string, f: Frame): { x: number; y: number } | MappedAction {
  const x = num(raw.x);
  const y = num(raw.y);
  if (x === undefined || y === undefined) return malformed(label, "x and y must be finite numbers");
  if (offFrame(x, y, f))
    return rejected(
      `${label} (${x}, ${y})`,
      "the point is outside the frame",
      `your action (${label} at ${x}, ${y}) is outside the ${f.width}×${f.height} screenshot and was not dispatched; choose a point from the fresh screenshot`,
    );
  return { x, y };
}

function heldKeysRefusal(raw: Json, label: string): MappedAction | undefined {
  if (Array.isArray(raw.keys) && raw.keys.length > 0)
    return rejected(
      label,
      "held keys on a pointer action are not supported by this desktop",
      `your action (${label} while holding keys) was not dispatched: this desktop cannot hold keys during a pointer action; press the keys as a separate keypress`,
    );
  return undefined;
}

function keys(raw: unknown, label: string): string[] | MappedAction {
  if (!Array.isArray(raw) || raw.length === 0 || raw.length > MAX_KEYS || !raw.every((k) => typeof k === "string" && k.length > 0 && k.length <= 64))
    return malformed(label, `keys must be 1–${MAX_KEYS} non-empty strings of at most 64 characters`);
  const out: string[] = [];
  for (const k of raw as string[]) {
    const g = guestKeyName(k);
    if (g === undefined)
      return rejected(
        `keypress ${(raw as string[]).map(shownKey).join("+")}`,
        `key ${shownKey(k)} is not a key of this desktop`,
        `your action (keypress ${shownKey(k)}) was rejected before dispatch: that key name is not known here; use names such as CTRL, ALT, SHIFT, ENTER, TAB, ESC, BACKSPACE, DELETE, ARROWLEFT, PAGEDOWN, HOME, END, F1–F12, a single letter, digit or punctuation`,
      );
    out.push(g);
  }
  return out;
}

function pointer(kind: "click" | "double_click" | "move", raw: Json, f: Frame): MappedAction {
  const held = heldKeysRefusal(raw, kind);
  if (held) return held;
  const p = point(raw, kind, f);
  if ("ok" in p) return p;
  if (kind !== "click") return finish({ kind, ...p });
  const button = raw.button;
  if (button === "back" || button === "forward") return finish({ kind: "keypress", keys: ["ALT", button === "back" ? "ARROWLEFT" : "ARROWRIGHT"] });
  if (button !== undefined && typeof button !== "string") return malformed("click", "button must be a string");
  const b = button === "right" ? "right" : button === "wheel" || button === "middle" ? "middle" : "left";
  return finish({ kind: "click", ...p, ...(b !== "left" ? { button: b } : {}) });
}

function finish(action: BrowserAction): MappedAction {
  const parsed = browserActionSchema.safeParse(action);
  const label = describeAction(action);
  if (!parsed.success) return malformed(label, `outside the browser-control bounds (${parsed.error.issues[0]?.message ?? "invalid"})`);
  return { ok: true, action: parsed.data, label };
}

/** Maps one raw model action (`{type, …}`) onto the browser-control union against frame `f`. */
export function mapAction(raw: unknown, f: Frame): MappedAction {
  if (!raw || typeof raw !== "object" || Array.isArray(raw)) return malformed("action", "an action must be an object");
  const a = raw as Json;
  const type = typeof a.type === "string" ? a.type : "";
  switch (type) {
    case "click":
    case "double_click":
    case "move":
      return pointer(type, a, f);
    case "scroll": {
      const held = heldKeysRefusal(a, "scroll");
      if (held) return held;
      const p = point(a, "scroll", f);
      if ("ok" in p) return p;
      const dx = a.scroll_x === undefined ? 0 : num(a.scroll_x);
      const dy = a.scroll_y === undefined ? 0 : num(a.scroll_y);
      if (dx === undefined || dy === undefined) return malformed("scroll", "scroll_x and scroll_y must be finite numbers");
      return finish({ kind: "scroll", ...p, dx, dy });
    }
    case "type":
      if (typeof a.text !== "string" || a.text.length === 0) return malformed("type", "text must be a non-empty string");
      return finish({ kind: "type", text: a.text });
    case "keypress": {
      const k = keys(a.keys, "keypress");
      if (!Array.isArray(k)) return k;
      return finish({ kind: "keypress", keys: k });
    }
    case "drag": {
      const held = heldKeysRefusal(a, "drag");
      if (held) return held;
      if (!Array.isArray(a.path) || a.path.length === 0 || a.path.length > MAX_DRAG_POINTS)
        return malformed("drag", `path must list 1–${MAX_DRAG_POINTS} points`);
      const path: { x: number; y: number }[] = [];
      for (const pt of a.path) {
        if (!pt || typeof pt !== "object") return malformed("drag", "every path point must be {x, y}");
        const p = point(pt as Json, "drag", f);
        if ("ok" in p) return p;
        path.push(p);
      }
      return finish({ kind: "drag", path });
    }
    case "wait":
      return finish({ kind: "wait" });
    case "screenshot":
      return finish({ kind: "screenshot" });
    default:
      return malformed(type ? "unknown action" : "action", type ? "the action type is not one of the computer tool's actions" : "the action has no type");
  }
}

/**
 * Maps a whole batch. Returns the mapped actions in order; a batch longer than
 * {@link MAX_BATCH_ACTIONS} is one malformed refusal.
 */
export function mapBatch(raw: readonly unknown[], f: Frame): MappedAction[] {
  if (raw.length > MAX_BATCH_ACTIONS) return [malformed(`batch of ${raw.length}`, `a computer call may carry at most ${MAX_BATCH_ACTIONS} actions`)];
  return raw.map((r) => mapAction(r, f));
}

/**
 * What the host and the guest share, the one module of `guest/` the host imports:
 * where the host's io directory is mounted in the guest, the line the guest prints once it
 * listens, and the configuration the host writes to `<io>/config.json` before starting the
 * container (the io directory is a private host directory bind-mounted at {@link GUEST_IO_DIR}).
 * Data and validation only: no I/O, so the host pulls in nothing of the guest's desktop driver.
 */
import { z } from "zod";
import { browserControlError } from "../browser-control/errors.ts";
import { type BrowserAction, identitySchema } from "../browser-control/index.ts";
import { HumanishError } from "../errors.ts";

/** Where the host's private io directory is mounted inside the guest. */
export const GUEST_IO_DIR = "/run/humanish-io";
/** Line the guest prints on stdout once `<io>/control.sock` accepts the host. */
export const GUEST_LISTENING_MARKER = "HUMANISH_GUEST_LISTENING_V1";

/** `humanish.guest-config.v1`: identity, app port, initial path and geometry (px). */
export const guestConfigSchema = z.strictObject({
  schema: z.literal("humanish.guest-config.v1"),
  identity: identitySchema,
  /** The lab's loopback app port (1024–65535); the guest listens on 127.0.0.1:<appPort>. */
  appPort: z.number().int().min(1024).max(65535),
  /** Path (and query) opened first, starting with `/`. */
  initialPath: z.string().startsWith("/").max(4096),
  width: z.number().int().min(320).max(4096),
  height: z.number().int().min(320).max(4096),
  /** Hard lifetime of the guest in ms (≤ 30 min). */
  lifetimeMs: z
    .number()
    .int()
    .min(1000)
    .max(30 * 60_000),
});
/** Parsed guest configuration. */
export type GuestConfig = z.infer<typeof guestConfigSchema>;

/**
 * Parse the config text.
 * @throws HumanishError `HUMANISH_GUEST_CONFIG_INVALID` naming the first bad field.
 */
export function parseGuestConfig(text: string): GuestConfig {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    throw new HumanishError("HUMANISH_GUEST_CONFIG_INVALID", "guest config.json is not JSON", { next: "let the host runtime write config.json" });
  }
  const r = guestConfigSchema.safeParse(raw);
  if (!r.success) {
    const issue = r.error.issues[0]!;
    throw new HumanishError("HUMANISH_GUEST_CONFIG_INVALID", `guest config.json: ${issue.path.join(".") || "(root)"}: ${issue.message}`, {
      next: "let the host runtime write config.json",
    });
  }
  return r.data;
}

/*
 * The closed key-name table: which participant key names a desktop accepts and the xdotool
 * keysym each becomes. Part of what host and guest share, so a host-side participant (the
 * computer-use loop) can refuse an unknown name before anything is dispatched, and so the E2B
 * desktop lane, which also drives xdotool, accepts exactly the same names.
 */
const NAMED: Readonly<Record<string, string>> = Object.freeze({
  ENTER: "Return",
  RETURN: "Return",
  TAB: "Tab",
  ESC: "Escape",
  ESCAPE: "Escape",
  SPACE: "space",
  " ": "space",
  BACKSPACE: "BackSpace",
  DELETE: "Delete",
  INSERT: "Insert",
  HOME: "Home",
  END: "End",
  PAGEUP: "Prior",
  PAGEDOWN: "Next",
  ARROWUP: "Up",
  UP: "Up",
  ARROWDOWN: "Down",
  DOWN: "Down",
  ARROWLEFT: "Left",
  LEFT: "Left",
  ARROWRIGHT: "Right",
  RIGHT: "Right",
  "+": "plus",
  "-": "minus",
  "=": "equal",
  ",": "comma",
  ".": "period",
  "/": "slash",
  "\\": "backslash",
  ";": "semicolon",
  "'": "apostrophe",
  "[": "bracketleft",
  "]": "bracketright",
  "`": "grave",
});

/**
 * How the four modifiers are spelled for xdotool: `alias` is xdotool's own short names (the
 * guest's driver), `keysym` the left-hand X keysyms (the E2B desktop, whose pointer actions hold
 * a modifier with `keydown`/`keyup` by keysym). Every other key is spelled the same in both.
 */
export type ModifierSpelling = "alias" | "keysym";

const MODIFIERS: Readonly<Record<ModifierSpelling, Readonly<Record<string, string>>>> = Object.freeze({
  alias: Object.freeze({ CTRL: "ctrl", CONTROL: "ctrl", ALT: "alt", SHIFT: "shift", META: "super", SUPER: "super", CMD: "super" }),
  keysym: Object.freeze({
    CTRL: "Control_L",
    CONTROL: "Control_L",
    ALT: "Alt_L",
    SHIFT: "Shift_L",
    META: "Super_L",
    SUPER: "Super_L",
    CMD: "Super_L",
  }),
});

/** The modifier sub-table (ctrl/alt/shift/super) in the guest's spelling. */
export const MODIFIER_KEYSYMS: ReadonlySet<string> = modifierKeysyms("alias");

/** The four modifiers' names in one spelling (the only keys a pointer action may hold). */
export function modifierKeysyms(spelling: ModifierSpelling): ReadonlySet<string> {
  return new Set(Object.values(MODIFIERS[spelling]));
}

/**
 * Map one participant key name to its xdotool keysym, or `undefined` when it is not in the
 * closed table. Single `[a-z0-9]` letters map to themselves (lower-cased), `F1`–`F12` upper-cased;
 * modifiers in `spelling` (default: the guest's `alias`).
 */
export function keysymFor(name: string, spelling: ModifierSpelling = "alias"): string | undefined {
  const upper = name.toUpperCase();
  if (/^[A-Z0-9]$/.test(upper)) return upper.toLowerCase();
  if (/^F([1-9]|1[0-2])$/.test(upper)) return upper;
  const modifiers = MODIFIERS[spelling];
  if (Object.hasOwn(modifiers, upper)) return modifiers[upper];
  return Object.hasOwn(NAMED, upper) ? NAMED[upper] : undefined;
}

/**
 * Turn a keypress's key list into one xdotool chord (`ctrl+l` / `Control_L+l`, `Return`).
 *
 * @throws BrowserControlError `action_rejected`/`not_dispatched` for an empty list, a name outside
 *   the table, or a key repeated within the chord.
 */
export function keyChord(keys: readonly string[], spelling: ModifierSpelling = "alias"): string {
  if (keys.length === 0) throw browserControlError("action_rejected", "not_dispatched", "keypress: no keys");
  const out: string[] = [];
  for (const k of keys) {
    const sym = keysymFor(k, spelling);
    if (sym === undefined) throw browserControlError("action_rejected", "not_dispatched", "keypress: a key name is not in the closed key table");
    if (out.includes(sym)) throw browserControlError("action_rejected", "not_dispatched", "keypress: a key is repeated within the chord");
    out.push(sym);
  }
  return out.join("+");
}

/** Largest typed text a desktop accepts, UTF-8 bytes. */
export const MAX_TYPE_BYTES = 65_536;

/**
 * One pointer position on a `width`×`height` screen (px) as xdotool's two integer arguments,
 * rounded and clamped inside the screen. Shared by every desktop that drives xdotool, so both
 * refuse the same points.
 * @throws BrowserControlError `action_rejected`/`not_dispatched` for a non-finite or off-screen point.
 */
export function screenPoint(x: number, y: number, width: number, height: number): [string, string] {
  if (!Number.isFinite(x) || !Number.isFinite(y) || x < 0 || y < 0 || x >= width || y >= height) {
    throw browserControlError("action_rejected", "not_dispatched", "point outside the screen");
  }
  return [String(Math.min(width - 1, Math.round(x))), String(Math.min(height - 1, Math.round(y)))];
}

/**
 * Refuse typed text a desktop does not accept: empty, with a NUL, over {@link MAX_TYPE_BYTES}, or
 * not round-tripping as UTF-8 (a lone surrogate would reach xdotool altered).
 * @throws BrowserControlError `action_rejected`/`not_dispatched` naming the reason.
 */
export function admitTypedText(text: string): void {
  if (text.length === 0) throw browserControlError("action_rejected", "not_dispatched", "type: empty text");
  if (text.includes("\u0000")) throw browserControlError("action_rejected", "not_dispatched", "type: NUL in text");
  const bytes = new TextEncoder().encode(text);
  if (bytes.length > MAX_TYPE_BYTES) throw browserControlError("action_rejected", "not_dispatched", "type: text over 64 KiB");
  if (new TextDecoder().decode(bytes) !== text) throw browserControlError("action_rejected", "not_dispatched", "type: text does not round-trip as UTF-8");
}

/** Max wheel steps (horizontal + vertical) one scroll may send. */
export const MAX_WHEEL_STEPS = 100;
/** Pixels of scroll delta per wheel step. */
export const WHEEL_STEP_PX = 120;

/** A screen point as xdotool's two integer arguments (px). */
export type ScreenPoint = [string, string];
/** xdotool's button numbers: 1 left, 2 middle, 3 right; wheel 4 up, 5 down, 6 left, 7 right. */
export type PointerButton = "1" | "2" | "3";
/** Wheel steps along one axis: how many, and the wheel button of their direction. */
export interface WheelSteps {
  steps: number;
  button: "4" | "5" | "6" | "7";
}

/**
 * What one browser action asks of a desktop's input, validated once for every desktop: points
 * on the screen, wheel steps bounded, drag paths of two points or more, text admitted. A desktop
 * turns it into its own native steps; keys are left to the desktop's closed key table.
 */
export type PlannedInput =
  | { kind: "pointer"; at: ScreenPoint; click?: { button: PointerButton; double: boolean } }
  | { kind: "keys"; keys: readonly string[] }
  | { kind: "wheel"; at: ScreenPoint; horizontal: WheelSteps | null; vertical: WheelSteps | null }
  | { kind: "drag"; path: ScreenPoint[] }
  | { kind: "type"; text: string }
  | { kind: "sleep"; ms: number }
  | { kind: "none" };

/**
 * The one planner of the browser actions both desktops (the local guest and the E2B desktop)
 * accept, on a `width`×`height` screen (px). Exhaustive over the action union: a new action kind
 * is a compile error here until it is planned.
 * @throws BrowserControlError `action_rejected`/`not_dispatched` for any refusal (off-screen point,
 *   inadmissible text, over 100 wheel steps, a drag of fewer than 2 points).
 */
export function planInput(action: BrowserAction, geometry: { width: number; height: number }): PlannedInput {
  const { width, height } = geometry;
  switch (action.kind) {
    case "move":
      return { kind: "pointer", at: screenPoint(action.x, action.y, width, height) };
    case "click":
      return {
        kind: "pointer",
        at: screenPoint(action.x, action.y, width, height),
        click: { button: action.button === "middle" ? "2" : action.button === "right" ? "3" : "1", double: false },
      };
    case "double_click":
      return { kind: "pointer", at: screenPoint(action.x, action.y, width, height), click: { button: "1", double: true } };
    case "keypress":
      return { kind: "keys", keys: action.keys };
    case "scroll":
      return planScroll(action, width, height);
    case "drag":
      if (action.path.length < 2) throw browserControlError("action_rejected", "not_dispatched", "drag: fewer than 2 points");
      return { kind: "drag", path: action.path.map((p) => screenPoint(p.x, p.y, width, height)) };
    case "type":
      admitTypedText(action.text);
      return { kind: "type", text: action.text };
    case "wait":
      return { kind: "sleep", ms: action.ms ?? 250 };
    case "screenshot":
      return { kind: "none" };
    default:
      return unplanned(action);
  }
}

/** A wait step, spelled the same by every desktop. */
export type SleepStep = { kind: "sleep"; ms: number };

/** One desktop's native steps for each kind of planned input that sends input. */
export type InputArms<S> = {
  [K in Exclude<PlannedInput["kind"], "sleep" | "none">]: (input: Extract<PlannedInput, { kind: K }>) => S[];
};

/**
 * Plan `action` with {@link planInput} and spell it as one desktop's native steps: `arms` turn
 * each input kind into steps, a wait is one {@link SleepStep}, an action without input (a
 * screenshot, a zero scroll) no step at all.
 * @throws BrowserControlError `action_rejected`/`not_dispatched` for any refusal of
 *   {@link planInput} or of an arm.
 */
export function planSteps<S>(action: BrowserAction, geometry: { width: number; height: number }, arms: InputArms<S>): (S | SleepStep)[] {
  const input = planInput(action, geometry);
  switch (input.kind) {
    case "pointer":
      return arms.pointer(input);
    case "keys":
      return arms.keys(input);
    case "wheel":
      return arms.wheel(input);
    case "drag":
      return arms.drag(input);
    case "type":
      return arms.type(input);
    case "sleep":
      return [{ kind: "sleep", ms: input.ms }];
    case "none":
      return [];
    default:
      return unplanned(input);
  }
}

function planScroll(action: Extract<BrowserAction, { kind: "scroll" }>, width: number, height: number): PlannedInput {
  const at = screenPoint(action.x, action.y, width, height);
  if (!Number.isFinite(action.dx) || !Number.isFinite(action.dy)) throw browserControlError("action_rejected", "not_dispatched", "scroll: delta not finite");
  const h = Math.ceil(Math.abs(action.dx) / WHEEL_STEP_PX);
  const v = Math.ceil(Math.abs(action.dy) / WHEEL_STEP_PX);
  if (h + v > MAX_WHEEL_STEPS) throw browserControlError("action_rejected", "not_dispatched", "scroll: more than 100 wheel steps");
  if (h + v === 0) return { kind: "none" };
  return {
    kind: "wheel",
    at,
    horizontal: h > 0 ? { steps: h, button: action.dx > 0 ? "7" : "6" } : null,
    vertical: v > 0 ? { steps: v, button: action.dy > 0 ? "5" : "4" } : null,
  };
}

/**
 * The end of an exhaustive switch: `value` is `never` to the compiler, so a new kind is a type
 * error at the switch; at run time (a value from outside the union) it is refused, never sent.
 */
export function unplanned(value: never): never {
  throw browserControlError("action_rejected", "not_dispatched", `unsupported action kind ${JSON.stringify((value as { kind?: unknown })?.kind ?? null)}`);
}

/**
 * The contract between the host and the guest, the one module of `guest/` the host imports:
 * where the host's io directory is mounted in the guest, the line the guest prints once it
 * listens, and the configuration the host writes to `<io>/config.json` before starting the
 * container (the io directory is a private host directory bind-mounted at {@link GUEST_IO_DIR}).
 * Data and validation only: no I/O, so the host pulls in nothing of the guest's desktop driver.
 */
import { z } from "zod";
import { identitySchema } from "../browser-control/index.ts";
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
 * The closed key-name table: which participant key names the guest accepts and the xdotool
 * keysym each becomes. Part of the host ↔ guest contract, so a host-side participant (the
 * computer-use loop) can refuse an unknown name before anything is dispatched.
 */
const NAMED: Readonly<Record<string, string>> = Object.freeze({
  CTRL: "ctrl",
  CONTROL: "ctrl",
  ALT: "alt",
  SHIFT: "shift",
  META: "super",
  SUPER: "super",
  CMD: "super",
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

/** The modifier sub-table (ctrl/alt/shift/super). */
export const MODIFIER_KEYSYMS: ReadonlySet<string> = new Set(["ctrl", "alt", "shift", "super"]);

/**
 * Map one participant key name to its xdotool keysym, or `undefined` when it is not in the
 * closed table. Single `[a-z0-9]` letters map to themselves (lower-cased), `F1`–`F12` upper-cased.
 */
export function keysymFor(name: string): string | undefined {
  const upper = name.toUpperCase();
  if (/^[A-Z0-9]$/.test(upper)) return upper.toLowerCase();
  if (/^F([1-9]|1[0-2])$/.test(upper)) return upper;
  return Object.hasOwn(NAMED, upper) ? NAMED[upper] : undefined;
}

/**
 * Size, count and time bounds of one restricted session. Pure: no I/O. A caller may tighten any
 * bound, never loosen it.
 */
import { HumanishError } from "../../errors.ts";
import type { CodexAccountPurpose } from "./types.ts";

const KiB = 1024;
const MiB = 1024 * 1024;

/** Every bound of a session. Units: bytes, counts, ms. */
export interface CodexAccountBounds {
  /** Developer instructions of the thread (UTF-8 bytes). */
  instructionsBytes: number;
  /** A participant's per-step context hint (UTF-8 bytes); enforced by the participant, published here. */
  hintBytes: number;
  /** One dynamic tool result, serialized (bytes). */
  toolOutputBytes: number;
  /** One `turn/start` request, serialized (bytes). */
  requestBytes: number;
  /** Images in one turn's input. */
  images: number;
  /** Decoded image bytes in one turn's input. */
  imageBytes: number;
  /** One newline-delimited frame from the app-server (bytes). */
  frameBytes: number;
  /** Base stdout budget of the session (bytes); echoes of what the host sent are added to it. */
  stdoutBytes: number;
  /** Stderr budget (bytes, counted and discarded). */
  stderrBytes: number;
  /** Notifications over the session. */
  notifications: number;
  /** Assistant text over one turn (UTF-8 bytes of deltas). */
  assistantTextBytes: number;
  /** Ceiling of one host RPC's reply (ms). */
  rpcMs: number;
  /** Startup ceiling: launch through the readiness checks (ms). */
  startupMs: number;
  /** Longest whole-turn deadline a caller may ask for (ms). */
  turnMs: number;
  /** SIGTERM wait, then SIGKILL wait when closing the child (ms). */
  termWaitMs: number;
  killWaitMs: number;
  /** Wait for `turn/interrupt` to settle before closing (ms). */
  interruptWaitMs: number;
}

/** Smallest frame limit of an analyst session (bytes): a text-only packet's frames fit well under it. */
export const ANALYST_MIN_FRAME_BYTES = 2 * MiB;
/**
 * Absolute ceiling of an analyst's frame limit (bytes): twice the largest `turn/start` request
 * ({@link defaultBounds} `requestBytes`), so no packet a session admits can need more.
 */
export const ANALYST_MAX_FRAME_BYTES = 64 * MiB;

/**
 * The frame limit of an analyst session for a packet of `packetBytes` (the serialized turn input,
 * bytes). The app-server echoes the input back as one frame (the user message item, again as a
 * raw item), images as data URLs, so a frame is about the packet's size; the headroom is 2× plus
 * 1 MiB (JSON re-escaping can grow text, and the envelope adds ids and item fields), at least
 * {@link ANALYST_MIN_FRAME_BYTES} and at most {@link ANALYST_MAX_FRAME_BYTES}.
 */
export function analystFrameBytes(packetBytes: number): number {
  const wanted = 2 * Math.max(0, Math.ceil(packetBytes)) + MiB;
  return Math.min(ANALYST_MAX_FRAME_BYTES, Math.max(ANALYST_MIN_FRAME_BYTES, wanted));
}

/** The base stdout budget that goes with a frame limit (bytes): two frames plus 4 MiB, at least 8 MiB. */
export function stdoutBudgetFor(frameBytes: number): number {
  return Math.max(8 * MiB, 2 * frameBytes + 4 * MiB);
}

/**
 * Defaults per purpose: a participant's frames carry screenshots, so its frame limit is larger;
 * an analyst's default is the ceiling its packet may need, which the analysis provider tightens
 * to the packet it sends ({@link analystFrameBytes}).
 */
export function defaultBounds(purpose: CodexAccountPurpose): CodexAccountBounds {
  const frameBytes = purpose === "participant" ? 32 * MiB : ANALYST_MAX_FRAME_BYTES;
  return {
    instructionsBytes: 64 * KiB,
    hintBytes: 8 * KiB,
    toolOutputBytes: 256 * KiB,
    requestBytes: 32 * MiB,
    images: 128,
    imageBytes: 20 * MiB,
    frameBytes,
    stdoutBytes: stdoutBudgetFor(frameBytes),
    stderrBytes: 2 * MiB,
    notifications: 65_536,
    assistantTextBytes: 2 * MiB,
    rpcMs: 15_000,
    startupMs: 60_000,
    turnMs: 600_000,
    termWaitMs: 1_500,
    killWaitMs: 1_000,
    interruptWaitMs: 1_000,
  };
}

/**
 * The defaults with the caller's tighter values applied.
 * @throws HumanishError `HUMANISH_CODEX_BOUNDS_INVALID` for an unknown name, a non-positive
 *   integer, or a value looser than the default.
 */
export function resolveBounds(purpose: CodexAccountPurpose, overrides: Partial<Record<string, number>> = {}): CodexAccountBounds {
  const b = defaultBounds(purpose);
  for (const [name, v] of Object.entries(overrides)) {
    if (v === undefined) continue;
    if (!(name in b))
      throw new HumanishError("HUMANISH_CODEX_BOUNDS_INVALID", `bounds.${name} is not a Codex session bound`, {
        next: `Use one of: ${Object.keys(b).join(", ")}.`,
      });
    const key = name as keyof CodexAccountBounds;
    if (!Number.isInteger(v) || v <= 0) throw new HumanishError("HUMANISH_CODEX_BOUNDS_INVALID", `bounds.${name} must be a positive integer (got ${v})`);
    if (v > b[key])
      throw new HumanishError("HUMANISH_CODEX_BOUNDS_INVALID", `bounds.${name} = ${v} is looser than the launcher's ${b[key]}`, {
        next: "Bounds may only be tightened.",
      });
    b[key] = v;
  }
  return b;
}

/**
 * zod schemas for browser-control protocol version 1.
 *
 * Everything is strict: unknown keys are rejected everywhere. Version 1 has exactly the
 * operations `HELLO`, `OBSERVE` and `EXECUTE`; there is no recording transfer, no `speak`
 * action and no `heldKeys` field (a peer sending them is refused as `invalid_request`).
 */
import { z } from "zod";
import { ACTION_DISPOSITIONS, BROWSER_CONTROL_ERROR_CODES } from "./errors.ts";

/** Largest frame payload in bytes (12 MiB). */
export const MAX_FRAME_BYTES = 12 * 1024 * 1024;
/** Largest absolute coordinate/delta on the wire. */
export const MAX_COORDINATE = 1_000_000;
/** Largest `type` text: 64 KiB, checked as string length AND UTF-8 byte length. */
export const MAX_TYPE_TEXT = 64 * 1024;
/** Largest observation text fields (`stateSignature`, `url`, `title`, `text`): 64 KiB. */
export const MAX_OBSERVATION_TEXT = 64 * 1024;
/** `keypress.keys`: 1–16 entries of 1–64 chars. */
export const MAX_KEYS = 16;
/** Longest key name. */
export const MAX_KEY_NAME = 64;
/** `drag.path`: 1–1024 points. */
export const MAX_DRAG_POINTS = 1024;
/** `wait.ms`: 0–30,000 ms. */
export const MAX_WAIT_MS = 30_000;
/** Largest PNG in an observation: 8 MiB. */
export const MAX_PNG_BYTES = 8 * 1024 * 1024;
/** Largest base64 `png` string: 4·ceil(8 MiB / 3) chars. */
export const MAX_PNG_BASE64 = 4 * Math.ceil(MAX_PNG_BYTES / 3);

const utf8 = new TextEncoder();

/** UTF-8 byte length of a JS string (lone surrogates count as 3 bytes, like TextEncoder). */
export function utf8ByteLength(s: string): number {
  // Fast path: pure ASCII strings are common and need no encoding.
  let ascii = true;
  for (let i = 0; i < s.length; i++) {
    if (s.charCodeAt(i) > 0x7f) {
      ascii = false;
      break;
    }
  }
  return ascii ? s.length : utf8.encode(s).byteLength;
}

/** Identity token: 1–128 chars of `[A-Za-z0-9._-]`. */
export const tokenSchema = z
  .string()
  .min(1)
  .max(128)
  .regex(/^[A-Za-z0-9._-]+$/);

/** `BrowserControlIdentity`: a consistency check, not authentication. */
export const identitySchema = z.strictObject({
  generation: tokenSchema,
  challenge: tokenSchema,
  runtimeRevision: tokenSchema,
});
/** `{generation, challenge, runtimeRevision}`; equality = all three strings equal. */
export type BrowserControlIdentity = z.infer<typeof identitySchema>;

/** True when both identities carry the same three strings. */
export function sameIdentity(a: BrowserControlIdentity, b: BrowserControlIdentity): boolean {
  return a.generation === b.generation && a.challenge === b.challenge && a.runtimeRevision === b.runtimeRevision;
}

/** A finite coordinate within ±1,000,000 px; fractions are kept. */
export const coordinateSchema = z.number().min(-MAX_COORDINATE).max(MAX_COORDINATE);

const boundedText = (max: number) =>
  z
    .string()
    .max(max)
    .refine((s) => utf8ByteLength(s) <= max, { message: `must be at most ${max} UTF-8 bytes` });

const clickSchema = z.strictObject({
  kind: z.literal("click"),
  x: coordinateSchema,
  y: coordinateSchema,
  button: z.enum(["left", "right", "middle"]).optional(),
});
const doubleClickSchema = z.strictObject({ kind: z.literal("double_click"), x: coordinateSchema, y: coordinateSchema });
const moveSchema = z.strictObject({ kind: z.literal("move"), x: coordinateSchema, y: coordinateSchema });
const scrollSchema = z.strictObject({
  kind: z.literal("scroll"),
  x: coordinateSchema,
  y: coordinateSchema,
  dx: coordinateSchema,
  dy: coordinateSchema,
});
const typeSchema = z.strictObject({ kind: z.literal("type"), text: boundedText(MAX_TYPE_TEXT) });
const keypressSchema = z.strictObject({
  kind: z.literal("keypress"),
  keys: z.array(z.string().min(1).max(MAX_KEY_NAME)).min(1).max(MAX_KEYS),
});
const pointSchema = z.strictObject({ x: coordinateSchema, y: coordinateSchema });
const dragSchema = z.strictObject({ kind: z.literal("drag"), path: z.array(pointSchema).min(1).max(MAX_DRAG_POINTS) });
const waitSchema = z.strictObject({ kind: z.literal("wait"), ms: z.number().min(0).max(MAX_WAIT_MS).optional() });
const screenshotSchema = z.strictObject({ kind: z.literal("screenshot") });

/** The browser action union `BrowserAction`, discriminated on `kind`. */
export const browserActionSchema = z.discriminatedUnion("kind", [
  clickSchema,
  doubleClickSchema,
  moveSchema,
  scrollSchema,
  typeSchema,
  keypressSchema,
  dragSchema,
  waitSchema,
  screenshotSchema,
]);
/** One browser action. Coordinates are screen pixels of the observed frame; `wait.ms` in ms. */
export type BrowserAction = z.infer<typeof browserActionSchema>;
/** The action kinds of version 1. */
export type BrowserActionKind = BrowserAction["kind"];
/** All nine action kinds, in reference order. */
export const BROWSER_ACTION_KINDS: readonly BrowserActionKind[] = ["click", "double_click", "move", "scroll", "type", "keypress", "drag", "wait", "screenshot"];

/**
 * Observation as it travels on the wire: `png` is base64 of the PNG bytes. The base64
 * must be canonical (re-encodes to the identical string); the PNG admission (src/png) runs in
 * `decodeObservation`.
 */
export const wireObservationSchema = z.strictObject({
  png: z
    .string()
    .max(MAX_PNG_BASE64)
    .regex(/^[A-Za-z0-9+/]*={0,2}$/)
    .refine((s) => s.length % 4 === 0, { message: "base64 length must be a multiple of 4" }),
  stateSignature: boundedText(MAX_OBSERVATION_TEXT),
  url: boundedText(MAX_OBSERVATION_TEXT).optional(),
  title: boundedText(MAX_OBSERVATION_TEXT).optional(),
  text: boundedText(MAX_OBSERVATION_TEXT).optional(),
  scrollY: coordinateSchema.optional(),
});
/** Wire form of an observation. */
export type WireObservation = z.infer<typeof wireObservationSchema>;

/**
 * Observation in memory (`BrowserObservation`): `png` holds the admitted PNG bytes (≤ 8 MiB,
 * 8-bit non-interlaced, ≤ 4096 px per side); `stateSignature` is a coarse progress key
 * (≤ 64 KiB); `url`/`title`/`text` (≤ 64 KiB each) are runtime-only and never persisted;
 * `scrollY` in CSS px.
 */
export interface BrowserObservation {
  png: Uint8Array;
  stateSignature: string;
  url?: string;
  title?: string;
  text?: string;
  scrollY?: number;
}

/** The three operations of version 1. */
export const OPERATIONS = ["HELLO", "OBSERVE", "EXECUTE"] as const;
/** One operation. */
export type BrowserControlOperation = (typeof OPERATIONS)[number];

const seqSchema = z.number().int().min(1).max(Number.MAX_SAFE_INTEGER);
const common = {
  version: z.literal(1),
  identity: identitySchema,
  seq: seqSchema,
  requestId: tokenSchema,
};

/** Request envelope, discriminated on `operation`; `actionId`/`action` only on EXECUTE. */
export const requestSchema = z
  .discriminatedUnion("operation", [
    z.strictObject({ ...common, type: z.literal("request"), operation: z.literal("HELLO") }),
    z.strictObject({ ...common, type: z.literal("request"), operation: z.literal("OBSERVE") }),
    z.strictObject({
      ...common,
      type: z.literal("request"),
      operation: z.literal("EXECUTE"),
      actionId: tokenSchema,
      action: browserActionSchema,
    }),
  ])
  .superRefine((req, ctx) => {
    if (req.requestId !== `request-${req.seq}`) ctx.addIssue({ code: "custom", path: ["requestId"], message: "requestId must equal request-<seq>" });
    if (req.operation === "EXECUTE" && req.actionId !== `action-${req.seq}`)
      ctx.addIssue({ code: "custom", path: ["actionId"], message: "actionId must equal action-<seq>" });
  });
/** A parsed request. */
export type BrowserControlRequest = z.infer<typeof requestSchema>;

const errorSchema = z.strictObject({
  code: z.enum(BROWSER_CONTROL_ERROR_CODES),
  disposition: z.enum(ACTION_DISPOSITIONS),
});

const replyCommon = { ...common, type: z.literal("reply"), operation: z.enum(OPERATIONS), actionId: tokenSchema.optional() };

/**
 * Reply envelope, discriminated on `ok`. Cross-field rules: `actionId` present iff
 * EXECUTE (and equal to `action-<seq>`), `requestId` equal to `request-<seq>`, and on success
 * `observation` present iff OBSERVE. Error replies carry only `{code, disposition}`.
 */
export const replySchema = z
  .discriminatedUnion("ok", [
    z.strictObject({ ...replyCommon, ok: z.literal(true), observation: wireObservationSchema.optional() }),
    z.strictObject({ ...replyCommon, ok: z.literal(false), error: errorSchema }),
  ])
  .superRefine((rep, ctx) => {
    if (rep.requestId !== `request-${rep.seq}`) ctx.addIssue({ code: "custom", path: ["requestId"], message: "requestId must equal request-<seq>" });
    if (rep.operation === "EXECUTE") {
      if (rep.actionId !== `action-${rep.seq}`) ctx.addIssue({ code: "custom", path: ["actionId"], message: "actionId must equal action-<seq> on EXECUTE" });
    } else if (rep.actionId !== undefined) {
      ctx.addIssue({ code: "custom", path: ["actionId"], message: "actionId is only allowed on EXECUTE" });
    }
    if (rep.ok && (rep.observation !== undefined) !== (rep.operation === "OBSERVE"))
      ctx.addIssue({ code: "custom", path: ["observation"], message: "observation must be present exactly on OBSERVE success" });
  });
/** A parsed reply. */
export type BrowserControlReply = z.infer<typeof replySchema>;
/** Any message of version 1. */
export type BrowserControlMessage = BrowserControlRequest | BrowserControlReply;

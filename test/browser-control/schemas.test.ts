import { describe, expect, test } from "bun:test";
import {
  BROWSER_ACTION_KINDS,
  BROWSER_CONTROL_ERROR_CODES,
  BrowserControlError,
  browserActionSchema,
  identitySchema,
  isBrowserControlError,
  MAX_COORDINATE,
  MAX_DRAG_POINTS,
  MAX_KEY_NAME,
  MAX_KEYS,
  MAX_OBSERVATION_TEXT,
  MAX_PNG_BASE64,
  MAX_TYPE_TEXT,
  MAX_WAIT_MS,
  replySchema,
  requestSchema,
  wireObservationSchema,
} from "../../src/browser-control/index.ts";
import { IDENTITY } from "./support.ts";

const ok = (a: unknown) => browserActionSchema.safeParse(a).success;

describe("BrowserAction: every kind", () => {
  const samples: Record<string, object> = {
    click: { kind: "click", x: 1.5, y: 2, button: "right" },
    double_click: { kind: "double_click", x: 0, y: 0 },
    move: { kind: "move", x: -3, y: 4.25 },
    scroll: { kind: "scroll", x: 10, y: 10, dx: 0, dy: -240 },
    type: { kind: "type", text: "hello" },
    keypress: { kind: "keypress", keys: ["CTRL", "L"] },
    drag: {
      kind: "drag",
      path: [
        { x: 1, y: 1 },
        { x: 2, y: 3 },
      ],
    },
    wait: { kind: "wait", ms: 12.5 },
    screenshot: { kind: "screenshot" },
  };
  test("the nine kinds are exactly the v1 set", () => {
    expect([...BROWSER_ACTION_KINDS].sort() as string[]).toEqual(Object.keys(samples).sort());
  });
  test.each(Object.entries(samples) as Array<[string, object]>)("%s parses and keeps its values (fractions preserved)", (_k, a) => {
    const r = browserActionSchema.safeParse(a);
    expect(r.success).toBe(true);
    expect(r.data).toEqual(a as never);
  });
  test.each(Object.entries(samples) as Array<[string, object]>)("%s with an unknown field is rejected", (_k, a) => {
    expect(ok({ ...(a as object), extra: 1 })).toBe(false);
  });
  test("optional fields: click without button, wait without ms", () => {
    expect(browserActionSchema.parse({ kind: "click", x: 1, y: 1 })).toEqual({ kind: "click", x: 1, y: 1 });
    expect(browserActionSchema.parse({ kind: "wait" })).toEqual({ kind: "wait" });
    expect(ok({ kind: "click", x: 1, y: 1, button: "back" })).toBe(false);
  });
  test("v1 has no speak action and no heldKeys", () => {
    expect(ok({ kind: "speak", text: "hi" })).toBe(false);
    expect(ok({ kind: "click", x: 1, y: 1, heldKeys: ["SHIFT"] })).toBe(false);
    expect(ok({ kind: "drag", path: [{ x: 1, y: 1 }], heldKeys: ["CTRL"] })).toBe(false);
  });
  test("unknown kind, missing fields, wrong types", () => {
    expect(ok({ kind: "navigate", url: "x" })).toBe(false);
    expect(ok({ kind: "click", x: 1 })).toBe(false);
    expect(ok({ kind: "click", x: "1", y: 1 })).toBe(false);
    expect(ok({ x: 1, y: 1 })).toBe(false);
    expect(ok(null)).toBe(false);
    expect(ok({ kind: "drag", path: [{ x: 1, y: 1, z: 2 }] })).toBe(false);
  });
});

describe("BrowserAction: every bound at the limit and one past", () => {
  const coordCases = (make: (v: number) => unknown) => {
    expect(ok(make(MAX_COORDINATE))).toBe(true);
    expect(ok(make(-MAX_COORDINATE))).toBe(true);
    expect(ok(make(MAX_COORDINATE + 1))).toBe(false);
    expect(ok(make(-MAX_COORDINATE - 1))).toBe(false);
    expect(ok(make(MAX_COORDINATE + 0.001))).toBe(false);
    expect(ok(make(Number.NaN))).toBe(false);
    expect(ok(make(Number.POSITIVE_INFINITY))).toBe(false);
  };
  test("coordinates ±1e6 on every coordinate field", () => {
    coordCases((v) => ({ kind: "click", x: v, y: 0 }));
    coordCases((v) => ({ kind: "click", x: 0, y: v }));
    coordCases((v) => ({ kind: "double_click", x: v, y: 0 }));
    coordCases((v) => ({ kind: "move", x: 0, y: v }));
    coordCases((v) => ({ kind: "scroll", x: v, y: 0, dx: 0, dy: 0 }));
    coordCases((v) => ({ kind: "scroll", x: 0, y: 0, dx: v, dy: 0 }));
    coordCases((v) => ({ kind: "scroll", x: 0, y: 0, dx: 0, dy: v }));
    coordCases((v) => ({ kind: "drag", path: [{ x: v, y: 0 }] }));
    coordCases((v) => ({
      kind: "drag",
      path: [
        { x: 0, y: 0 },
        { x: 0, y: v },
      ],
    }));
  });
  test("type text: 64 KiB as string length and as UTF-8 bytes", () => {
    expect(ok({ kind: "type", text: "a".repeat(MAX_TYPE_TEXT) })).toBe(true);
    expect(ok({ kind: "type", text: "a".repeat(MAX_TYPE_TEXT + 1) })).toBe(false);
    // 2-byte characters: string length is half the byte length.
    expect(ok({ kind: "type", text: "é".repeat(MAX_TYPE_TEXT / 2) })).toBe(true);
    expect(ok({ kind: "type", text: `${"é".repeat(MAX_TYPE_TEXT / 2)}a` })).toBe(false);
    expect(ok({ kind: "type", text: "" })).toBe(true);
  });
  test("keypress: 1–16 keys of 1–64 chars", () => {
    expect(ok({ kind: "keypress", keys: Array(MAX_KEYS).fill("A") })).toBe(true);
    expect(ok({ kind: "keypress", keys: Array(MAX_KEYS + 1).fill("A") })).toBe(false);
    expect(ok({ kind: "keypress", keys: [] })).toBe(false);
    expect(ok({ kind: "keypress", keys: ["k".repeat(MAX_KEY_NAME)] })).toBe(true);
    expect(ok({ kind: "keypress", keys: ["k".repeat(MAX_KEY_NAME + 1)] })).toBe(false);
    expect(ok({ kind: "keypress", keys: [""] })).toBe(false);
  });
  test("drag: 1–1024 points", () => {
    const pts = (n: number) => Array.from({ length: n }, (_, i) => ({ x: i, y: i }));
    expect(ok({ kind: "drag", path: pts(1) })).toBe(true);
    expect(ok({ kind: "drag", path: pts(MAX_DRAG_POINTS) })).toBe(true);
    expect(ok({ kind: "drag", path: pts(MAX_DRAG_POINTS + 1) })).toBe(false);
    expect(ok({ kind: "drag", path: [] })).toBe(false);
  });
  test("wait: 0–30,000 ms, fractions kept", () => {
    expect(ok({ kind: "wait", ms: 0 })).toBe(true);
    expect(ok({ kind: "wait", ms: MAX_WAIT_MS })).toBe(true);
    expect(ok({ kind: "wait", ms: MAX_WAIT_MS + 0.5 })).toBe(false);
    expect(ok({ kind: "wait", ms: -0.5 })).toBe(false);
    expect(browserActionSchema.parse({ kind: "wait", ms: 0.25 })).toEqual({ kind: "wait", ms: 0.25 });
  });
});

describe("identity", () => {
  test("tokens of 1–128 chars from [A-Za-z0-9._-], strict", () => {
    expect(identitySchema.safeParse(IDENTITY).success).toBe(true);
    const t = (s: string) => identitySchema.safeParse({ ...IDENTITY, challenge: s }).success;
    expect(t("a".repeat(128))).toBe(true);
    expect(t("a".repeat(129))).toBe(false);
    expect(t("")).toBe(false);
    expect(t("a b")).toBe(false);
    expect(t("a/b")).toBe(false);
    expect(identitySchema.safeParse({ ...IDENTITY, extra: "x" }).success).toBe(false);
  });
});

describe("observation wire schema", () => {
  const base = { png: "AAAA", stateSignature: "s" };
  test("bounds", () => {
    expect(wireObservationSchema.safeParse(base).success).toBe(true);
    expect(wireObservationSchema.safeParse({ ...base, png: "AAA" }).success).toBe(false);
    expect(wireObservationSchema.safeParse({ ...base, png: "AA-A" }).success).toBe(false);
    expect(wireObservationSchema.safeParse({ ...base, png: "A".repeat(MAX_PNG_BASE64) }).success).toBe(true);
    expect(wireObservationSchema.safeParse({ ...base, png: "A".repeat(MAX_PNG_BASE64 + 4) }).success).toBe(false);
    for (const f of ["stateSignature", "url", "title", "text"]) {
      expect(wireObservationSchema.safeParse({ ...base, [f]: "x".repeat(MAX_OBSERVATION_TEXT) }).success).toBe(true);
      expect(wireObservationSchema.safeParse({ ...base, [f]: "x".repeat(MAX_OBSERVATION_TEXT + 1) }).success).toBe(false);
    }
    expect(wireObservationSchema.safeParse({ ...base, scrollY: 1e6 }).success).toBe(true);
    expect(wireObservationSchema.safeParse({ ...base, scrollY: 1e6 + 1 }).success).toBe(false);
    expect(wireObservationSchema.safeParse({ ...base, appState: {} }).success).toBe(false);
    expect(wireObservationSchema.safeParse({ png: "AAAA" }).success).toBe(false);
  });
});

describe("envelopes", () => {
  const req = (o: Record<string, unknown>) =>
    requestSchema.safeParse({ version: 1, type: "request", identity: IDENTITY, seq: 3, requestId: "request-3", operation: "OBSERVE", ...o }).success;
  test("requests: correlation ids, version, operations, actionId only on EXECUTE", () => {
    expect(req({})).toBe(true);
    expect(req({ requestId: "request-4" })).toBe(false);
    expect(req({ version: 2 })).toBe(false);
    expect(req({ operation: "FINISH_RECORDING" })).toBe(false);
    expect(req({ actionId: "action-3" })).toBe(false);
    expect(req({ extra: true })).toBe(false);
    expect(req({ seq: 0, requestId: "request-0" })).toBe(false);
    expect(req({ seq: 1.5, requestId: "request-1.5" })).toBe(false);
    expect(req({ seq: Number.MAX_SAFE_INTEGER, requestId: `request-${Number.MAX_SAFE_INTEGER}` })).toBe(true);
    expect(req({ seq: Number.MAX_SAFE_INTEGER + 1, requestId: `request-${Number.MAX_SAFE_INTEGER + 1}` })).toBe(false);
    const exec = { operation: "EXECUTE", actionId: "action-3", action: { kind: "screenshot" } };
    expect(req(exec)).toBe(true);
    expect(req({ ...exec, actionId: "action-2" })).toBe(false);
    expect(req({ ...exec, actionId: undefined })).toBe(false);
    expect(req({ ...exec, action: { kind: "speak", text: "x" } })).toBe(false);
    expect(req({ type: "reply" })).toBe(false);
  });
  const rep = (o: Record<string, unknown>) =>
    replySchema.safeParse({ version: 1, type: "reply", identity: IDENTITY, seq: 2, requestId: "request-2", operation: "HELLO", ok: true, ...o }).success;
  test("replies: cross-field rules and the closed error vocabulary", () => {
    expect(rep({})).toBe(true);
    expect(rep({ actionId: "action-2" })).toBe(false);
    expect(rep({ operation: "EXECUTE" })).toBe(false);
    expect(rep({ operation: "EXECUTE", actionId: "action-2" })).toBe(true);
    expect(rep({ operation: "OBSERVE" })).toBe(false);
    expect(rep({ operation: "OBSERVE", observation: { png: "AAAA", stateSignature: "s" } })).toBe(true);
    expect(rep({ observation: { png: "AAAA", stateSignature: "s" } })).toBe(false);
    expect(rep({ ok: false, error: { code: "executor_busy", disposition: "not_dispatched" } })).toBe(true);
    expect(rep({ ok: false, error: { code: "executor_busy", disposition: "not_dispatched", message: "prose" } })).toBe(false);
    expect(rep({ ok: false, error: { code: "other", disposition: "not_dispatched" } })).toBe(false);
    expect(rep({ ok: false, error: { code: "executor_busy", disposition: "maybe" } })).toBe(false);
    expect(rep({ ok: false })).toBe(false);
  });
});

describe("BrowserControlError", () => {
  test("closed lists, HUMANISH code, look-alikes are not genuine", () => {
    for (const c of BROWSER_CONTROL_ERROR_CODES) {
      const e = new BrowserControlError(c, "outcome_uncertain");
      expect(e.code).toBe(`HUMANISH_BROWSER_CONTROL_${c.toUpperCase()}`);
      expect(e.next).toBeString();
      expect(isBrowserControlError(e)).toBe(true);
    }
    expect(() => new BrowserControlError("nope" as never, "not_dispatched")).toThrow(TypeError);
    expect(() => new BrowserControlError("cancelled", "maybe" as never)).toThrow(TypeError);
    const lookAlike = Object.assign(Object.create(BrowserControlError.prototype), { errorCode: "cancelled", disposition: "not_dispatched" });
    expect(isBrowserControlError(lookAlike)).toBe(false);
  });
});

/**
 * The pure parts of the computer-use participant: action mapping onto the guest's closed key
 * table and the frame, the wire (tool by model, replay, call/output pairing), the backstop,
 * declared outcomes, closing reports and the unpriced-model preflight.
 */
import { describe, expect, test } from "bun:test";
import {
  assertPricedForCaps,
  Conversation,
  checkCallPairs,
  declaredOutcome,
  foldTurn,
  guestKeyName,
  mapAction,
  mapBatch,
  parseClosingReport,
  parseResponse,
  startBackstop,
  toolFor,
} from "../../../src/actors/computer-use/index.ts";
import { isHumanishError } from "../../../src/errors.ts";
import { admissionEstimate } from "../../../src/models/index.ts";

const F = { width: 1440, height: 950 };

describe("actions", () => {
  test("CUA key names map onto the guest table; unknown names are rejected with a hint", () => {
    for (const k of ["CTRL", "ArrowLeft", "PAGEDOWN", "/", "ENTER", "esc", "OPTION", "PGDN", "a", "F5"]) expect(guestKeyName(k)).toBeDefined();
    const r = mapAction({ type: "keypress", keys: ["CTRL", "HYPER"] }, F);
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.refusal).toBe("rejected");
      expect(r.hint).toContain("HYPER");
    }
    expect(mapAction({ type: "keypress", keys: ["CTRL", "L"] }, F)).toEqual({
      ok: true,
      action: { kind: "keypress", keys: ["CTRL", "L"] },
      label: "keypress CTRL+L",
    });
  });

  test("pointer actions: buttons, back/forward, off-frame points, held keys", () => {
    expect(mapAction({ type: "click", x: 10, y: 20, button: "wheel" }, F)).toMatchObject({
      ok: true,
      action: { kind: "click", x: 10, y: 20, button: "middle" },
    });
    expect(mapAction({ type: "click", x: 10, y: 20, button: "back" }, F)).toMatchObject({ ok: true, action: { kind: "keypress", keys: ["ALT", "ARROWLEFT"] } });
    expect(mapAction({ type: "click", x: 1440, y: 20 }, F)).toMatchObject({ ok: false, refusal: "rejected" });
    expect(
      mapAction(
        {
          type: "drag",
          path: [
            { x: 1, y: 1 },
            { x: -1, y: 1 },
          ],
        },
        F,
      ),
    ).toMatchObject({ ok: false, refusal: "rejected" });
    expect(mapAction({ type: "click", x: 1, y: 1, keys: ["SHIFT"] }, F)).toMatchObject({ ok: false, refusal: "rejected" });
    expect(mapAction({ type: "scroll", x: 5, y: 5, scroll_y: 240 }, F)).toMatchObject({ ok: true, action: { kind: "scroll", dx: 0, dy: 240 } });
  });

  test("malformed: unknown type, missing coordinates, empty text, too many keys, oversized batch", () => {
    for (const a of [{ type: "teleport" }, { type: "click" }, { type: "type", text: "" }, { type: "keypress", keys: Array(17).fill("a") }, "x", { x: 1 }])
      expect(mapAction(a, F)).toMatchObject({ ok: false, refusal: "malformed" });
    const big = mapBatch(Array(33).fill({ type: "wait" }), F);
    expect(big).toHaveLength(1);
    expect(big[0]).toMatchObject({ ok: false, refusal: "malformed" });
  });

  test("labels never carry typed text", () => {
    const r = mapAction({ type: "type", text: "hunter2 secret" }, F);
    expect(r.label).toBe("type 14 chars");
  });
});

describe("wire", () => {
  test("the preview tool only for computer-use-preview", () => {
    expect(toolFor("computer-use-preview")).toBe("computer_use_preview");
    expect(toolFor("computer-use-preview-2025-03-11")).toBe("computer_use_preview");
    expect(toolFor("gpt-5.1")).toBe("computer");
  });

  test("both `actions` and the singular `action` are read; safety checks kept", () => {
    const p = parseResponse({
      id: "r1",
      status: "completed",
      model: "gpt-5.1",
      output: [
        { type: "computer_call", call_id: "a", actions: [{ type: "wait" }, { type: "screenshot" }], pending_safety_checks: [] },
        { type: "computer_call", call_id: "b", action: { type: "wait" }, pending_safety_checks: [{ id: "s", code: "c", message: "m" }] },
        { type: "computer_call", actions: [] },
      ],
      usage: { input_tokens: 10, output_tokens: 2 },
    });
    expect(p.calls.map((c) => [c.callId, c.actions.length, c.safetyChecks.length])).toEqual([
      ["a", 2, 0],
      ["b", 1, 1],
    ]);
    expect(p.problems).toEqual(["a computer_call has no call_id"]);
    expect(p.usage?.input).toBe(10);
  });

  test("a call without its output (or an output without its call) is never sent", () => {
    const c = new Conversation({ model: "gpt-5.1", instructions: "x", store: false, display: { width: 2, height: 2 } });
    c.addResponse(parseResponse({ id: "r", status: "completed", output: [{ type: "computer_call", call_id: "c1", actions: [] }] }));
    let code = "";
    try {
      c.body();
    } catch (e) {
      code = isHumanishError(e) ? e.code : "other";
    }
    expect(code).toBe("HUMANISH_CUA_CALL_OUTPUT_MISMATCH");
    expect(() => checkCallPairs([{ type: "computer_call_output", call_id: "zz" }])).toThrow("names no earlier computer_call");
    expect(() =>
      checkCallPairs([
        { type: "computer_call", call_id: "a" },
        { type: "computer_call_output", call_id: "a" },
        { type: "computer_call_output", call_id: "a" },
      ]),
    ).toThrow("repeats an output");
  });

  test("a screenshot in a call output is priced as an image, not as base64 text", () => {
    const png = Buffer.alloc(4096);
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]).copy(png);
    png.writeUInt32BE(1440, 16);
    png.writeUInt32BE(950, 20);
    const url = `data:image/png;base64,${png.toString("base64")}`;
    const e = admissionEstimate({
      model: "gpt-5.1",
      input: [{ type: "computer_call_output", call_id: "a", output: { type: "computer_screenshot", image_url: url } }],
    });
    expect(e.imageTokens).toBe(85 + 170 * 6);
    expect(e.inputTokens).toBeLessThan(100);
  });
});

describe("backstop, outcomes, preflight", () => {
  test("repeating the same gesture on an unchanged frame trips no-progress; a change resets it", () => {
    let s = startBackstop("k0");
    const act = [{ kind: "click" as const, x: 10, y: 10 }];
    const limits = { idleSteps: 24, noProgressSteps: 3 };
    let tripped: string | null = null;
    for (let i = 0; i < 6 && !tripped; i++) {
      const f = foldTurn(s, act, "k0", limits);
      s = f.state;
      tripped = f.tripped;
    }
    expect(tripped).toBe("no_progress");
    const reset = foldTurn(s, act, "k1", limits);
    expect(reset.state.noProgress).toBe(0);
  });

  test("idle turns trip the idle streak", () => {
    let s = startBackstop("k");
    let f = foldTurn(s, [{ kind: "wait" }], "k", { idleSteps: 2, noProgressSteps: 99 });
    s = f.state;
    f = foldTurn(s, [{ kind: "screenshot" }], "k", { idleSteps: 2, noProgressSteps: 99 });
    expect(f.tripped).toBe("idle");
  });

  test("declared outcomes and closing reports", () => {
    expect(declaredOutcome("\nI reached the goal.")).toBe("reached");
    expect(declaredOutcome("I did not reach the goal: the button is missing")).toBe("not_reached");
    expect(declaredOutcome("Blocked by a login wall")).toBe("blocked");
    expect(declaredOutcome("hello")).toBeUndefined();
    expect(parseClosingReport('{"summary":"ok","frictionReports":[]}')).toEqual({ summary: "ok", frictionReports: [] });
    expect(typeof parseClosingReport('{"summary":"ok","frictionReports":[],"x":1}')).toBe("string");
    expect(typeof parseClosingReport('{"summary":" ","frictionReports":[]}')).toBe("string");
  });

  test("an unpriced model with a positive maxUsd is refused at preflight, named", () => {
    expect(() => assertPricedForCaps("my-own-cua", { maxUsd: 1 })).toThrow("my-own-cua");
    expect(() => assertPricedForCaps("my-own-cua", { maxUsd: 0 })).not.toThrow();
    expect(() => assertPricedForCaps("gpt-5.1", { maxUsd: 1 })).not.toThrow();
  });
});

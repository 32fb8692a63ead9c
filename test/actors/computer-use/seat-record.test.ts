/**
 * The record every model-driven browser seat keeps alike (the computer-use loop and the
 * local-agent seat): typed text never reaches an action item, time stops depend on whether
 * anything material was dispatched, and a declared success passes only when every hidden check does.
 */
import { describe, expect, test } from "bun:test";
import { harnessStop, hiddenCheckVerdict, recordedAction, SeatRecord, timeStop } from "../../../src/actors/computer-use/seat-record.ts";
import { observationRecord } from "../../../src/actors/scripted-browser/index.ts";

const PNG = new Uint8Array([137, 80, 78, 71]);
const TASKS = [{ id: "t1", goal: "see done", check: { textIncludes: ["done"] } }];

describe("the seat record", () => {
  test("an action is recorded without its typed text; a click carries its point", () => {
    expect(recordedAction({ kind: "type", text: "hunter2 secret" })).toEqual({ type: "type", chars: 14 });
    expect(recordedAction({ kind: "scroll", x: 5, y: 6, dx: 0, dy: 120 })).toEqual({ type: "scroll", x: 5, y: 6, dx: 0, dy: 120 });
    const r = new SeatRecord({ timeoutMs: 60_000 }, "HUMANISH_TEST_ABORTED");
    r.actionItem("dispatched", "click", { kind: "click", x: 3, y: 4 }, "2026-01-01T00:00:00.000Z");
    r.actionItem("rejected/not_dispatched", "type 7 chars");
    expect(r.items[0]).toEqual({
      id: "ui_action-001",
      kind: "ui_action",
      lifecycle: "completed",
      status: "dispatched",
      title: "click",
      at: "2026-01-01T00:00:00.000Z",
      action: { type: "click", x: 3, y: 4 },
      coord: { x: 3, y: 4 },
    });
    expect(r.items[1]).not.toHaveProperty("action");
    expect(JSON.stringify(r.items)).not.toContain("hunter2");
  });

  test("model text is scrubbed and bounded; observations keep url and text only when present", () => {
    const r = new SeatRecord({ timeoutMs: 60_000, scrubText: (s) => s.replaceAll("sk-live", "[redacted]") }, "HUMANISH_TEST_ABORTED");
    expect(r.scrub("key sk-live here")).toBe("key [redacted] here");
    expect(r.scrub("x".repeat(5_000))).toHaveLength(4_001);
    expect(observationRecord({ png: PNG, stateSignature: "s1" }, "t")).toEqual({ at: "t", stateSignature: "s1" });
    r.recordObservation({ png: PNG, stateSignature: "s2", url: "http://127.0.0.1:1/", text: "done" });
    r.keep("turn-00-start", { png: PNG, stateSignature: "s2" });
    expect(r.observations[0]).toMatchObject({ stateSignature: "s2", url: "http://127.0.0.1:1/", text: "done" });
    expect(r.screenshots.map((s) => s.name)).toEqual(["turn-00-start"]);
    expect(r.items.map((i) => i.id)).toEqual(["screenshot-001"]);
  });

  test("a time stop is timed_out before any material action and budget_reached after one; the caller's stop is a harness stop", () => {
    expect(timeStop(0, 500, "between turns")).toMatchObject({ status: "timed_out", completionReason: "timed_out", stopCause: "time_limit" });
    expect(timeStop(1, 500, "between turns")).toMatchObject({ status: "incomplete", completionReason: "budget_reached", stopCause: "time_limit" });
    const caller = new AbortController();
    const r = new SeatRecord({ timeoutMs: 60_000, signal: caller.signal }, "HUMANISH_TEST_ABORTED");
    expect(r.outsideStop("between turns")).toBeUndefined();
    caller.abort();
    expect(r.outsideStop("between turns")).toEqual(harnessStop("HUMANISH_TEST_ABORTED", "the seat was stopped between turns", "harness_aborted"));
    const late = new SeatRecord({ timeoutMs: 0 }, "HUMANISH_TEST_ABORTED");
    expect(late.outsideStop("between turns")?.completionReason).toBe("timed_out");
  });

  test("a declared success passes only when every hidden check does", () => {
    const passed = { status: "passed", completionReason: "goal_satisfied", reason: "said so" } as const;
    expect(hiddenCheckVerdict(passed, { total: 2, completed: 1 } as never)).toEqual({
      status: "incomplete",
      completionReason: "turn_completed",
      reason: "said so; 1 of 2 hidden check(s) passed",
    });
    const r = new SeatRecord({ timeoutMs: 60_000 }, "HUMANISH_TEST_ABORTED");
    r.recordObservation({ png: PNG, stateSignature: "s", url: "http://127.0.0.1:1/", text: "not yet" });
    expect(r.outcomeCore(passed, TASKS, "http://127.0.0.1:1").core.status).toBe("incomplete");
    r.recordObservation({ png: PNG, stateSignature: "s", url: "http://127.0.0.1:1/", text: "done" });
    const { core, funnel } = r.outcomeCore(passed, TASKS, "http://127.0.0.1:1");
    expect(core.status).toBe("passed");
    expect(funnel?.completed).toBe(1);
    expect(r.outcomeCore(harnessStop("HUMANISH_X", "broke"), undefined, "http://127.0.0.1:1")).toEqual({
      core: expect.objectContaining({ status: "failed", harnessError: { code: "HUMANISH_X", message: "broke" } }),
    });
  });
});

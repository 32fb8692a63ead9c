/**
 * The browser seat's evidence decisions both browser lanes share: bundle paths, the hidden
 * checks folded into the participant's verdict, unchecked tasks, geometry and which failure a
 * seat reports. Pure functions; the lanes' end-to-end tests cover the writes.
 */
import { describe, expect, test } from "bun:test";
import type { CleanupProof, TaskResult } from "../../src/bundle/schemas.ts";
import {
  browserSeatFailure,
  browserSeatGeometry,
  browserSeatPaths,
  browserSeatVerdict,
  checkBrowserTasks,
  uncheckedTasks,
} from "../../src/study/browser-seat.ts";

const task = (passed: boolean): TaskResult => ({ id: "t", goal: "g", participantId: "p1", status: passed ? "passed" : "failed", passed, detail: "" });
const finished = { status: "passed" as const, completionReason: "turn_completed" as const, reason: "done" };
const CHECK_FAILED = "a hidden check failed";

describe("browser seat evidence", () => {
  test("paths: a one-seat study keeps the root layout, a many-seat one a folder per seat", () => {
    const one = browserSeatPaths(1, "p1");
    expect([one.folder, one.trace, one.ledger, one.shot("01-x")]).toEqual([null, "actors/p1.json", "model-ledger-p1.json", "screenshots/p1-01-x.png"]);
    const many = browserSeatPaths(2, "p1");
    expect([many.folder, many.trace, many.ledger, many.shot("01-x")]).toEqual([
      "seats/p1/",
      "seats/p1/actor.json",
      "seats/p1/model-ledger.json",
      "screenshots/p1/01-x.png",
    ]);
  });

  test("verdict: the hidden checks decide a finished participant; a seat that never ran failed", () => {
    const end = { interrupted: false };
    expect(browserSeatVerdict(finished, [task(true)], end, CHECK_FAILED)).toEqual({ status: "passed", completionReason: "goal_satisfied", reason: "done" });
    expect(browserSeatVerdict(finished, [], end, CHECK_FAILED).status).toBe("passed");
    expect(browserSeatVerdict(finished, [task(true), task(false)], end, CHECK_FAILED)).toEqual({
      status: "incomplete",
      completionReason: "turn_completed",
      reason: CHECK_FAILED,
    });
    const timedOut = { status: "timed_out" as const, completionReason: "timed_out" as const, reason: "budget" };
    expect(browserSeatVerdict(timedOut, [task(true)], end, CHECK_FAILED)).toEqual({ status: "timed_out", completionReason: "timed_out", reason: "budget" });
    expect(browserSeatVerdict(undefined, [], { interrupted: true }, CHECK_FAILED)).toEqual({
      status: "failed",
      completionReason: "interrupted",
      reason: "interrupted before the participant ran",
    });
    expect(browserSeatVerdict(undefined, [], { interrupted: false, failedWith: { code: "HUMANISH_X", message: "m" } }, CHECK_FAILED)).toEqual({
      status: "failed",
      completionReason: "harness_error",
      reason: "HUMANISH_X: m",
    });
  });

  test("tasks: no observation means not run; unchecked tasks say why", () => {
    const declared = [{ id: "t", goal: "g", check: { textIncludes: ["hello"] } }];
    expect(checkBrowserTasks(declared, "p1", undefined, "http://127.0.0.1:1")[0]).toMatchObject({ status: "not_run", detail: "no observation was made" });
    expect(uncheckedTasks(declared, "p1", { interrupted: true })[0]!.detail).toBe("not checked: interrupted");
    expect(uncheckedTasks(declared, "p1", { interrupted: false, failedWith: { code: "HUMANISH_X", message: "m" } })[0]!.detail).toBe("not checked: HUMANISH_X");
  });

  test("geometry: verified and window sizes only once a desktop ran; a floored width warns", () => {
    const device = { name: "mobile" as const, preset: { width: 390, height: 844, deviceScaleFactor: 3 } };
    const screen = { width: 500, height: 844, floored: true };
    const ran = browserSeatGeometry(device, screen, true, "xvfb+admitted-frame");
    expect(ran.screen).toEqual({ requested: { width: 390, height: 844 }, verified: { width: 500, height: 844 }, source: "xvfb+admitted-frame" });
    expect(ran.warnings[0]).toContain("floored from 390 to 500");
    const never = browserSeatGeometry(device, screen, false, "xvfb+admitted-frame");
    expect(never.screen).toEqual({ requested: { width: 390, height: 844 } });
    expect(never.browserWindow).toBeUndefined();
  });

  test("failure: an unproven release first, then a harness error, then write errors, then the seat's own", () => {
    const bad: CleanupProof = { id: "c1", provider: "docker", kind: "desktop", participantId: "p1", outcome: "unconfirmed", reason: "timeout", at: "x" };
    const text = { what: "a desktop release", next: (ids: string) => `remove ${ids}` };
    const redact = (s: string) => s.replaceAll("secret", "[redacted]");
    const all = {
      unprovenText: text,
      harnessError: { code: "HUMANISH_H", message: "secret" },
      writeErrors: ["w"],
      failedWith: { code: "HUMANISH_F", message: "f" },
      redact,
    };
    expect(browserSeatFailure({ ...all, unproven: [bad] })).toEqual({
      code: "HUMANISH_BROWSER_LAB_CLEANUP_UNPROVEN",
      message: "a desktop release was not confirmed: c1 timeout",
      next: "remove c1",
    });
    expect(browserSeatFailure({ ...all, unproven: [] })).toMatchObject({ code: "HUMANISH_H", message: "[redacted]" });
    expect(browserSeatFailure({ ...all, unproven: [], harnessError: undefined })?.code).toBe("HUMANISH_BUNDLE_WRITE_FAILED");
    expect(browserSeatFailure({ ...all, unproven: [], harnessError: undefined, writeErrors: [] })?.code).toBe("HUMANISH_F");
    expect(browserSeatFailure({ ...all, unproven: [], harnessError: undefined, writeErrors: [], failedWith: undefined })).toBeUndefined();
  });
});

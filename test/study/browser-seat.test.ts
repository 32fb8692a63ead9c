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
    expect(browserSeatVerdict(finished, [task(true)], end, CHECK_FAILED)).toEqual({
      status: "passed",
      completionReason: "goal_satisfied",
      reason: "1 of 1 hidden check(s) passed",
      claimed: "none",
      goalCheck: { by: "tasks", reached: true, detail: "1 of 1 hidden check(s) passed" },
    });
    // Without tasks (and without stopWhen) no seat can reach the goal, however its steps went.
    expect(browserSeatVerdict(finished, [], end, CHECK_FAILED)).toMatchObject({
      status: "incomplete",
      completionReason: "turn_completed",
      goalCheck: { by: "none", reached: false },
    });
    expect(browserSeatVerdict(finished, [task(true), task(false)], end, CHECK_FAILED)).toMatchObject({
      status: "incomplete",
      completionReason: "turn_completed",
      reason: CHECK_FAILED,
      claimed: "none",
    });
    // A participant stopped by its time budget is that finding, even when its checks all passed.
    const timedOut = { status: "timed_out" as const, completionReason: "timed_out" as const, reason: "budget" };
    expect(browserSeatVerdict(timedOut, [task(true)], end, CHECK_FAILED)).toMatchObject({
      status: "timed_out",
      completionReason: "timed_out",
      reason: "budget",
    });
    expect(browserSeatVerdict(timedOut, [task(false)], end, CHECK_FAILED)).toMatchObject({
      status: "timed_out",
      completionReason: "timed_out",
      reason: "budget",
    });
    expect(browserSeatVerdict(undefined, [], { interrupted: true }, CHECK_FAILED)).toMatchObject({
      status: "failed",
      completionReason: "interrupted",
      reason: "interrupted before the participant ran",
      claimed: "none",
    });
    expect(browserSeatVerdict(undefined, [], { interrupted: false, failedWith: { code: "HUMANISH_X", message: "m" } }, CHECK_FAILED)).toMatchObject({
      status: "failed",
      completionReason: "harness_error",
      reason: "HUMANISH_X: m",
    });
  });

  test("verdict: a model's claim is kept, never counted — reached while checks fail is a contradiction, blocked counts as blocked", () => {
    const end = { interrupted: false };
    const ended = (declaredOutcome: "reached" | "blocked" | "not_reached") => ({
      status: "passed" as const,
      completionReason: "goal_satisfied" as const,
      reason: `the model ended its session declaring ${declaredOutcome}`,
      declaredOutcome,
    });
    const reached = browserSeatVerdict(ended("reached"), [task(false)], end, CHECK_FAILED);
    expect(reached).toMatchObject({ status: "incomplete", completionReason: "turn_completed", claimed: "passed" });
    expect(reached.reason).toContain("participant believed it succeeded; the checks say it did not");
    expect(browserSeatVerdict(ended("reached"), [task(true)], end, CHECK_FAILED)).toMatchObject({ status: "passed", claimed: "passed" });
    expect(browserSeatVerdict(ended("blocked"), [task(false)], end, CHECK_FAILED)).toMatchObject({
      status: "blocked",
      completionReason: "blocked_approval",
      claimed: "blocked",
    });
    // A local agent's final answer is read the same way; without tasks a claim of success reaches nothing.
    const answered = {
      status: "passed" as const,
      completionReason: "goal_satisfied" as const,
      reason: "declaring reached",
      answer: { outcome: "reached" as const },
    };
    expect(browserSeatVerdict(answered, [], end, CHECK_FAILED)).toMatchObject({ status: "incomplete", claimed: "passed", goalCheck: { by: "none" } });
  });

  test("verdict: in a lab without tasks, a stopWhen rule that matched an observation of the app is the check", () => {
    const end = { interrupted: false };
    const origin = "http://127.0.0.1:9";
    const obs = (url: string, text: string) => ({ at: new Date(0).toISOString(), url, text, stateSignature: text });
    const rules = { rules: { any: [{ id: "done", textIncludes: ["All done"] }] }, origin };
    const stopped = { status: "passed" as const, completionReason: "goal_satisfied" as const, reason: "a stopWhen rule matched after turn 2" };
    const seen = browserSeatVerdict({ ...stopped, observations: [obs(`${origin}/`, "start"), obs(`${origin}/`, "All done")] }, [], end, CHECK_FAILED, rules);
    expect(seen).toMatchObject({ status: "passed", goalCheck: { by: "stop_when", reached: true, detail: "stopWhen rule done matched observation 2 of 2" } });
    // The same text on another origin is no observation of the app.
    const elsewhere = browserSeatVerdict({ ...stopped, observations: [obs("http://127.0.0.2:9/", "All done")] }, [], end, CHECK_FAILED, rules);
    expect(elsewhere).toMatchObject({ status: "incomplete", goalCheck: { by: "stop_when", reached: false } });
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

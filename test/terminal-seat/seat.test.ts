/**
 * What every terminal lane's seat shares: its base (recording, phases, brief, the study preamble
 * in a one-seat study), the logged release, and the study errors of a participant that timed
 * out, a runtime that failed, or a step that threw.
 */
import { afterAll, describe, expect, test } from "bun:test";
import type { TerminalParticipantOutcome } from "../../src/actors/terminal-participant/participant.ts";
import type { CleanupProof } from "../../src/bundle/schemas.ts";
import { createRunWriter } from "../../src/bundle/writer.ts";
import { HumanishError } from "../../src/errors.ts";
import type { TerminalLabConfig } from "../../src/lab/schema.ts";
import type { SeatHooks } from "../../src/study/types.ts";
import { Interrupted } from "../../src/terminal-seat/provision.ts";
import { participantResultError, recordRelease, seatRelease, terminalSeatBase, terminalSeatFailure } from "../../src/terminal-seat/seat.ts";
import { committedLab, testRunId, tmpProject } from "../routes/terminal/support.ts";

const project = tmpProject();
afterAll(() => project.cleanup());
const lab = committedLab("jq-first-contact").config as TerminalLabConfig;
const id = (s: string) => s;

function hooks(progress: string[], abort: AbortController): SeatHooks {
  return {
    signal: abort.signal,
    progress: (phase, detail) => progress.push(`${phase}${detail ? `: ${detail}` : ""}`),
    beforeCreate: () => undefined,
    created: () => undefined,
    remainingUsd: () => null,
  };
}

describe("terminalSeatBase", () => {
  test("a one-seat study keeps the preamble in its seat's lifecycle; phases reach progress; the guard throws once stopped", async () => {
    const writer = createRunWriter({ cwd: project.dir, runId: testRunId("seat"), secrets: [], heartbeatMs: 0 });
    const progress: string[] = [];
    const abort = new AbortController();
    const preamble = [{ event: "terminal-lab.run.created", message: "run r" }];
    const one = terminalSeatBase({ lab, writer, seat: { id: "p1", index: 0, persona: "newcomer" }, seatCount: 1, hooks: hooks(progress, abort), preamble });
    expect(one.folder).toBeNull();
    expect(one.at("actor.json")).toBe("actor.json");
    expect(one.rec.lifecycle.map((e) => e.event)).toEqual(["terminal-lab.run.created", "terminal-lab.seat.created"]);
    expect(one.rec.lifecycle[1]?.message).toMatch(/^seat p1 \(persona newcomer\): brief sha256:[0-9a-f]{12}$/);
    expect(one.brief).toContain(one.nonce);
    expect(one.phase).toBe("allocate");
    await one.setPhase("provision", "install 1/3");
    expect(one.phase).toBe("provision");
    expect(progress).toEqual(["provision: install 1/3"]);
    one.guard();
    abort.abort();
    expect(() => one.guard()).toThrow(Interrupted);

    const many = terminalSeatBase({ lab, writer, seat: { id: "p2", index: 1 }, seatCount: 2, hooks: hooks([], new AbortController()), preamble });
    expect(many.folder).toBe("seats/p2/");
    expect(many.at("actor.json")).toBe("seats/p2/actor.json");
    expect(many.rec.lifecycle.map((e) => e.event)).toEqual(["terminal-lab.seat.created"]);
    expect(many.nonce).not.toBe(one.nonce);

    const cleanup: CleanupProof[] = [];
    recordRelease(many, { id: "sb-9", provider: "e2b", outcome: "unconfirmed", reason: "kill did not settle", at: new Date().toISOString() }, cleanup, true);
    recordRelease(one, undefined, cleanup, false);
    expect(cleanup).toMatchObject([{ id: "sb-9", participantId: "p2", kind: "sandbox", outcome: "unconfirmed" }]);
    expect(many.rec.lifecycle.map((e) => e.event).slice(1)).toEqual(["terminal-lab.cleanup.unconfirmed", "terminal-lab.interrupted"]);
    expect(one.rec.lifecycle.at(-1)?.event).toBe("terminal-lab.cleanup.skipped");
  });
});

describe("the seat's study errors", () => {
  const outcome = (o: Partial<TerminalParticipantOutcome>) => ({ reason: "it stalled", ...o }) as TerminalParticipantOutcome;
  const limits = { maxMinutes: 5, firstOutputMs: 90_000 };
  test("a deadline is a timeout, a failed runtime is a failure, anything else is none", () => {
    expect(participantResultError(outcome({ deadline: "first-output" }), "timed_out", limits, id)).toMatchObject({
      code: "HUMANISH_TERMINAL_LAB_PARTICIPANT_TIMED_OUT",
      message: expect.stringContaining("printed nothing for 90 s"),
    });
    expect(participantResultError(outcome({ deadline: "max-minutes" }), "timed_out", limits, id)?.message).toContain("scenario.caps.maxMinutes (5 min)");
    expect(participantResultError(outcome({}), "actor_error", limits, id)?.code).toBe("HUMANISH_TERMINAL_LAB_FAILED");
    expect(participantResultError(outcome({}), "completed", limits, id)).toBeUndefined();
    expect(participantResultError(undefined, "harness_error", limits, id)).toBeUndefined();
  });
  test("a HumanishError keeps its code and next step; anything else becomes the lane's failure", () => {
    expect(terminalSeatFailure(new HumanishError("HUMANISH_E2B_SANDBOX_LOST", "gone", { next: "rerun" }), "participate", "E2B terminal study")).toEqual({
      code: "HUMANISH_E2B_SANDBOX_LOST",
      message: "gone",
      next: "rerun",
    });
    expect(terminalSeatFailure(new Error("boom"), "check", "E2B terminal study")).toMatchObject({
      code: "HUMANISH_TERMINAL_LAB_FAILED",
      message: "E2B terminal study failed in check: boom",
    });
  });
  test("the release handed to the runner", () => {
    expect(seatRelease(undefined)).toEqual({ outcome: "none", reason: "no sandbox was created" });
    expect(seatRelease({ id: "c1", provider: "docker", outcome: "released", reason: "gone", at: "" })).toEqual({
      outcome: "released",
      id: "c1",
      reason: "gone",
    });
  });
});

/**
 * The files every terminal lane writes for a seat, and the failures every lane finds the same
 * way: the jobs cap, an unconfirmed release (it outweighs what came before), a write that failed.
 * Written through a real run writer into a temporary project.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { findActor } from "../../src/actor-registry/registry.ts";
import type { ActorDescriptor } from "../../src/actor-registry/types.ts";
import type { CleanupProof, CostLine } from "../../src/bundle/schemas.ts";
import { createRunWriter } from "../../src/bundle/writer.ts";
import type { TerminalLabConfig } from "../../src/lab/schema.ts";
import { createTerminalRecording, TERMINAL_EVENTS_FILE } from "../../src/terminal-seat/recorder.ts";
import { cleanupFailure, jobsCapFailure, writeTerminalSeatFiles } from "../../src/terminal-seat/seat-files.ts";
import { committedLab, testRunId, tmpProject } from "../routes/terminal/support.ts";

const project = tmpProject();
afterAll(() => project.cleanup());
const lab = committedLab("jq-first-contact").config as TerminalLabConfig;
const descriptor = findActor("scripted-terminal") as ActorDescriptor;
const zero: CostLine = {
  kind: "provider",
  participantId: "p1",
  usd: 0,
  count: 0,
  basis: "no-spend-signal",
  ratesAsOf: "2026-12-01",
  source: "test",
  reason: null,
};
const proof = (outcome: CleanupProof["outcome"]): CleanupProof => ({
  id: "sb-1",
  provider: "docker",
  kind: "sandbox",
  participantId: "p1",
  outcome,
  reason: "because",
  at: new Date().toISOString(),
});

describe("the shared seat failures", () => {
  test("the jobs cap trips only above a set cap", () => {
    expect(jobsCapFailure(3, null)).toBeUndefined();
    expect(jobsCapFailure(3, 3)).toBeUndefined();
    expect(jobsCapFailure(4, 3)).toMatchObject({ code: "HUMANISH_TERMINAL_LAB_CAPS_EXCEEDED", message: expect.stringContaining("scenario.caps.maxJobs 3") });
  });
  test("an unconfirmed release replaces the earlier failure and names it; a confirmed one keeps it", () => {
    const prev = { code: "HUMANISH_TERMINAL_LAB_CAPS_EXCEEDED", message: "over" };
    const how = { what: "E2B sandbox", next: (ids: string) => `kill ${ids}` };
    expect(cleanupFailure([proof("released")], prev, how)).toBe(prev);
    expect(cleanupFailure([], undefined, how)).toBeUndefined();
    expect(cleanupFailure([proof("released"), proof("unconfirmed")], prev, how)).toEqual({
      code: "HUMANISH_TERMINAL_LAB_CLEANUP_UNPROVEN",
      message: "the E2B sandbox release was not confirmed (after HUMANISH_TERMINAL_LAB_CAPS_EXCEEDED): sb-1 because; sb-1 because",
      next: "kill sb-1 sb-1",
    });
  });
});

describe("writeTerminalSeatFiles", () => {
  function seatSetup(folder: string | null) {
    const writer = createRunWriter({ cwd: project.dir, runId: testRunId("seat-files"), secrets: [], heartbeatMs: 0 });
    const rec = createTerminalRecording({
      writer,
      participantId: "p1",
      redact: (s) => writer.redactor.text(s),
      onProgress: () => undefined,
      eventsPath: `${folder ?? ""}${TERMINAL_EVENTS_FILE}`,
    });
    return { writer, rec };
  }
  const input = (s: ReturnType<typeof seatSetup>, folder: string | null) => ({
    lab,
    seat: { id: "p1", index: 0, persona: "newcomer" },
    writer: s.writer,
    rec: s.rec,
    descriptor,
    runtime: undefined,
    brief: "the brief",
    folder,
    outcome: undefined,
    checked: undefined,
    cleanup: [proof("released")],
    provider: zero,
    maxUsd: 1,
    provisionLog: ["installed\n"],
    failure: undefined,
    interrupted: false,
    redact: (t: string) => s.writer.redactor.text(t),
  });

  test("a seat whose participant never ran: its files in its folder, its tasks not run, its record says why", async () => {
    const s = seatSetup("seats/p1/");
    const extra: string[] = [];
    const r = await writeTerminalSeatFiles({
      ...input(s, "seats/p1/"),
      failure: { code: "HUMANISH_SANDBOX_CREATE_FAILED", message: "no engine" },
      extra: [{ path: "seats/p1/extra.json", write: async () => extra.push("written") }],
    });
    expect(r.failure).toEqual({ code: "HUMANISH_SANDBOX_CREATE_FAILED", message: "no engine" });
    expect(r.record).toMatchObject({ id: "p1", persona: "newcomer", status: "failed", completionReason: "harness_error", trace: null });
    expect(r.record.reason).toBe("HUMANISH_SANDBOX_CREATE_FAILED: no engine");
    expect(r.tasks.map((t) => [t.id, t.status, t.detail])).toEqual(
      (lab.actors[0].tasks ?? []).map((t) => [t.id, "not_run", "not checked: HUMANISH_SANDBOX_CREATE_FAILED"]),
    );
    expect(extra).toEqual(["written"]);
    const dir = join(s.writer.runDir, "seats/p1");
    expect(readFileSync(join(dir, TERMINAL_EVENTS_FILE), "utf8")).toBe("");
    expect(readFileSync(join(dir, "provision.log"), "utf8")).toBe("installed\n");
    expect(existsSync(join(dir, "terminal-transcript.txt"))).toBe(true);
    expect(existsSync(join(dir, "actor.json"))).toBe(false);
    const ledgers = JSON.parse(readFileSync(join(dir, "terminal-ledgers.json"), "utf8"));
    expect(ledgers).toMatchObject({ schema: "humanish.terminal-ledgers.v1", cleanup: [{ id: "sb-1", outcome: "released" }] });
  });

  test("a lane's fallback replaces the did-not-run record; a failed write is a failure of its own", async () => {
    const s = seatSetup(null);
    const r = await writeTerminalSeatFiles({
      ...input(s, null),
      interrupted: true,
      fallback: { status: "failed", completionReason: "budget_reached", reason: "disk_limit: full" },
      extra: [
        {
          path: "model-ledger.json",
          write: async () => {
            throw new Error("disk full");
          },
        },
      ],
    });
    expect(r.record).toMatchObject({ completionReason: "budget_reached", reason: "disk_limit: full" });
    expect(r.tasks.every((t) => t.detail === "not checked: the study was interrupted")).toBe(true);
    expect(r.failure).toMatchObject({ code: "HUMANISH_BUNDLE_WRITE_FAILED", message: expect.stringContaining("model-ledger.json: disk full") });
  });
});

/**
 * The files of one terminal seat, the same for every terminal lane so `verify`, `report` and
 * `analyze` read them unchanged: the events (an empty file when nothing was recorded), the
 * transcript, the provision log, the actor trace and the terminal ledgers; plus the participant
 * record, the task results (`not_run` for checks that never ran) and the failures every lane
 * finds the same way (the jobs cap, an unconfirmed release, evidence that could not be written).
 * The lanes keep their own cost lines and spend cap.
 */

import type { ActorDescriptor, ActorRuntime } from "../actor-registry/types.ts";
import type { TerminalParticipantOutcome } from "../actors/terminal-participant/participant.ts";
import type { CleanupProof, CostLine, RunParticipant, TaskResult } from "../bundle/schemas.ts";
import type { RunWriter } from "../bundle/writer.ts";
import { errorMessage } from "../errors.ts";
import type { TerminalLabConfig } from "../lab/schema.ts";
import type { StudyError } from "../study/evidence.ts";
import type { SeatSpec } from "../study/types.ts";
import { briefDigest, DEFAULT_PERSONA } from "./brief.ts";
import { ACTOR_TRACE_FILE, buildActorTrace, buildTerminalLedgers, participantRecord, terminalSeatVerdict } from "./evidence.ts";
import { TERMINAL_EVENTS_FILE, type TerminalRecording } from "./recorder.ts";

/** `HUMANISH_TERMINAL_LAB_CAPS_EXCEEDED` when the seat's known billable jobs exceed `maxJobs` (null: no cap). */
export function jobsCapFailure(knownJobs: number, maxJobs: number | null): StudyError | undefined {
  if (maxJobs === null || knownJobs <= maxJobs) return undefined;
  return {
    code: "HUMANISH_TERMINAL_LAB_CAPS_EXCEEDED",
    message: `${knownJobs} known billable job(s) exceed scenario.caps.maxJobs ${maxJobs}.`,
    next: "Raise scenario.caps.maxJobs; the participant's own verdict is kept in the bundle.",
  };
}

/**
 * `HUMANISH_TERMINAL_LAB_CLEANUP_UNPROVEN` when a release in `cleanup` was not confirmed: it
 * replaces any earlier failure (named in the message), since a sandbox that may still run
 * outweighs what happened inside it. `what` names the sandbox ("sandbox", "E2B sandbox");
 * `next` is the lane's way to remove it by id.
 */
export function cleanupFailure(
  cleanup: readonly CleanupProof[],
  prev: StudyError | undefined,
  o: { what: string; next: (ids: string) => string },
): StudyError | undefined {
  if (!cleanup.some((c) => c.outcome !== "released")) return prev;
  return {
    code: "HUMANISH_TERMINAL_LAB_CLEANUP_UNPROVEN",
    message: `the ${o.what} release was not confirmed${prev ? ` (after ${prev.code})` : ""}: ${cleanup.map((c) => `${c.id} ${c.reason}`).join("; ")}`,
    next: o.next(cleanup.map((c) => c.id).join(" ")),
  };
}

/** Inputs of {@link writeTerminalSeatFiles}. */
export interface TerminalSeatFilesInput {
  lab: TerminalLabConfig;
  seat: SeatSpec;
  writer: RunWriter;
  rec: TerminalRecording;
  descriptor: ActorDescriptor;
  runtime: ActorRuntime | undefined;
  brief: string;
  folder: string | null;
  outcome: TerminalParticipantOutcome | undefined;
  checked: TaskResult[] | undefined;
  cleanup: CleanupProof[];
  /** The model line the ledgers carry as their provider line. */
  provider: CostLine;
  maxUsd: number | null;
  provisionLog: readonly string[];
  /** The failure so far (caps, cleanup): named in the fallback reason and the tasks' details. */
  failure: StudyError | undefined;
  interrupted: boolean;
  /** The participant record when no outcome exists, when the lane knows better than "did not run" (e.g. a disk breach). */
  fallback?: { status: "failed"; completionReason: "budget_reached"; reason: string };
  /** Lane files written after the ledgers, e.g. the model ledger: bundle path and writer. */
  extra?: readonly { path: string; write: () => Promise<unknown> }[];
  redact: (s: string) => string;
}

/**
 * Flushes the recording and writes the seat's files (see the module comment). Never throws: a
 * write that failed becomes `HUMANISH_BUNDLE_WRITE_FAILED` in `failure` unless a failure is
 * already there.
 */
export async function writeTerminalSeatFiles(
  i: TerminalSeatFilesInput,
): Promise<{ record: RunParticipant; tasks: TaskResult[]; failure: StudyError | undefined }> {
  const pid = i.seat.id;
  const at = (rel: string) => `${i.folder ?? ""}${rel}`;
  const actor = i.lab.actors[0];
  let failure = i.failure;
  const writeErrors = await i.rec.flush();
  const safeWrite = async (what: string, f: () => Promise<unknown>): Promise<void> => {
    try {
      await f();
    } catch (e) {
      writeErrors.push(`${what}: ${errorMessage(e)}`);
    }
  };
  const tasks: TaskResult[] =
    i.checked ??
    (actor.tasks ?? []).map((t) => ({
      id: t.id,
      goal: t.goal,
      participantId: pid,
      status: "not_run" as const,
      passed: false,
      detail: i.interrupted ? "not checked: the study was interrupted" : failure ? `not checked: ${failure.code}` : "not checked",
    }));
  // The hidden checks decide the goal; the participant's own verdict is kept as its claim.
  const verdict = terminalSeatVerdict(
    i.outcome,
    tasks,
    i.fallback ?? {
      status: "failed",
      completionReason: i.interrupted ? "interrupted" : "harness_error",
      reason: i.interrupted ? "interrupted before the participant ran" : failure ? `${failure.code}: ${failure.message}` : "the participant did not run",
    },
  );
  const record: RunParticipant = participantRecord({
    participantId: pid,
    actorType: i.descriptor.type,
    outcome: i.outcome,
    verdict: { ...verdict, reason: i.redact(verdict.reason) },
  });
  if (i.seat.persona) record.persona = i.seat.persona;
  if (i.rec.eventLines() === 0)
    await safeWrite(at(TERMINAL_EVENTS_FILE), () => i.writer.writeArtifact(at(TERMINAL_EVENTS_FILE), "", { kind: "terminal-events" }));
  await safeWrite(at("terminal-transcript.txt"), () =>
    i.writer.writeArtifact(at("terminal-transcript.txt"), i.rec.transcript(), { kind: "terminal-transcript" }),
  );
  if (i.provisionLog.length > 0)
    await safeWrite(at("provision.log"), () => i.writer.writeArtifact(at("provision.log"), i.provisionLog.join(""), { kind: "log" }));
  if (i.outcome) {
    const trace = buildActorTrace({
      participantId: pid,
      actorType: i.descriptor.type,
      descriptor: i.descriptor,
      outcome: i.outcome,
      verdict,
      ...(i.runtime ? { runtime: i.runtime } : {}),
      personaId: i.seat.persona ?? actor.persona ?? DEFAULT_PERSONA,
      briefDigest: briefDigest(i.brief),
      ...(actor.type === "codex-exec" && actor.reasoningEffort ? { reasoningEffort: actor.reasoningEffort } : {}),
    });
    await safeWrite(at(ACTOR_TRACE_FILE), () => i.writer.writeJson(at(ACTOR_TRACE_FILE), trace, { kind: "actor-trace" }));
    if (record.trace !== null) record.trace = at(ACTOR_TRACE_FILE);
  }
  const ledgers = buildTerminalLedgers({
    productName: i.lab.subject.product.name,
    ...(i.runtime ? { runtime: i.runtime } : {}),
    lifecycle: i.rec.lifecycle,
    commandLog: i.rec.commandLog,
    provider: i.provider,
    maxUsd: i.maxUsd,
    cleanup: i.cleanup,
  });
  await safeWrite(at("terminal-ledgers.json"), () => i.writer.writeJson(at("terminal-ledgers.json"), ledgers, { kind: "terminal-ledgers" }));
  for (const x of i.extra ?? []) await safeWrite(x.path, x.write);
  if (writeErrors.length > 0 && !failure) {
    failure = {
      code: "HUMANISH_BUNDLE_WRITE_FAILED",
      message: `evidence could not be written completely: ${writeErrors.join("; ")}`,
      next: "Check free disk space and permissions of .humanish/runs; the bundle will not verify.",
    };
  }
  return { record, tasks, failure };
}

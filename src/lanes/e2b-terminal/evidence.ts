/**
 * The evidence of one E2B terminal seat, in the same shapes as the Docker terminal lane (actor
 * trace, terminal ledgers, transcript, events) so `verify`, `report` and `analyze` read it
 * unchanged. The E2B-specific parts: the model line is `unpriced-token-usage` (Codex reaches its
 * model directly, so no gateway sees which model answered), the cap is after-the-fact, and the
 * sandbox line is an estimate of E2B compute over create → confirmed release.
 */

import type { ActorDescriptor } from "../../actor-registry/types.ts";
import type { TerminalParticipant, TerminalParticipantOutcome } from "../../actors/terminal-participant/participant.ts";
import type { CleanupProof, CostLine, TaskResult } from "../../bundle/schemas.ts";
import type { RunWriter } from "../../bundle/writer.ts";
import type { TerminalLabConfig } from "../../lab/schema.ts";
import type { SeatEvidence, StudyError } from "../../study/evidence.ts";
import type { SeatSpec } from "../../study/types.ts";
import { isoDate, providerCostLine } from "../../terminal-seat/evidence.ts";
import type { TerminalCaps } from "../../terminal-seat/plan.ts";
import type { TerminalRecording } from "../../terminal-seat/recorder.ts";
import { cleanupFailure, jobsCapFailure, writeTerminalSeatFiles } from "../../terminal-seat/seat-files.ts";

/** The lane's own facts of a seat. */
export interface E2BTerminalSeatFacts {
  participantStarted: boolean;
  /** The E2B sandbox id, when one was created. */
  sandboxId?: string;
}

/**
 * The model line of a Codex seat on E2B: Codex's own turn usage without a price (the model
 * that answered is not observed), a known zero when the keyed command never ran, else unmeasured.
 */
export function e2bModelLine(o: {
  descriptor: ActorDescriptor;
  participantId: string;
  outcome: TerminalParticipantOutcome | undefined;
  keyedCommandRan: boolean;
  requestedModel: string | undefined;
  today: string;
}): CostLine {
  if (o.descriptor.runtimeKeyNames.length === 0 || !o.keyedCommandRan || !o.outcome?.tokenUsage) {
    const line = providerCostLine({ ...o, kind: "model-tokens" });
    // Without the gateway no rate applies: an estimate from the declared model is never a cost.
    if (line.basis === "rate-table") return { ...line, usd: null, basis: "unmeasured", ratesAsOf: null, source: null, reason: "model_unobserved" };
    return line;
  }
  const u = o.outcome.tokenUsage;
  return {
    kind: "model-tokens",
    participantId: o.participantId,
    usd: null,
    count: u.turns.length,
    basis: "unpriced-token-usage",
    ratesAsOf: null,
    source: null,
    reason: `model_unobserved: Codex reached the model directly from the E2B sandbox, so no gateway saw which model answered${o.requestedModel ? ` (declared ${o.requestedModel}, never priced as observed)` : ""}`,
    note: `Codex turn usage: ${u.input} input (${u.cachedInput} cached) + ${u.output} output tokens over ${u.turns.length} turn(s); the cap is after-the-fact`,
  };
}

/** Inputs of {@link writeE2BSeatEvidence}. */
export interface E2BEvidenceInput {
  lab: TerminalLabConfig;
  seat: SeatSpec;
  writer: RunWriter;
  rec: TerminalRecording;
  participant: TerminalParticipant;
  descriptor: ActorDescriptor;
  caps: TerminalCaps;
  brief: string;
  folder: string | null;
  outcome: TerminalParticipantOutcome | undefined;
  checked: TaskResult[] | undefined;
  cleanup: CleanupProof[];
  sandboxLine: CostLine;
  provisionLog: string[];
  failure: StudyError | undefined;
  interrupted: boolean;
  facts: E2BTerminalSeatFacts;
  redact: (s: string) => string;
}

/** Writes the seat's files and returns its evidence; never throws (a failed write is a failure). */
export async function writeE2BSeatEvidence(i: E2BEvidenceInput): Promise<SeatEvidence<E2BTerminalSeatFacts>> {
  const pid = i.seat.id;
  let failure = i.failure;
  const runtime = i.participant.runtime();
  const keyedCommandRan = i.rec.commands.some((c) => c.label === "codex-exec");
  const modelLine = e2bModelLine({
    descriptor: i.descriptor,
    participantId: pid,
    outcome: i.outcome,
    keyedCommandRan,
    requestedModel: runtime?.requestedModel,
    today: isoDate(),
  });
  // Caps after the fact: the seat's known spend (model and sandbox time) over maxUsd fails
  // closed; null never trips one.
  const knownUsd = Math.round(((modelLine.usd ?? 0) + (i.sandboxLine.usd ?? 0)) * 1e6) / 1e6;
  if (!failure && i.caps.maxUsd !== null && knownUsd > i.caps.maxUsd) {
    failure = {
      code: "HUMANISH_TERMINAL_LAB_CAPS_EXCEEDED",
      message: `known spend ${knownUsd} USD (model ${modelLine.usd ?? "unpriced"}, sandbox time ${i.sandboxLine.usd ?? "unmeasured"}) exceeds scenario.caps.maxUsd ${i.caps.maxUsd}.`,
      next: "Raise scenario.caps.maxUsd or narrow the mission; the participant's own verdict is kept in the bundle.",
    };
    i.rec.recorder.lifecycle("terminal-lab.caps.exceeded", failure.message);
  }
  const knownJobs = modelLine.count ?? 0;
  const overJobs = failure ? undefined : jobsCapFailure(knownJobs, i.caps.maxJobs);
  if (overJobs) {
    failure = overJobs;
    i.rec.recorder.lifecycle("terminal-lab.caps.exceeded", overJobs.message);
  }
  failure = cleanupFailure(i.cleanup, failure, {
    what: "E2B sandbox",
    next: (ids) => `Kill it by id (e2b sandbox kill ${ids}); E2B also kills it at its timeout.`,
  });
  const written = await writeTerminalSeatFiles({
    lab: i.lab,
    seat: i.seat,
    writer: i.writer,
    rec: i.rec,
    descriptor: i.descriptor,
    runtime,
    brief: i.brief,
    folder: i.folder,
    outcome: i.outcome,
    checked: i.checked,
    cleanup: i.cleanup,
    provider: modelLine,
    maxUsd: i.caps.maxUsd,
    provisionLog: i.provisionLog,
    failure,
    interrupted: i.interrupted,
    redact: i.redact,
  });
  failure = written.failure;
  const modelLines: CostLine[] = [{ ...modelLine, ...(runtime?.requestedModel && modelLine.usd !== null ? { modelId: runtime.requestedModel } : {}) }];
  return {
    participant: written.record,
    tasks: written.tasks,
    cleanup: i.cleanup,
    costLines: [...modelLines, i.sandboxLine],
    lifecycle: i.rec.lifecycle,
    ...(failure ? { failure: { ...failure, message: i.redact(failure.message) } } : {}),
    folder: i.folder,
    usd: knownUsd,
    jobs: knownJobs,
    lane: i.facts,
  };
}

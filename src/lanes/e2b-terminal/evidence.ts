/**
 * The evidence of one E2B terminal seat, in the same shapes as the Docker terminal lane (actor
 * trace, terminal ledgers, transcript, events) so `verify`, `report` and `analyze` read it
 * unchanged. The E2B-specific parts: the model line is `unpriced-token-usage` (Codex reaches its
 * model directly, so no gateway sees which model answered), the cap is after-the-fact, and the
 * sandbox line is an estimate of E2B compute over create → confirmed release.
 */
import type { TerminalParticipant, TerminalParticipantOutcome } from "../../actors/terminal/participant.ts";
import type { ActorDescriptor } from "../../actors/types.ts";
import type { CleanupProof, CostLine, RunParticipant, TaskResult } from "../../bundle/schemas.ts";
import type { RunWriter } from "../../bundle/writer.ts";
import type { TerminalLabConfig } from "../../lab/schema.ts";
import type { SeatEvidence, StudyError } from "../../study/evidence.ts";
import type { SeatSpec } from "../../study/types.ts";
import { briefDigest, DEFAULT_PERSONA } from "../../terminal/brief.ts";
import { ACTOR_TRACE_FILE, buildActorTrace, buildTerminalLedgers, isoDate, participantRecord, providerCostLine } from "../../terminal/evidence.ts";
import type { TerminalCaps } from "../../terminal/plan.ts";
import type { TerminalRecording } from "../../terminal/recorder.ts";
import { TERMINAL_EVENTS_FILE } from "../../terminal/recorder.ts";

/** The lane's own facts of a seat. */
export interface E2BSeatFacts {
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
  facts: E2BSeatFacts;
  redact: (s: string) => string;
}

/** Writes the seat's files and returns its evidence; never throws (a failed write is a failure). */
export async function writeE2BSeatEvidence(i: E2BEvidenceInput): Promise<SeatEvidence<E2BSeatFacts>> {
  const pid = i.seat.id;
  const at = (rel: string) => `${i.folder ?? ""}${rel}`;
  const actor = i.lab.actors[0];
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
  if (!failure && i.caps.maxJobs !== null && knownJobs > i.caps.maxJobs) {
    failure = {
      code: "HUMANISH_TERMINAL_LAB_CAPS_EXCEEDED",
      message: `${knownJobs} known billable job(s) exceed scenario.caps.maxJobs ${i.caps.maxJobs}.`,
      next: "Raise scenario.caps.maxJobs; the participant's own verdict is kept in the bundle.",
    };
    i.rec.recorder.lifecycle("terminal-lab.caps.exceeded", failure.message);
  }
  if (i.cleanup.some((c) => c.outcome !== "released")) {
    const prev = failure ? ` (after ${failure.code})` : "";
    failure = {
      code: "HUMANISH_TERMINAL_LAB_CLEANUP_UNPROVEN",
      message: `the E2B sandbox release was not confirmed${prev}: ${i.cleanup.map((c) => `${c.id} ${c.reason}`).join("; ")}`,
      next: `Kill it by id (e2b sandbox kill ${i.cleanup.map((c) => c.id).join(" ")}); E2B also kills it at its timeout.`,
    };
  }
  const writeErrors = await i.rec.flush();
  const safeWrite = async (what: string, f: () => Promise<unknown>): Promise<void> => {
    try {
      await f();
    } catch (e) {
      writeErrors.push(`${what}: ${e instanceof Error ? e.message : String(e)}`);
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
  const record: RunParticipant = participantRecord({
    participantId: pid,
    actorType: i.descriptor.type,
    outcome: i.outcome,
    fallback: {
      status: "failed",
      completionReason: i.interrupted ? "interrupted" : "harness_error",
      reason: i.redact(
        i.interrupted ? "interrupted before the participant ran" : failure ? `${failure.code}: ${failure.message}` : "the participant did not run",
      ),
    },
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
      ...(runtime ? { runtime } : {}),
      personaId: i.seat.persona ?? actor.persona ?? DEFAULT_PERSONA,
      briefDigest: briefDigest(i.brief),
      ...(actor.type === "codex-exec" && actor.reasoningEffort ? { reasoningEffort: actor.reasoningEffort } : {}),
    });
    await safeWrite(at(ACTOR_TRACE_FILE), () => i.writer.writeJson(at(ACTOR_TRACE_FILE), trace, { kind: "actor-trace" }));
    if (record.trace !== null) record.trace = at(ACTOR_TRACE_FILE);
  }
  const ledgers = buildTerminalLedgers({
    productName: i.lab.subject.product.name,
    ...(runtime ? { runtime } : {}),
    lifecycle: i.rec.lifecycle,
    commandLog: i.rec.commandLog,
    provider: modelLine,
    maxUsd: i.caps.maxUsd,
    cleanup: i.cleanup,
  });
  await safeWrite(at("terminal-ledgers.json"), () => i.writer.writeJson(at("terminal-ledgers.json"), ledgers, { kind: "terminal-ledgers" }));
  if (writeErrors.length > 0 && !failure) {
    failure = {
      code: "HUMANISH_BUNDLE_WRITE_FAILED",
      message: `evidence could not be written completely: ${writeErrors.join("; ")}`,
      next: "Check free disk space and permissions of .humanish/runs; the bundle will not verify.",
    };
  }
  const modelLines: CostLine[] = [{ ...modelLine, ...(runtime?.requestedModel && modelLine.usd !== null ? { modelId: runtime.requestedModel } : {}) }];
  return {
    participant: record,
    tasks,
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

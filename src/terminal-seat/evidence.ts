/**
 * Builders of the terminal study's evidence objects: the
 * actor trace, the run's participant record, cost lines, the terminal ledgers. Pure: the route
 * hands the results to the run writer, which redacts and schema-checks every byte.
 */

import type { ActorDescriptor, ActorRuntime, DeadlineKind } from "../actor-registry/types.ts";
import type { TerminalParticipantOutcome } from "../actors/terminal-participant/participant.ts";
import { buildNoSpendProof, buildTerminalCostLedger, unmeasuredLine } from "../bundle/derive.ts";
import { type GoalVerdict, goalCheckOf, seatGoalVerdict } from "../bundle/goal.ts";
import type {
  ActorTrace,
  CleanupProof,
  CommandLogEntry,
  CostLine,
  LifecycleEvent,
  RunParticipant,
  TaskResult,
  TerminalLedgers,
  TraceItem,
} from "../bundle/schemas.ts";
import type { ReleaseProof } from "../sandbox/types.ts";

/** Relative path of the participant's trace in the run. */
export const ACTOR_TRACE_FILE = "actor.json";

/** `YYYY-MM-DD` of `d` (UTC). */
export function isoDate(d: Date = new Date()): string {
  return d.toISOString().slice(0, 10);
}

/** Deadline name as written in the bundle (`first-output`, `maxMinutes`, `interrupted`). */
export function deadlineLabel(d: DeadlineKind): string {
  return d === "max-minutes" ? "maxMinutes" : d;
}

/** Inputs of {@link buildActorTrace}. */
export interface TraceInput {
  participantId: string;
  actorType: string;
  descriptor: ActorDescriptor;
  outcome: TerminalParticipantOutcome;
  /** The seat's verdict after its hidden checks (see {@link terminalSeatVerdict}); the trace carries the same status as the record. */
  verdict?: Pick<GoalVerdict, "status" | "completionReason">;
  runtime?: ActorRuntime;
  personaId: string;
  briefDigest: string;
  reasoningEffort?: string;
}

/** `humanish.actor-trace.v1` for a terminal participant. Item ids are renumbered `<kind>-<NNN>`. */
export function buildActorTrace(t: TraceInput): ActorTrace {
  const o = t.outcome;
  const perKind = new Map<string, number>();
  const nextId = (kind: string): string => {
    const n = (perKind.get(kind) ?? 0) + 1;
    perKind.set(kind, n);
    return `${kind}-${String(n).padStart(3, "0")}`;
  };
  const items: TraceItem[] = o.items.map((it) => ({
    id: nextId(it.kind),
    kind: it.kind,
    lifecycle: it.lifecycle,
    ...(it.status ? { status: it.status } : {}),
    title: it.title,
    ...(it.at ? { at: it.at } : {}),
    ...(it.tool ? { tool: it.tool } : {}),
    ...(it.command ? { command: { ...it.command } } : {}),
    ...(it.text !== undefined ? { text: it.text } : {}),
  }));
  const usage = o.tokenUsage;
  if (usage) {
    usage.turns.forEach((turn, i) => {
      items.push({
        id: nextId("usage"),
        kind: "usage",
        lifecycle: "completed",
        title: `turn ${i + 1} token usage (all model requests of the turn)`,
        usage: {
          input: turn.input,
          cachedInput: turn.cachedInput,
          output: turn.output,
          ...(turn.reasoningOutput !== undefined ? { reasoningOutput: turn.reasoningOutput } : {}),
          total: turn.input + turn.output,
        },
      });
    });
  }
  const reasoningOutput = usage?.turns.reduce((a, x) => a + (x.reasoningOutput ?? 0), 0);
  const hasReasoning = usage?.turns.some((x) => x.reasoningOutput !== undefined) ?? false;
  return {
    schema: "humanish.actor-trace.v1",
    participantId: t.participantId,
    actorType: t.actorType,
    provider: t.descriptor.provider,
    ...(t.runtime?.observedVersion ? { providerVersion: t.runtime.observedVersion } : {}),
    protocol: t.descriptor.protocol,
    lane: "terminal",
    persona: { id: t.personaId, traitsApplied: [], promptDigest: t.briefDigest },
    redaction: { status: "passed", screenshots: "n/a", notes: "literal scrub of provisioned secrets, then secret and local-path shapes, then truncation" },
    startedAt: o.startedAt,
    completedAt: o.completedAt,
    durationMs: o.durationMs,
    status: t.verdict?.status ?? o.status,
    completionReason: t.verdict?.completionReason ?? o.completionReason,
    reason: o.reason,
    ...(o.deadline ? { stopCause: deadlineLabel(o.deadline) } : {}),
    ids: { ...(o.ids?.threadId ? { threadId: o.ids.threadId } : {}) },
    counts: { ...o.counts },
    items,
    ...(usage
      ? {
          tokenUsage: {
            input: usage.input,
            output: usage.output,
            cachedInput: usage.cachedInput,
            ...(hasReasoning ? { reasoningOutput } : {}),
            total: usage.total,
            turns: usage.turns.length,
          },
        }
      : {}),
    ...(o.estimatedCost ? { estimatedCost: { ...o.estimatedCost } } : {}),
    ...(t.reasoningEffort ? { modelSettings: { reasoningEffort: t.reasoningEffort } } : {}),
    ...(t.runtime ? { runtime: { ...t.runtime } } : {}),
  };
}

/** How a terminal participant that never produced an outcome is recorded. */
export type ParticipantFallback = Pick<GoalVerdict, "status" | "completionReason" | "reason">;

/**
 * The seat's verdict by the one goal rule (`seatGoalVerdict`): the participant's ending (or
 * `fallback` when it never ended on its own), its claim, and the seat's task results — the
 * hidden checks alone decide whether it reached the goal (no tasks: it cannot).
 */
export function terminalSeatVerdict(outcome: TerminalParticipantOutcome | undefined, tasks: readonly TaskResult[], fallback: ParticipantFallback): GoalVerdict {
  const ending = outcome ? { status: outcome.status, completionReason: outcome.completionReason, reason: outcome.reason } : fallback;
  return seatGoalVerdict(ending, outcome?.claimed ?? "none", goalCheckOf(tasks));
}

/** The participant record of `run.json`, with the seat's {@link terminalSeatVerdict}. */
export function participantRecord(args: {
  participantId: string;
  actorType: string;
  outcome: TerminalParticipantOutcome | undefined;
  verdict: GoalVerdict;
}): RunParticipant {
  const o = args.outcome;
  const v = args.verdict;
  const goal = { status: v.status, completionReason: v.completionReason, reason: v.reason, claimed: v.claimed, goalCheck: v.goalCheck };
  if (!o) {
    return { id: args.participantId, actorType: args.actorType, label: args.actorType, ...goal, trace: null };
  }
  return {
    id: args.participantId,
    actorType: args.actorType,
    label: args.actorType,
    ...goal,
    trace: ACTOR_TRACE_FILE,
    startedAt: o.startedAt,
    completedAt: o.completedAt,
    durationMs: o.durationMs,
    ...(o.deadline ? { deadlineFired: deadlineLabel(o.deadline) } : {}),
  };
}

/**
 * The provider (model) cost line: a scripted participant is a known zero (it calls no model);
 * a model participant whose keyed command never ran is a known zero; otherwise the participant's
 * estimate (rate table, dated and sourced) or null with its reason.
 */
export function providerCostLine(args: {
  descriptor: ActorDescriptor;
  participantId: string;
  outcome: TerminalParticipantOutcome | undefined;
  keyedCommandRan: boolean;
  kind: "provider" | "model-tokens";
  today: string;
}): CostLine {
  const base = { kind: args.kind, participantId: args.participantId } as const;
  const knownZero = (source: string): CostLine => ({ ...base, usd: 0, count: 0, basis: "no-spend-signal", ratesAsOf: args.today, source, reason: null });
  if (args.descriptor.runtimeKeyNames.length === 0) return knownZero(`humanish: ${args.descriptor.type} calls no model provider`);
  if (!args.keyedCommandRan) return knownZero(`humanish: the ${args.descriptor.type} command that carries the runtime key never ran`);
  const e = args.outcome?.estimatedCost;
  const modelId = e?.modelId ?? undefined;
  if (!e || e.estimatedCostUsd === null) {
    return unmeasuredLine(args.kind, e?.reason ?? "no_token_usage", {
      participantId: args.participantId,
      ...(modelId ? { modelId } : {}),
      basis: "unmeasured",
    });
  }
  const u = args.outcome?.tokenUsage;
  return {
    ...base,
    ...(modelId ? { modelId } : {}),
    usd: e.estimatedCostUsd,
    count: u ? u.turns.length : null,
    basis: "rate-table",
    ratesAsOf: e.ratesAsOf,
    source: e.source,
    reason: null,
    note: u ? `estimate: ${u.input} input (${u.cachedInput} cached) + ${u.output} output tokens over ${u.turns.length} turn(s), base rates` : "estimate",
  };
}

/** Cleanup proof in bundle shape. */
export function cleanupProof(p: ReleaseProof, participantId: string): CleanupProof {
  return { id: p.id, provider: p.provider, kind: "sandbox", participantId, outcome: p.outcome, reason: p.reason, at: p.at };
}

/** `humanish.terminal-ledgers.v1`. Product, media and payment are unmeasured (no cost probe exists). */
export function buildTerminalLedgers(args: {
  productName: string;
  runtime?: ActorRuntime;
  lifecycle: LifecycleEvent[];
  commandLog: CommandLogEntry[];
  provider: CostLine;
  maxUsd: number | null;
  cleanup: CleanupProof[];
}): TerminalLedgers {
  const why = `no cost probe measures ${args.productName}`;
  const cost = buildTerminalCostLedger({
    product: unmeasuredLine("product", why),
    media: unmeasuredLine("media", "no cost probe measures media spend"),
    payment: unmeasuredLine("payment", "no cost probe measures payments"),
    provider: { ...args.provider, kind: "provider" },
  });
  return {
    schema: "humanish.terminal-ledgers.v1",
    ...(args.runtime ? { runtime: { ...args.runtime } } : {}),
    lifecycle: args.lifecycle,
    commandLog: args.commandLog,
    interventions: [],
    cost,
    noSpendProof: buildNoSpendProof(cost, args.maxUsd),
    cleanup: args.cleanup,
  };
}

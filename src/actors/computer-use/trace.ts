/**
 * The computer-use outcome → `humanish.actor-trace.v1` (`protocol: cua-loop`, lane
 * `computer-use`). Pure: the caller writes the screenshots and passes where each one went.
 * Typed text is already a length only; model-authored text was scrubbed by the loop and is
 * passed through `redact` here once more.
 */
import type { ActorTrace, TraceItem } from "../../bundle/index.ts";
import { costOf } from "../../models/index.ts";
import type { ComputerUseOutcome } from "./loop.ts";

/** What the trace needs beyond the outcome. */
export interface TraceMeta {
  participantId: string;
  model: string;
  personaId: string;
  /** First 12 hex of the brief's sha256. */
  promptDigest: string;
  sessionId: string;
  /** Bundle path of each kept screenshot, by its name (`turn-03`); missing = not written. */
  shotPaths: ReadonlyMap<string, string>;
  redact: (s: string) => string;
}

/** Projects the outcome onto the trace schema. */
export function computerUseTrace(out: ComputerUseOutcome, m: TraceMeta): ActorTrace {
  const items: TraceItem[] = out.items.map((it) => {
    const text = it.text !== undefined ? { text: m.redact(it.text) } : {};
    if (it.kind !== "screenshot") return { ...it, ...text, title: m.redact(it.title) };
    const path = m.shotPaths.get(it.title);
    return { ...it, ...(path ? { screenshotRef: { path, redaction: "none" as const } } : {}) };
  });
  const observed = out.requests.find((r) => r.model)?.model ?? m.model;
  const totals = out.tokenUsage;
  const cost =
    out.usd === null
      ? { estimatedCostUsd: null, reason: out.requests.find((r) => r.usd === null)?.costReason ?? "no_token_usage", ratesAsOf: null, source: null }
      : (() => {
          const c = costOf(observed, { input: 0, cached: 0, cacheWrite: 0, output: 0, reasoning: 0 });
          // A model without a rate has no estimate, even when no request of it left.
          if (c.ratesAsOf === null) return { estimatedCostUsd: null, reason: "no_rate_for_model", ratesAsOf: null, source: null };
          return { estimatedCostUsd: out.usd, reason: null, ratesAsOf: c.ratesAsOf, source: c.source ?? "humanish computer-use loop" };
        })();
  return {
    schema: "humanish.actor-trace.v1",
    participantId: m.participantId,
    actorType: "openai-computer-use",
    provider: "openai",
    providerVersion: m.model,
    protocol: "cua-loop",
    lane: "computer-use",
    persona: { id: m.personaId, traitsApplied: [], promptDigest: m.promptDigest },
    redaction: {
      status: "passed",
      screenshots: "raw",
      notes: "screenshots are raw full frames of the guest screen, as the model saw them; typed text is recorded as a length only; model text is scrubbed",
    },
    startedAt: out.startedAt,
    completedAt: out.completedAt,
    durationMs: out.durationMs,
    status: out.status,
    completionReason: out.completionReason,
    reason: m.redact(out.reason),
    ...(out.stopCause ? { stopCause: out.stopCause } : {}),
    ids: { sessionId: m.sessionId, model: observed, ...(out.lastResponseId ? { turnId: out.lastResponseId } : {}) },
    counts: {
      ...out.counts,
      requests: out.requests.length,
      tasksCompleted: out.taskFunnel?.completed ?? 0,
      tasksTotal: out.taskFunnel?.total ?? 0,
      debriefCalls: out.debrief && out.debrief.status !== "skipped" ? 1 : 0,
    },
    items,
    tokenUsage: { input: totals.input, output: totals.output, cachedInput: totals.cachedInput, total: totals.total, turns: totals.turns.length },
    estimatedCost: { schema: "humanish.actor-estimated-cost.v1", modelId: observed, ...cost },
    modelSettings: { reasoningEffort: out.modelSettings.reasoningEffort },
  };
}

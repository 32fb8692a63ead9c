/**
 * A local-agent outcome → `humanish.actor-trace.v1` and its cost line. Pure.
 *
 * The projection is the computer-use participant's own (same items, screenshots, counts and
 * redaction rules), with what differs for an account seat laid over it: the actor and provider,
 * the pinned CLI as the runtime, token usage only where the app-server reported it (missing is
 * unknown, never zero) and a cost that is null with the reason `account-unknown` — a ChatGPT
 * account's spend is not visible per request.
 */
import type { ActorTrace, CostLine } from "../../bundle/index.ts";
import type { ComputerUseOutcome } from "../computer-use/loop.ts";
import { computerUseTrace, type TraceMeta } from "../computer-use/trace.ts";
import type { LocalAgentOutcome } from "./participant.ts";

/** Why an account seat's cost is null. */
export const ACCOUNT_COST_REASON = "account-unknown";
/** The npm package of the pinned CLI. */
const CLI_PACKAGE = "@openai/codex";

/** The outcome in the computer-use loop's shape: no metered requests, spend unknown. */
function asLoopOutcome(out: LocalAgentOutcome): ComputerUseOutcome {
  const { answer, identity, usage, turnId, counts, ...core } = out;
  return {
    ...core,
    ...(answer ? { declaredOutcome: answer.outcome } : {}),
    requests: [],
    usd: null,
    tokenUsage: { input: 0, output: 0, cachedInput: 0, total: 0, turns: [] },
    counts: { ...counts, reasonings: 0 },
    modelSettings: { reasoningEffort: identity.effort },
  };
}

/** Projects the outcome onto the trace schema (`meta.model` is ignored: the identity names it). */
export function localAgentTrace(out: LocalAgentOutcome, meta: TraceMeta): ActorTrace {
  const base = computerUseTrace(asLoopOutcome(out), { ...meta, model: out.identity.model });
  const { requests: _requests, debriefCalls: _debrief, ...counts } = base.counts;
  const u = out.usage;
  const known = {
    ...(u.inputTokens !== null ? { input: u.inputTokens } : {}),
    ...(u.outputTokens !== null ? { output: u.outputTokens } : {}),
    ...(u.cachedInputTokens !== null ? { cachedInput: u.cachedInputTokens } : {}),
    ...(u.inputTokens !== null && u.outputTokens !== null ? { total: u.inputTokens + u.outputTokens } : {}),
  };
  const { tokenUsage: _zeros, ...rest } = base;
  return {
    ...rest,
    actorType: "local-agent",
    provider: "codex",
    providerVersion: out.identity.model,
    ids: { ...base.ids, model: out.identity.model, ...(out.turnId ? { turnId: out.turnId } : {}) },
    counts: { ...counts, refusedCalls: out.counts.refusedCalls, compactedFrames: out.counts.compactedFrames },
    ...(Object.keys(known).length ? { tokenUsage: { ...known, turns: 1 } } : {}),
    estimatedCost: {
      schema: "humanish.actor-estimated-cost.v1",
      estimatedCostUsd: null,
      reason: ACCOUNT_COST_REASON,
      ratesAsOf: null,
      source: null,
      modelId: out.identity.model,
    },
    modelSettings: { reasoningEffort: out.identity.effort },
    runtime: {
      schema: "humanish.actor-runtime.v1",
      package: CLI_PACKAGE,
      requestedVersion: out.identity.cliVersion,
      // The launcher refuses any other version before the thread exists.
      observedVersion: out.identity.cliVersion,
      versionStatus: "verified",
      requestedModel: out.identity.model,
      modelStatus: "humanish_default",
      requestedReasoningEffort: out.identity.effort,
      usageGranularity: "runtime_turn",
    },
  };
}

/** The seat's model cost line: unmeasured, with the account reason; the known tokens in a note. */
export function localAgentCostLine(out: LocalAgentOutcome, participantId: string): CostLine {
  const u = out.usage;
  const tokens =
    u.inputTokens !== null && u.outputTokens !== null ? `${u.inputTokens} input and ${u.outputTokens} output tokens reported` : "token usage not reported";
  return {
    kind: "model-tokens",
    participantId,
    modelId: out.identity.model,
    usd: null,
    count: null,
    basis: "no-spend-signal",
    ratesAsOf: null,
    source: null,
    reason: ACCOUNT_COST_REASON,
    note: `billed to the operator's ChatGPT account (${out.identity.transport}, ${out.identity.authClass}); ${tokens}`,
  };
}

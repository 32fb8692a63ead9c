/**
 * Evidence of a model seat from its gateway ledger: the provider line the caps are judged by and
 * the cross-check against Codex's own per-turn token sums. Pure.
 */

import type { TokenUsage } from "../../actor-registry/types.ts";
import type { CostLine } from "../../bundle/schemas.ts";
import type { ModelCostLine, ModelLedger } from "../../models/ledger.ts";

/** Bundle file of the gateway ledger. */
export const MODEL_LEDGER_FILE = "model-ledger.json";

/**
 * One `provider` line summing the ledger's model lines: null (with the first reason) when any is
 * unknown. `jobs` is the count of billable jobs (Codex turns), not of requests.
 */
export function ledgerProviderLine(lines: readonly ModelCostLine[], participantId: string, jobs: number | null): CostLine {
  const unknown = lines.find((l) => l.usd === null);
  if (unknown) {
    return {
      kind: "provider",
      participantId,
      usd: null,
      count: jobs,
      basis: "unmeasured",
      ratesAsOf: null,
      source: null,
      reason: unknown.reason ?? "no_token_usage",
    };
  }
  const usd = Math.round(lines.reduce((a, l) => a + (l.usd ?? 0), 0) * 1e6) / 1e6;
  const dates = lines
    .map((l) => l.ratesAsOf)
    .filter((d): d is string => d !== null)
    .sort();
  return {
    kind: "provider",
    participantId,
    usd,
    count: jobs,
    basis: lines.every((l) => l.basis === "no-spend-signal") ? "no-spend-signal" : "provider-token-usage",
    ratesAsOf: dates[0] ?? null,
    source: [...new Set(lines.map((l) => l.source).filter((s): s is string => s !== null))].join("; "),
    reason: null,
  };
}

/**
 * Compares the ledger's token sums with Codex's turn sums. Returns a warning sentence when they
 * differ (Codex may count requests the gateway refused or never saw), else undefined.
 */
export function turnSumMismatch(ledger: ModelLedger, usage: TokenUsage): string | undefined {
  const fw = ledger.lines.filter((l) => l.input !== null);
  const input = fw.reduce((a, l) => a + (l.input ?? 0), 0);
  const output = fw.reduce((a, l) => a + (l.output ?? 0), 0);
  if (input === usage.input && output === usage.output) return undefined;
  return `gateway ledger counts input ${input} / output ${output} tokens, Codex's turn sums say input ${usage.input} / output ${usage.output}; the ledger is what the bundle prices`;
}

/**
 * A lifecycle sentence (code `HUMANISH_MODEL_GATEWAY_REQUEST_REFUSED`) when the participant sent
 * the gateway something it does not forward — another path, a missing or wrong token — else
 * undefined. That is evidence about the participant, not a harness fault.
 */
export function refusedRequestsNote(ledger: ModelLedger): string | undefined {
  const refused = ledger.lines.filter((l) => l.outcome === "not_found" || l.outcome === "unauthorized");
  if (refused.length === 0) return undefined;
  return `HUMANISH_MODEL_GATEWAY_REQUEST_REFUSED: ${refused.length} request(s) refused without forwarding: ${[...new Set(refused.map((l) => l.detail))].join("; ")}`;
}

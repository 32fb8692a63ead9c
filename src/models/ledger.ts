/**
 * Gateway ledger → the bundle's evidence: cost lines per observed model, and the summary the
 * seat's outcome is judged by. Pure.
 */
import type { GatewayLedgerLine } from "./gateway/server.ts";

/** A cost line in the bundle's `humanish.run-cost-summary.v1` line shape (model tokens). */
export interface ModelCostLine {
  kind: "model-tokens";
  participantId: string;
  modelId?: string;
  usd: number | null;
  count: number;
  basis: "provider-token-usage" | "no-spend-signal" | "unmeasured";
  ratesAsOf: string | null;
  source: string | null;
  reason: string | null;
  note?: string;
}

/** `humanish.model-ledger.v1`: the gateway ledger artifact of one seat. */
export interface ModelLedger {
  schema: "humanish.model-ledger.v1";
  participantId: string;
  /** Endpoint host the gateway forwarded to (never a key). */
  endpointHost: string;
  /** `openai-egress` (the key stayed on the host) or `openai-env` (the agent also held it). */
  runtimeAuth: "openai-egress" | "openai-env";
  /** What the agent could still spend outside the gateway, in words. */
  residualCapability: string;
  caps: { maxUsd: number | null; maxTotalUsd: number | null };
  requests: number;
  refused: number;
  /** Sum of known costs, USD; null when any forwarded request's cost is unknown. */
  usd: number | null;
  /** Distinct models the responses reported, in first-seen order. */
  observedModels: string[];
  lines: GatewayLedgerLine[];
}

function round6(n: number): number {
  return Math.round(n * 1e6) / 1e6;
}

/** Requests that reached the endpoint (refusals and local rejections excluded). */
export function forwarded(lines: readonly GatewayLedgerLine[]): GatewayLedgerLine[] {
  return lines.filter((l) => !["refused_cap", "unauthorized", "not_found", "bad_request", "sandbox_gone", "upstream_unreachable"].includes(l.outcome));
}

/** Total known spend of the lines, or null when any forwarded request's cost is unknown. */
export function ledgerUsd(lines: readonly GatewayLedgerLine[]): number | null {
  let sum = 0;
  for (const l of lines) {
    if (l.usd === null) return null;
    sum += l.usd;
  }
  return round6(sum);
}

/**
 * Cost lines from the ledger: one per observed model (requests whose response named no model
 * form a line without `modelId`). A line is `null` with a reason when any of its requests has an
 * unknown cost — its token counts stay in the note. No forwarded request: one measured zero.
 */
export function ledgerCostLines(lines: readonly GatewayLedgerLine[], participantId: string, today: string): ModelCostLine[] {
  const fw = forwarded(lines).filter((l) => l.outcome !== "upstream_error");
  if (fw.length === 0) {
    const refused = lines.filter((l) => l.outcome === "refused_cap").length;
    return [
      {
        kind: "model-tokens",
        participantId,
        usd: 0,
        count: 0,
        basis: "no-spend-signal",
        ratesAsOf: today,
        source: `humanish model gateway: no request reached the endpoint${refused ? ` (${refused} refused by the spend cap)` : ""}`,
        reason: null,
      },
    ];
  }
  const byModel = new Map<string, GatewayLedgerLine[]>();
  for (const l of fw) {
    const k = l.model ?? "";
    byModel.set(k, [...(byModel.get(k) ?? []), l]);
  }
  const out: ModelCostLine[] = [];
  for (const [model, ls] of byModel) {
    const tok = (f: (l: GatewayLedgerLine) => number | null): number => ls.reduce((a, l) => a + (f(l) ?? 0), 0);
    const note = `${ls.length} request(s): input ${tok((l) => l.input)} (cached ${tok((l) => l.cached)}), output ${tok((l) => l.output)} (reasoning ${tok((l) => l.reasoning)}) tokens`;
    const usd = ledgerUsd(ls);
    const unknown = ls.find((l) => l.usd === null);
    if (usd === null) {
      out.push({
        kind: "model-tokens",
        participantId,
        ...(model ? { modelId: model } : {}),
        usd: null,
        count: ls.length,
        basis: "unmeasured",
        ratesAsOf: null,
        source: null,
        reason: unknown?.costReason ?? "no_token_usage",
        note,
      });
      continue;
    }
    const dates = ls
      .map((l) => l.ratesAsOf)
      .filter((d): d is string => d !== null)
      .sort();
    const sources = [...new Set(ls.map((l) => l.costSource).filter((s): s is string => s !== null))];
    out.push({
      kind: "model-tokens",
      participantId,
      ...(model ? { modelId: model } : {}),
      usd,
      count: ls.length,
      basis: "provider-token-usage",
      ratesAsOf: dates[0] ?? today,
      source: sources.join("; ") || "humanish model gateway",
      reason: null,
      note,
    });
  }
  return out;
}

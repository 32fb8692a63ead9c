/**
 * A computer-use seat's evidence besides its screenshots: the request ledger in the model
 * gateway's `humanish.model-ledger.v1` shape (the loop is its own metered client: every request
 * was admitted against the same budgets the gateway uses) and the cost lines priced from it.
 * Pure.
 */
import { ledgerCostLines, ledgerUsd, type ModelCostLine, type ModelLedger } from "../../models/index.ts";
import type { ComputerUseOutcome } from "./loop.ts";

/** The seat's ledger and cost lines. */
export function computerUseLedger(
  out: ComputerUseOutcome,
  o: { participantId: string; endpointHost: string; caps: { maxUsd: number | null; maxTotalUsd: number | null }; today: string },
): { ledger: ModelLedger; costLines: ModelCostLine[] } {
  const lines = out.requests;
  const sent = lines.filter((l) => l.outcome !== "refused_cap");
  const ledger: ModelLedger = {
    schema: "humanish.model-ledger.v1",
    participantId: o.participantId,
    endpointHost: o.endpointHost,
    runtimeAuth: "openai-egress",
    residualCapability: "none: the key stayed in the humanish host process, which made every request; the guest desktop never held it",
    caps: o.caps,
    requests: lines.length,
    refused: lines.length - sent.length,
    usd: ledgerUsd(sent.filter((l) => l.outcome !== "upstream_error")),
    observedModels: [...new Set(sent.map((l) => l.model).filter((m): m is string => m !== null))],
    lines,
  };
  return { ledger, costLines: ledgerCostLines(lines, o.participantId, o.today) };
}

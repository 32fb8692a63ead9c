/**
 * What E2B compute costs, shared by both E2B lanes: the dated rate card and the cost line of one
 * seat's sandbox (or desktop) time, an estimate over create → confirmed release for the
 * resources E2B reported. Pure. Units: ms, MiB, USD.
 */
import type { CostLine } from "../bundle/schemas.ts";

/**
 * E2B's compute rates: per second of allocated vCPU and per GiB-second of allocated RAM, billed
 * while the sandbox runs (E2B billing docs: 8 vCPU + 4 GiB costs $0.468 per hour).
 */
export const E2B_RATES = {
  usdPerVcpuSecond: 0.000014,
  usdPerGibSecond: 0.0000045,
  asOf: "2026-12-01",
  source: "E2B billing docs (e2b.dev/docs/billing): $0.000014 per vCPU-second + $0.0000045 per GiB-second of allocated RAM",
} as const;

/** What the line is about: a terminal sandbox (`sandbox-minutes`) or a desktop (`desktop-minutes`). */
export type E2BTimeNoun = "sandbox" | "desktop";

/**
 * The time line of one seat's E2B sandbox or desktop at {@link E2B_RATES}: a known zero when none
 * was created (`acquiredAt` undefined); unmeasured (`usd: null`, reason `<noun>_resources_unknown`
 * or `<noun>_release_unconfirmed`) when the resources are unknown or the release was not confirmed
 * (it may then be billed until its E2B timeout); else a `rate-table` estimate, `count` in minutes.
 * Times are epoch ms, memory MiB.
 */
export function e2bTimeLine(o: {
  noun: E2BTimeNoun;
  participantId: string;
  acquiredAt: number | undefined;
  releasedAt: number | undefined;
  resources: { cpuCount: number; memoryMB: number } | undefined;
  released: boolean;
}): CostLine {
  const base = { kind: o.noun === "desktop" ? ("desktop-minutes" as const) : ("sandbox-minutes" as const), participantId: o.participantId };
  if (o.acquiredAt === undefined) {
    return { ...base, usd: 0, count: 0, basis: "no-spend-signal", ratesAsOf: E2B_RATES.asOf, source: `humanish: no E2B ${o.noun} was created`, reason: null };
  }
  if (!o.resources || o.releasedAt === undefined || !o.released) {
    const why = !o.resources ? `${o.noun}_resources_unknown` : `${o.noun}_release_unconfirmed: it may still be billed until its E2B timeout`;
    return { ...base, usd: null, count: null, basis: "unmeasured", ratesAsOf: null, source: null, reason: why };
  }
  const seconds = Math.max(0, (o.releasedAt - o.acquiredAt) / 1000);
  const perSecond = o.resources.cpuCount * E2B_RATES.usdPerVcpuSecond + (o.resources.memoryMB / 1024) * E2B_RATES.usdPerGibSecond;
  return {
    ...base,
    usd: Math.round(seconds * perSecond * 1e6) / 1e6,
    count: Math.round((seconds / 60) * 1000) / 1000,
    basis: "rate-table",
    ratesAsOf: E2B_RATES.asOf,
    source: E2B_RATES.source,
    reason: null,
    note: `estimate: ${seconds.toFixed(1)} s from create to confirmed release × (${o.resources.cpuCount} vCPU, ${o.resources.memoryMB} MiB)`,
  };
}

/**
 * What an E2B desktop costs: an estimate over create → confirmed release at E2B's published
 * compute rates for the resources E2B reported for the sandbox. Pure. Units: ms, MiB, USD.
 */
import type { CostLine } from "../../bundle/schemas.ts";

/** E2B's compute rates, billed per second while the sandbox runs. */
export const E2B_DESKTOP_RATES = {
  usdPerVcpuSecond: 0.000014,
  usdPerGibSecond: 0.0000045,
  asOf: "2026-12-01",
  source: "E2B billing docs (e2b.dev/docs/billing): $0.000014 per vCPU-second + $0.0000045 per GiB-second of allocated RAM",
} as const;

/**
 * The desktop-time line of one seat; unmeasured (`usd: null`) when the resources are unknown or
 * the release was not confirmed (it may then be billed until its E2B timeout).
 */
export function desktopTimeLine(o: {
  participantId: string;
  acquiredAt: number | undefined;
  releasedAt: number | undefined;
  resources: { cpuCount: number; memoryMB: number } | undefined;
  released: boolean;
}): CostLine {
  const base = { kind: "desktop-minutes" as const, participantId: o.participantId };
  if (o.acquiredAt === undefined)
    return {
      ...base,
      usd: 0,
      count: 0,
      basis: "no-spend-signal",
      ratesAsOf: E2B_DESKTOP_RATES.asOf,
      source: "humanish: no E2B desktop was created",
      reason: null,
    };
  if (!o.resources || o.releasedAt === undefined || !o.released) {
    const why = !o.resources ? "desktop_resources_unknown" : "desktop_not_released: it may still be billed until its E2B timeout";
    return { ...base, usd: null, count: null, basis: "unmeasured", ratesAsOf: null, source: null, reason: why };
  }
  const seconds = Math.max(0, (o.releasedAt - o.acquiredAt) / 1000);
  const perSecond = o.resources.cpuCount * E2B_DESKTOP_RATES.usdPerVcpuSecond + (o.resources.memoryMB / 1024) * E2B_DESKTOP_RATES.usdPerGibSecond;
  return {
    ...base,
    usd: Math.round(seconds * perSecond * 1e6) / 1e6,
    count: Math.round((seconds / 60) * 1000) / 1000,
    basis: "rate-table",
    ratesAsOf: E2B_DESKTOP_RATES.asOf,
    source: E2B_DESKTOP_RATES.source,
    reason: null,
    note: `estimate: ${seconds.toFixed(1)} s from create to confirmed release × (${o.resources.cpuCount} vCPU, ${o.resources.memoryMB} MiB)`,
  };
}

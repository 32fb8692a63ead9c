/**
 * The pure rules of an E2B terminal seat: its sandbox timeout, its metadata (a positive
 * allowlist), its egress policy per runtime-auth mode, and the sandbox-time cost estimate.
 * No I/O.
 */
import { OPENAI_API_HOST } from "../../actors/codex-exec/command.ts";
import type { CostLine } from "../../bundle/schemas.ts";
import { HumanishError } from "../../errors.ts";
import type { E2BNetworkPolicy } from "../../sandbox/e2b.ts";

/** Time the sandbox outlives the seat's own budget, ms: E2B's kill is the backstop, never the plan. */
export const E2B_SEAT_MARGIN_MS = 5 * 60_000;

/** Bounds of the seat's setup steps, ms. */
export const E2B_SETUP_BOUNDS = {
  /** The runtime prerequisite (reuse or install Node). */
  nodeMs: 300_000,
  /** The unkeyed exact-version probe. */
  probeMs: 60_000,
  /** One `product.install` command. */
  installMs: 600_000,
  /** All hidden task checks together. */
  checksMs: 120_000,
} as const;

/**
 * The E2B sandbox timeout of one seat, ms: the participant's `maxMinutes`, every setup bound it
 * may use (Node for a Codex seat, the probe, each install command) and the checks, plus the margin.
 */
export function seatTimeoutMs(o: { maxMinutes: number; codex: boolean; installs: number }): number {
  const setup = (o.codex ? E2B_SETUP_BOUNDS.nodeMs + E2B_SETUP_BOUNDS.probeMs : 0) + o.installs * E2B_SETUP_BOUNDS.installMs;
  return Math.round(o.maxMinutes * 60_000) + setup + E2B_SETUP_BOUNDS.checksMs + E2B_SEAT_MARGIN_MS;
}

/**
 * The sandbox's whole metadata: run id, seat id and lab id, nothing else (no local path, no host
 * name, no secret). Values are cut to 200 characters, E2B's own bound on a metadata value.
 */
export function seatMetadata(o: { runId: string; seatId: string; labId: string }): Record<string, string> {
  const cut = (s: string) => s.slice(0, 200);
  return { "humanish.run": cut(o.runId), "humanish.seat": cut(o.seatId), "humanish.lab": cut(o.labId) };
}

/** What the egress policy is, for the lifecycle (no secret in it). */
export interface EgressPlan {
  /** The SDK policy; undefined means unrestricted egress. In `openai-egress` mode it carries the key. */
  policy: E2BNetworkPolicy | undefined;
  /** One sentence for the `terminal-lab.egress.policy` lifecycle event. */
  description: string;
}

const ALL_TRAFFIC = "0.0.0.0/0";

/**
 * The egress policy of a seat's sandbox.
 * - `egressAllow` declared: only those hosts (plus the model host for a Codex seat), every other
 *   address denied;
 * - else a seat that needs the network (a Codex seat, or `product.install` commands): unrestricted;
 * - else none at all.
 * In `openai-egress` mode the model host gets a header rule with the key (`Authorization: Bearer`)
 * and is in `allowOut`. A rule for that host already in `existingRules` is refused, never
 * overwritten.
 * @throws HumanishError `HUMANISH_TERMINAL_LAB_EGRESS_RULE_CONFLICT`.
 */
export function egressPlan(o: {
  egressAllow: readonly string[] | undefined;
  codex: boolean;
  installs: number;
  runtimeAuth: "openai-env" | "openai-egress" | undefined;
  key: string | undefined;
  existingRules?: Readonly<Record<string, unknown>>;
}): EgressPlan {
  const egress = o.codex && o.runtimeAuth === "openai-egress";
  if (egress) {
    const clash = Object.keys(o.existingRules ?? {}).find((h) => h.toLowerCase() === OPENAI_API_HOST);
    if (clash !== undefined) {
      throw new HumanishError(
        "HUMANISH_TERMINAL_LAB_EGRESS_RULE_CONFLICT",
        `an egress rule for ${OPENAI_API_HOST} already exists; openai-egress would have to overwrite it, so nothing was created`,
        { next: `Remove the existing rule for ${OPENAI_API_HOST}, or use execution.runtimeAuth: openai-env.` },
      );
    }
    if (!o.key) {
      throw new HumanishError("HUMANISH_TERMINAL_LAB_RUNTIME_AUTH_MISSING", "openai-egress needs the runtime key for the sandbox's egress rule.", {
        next: "export CODEX_API_KEY=… (or OPENAI_API_KEY), then run again.",
      });
    }
  }
  const rules = egress ? { [OPENAI_API_HOST]: [{ transform: { headers: { Authorization: `Bearer ${o.key}` } } }] } : undefined;
  const ruleNote = egress
    ? `; a header rule for ${OPENAI_API_HOST} carries the key (residual capability: any process in the sandbox can spend through it)`
    : "";
  if (o.egressAllow && o.egressAllow.length > 0) {
    const hosts = [...new Set([...o.egressAllow.map((h) => h.toLowerCase()), ...(o.codex ? [OPENAI_API_HOST] : [])])];
    return {
      policy: { allowOut: hosts, denyOut: [ALL_TRAFFIC], ...(rules ? { rules } : {}) },
      description: `execution.egressAllow: only ${hosts.join(", ")}; every other address denied${ruleNote}`,
    };
  }
  if (o.codex || o.installs > 0) {
    return {
      policy: rules ? { allowOut: [OPENAI_API_HOST], rules } : undefined,
      description: `unrestricted egress (${o.codex ? "the Codex participant downloads its CLI and reaches its model" : "product.install needs it"}; declare execution.egressAllow to restrict it)${ruleNote}`,
    };
  }
  return { policy: { denyOut: [ALL_TRAFFIC] }, description: "no egress: the scripted participant and its product need no network" };
}

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

/**
 * The sandbox-time line of a seat: an estimate over acquire → release at {@link E2B_RATES} for
 * the resources E2B reported; `null` (unmeasured) when the resources or the times are unknown.
 * Units: ms, MiB, USD.
 */
export function sandboxTimeLine(o: {
  participantId: string;
  acquiredAt: number | undefined;
  releasedAt: number | undefined;
  resources: { cpuCount: number; memoryMB: number } | undefined;
  released: boolean;
}): CostLine {
  const base = { kind: "sandbox-minutes" as const, participantId: o.participantId };
  if (o.acquiredAt === undefined) {
    return { ...base, usd: 0, count: 0, basis: "no-spend-signal", ratesAsOf: E2B_RATES.asOf, source: "humanish: no E2B sandbox was created", reason: null };
  }
  if (!o.resources || o.releasedAt === undefined || !o.released) {
    const why = !o.resources ? "sandbox_resources_unknown" : "sandbox_release_unconfirmed: it may still be billed until its E2B timeout";
    return { ...base, usd: null, count: null, basis: "unmeasured", ratesAsOf: null, source: null, reason: why };
  }
  const seconds = Math.max(0, (o.releasedAt - o.acquiredAt) / 1000);
  const perSecond = o.resources.cpuCount * E2B_RATES.usdPerVcpuSecond + (o.resources.memoryMB / 1024) * E2B_RATES.usdPerGibSecond;
  const usd = Math.round(seconds * perSecond * 1e6) / 1e6;
  return {
    ...base,
    usd,
    count: Math.round((seconds / 60) * 1000) / 1000,
    basis: "rate-table",
    ratesAsOf: E2B_RATES.asOf,
    source: E2B_RATES.source,
    reason: null,
    note: `estimate: ${seconds.toFixed(1)} s from create to confirmed release × (${o.resources.cpuCount} vCPU, ${o.resources.memoryMB} MiB)`,
  };
}

/**
 * The pure rules of an E2B terminal seat: its sandbox timeout, its metadata (a positive
 * allowlist), its egress policy per runtime-auth mode, and the sandbox-time cost estimate.
 * No I/O.
 */
import { OPENAI_API_HOST } from "../../actors/codex-exec/command.ts";
import type { CostLine } from "../../bundle/schemas.ts";
import { HumanishError } from "../../errors.ts";
import type { E2BNetworkPolicy } from "../../sandbox/e2b.ts";
import { e2bTimeLine } from "../../sandbox/e2b-rates.ts";

export { E2B_RATES } from "../../sandbox/e2b-rates.ts";

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
 * - `egressAllow` declared: only those hosts, every other address denied — exactly as declared:
 *   a Codex seat whose list lacks its model host (`modelHost`) is refused, never widened;
 * - else a seat that needs the network (a Codex seat, or `product.install` commands): unrestricted;
 * - else none at all.
 * In `openai-egress` mode the model host gets a header rule with the key (`Authorization: Bearer`)
 * and is in `allowOut`. A rule for that host already in `existingRules` is refused, never
 * overwritten.
 * @throws HumanishError `HUMANISH_TERMINAL_LAB_EGRESS_RULE_CONFLICT`,
 *   `HUMANISH_TERMINAL_LAB_EGRESS_MODEL_HOST_MISSING` (naming the host to add).
 */
export function egressPlan(o: {
  egressAllow: readonly string[] | undefined;
  codex: boolean;
  /** The host a Codex seat's model requests go to (`host[:port]`; default api.openai.com). */
  modelHost?: string;
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
    const hosts = [...new Set(o.egressAllow.map((h) => h.toLowerCase()))];
    const modelHost = (o.modelHost ?? OPENAI_API_HOST).toLowerCase();
    // An allowlist is the lab's declaration: adding the model host to it would grant egress the
    // lab never listed, so a Codex seat that could not reach its model is refused instead.
    if (o.codex && !hosts.includes(modelHost) && !hosts.includes(modelHost.replace(/:\d+$/, ""))) {
      throw new HumanishError(
        "HUMANISH_TERMINAL_LAB_EGRESS_MODEL_HOST_MISSING",
        `execution.egressAllow (${hosts.join(", ")}) lacks ${modelHost}, the host the Codex participant sends its model requests to; nothing was created.`,
        { next: `Add ${modelHost} to execution.egressAllow, or remove execution.egressAllow for unrestricted egress.` },
      );
    }
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
 * The next step of a failed `product.install` on E2B, where the network is the sandbox's egress
 * policy (`execution.egressAllow`), not Docker's `execution.network`: with an allowlist, the
 * registry's host may simply be missing from it.
 */
export function e2bInstallFailureHint(egressAllow: readonly string[] | undefined): string {
  const head = "Fix that install command (the full output is in provision.log in the run directory); it ran as root";
  return egressAllow && egressAllow.length > 0
    ? `${head} with egress only to execution.egressAllow (${egressAllow.join(", ")}): if it downloads from another host, add that host to execution.egressAllow; else check the package name and version.`
    : `${head} with unrestricted egress (no execution.egressAllow), so check the package name and version and that the registry answers from the E2B sandbox.`;
}

/**
 * The sandbox-time line of a seat: the shared E2B estimate over acquire → confirmed release
 * ({@link e2bTimeLine}), as `sandbox-minutes`. Units: ms, MiB, USD.
 */
export function sandboxTimeLine(o: Omit<Parameters<typeof e2bTimeLine>[0], "noun">): CostLine {
  return e2bTimeLine({ noun: "sandbox", ...o });
}

/**
 * The model side of a model-driven terminal seat: the host's model gateway (one per seat), its
 * socket directory mounted into the sandbox, and the in-sandbox forwarder that makes the gateway
 * reachable at `http://127.0.0.1:<port>/v1` with no network.
 *
 * Sequence: {@link openModelSeat} before the sandbox exists (its mount is part of the create
 * call) → {@link startSandboxForwarder} after provisioning, before the network is taken away →
 * the participant runs → {@link ModelSeat.close} in `finally`.
 */
import { decodeText } from "../../actors/terminal-participant/exec.ts";
import type { ModelGatewayAccess, RuntimeKey } from "../../actors/terminal-participant/participant.ts";
import { HumanishError } from "../../errors.ts";
import type { ModelEndpoint } from "../../models/endpoint.ts";
import { SpendBudget } from "../../models/gateway/budget.ts";
import { SANDBOX_FORWARDER_SOURCE } from "../../models/gateway/sandbox-forwarder.ts";
import { type Gateway, type GatewayLedgerLine, startGateway } from "../../models/gateway/server.ts";
import { forwarded, ledgerUsd, type ModelLedger } from "../../models/ledger.ts";
import type { Sandbox } from "../../sandbox/types.ts";

/** Where the gateway's socket directory is mounted inside the sandbox. */
export const SANDBOX_MODEL_DIR = "/run/humanish-model";
/** Loopback port the in-sandbox forwarder listens on. */
export const SANDBOX_MODEL_PORT = 41400;
/** Where the forwarder script is written inside the sandbox (root-owned, read-only to the participant). */
export const SANDBOX_FORWARDER_PATH = "/usr/local/lib/humanish-model-forwarder.cjs";
const FORWARDER_LOG = "/var/log/humanish-model-forwarder.log";

/** A model seat's gateway and what the sandbox needs of it. */
export interface ModelSeat {
  gateway: Gateway;
  /** The bind mount of the socket directory (for the sandbox create call). */
  mount: { hostPath: string; containerPath: string; readOnly: boolean };
  access: ModelGatewayAccess;
  /** The ledger artifact as it stands. */
  ledger(participantId: string): ModelLedger;
  /** True when the cap refused a request, or a response was cut at the output bound the gateway set from the budget. */
  capReached(): boolean;
  close(): Promise<void>;
}

/** The one study-wide budget (`scenario.caps.maxTotalUsd`) every seat's gateway checks. */
export function studyBudget(maxTotalUsd: number): SpendBudget {
  return new SpendBudget("scenario.caps.maxTotalUsd", maxTotalUsd);
}

/**
 * Starts the seat's gateway.
 * @throws HumanishError `HUMANISH_MODEL_GATEWAY_LISTEN_FAILED`, or
 *   `HUMANISH_TERMINAL_LAB_RUNTIME_AUTH_MISSING` when a positive cap has no key to forward with.
 */
export function openModelSeat(o: {
  endpoint: ModelEndpoint;
  runtimeAuth: "openai-env" | "openai-egress";
  key: RuntimeKey | undefined;
  maxUsd: number;
  maxTotalUsd: number | null;
  /**
   * The study's budget, shared by every seat of the study (create it once with
   * {@link studyBudget}); without it, `maxTotalUsd` bounds this seat alone.
   */
  study?: SpendBudget;
  onLine?: (line: GatewayLedgerLine) => void;
}): ModelSeat {
  const study = o.study ?? (o.maxTotalUsd !== null ? studyBudget(o.maxTotalUsd) : undefined);
  const budgets = [new SpendBudget("scenario.caps.maxUsd", o.maxUsd), ...(study ? [study] : [])];
  // With maxUsd 0 nothing is ever forwarded, so a missing key is harmless: the gateway refuses first.
  const key = o.key ?? (o.maxUsd === 0 ? { sourceName: "none", value: "" } : undefined);
  if (!key) {
    throw new HumanishError("HUMANISH_TERMINAL_LAB_RUNTIME_AUTH_MISSING", "the model gateway has no key to forward with.", {
      next: "export CODEX_API_KEY=… (or OPENAI_API_KEY), then run again.",
    });
  }
  const gateway = startGateway({ endpoint: o.endpoint, key, budgets, ...(o.onLine ? { onLine: o.onLine } : {}) });
  const access: ModelGatewayAccess = { baseURL: `http://127.0.0.1:${SANDBOX_MODEL_PORT}/v1`, token: gateway.token, auth: o.runtimeAuth };
  return {
    gateway,
    mount: { hostPath: gateway.socketDir, containerPath: SANDBOX_MODEL_DIR, readOnly: false },
    access,
    // A response cut at the output bound the gateway set from the budget is the budget running
    // out too: the agent's turn ended because no more could be afforded.
    capReached: () =>
      gateway.lines.some(
        (l) =>
          l.outcome === "refused_cap" ||
          (l.outcome === "incomplete" && l.maxOutputTokensSetByGateway !== undefined && l.detail === "incomplete: max_output_tokens"),
      ),
    ledger: (participantId) => {
      const lines = [...gateway.lines];
      const fw = forwarded(lines);
      return {
        schema: "humanish.model-ledger.v1",
        participantId,
        endpointHost: o.endpoint.host,
        runtimeAuth: o.runtimeAuth,
        residualCapability:
          o.runtimeAuth === "openai-egress"
            ? "none: the sandbox held only a per-seat gateway token, valid for this seat's gateway until it closed"
            : "spendable key: the participant's command env carried the real key as OPENAI_API_KEY; spend made with it outside the gateway is not metered or capped",
        caps: { maxUsd: o.maxUsd, maxTotalUsd: o.maxTotalUsd },
        requests: lines.length,
        refused: lines.filter((l) => l.outcome === "refused_cap").length,
        usd: ledgerUsd(fw),
        observedModels: [...new Set(fw.map((l) => l.model).filter((m): m is string => m !== null))],
        lines,
      };
    },
    close: () => gateway.close(),
  };
}

/**
 * Writes the forwarder into the sandbox and starts it as root in the background, then waits for
 * it to listen.
 * @throws HumanishError `HUMANISH_MODEL_GATEWAY_PORT_IN_USE` when the port is taken inside the
 *   sandbox, `HUMANISH_MODEL_GATEWAY_FORWARDER_FAILED` when it does not start.
 */
export async function startSandboxForwarder(sandbox: Sandbox, socketName: string, signal: AbortSignal): Promise<void> {
  await sandbox.writeFile(SANDBOX_FORWARDER_PATH, SANDBOX_FORWARDER_SOURCE, 0o644);
  const script = [
    `node ${SANDBOX_FORWARDER_PATH} ${SANDBOX_MODEL_PORT} ${SANDBOX_MODEL_DIR}/${socketName} > ${FORWARDER_LOG} 2>&1 < /dev/null &`,
    "for i in $(seq 1 100); do",
    `  grep -q HUMANISH_FORWARDER_READY ${FORWARDER_LOG} 2>/dev/null && exit 0`,
    `  grep -q HUMANISH_FORWARDER_PORT_IN_USE ${FORWARDER_LOG} 2>/dev/null && exit 3`,
    "  sleep 0.1",
    "done",
    `cat ${FORWARDER_LOG}; exit 4`,
  ].join("\n");
  const r = await sandbox.exec({ cmd: ["bash", "-c", script], user: "root", cwd: "/", timeoutMs: 30_000, signal });
  if (r.exitCode === 3) {
    throw new HumanishError(
      "HUMANISH_MODEL_GATEWAY_PORT_IN_USE",
      `port ${SANDBOX_MODEL_PORT} inside the sandbox is already taken, so the model gateway cannot be forwarded there.`,
      {
        next: `Free 127.0.0.1:${SANDBOX_MODEL_PORT} in the sandbox image (nothing in product.install may listen on it).`,
      },
    );
  }
  if (r.exitCode !== 0) {
    throw new HumanishError(
      "HUMANISH_MODEL_GATEWAY_FORWARDER_FAILED",
      `the model forwarder did not start in the sandbox (exit ${r.exitCode}): ${decodeText(r.stdout).trim().slice(0, 300)}`,
      { next: "The sandbox image needs node on PATH (the humanish sandbox image has Node 22)." },
    );
  }
}

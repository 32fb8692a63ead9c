/**
 * The pure preflight of a terminal study, shared by both terminal lanes: everything that can
 * refuse a study is checked before a run directory, a sandbox, a key read for use, or any spend
 * exists. No I/O.
 *
 * `planTerminalStudy`: actor resolves to a terminal-lane descriptor; product has a name and
 * surfaces; live only: key placement, caps (`maxUsd` set and `maxMinutes > 0`; a spending
 * participant needs a priced model under a positive cap), runtime key present (NAMES inspected;
 * the value is kept in memory for the one command that needs it). On `e2b-terminal` a Codex
 * participant reaches its model directly (no host gateway can refuse a request at the cap), so
 * it always needs a key; and since E2B bills sandbox time, every live E2B study needs a positive
 * `maxUsd`.
 */

import { resolveActor } from "../actor-registry/registry.ts";
import type { ActorDescriptor } from "../actor-registry/types.ts";
import { RUNTIME_KEY_NAMES, resolveRuntimeKey } from "../actors/codex-exec/command.ts";
import { codexModel, createCodexExec, type LatestVersion } from "../actors/codex-exec/index.ts";
import { isModelPriced } from "../actors/codex-exec/pricing.ts";
import { createScriptedTerminal } from "../actors/scripted-terminal/index.ts";
import type { RuntimeKey, TerminalParticipant } from "../actors/terminal-participant/participant.ts";
import { HumanishError } from "../errors.ts";
import type { TerminalLabConfig } from "../lab/schema.ts";
import { type ModelEndpoint, resolveEndpoint } from "../models/endpoint.ts";

/** Caps as recorded in the bundle (null = not declared). */
export interface TerminalCaps {
  maxUsd: number | null;
  maxJobs: number | null;
  maxMinutes: number | null;
}

/** The outcome of the pure preflight: what the study will run. */
export interface TerminalPlan {
  descriptor: ActorDescriptor;
  participant: TerminalParticipant;
  caps: TerminalCaps;
  /** The runtime key (live codex-exec only). Its VALUE must stay in memory. */
  runtimeKey?: RuntimeKey;
  network: "none" | "bridge";
  target: "docker" | "e2b-terminal";
  /** Model-driven seats: how the key is held, and where the gateway forwards (host only). */
  model?: { runtimeAuth: "openai-env" | "openai-egress"; endpoint: ModelEndpoint };
}

/**
 * Creates the participant implementation for a validated terminal actor. `shared.latest` lets a
 * study's seats resolve Codex's `latest` once.
 */
export function createTerminalParticipant(lab: TerminalLabConfig, shared: { latest?: LatestVersion } = {}): TerminalParticipant {
  const actor = lab.actors[0];
  if (actor.type === "scripted-terminal") return createScriptedTerminal(actor.steps);
  return createCodexExec({
    // A hosted sandbox runs the exact version through npx (no global install as root).
    launcher: lab.execution.target === "e2b-terminal" ? "npx" : "global-install",
    ...(shared.latest ? { latest: shared.latest } : {}),
    ...(lab.execution.runtime?.version ? { version: lab.execution.runtime.version } : {}),
    ...(actor.model ? { model: actor.model } : {}),
    ...(actor.reasoningEffort ? { reasoningEffort: actor.reasoningEffort } : {}),
  });
}

/**
 * Pure preflight. Throws the first failing rule as HumanishError:
 * `HUMANISH_TERMINAL_LAB_ACTOR_UNSUPPORTED`, `_SUBJECT_INVALID`, and on live runs
 * `_KEYPLACEMENT_INVALID`, `_CAPS_MISSING`, `_CAPS_INVALID`,
 * `_UNPRICED_CAP`, `_RUNTIME_AUTH_MISSING`.
 */
export function planTerminalStudy(lab: TerminalLabConfig, mode: "dry-run" | "live", env: Record<string, string | undefined>): TerminalPlan {
  const actor = lab.actors[0] as { type: string } | undefined;
  if (!actor || lab.actors.length !== 1) {
    throw new HumanishError("HUMANISH_TERMINAL_LAB_ACTOR_UNSUPPORTED", `actors must list exactly one participant (got ${lab.actors.length}).`, {
      next: "Keep a single entry under actors:.",
    });
  }
  const descriptor = resolveActor(actor.type, "terminal");
  const product = lab.subject.product;
  if (!product?.name || !Array.isArray(product.publicSurfaces) || product.publicSurfaces.length === 0) {
    throw new HumanishError("HUMANISH_TERMINAL_LAB_SUBJECT_INVALID", "subject.product needs a name and at least one publicSurfaces URL.", {
      next: "Set subject.product.name and subject.product.publicSurfaces.",
    });
  }
  const c = lab.scenario.caps;
  const caps: TerminalCaps = { maxUsd: c?.maxUsd ?? null, maxJobs: c?.maxJobs ?? null, maxMinutes: c?.maxMinutes ?? null };
  const participant = createTerminalParticipant(lab);
  const network = lab.execution.network ?? "none";
  const target = lab.execution.target;
  if (mode === "dry-run") return { descriptor, participant, caps, network, target };

  const needsKey = descriptor.runtimeKeyNames.length > 0;
  if (needsKey && descriptor.capabilities.keyPlacement !== "in-sandbox-command-scoped") {
    throw new HumanishError("HUMANISH_TERMINAL_LAB_KEYPLACEMENT_INVALID", `${descriptor.type} does not keep its key command-scoped inside the sandbox.`, {
      next: "Use a terminal actor whose key placement is in-sandbox-command-scoped (codex-exec).",
    });
  }
  if (caps.maxUsd === null || caps.maxMinutes === null || !(caps.maxMinutes > 0)) {
    throw new HumanishError(
      "HUMANISH_TERMINAL_LAB_CAPS_MISSING",
      `A live terminal study needs scenario.caps.maxUsd set and scenario.caps.maxMinutes > 0 (got maxUsd ${caps.maxUsd ?? "unset"}, maxMinutes ${caps.maxMinutes ?? "unset"}).`,
      { next: "Add scenario.caps: {maxUsd: 0, maxMinutes: 10} (raise maxUsd for a model participant), or run with --dry-run." },
    );
  }
  if (target === "e2b-terminal" && !(caps.maxUsd > 0)) {
    throw new HumanishError(
      "HUMANISH_TERMINAL_LAB_CAPS_INVALID",
      "scenario.caps.maxUsd 0 cannot hold on e2b-terminal: E2B bills every second a sandbox runs, scripted participants included; nothing was started.",
      { next: "Set scenario.caps.maxUsd to what a seat may spend on sandbox time (and model use), e.g. 0.5, or run on execution.target: docker." },
    );
  }
  if (needsKey) {
    const model = lab.actors[0].type === "codex-exec" ? codexModel(lab.actors[0]) : undefined;
    const runtimeAuth = lab.execution.runtimeAuth ?? "openai-env";
    const endpoint = resolveEndpoint(env);
    // maxUsd 0 is valid: the gateway lets no request leave, so no price and no key are needed.
    // An undeclared model is Codex's own choice: the gateway prices (or refuses) each request by
    // the model that request names, so only a declared model can be checked here.
    if (caps.maxUsd > 0 && model !== undefined && !isModelPriced(model)) {
      throw new HumanishError(
        "HUMANISH_TERMINAL_LAB_UNPRICED_CAP",
        `scenario.caps.maxUsd ${caps.maxUsd} cannot be enforced: model ${model ?? "(none)"} has no rate in the pricing table.`,
        { next: "Declare actors[0].model with a priced model (e.g. gpt-5.1-codex), or add its rates to the pricing table." },
      );
    }
    const key = resolveRuntimeKey(env);
    // On E2B no gateway stands between Codex and its model: every seat needs the key itself.
    if (!key && (caps.maxUsd > 0 || target === "e2b-terminal")) {
      throw new HumanishError(
        "HUMANISH_TERMINAL_LAB_RUNTIME_AUTH_MISSING",
        `${descriptor.type} (runtimeAuth ${runtimeAuth}) needs a model key in ${RUNTIME_KEY_NAMES.join(" or ")}; neither is set. Nothing was started.`,
        { next: "export CODEX_API_KEY=… (or pass --env-file with CODEX_API_KEY), then run again." },
      );
    }
    return { descriptor, participant, caps, network, target, model: { runtimeAuth, endpoint }, ...(key ? { runtimeKey: key } : {}) };
  }
  return { descriptor, participant, caps, network, target };
}

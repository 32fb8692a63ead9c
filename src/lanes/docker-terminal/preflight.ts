/**
 * Terminal study preflight: everything that can refuse a study is
 * checked before a run directory, a sandbox, a key read for use, or any spend exists.
 *
 * `planTerminalStudy` (pure, no I/O): actor resolves to a terminal-lane descriptor; product has a
 * name and surfaces; live only: target runnable (`e2b-terminal` live is a later issue), key
 * placement, caps (`maxUsd` set and `maxMinutes > 0`; a spending participant needs a priced
 * model under a positive cap), runtime key present (NAMES inspected; the value is kept in memory
 * for the one command that needs it).
 * `checkEngine` (live only): the Docker engine answers; the sandbox image is present or built.
 */

import { RUNTIME_KEY_NAMES, resolveRuntimeKey } from "../../actors/codex-exec/command.ts";
import { codexModel, createCodexExec } from "../../actors/codex-exec/index.ts";
import { isModelPriced } from "../../actors/codex-exec/pricing.ts";
import { resolveActor } from "../../actors/registry.ts";
import { createScriptedTerminal } from "../../actors/scripted-terminal/index.ts";
import type { RuntimeKey, TerminalParticipant } from "../../actors/terminal/participant.ts";
import type { ActorDescriptor } from "../../actors/types.ts";
import { type DockerClient, dockerClientFor, isDockerApiError } from "../../docker/index.ts";
import { HumanishError } from "../../errors.ts";
import type { TerminalLabConfig } from "../../lab/schema.ts";
import { type ModelEndpoint, resolveEndpoint } from "../../models/endpoint.ts";
import { ensureImage } from "../../runtime/images.ts";
import { nodeFactsOf, sandboxRecipe } from "../../runtime/recipes.ts";

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

/** Creates the participant implementation for a validated terminal actor. */
export function createTerminalParticipant(lab: TerminalLabConfig): TerminalParticipant {
  const actor = lab.actors[0];
  if (actor.type === "scripted-terminal") return createScriptedTerminal(actor.steps);
  return createCodexExec({
    ...(lab.execution.runtime?.version ? { version: lab.execution.runtime.version } : {}),
    ...(actor.model ? { model: actor.model } : {}),
    ...(actor.reasoningEffort ? { reasoningEffort: actor.reasoningEffort } : {}),
  });
}

/**
 * Pure preflight. Throws the first failing rule as HumanishError:
 * `HUMANISH_TERMINAL_LAB_ACTOR_UNSUPPORTED`, `_SUBJECT_INVALID`, and on live runs
 * `_TARGET_UNSUPPORTED`, `_KEYPLACEMENT_INVALID`, `_CAPS_MISSING`, `_CAPS_INVALID`,
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

  if (target === "e2b-terminal") {
    throw new HumanishError(
      "HUMANISH_TERMINAL_LAB_TARGET_UNSUPPORTED",
      "execution.target e2b-terminal cannot run live yet (hosted E2B terminals come in a later release); nothing was started or spent.",
      { next: "Set execution.target: docker to run locally, or run this lab with --dry-run." },
    );
  }
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
  if (needsKey) {
    const model = lab.actors[0].type === "codex-exec" ? codexModel(lab.actors[0]) : undefined;
    const runtimeAuth = lab.execution.runtimeAuth ?? "openai-env";
    const endpoint = resolveEndpoint(env);
    // maxUsd 0 is valid: the gateway lets no request leave, so no price and no key are needed.
    if (caps.maxUsd > 0 && !isModelPriced(model)) {
      throw new HumanishError(
        "HUMANISH_TERMINAL_LAB_UNPRICED_CAP",
        `scenario.caps.maxUsd ${caps.maxUsd} cannot be enforced: model ${model ?? "(none)"} has no rate in the pricing table.`,
        { next: "Declare actors[0].model with a priced model (e.g. gpt-5.1-codex), or add its rates to the pricing table." },
      );
    }
    const key = resolveRuntimeKey(env);
    if (!key && caps.maxUsd > 0) {
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

/** What the engine check established. */
export interface EngineReady {
  docker: DockerClient;
  /** Image reference the sandbox is created from. */
  image: string;
  /** True when this preflight built the image. */
  built: boolean;
  /** Node runtime of the image from its labels; null for an image without them (a lab's own). */
  node: { version: string; sha256: string; npmVersion: string | null } | null;
}

/**
 * Engine preflight: the Docker engine answers `/_ping`, and the image exists — `execution.image`
 * must already be present; the humanish sandbox image is built from its embedded recipe when
 * missing. The engine is the one `opts.env` names (the command's env: process env merged with
 * `--env-file`; default process.env). Throws `HUMANISH_DOCKER_HOST_UNSUPPORTED`,
 * `HUMANISH_DOCKER_UNAVAILABLE`, `HUMANISH_SANDBOX_IMAGE_MISSING` or `HUMANISH_IMAGE_BUILD_FAILED`.
 */
export async function checkEngine(
  lab: TerminalLabConfig,
  opts: { docker?: DockerClient; env?: Record<string, string | undefined>; signal?: AbortSignal; onBuild?: (line: string) => void } = {},
): Promise<EngineReady> {
  const env = opts.env ?? process.env;
  const docker = opts.docker ?? dockerClientFor(env);
  await docker.ping();
  if (lab.execution.image) {
    let labels: Record<string, string> | null | undefined;
    try {
      labels = (await docker.imageInspect(lab.execution.image)).Config?.Labels;
    } catch (e) {
      if (isDockerApiError(e, 404)) {
        throw new HumanishError(
          "HUMANISH_SANDBOX_IMAGE_MISSING",
          `execution.image ${lab.execution.image} is not present in the Docker engine; no registry is contacted.`,
          {
            next: `Build or load ${lab.execution.image} first (docker build / docker load), or remove execution.image to use the humanish sandbox image.`,
          },
        );
      }
      throw e;
    }
    return { docker, image: lab.execution.image, built: false, node: nodeFactsOf(labels) };
  }
  const r = await ensureImage(docker, sandboxRecipe, {
    env,
    ...(opts.signal ? { signal: opts.signal } : {}),
    ...(opts.onBuild ? { onProgress: (m) => typeof m.stream === "string" && m.stream.trim() && opts.onBuild?.(m.stream.trim()) } : {}),
  });
  const node = nodeFactsOf((await docker.imageInspect(r.tag)).Config?.Labels);
  return { docker, image: r.tag, built: r.built, node };
}

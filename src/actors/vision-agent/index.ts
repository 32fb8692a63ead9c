/**
 * `vision-agent`: any vision model as a browser participant, behind the
 * {@link BrowserParticipant} seam. It reaches its model from this host process (the key never
 * enters the desktop) on any Responses-compatible endpoint (`OPENAI_BASE_URL`), through the
 * project's models layer and the real `openai` SDK, and drives the desktop with the local agent's
 * `humanish_ui` tool (loop.ts).
 *
 * Spend: every request is admitted before it leaves against the seat's and the study's USD caps
 * (a model the rate table prices) and token caps (`scenario.caps.maxTokens`, `maxTotalTokens`,
 * which any model can be held to). An unpriced model runs under a token cap or under no cap at
 * all, never under a positive USD cap it cannot price: that is refused at preflight. Its
 * declared outcome is recorded as a claim; only the hidden checks count.
 */

import { findActor } from "../../actor-registry/registry.ts";
import type { ActorDescriptor } from "../../actor-registry/types.ts";
import { HumanishError } from "../../errors.ts";
import type { VisionAgentActor } from "../../lab/schema.ts";
import { createModelClient, isPriced, type ModelEndpoint, type ModelKey, resolveEndpoint, resolveModelKey, SpendBudget } from "../../models/index.ts";
import type { BrowserCaps, BrowserParticipant, BrowserRun } from "../browser-participant/participant.ts";
import { UI_TOOL_NAME } from "../codex-account/participant-tool.ts";
import { meteredRun } from "../computer-use/participant.ts";
import { runVisionAgent } from "./loop.ts";

/** Env names the key may come from (the registry's `runtimeKeyNames`). */
export const VISION_AGENT_KEY_NAMES = ["OPENAI_API_KEY"] as const;
/** Persona id when the lab names none. */
export const DEFAULT_VISION_AGENT_PERSONA = "first-time-user";

/**
 * The participant brief, sent as the instructions of every request: persona, mission, the seat's
 * instruction, the task goals in order, and how to end. The hidden checks are never part of it.
 */
export function visionAgentBrief(actor: VisionAgentActor, seat: { persona?: string | undefined; instruction?: string | undefined }): string {
  const lines = [
    `You are a participant in a usability study (persona: ${seat.persona ?? actor.persona ?? DEFAULT_VISION_AGENT_PERSONA}). You see a browser on a desktop through screenshots and act only by calling the ${UI_TOOL_NAME} function.`,
    ...(actor.mission ? [actor.mission] : []),
    ...(seat.instruction ? [seat.instruction] : []),
  ];
  const tasks = actor.tasks ?? [];
  if (tasks.length) lines.push("Work through these in order:", ...tasks.map((t, i) => `${i + 1}. ${t.goal}`));
  lines.push(
    `Each ${UI_TOOL_NAME} call answers with an acknowledgement per action (or why the call was refused); the next message shows the new screenshot.`,
    "When you are finished, reply without a function call; start that reply with 'I reached the goal', 'I did not reach the goal' or 'Blocked', then say what got in your way.",
  );
  return lines.join("\n");
}

/**
 * The caps a model can be held to: a positive USD cap needs a priced model.
 * @throws HumanishError `HUMANISH_VISION_MODEL_UNPRICED` naming the cap field and the model.
 */
export function assertVisionCaps(model: string, caps: BrowserCaps): void {
  if (isPriced(model)) return;
  const field = caps.maxUsd !== null && caps.maxUsd > 0 ? "maxUsd" : caps.maxTotalUsd !== null && caps.maxTotalUsd > 0 ? "maxTotalUsd" : undefined;
  if (!field) return;
  throw new HumanishError(
    "HUMANISH_VISION_MODEL_UNPRICED",
    `scenario.caps.${field} (${caps[field]} USD) cannot be enforced for actors[0].model ${model}: it has no rate in the humanish rate table.`,
    {
      next: "hold it to a token cap instead (scenario.caps.maxTokens and/or maxTotalTokens) and remove the USD caps, or add the model's rates to the rate file",
    },
  );
}

/** The vision-agent participant of `actor` under `caps` (one study's). */
export function visionAgentParticipant(actor: VisionAgentActor, caps: BrowserCaps): BrowserParticipant {
  let ready: { endpoint: ModelEndpoint; key: ModelKey } | undefined;
  // The study's budgets, shared by every seat (each request is admitted against them).
  const studyBudget = caps.maxTotalUsd !== null ? new SpendBudget("scenario.caps.maxTotalUsd", caps.maxTotalUsd) : undefined;
  const studyTokens = caps.maxTotalTokens !== null ? new SpendBudget("scenario.caps.maxTotalTokens", caps.maxTotalTokens) : undefined;
  return {
    descriptor: findActor(actor.type) as ActorDescriptor,
    tasks: actor.tasks ?? [],
    ...(actor.stopWhen ? { stopWhen: actor.stopWhen } : {}),
    async preflight(ctx) {
      assertVisionCaps(actor.model, caps);
      const endpoint = resolveEndpoint(ctx.env);
      const key = resolveModelKey(ctx.env, VISION_AGENT_KEY_NAMES);
      if (!key)
        throw new HumanishError("HUMANISH_VISION_KEY_MISSING", `a vision-agent seat needs a model key: ${VISION_AGENT_KEY_NAMES.join(", ")} is not set.`, {
          next: "export OPENAI_API_KEY=… for the endpoint in OPENAI_BASE_URL (it stays in the humanish process; the desktop never sees it), or run without --live for a dry run",
        });
      ready = { endpoint, key };
    },
    describeProgress: () => `vision model ${actor.model}`,
    describeDryRun: () =>
      `vision model ${actor.model} through function calls of ${UI_TOOL_NAME} (the key stays in the humanish host process), ${actor.stopWhen ? `${actor.stopWhen.any.length} stopWhen rule(s)` : "no stopWhen"}`,
    async run(ctx): Promise<BrowserRun> {
      if (!ready) throw new Error("vision-agent seat without a live preflight");
      const brief = visionAgentBrief(actor, ctx.seat);
      const seatBudget = caps.maxUsd !== null ? new SpendBudget("scenario.caps.maxUsd", caps.maxUsd) : undefined;
      const seatTokens = caps.maxTokens !== null ? new SpendBudget("scenario.caps.maxTokens", caps.maxTokens) : undefined;
      const outcome = await runVisionAgent({
        executor: ctx.executor,
        client: createModelClient(ready.endpoint, ready.key),
        model: actor.model,
        ...(actor.reasoningEffort ? { reasoningEffort: actor.reasoningEffort } : {}),
        ...(actor.maxOutputTokens ? { maxOutputTokens: actor.maxOutputTokens } : {}),
        instructions: brief,
        origin: ctx.origin,
        ...(actor.tasks ? { tasks: actor.tasks } : {}),
        ...(actor.stopWhen ? { stopWhen: actor.stopWhen } : {}),
        timeoutMs: ctx.sessionMs,
        ...(seatBudget ? { seatBudget } : {}),
        ...(studyBudget ? { studyBudget } : {}),
        tokenBudgets: [seatTokens, studyTokens].filter((b): b is SpendBudget => b !== undefined),
        scrubText: ctx.redact,
        signal: ctx.signal,
        onTurn: (turn, note) => ctx.progress(`turn ${turn}: ${note}`),
      });
      return meteredRun(outcome, {
        model: actor.model,
        personaId: ctx.seat.persona ?? actor.persona ?? DEFAULT_VISION_AGENT_PERSONA,
        brief,
        endpointHost: ready.endpoint.host,
        caps: { maxUsd: caps.maxUsd, maxTotalUsd: caps.maxTotalUsd },
        as: { actorType: actor.type, provider: "openai-compatible" },
      });
    },
  };
}

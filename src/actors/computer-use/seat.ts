/**
 * One `openai-computer-use` seat as a lane runs it: the brief from the lab, the key and the
 * endpoint from the host env (the key stays in this process: `keyPlacement: external`), the
 * preflight (a key; a priced model under a positive cap), then the loop on the seat's desktop.
 */
import { createHash } from "node:crypto";
import type { BrowserControlExecutor } from "../../browser-control/index.ts";
import { HumanishError } from "../../errors.ts";
import type { ComputerUseActor } from "../../lab/schema.ts";
import { createModelClient, type ModelEndpoint, type ModelKey, resolveEndpoint, resolveModelKey, type SpendBudget } from "../../models/index.ts";
import { type ComputerUseOutcome, runComputerUse } from "./loop.ts";
import { assertPricedForCaps } from "./provider.ts";

/** The model a lab without `model` runs. */
export const DEFAULT_COMPUTER_USE_MODEL = "computer-use-preview";
/** Env names the key may come from, in priority order (the registry's `runtimeKeyNames`). */
export const COMPUTER_USE_KEY_NAMES = ["OPENAI_API_KEY"] as const;
/** Persona id when the lab names none. */
export const DEFAULT_COMPUTER_USE_PERSONA = "first-time-user";

/** The seat fields that change the brief. */
export interface SeatBriefFields {
  persona?: string;
  instruction?: string;
}

/** The model a seat runs. */
export function computerUseModel(actor: ComputerUseActor): string {
  return actor.model ?? DEFAULT_COMPUTER_USE_MODEL;
}

/**
 * The participant brief, sent as the instructions of every request: persona, mission, the seat's
 * instruction, and the task goals in order. The hidden checks are never part of it.
 */
export function computerUseBrief(actor: ComputerUseActor, seat: SeatBriefFields = {}): string {
  const lines = [
    `You are a participant in a usability study (persona: ${seat.persona ?? actor.persona ?? DEFAULT_COMPUTER_USE_PERSONA}). You see a browser on a desktop through screenshots and act with the computer tool.`,
    ...(actor.mission ? [actor.mission] : []),
    ...(seat.instruction ? [seat.instruction] : []),
  ];
  const tasks = actor.tasks ?? [];
  if (tasks.length) lines.push("Work through these in order:", ...tasks.map((t, i) => `${i + 1}. ${t.goal}`));
  lines.push(
    "When you are finished, reply without a computer call; start that reply with 'I reached the goal', 'I did not reach the goal' or 'Blocked', then say what got in your way.",
  );
  return lines.join("\n");
}

/** First 12 hex of the brief's sha256 (trace `persona.promptDigest`). */
export function briefDigest(brief: string): string {
  return createHash("sha256").update(brief).digest("hex").slice(0, 12);
}

/** What preflight resolved for a live seat. */
export interface ComputerUseReadiness {
  model: string;
  endpoint: ModelEndpoint;
  key: ModelKey;
}

/**
 * Live preflight: the endpoint, a key by name, and a priced model under a positive cap.
 * @throws HumanishError `HUMANISH_CUA_KEY_MISSING` (names the variable), `HUMANISH_CUA_MODEL_UNPRICED`
 *   (names the model), `HUMANISH_MODEL_ENDPOINT_INVALID`.
 */
export function computerUsePreflight(
  actor: ComputerUseActor,
  caps: { maxUsd?: number | null; maxTotalUsd?: number | null },
  env: Record<string, string | undefined>,
): ComputerUseReadiness {
  const model = computerUseModel(actor);
  assertPricedForCaps(model, caps);
  const endpoint = resolveEndpoint(env);
  const key = resolveModelKey(env, COMPUTER_USE_KEY_NAMES);
  if (!key)
    throw new HumanishError("HUMANISH_CUA_KEY_MISSING", `an openai-computer-use seat needs a model key: ${COMPUTER_USE_KEY_NAMES.join(", ")} is not set.`, {
      next: "export OPENAI_API_KEY=sk-… (it stays in the humanish process; the guest never sees it), or run without --live for a dry run",
    });
  return { model, endpoint, key };
}

/** Options of {@link runComputerUseSeat}. */
export interface ComputerUseSeatOptions {
  executor: BrowserControlExecutor;
  actor: ComputerUseActor;
  seat: SeatBriefFields;
  readiness: ComputerUseReadiness;
  origin: string;
  /** Wall-clock budget of the seat, ms. */
  sessionMs: number;
  seatBudget?: SpendBudget;
  studyBudget?: SpendBudget;
  scrubText?: (s: string) => string;
  signal?: AbortSignal;
  onTurn?: (turn: number, note: string) => void;
}

/** Runs the seat's loop. Never throws for model, budget or desktop failures. */
export async function runComputerUseSeat(o: ComputerUseSeatOptions): Promise<{ outcome: ComputerUseOutcome; brief: string }> {
  const brief = computerUseBrief(o.actor, o.seat);
  const client = createModelClient(o.readiness.endpoint, o.readiness.key);
  const outcome = await runComputerUse({
    executor: o.executor,
    client,
    model: o.readiness.model,
    ...(o.actor.reasoningEffort ? { reasoningEffort: o.actor.reasoningEffort } : {}),
    ...(o.actor.maxOutputTokens ? { maxOutputTokens: o.actor.maxOutputTokens } : {}),
    instructions: brief,
    origin: o.origin,
    ...(o.actor.tasks ? { tasks: o.actor.tasks } : {}),
    ...(o.actor.stopWhen ? { stopWhen: o.actor.stopWhen } : {}),
    ...(o.actor.acknowledgeSafetyChecks ? { acknowledgeSafetyChecks: o.actor.acknowledgeSafetyChecks } : {}),
    timeoutMs: o.sessionMs,
    ...(o.seatBudget ? { seatBudget: o.seatBudget } : {}),
    ...(o.studyBudget ? { studyBudget: o.studyBudget } : {}),
    ...(o.scrubText ? { scrubText: o.scrubText } : {}),
    ...(o.signal ? { signal: o.signal } : {}),
    ...(o.onTurn ? { onTurn: o.onTurn } : {}),
  });
  return { outcome, brief };
}

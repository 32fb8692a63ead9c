/**
 * `openai-computer-use` behind the {@link BrowserParticipant} seam: the preflight (a key by
 * name, a priced model under a positive USD cap), the loop on the seat's desktop under the seat's
 * `maxUsd` and the study's shared `maxTotalUsd`, the `cua-loop` trace and the request ledger.
 */

import { findActor } from "../../actor-registry/registry.ts";
import type { ActorDescriptor } from "../../actor-registry/types.ts";
import type { ActorTrace } from "../../bundle/schemas.ts";
import type { ComputerUseActor } from "../../lab/schema.ts";
import { SpendBudget } from "../../models/index.ts";
import type { BrowserCaps, BrowserParticipant, BrowserRun } from "../browser-participant/participant.ts";
import { computerUseLedger } from "./evidence.ts";
import type { ComputerUseOutcome } from "./loop.ts";
import { briefDigest, type ComputerUseReadiness, computerUseModel, computerUsePreflight, DEFAULT_COMPUTER_USE_PERSONA, runComputerUseSeat } from "./seat.ts";
import { computerUseTrace } from "./trace.ts";

/** The computer-use participant of `actor` under `caps` (one study's). */
export function computerUseParticipant(actor: ComputerUseActor, caps: BrowserCaps): BrowserParticipant {
  let readiness: ComputerUseReadiness | undefined;
  // One study's budget, shared by every seat (each request is admitted against it).
  const studyBudget = caps.maxTotalUsd !== null ? new SpendBudget("scenario.caps.maxTotalUsd", caps.maxTotalUsd) : undefined;
  const usdCaps = { maxUsd: caps.maxUsd, maxTotalUsd: caps.maxTotalUsd };
  return {
    descriptor: findActor(actor.type) as ActorDescriptor,
    tasks: actor.tasks ?? [],
    ...(actor.stopWhen ? { stopWhen: actor.stopWhen } : {}),
    async preflight(ctx) {
      readiness = computerUsePreflight(actor, usdCaps, ctx.env);
    },
    describeProgress: () => `computer-use model ${readiness?.model ?? computerUseModel(actor)}`,
    describeDryRun: () =>
      `computer-use model ${computerUseModel(actor)} (the key stays in the humanish host process), ${actor.stopWhen ? `${actor.stopWhen.any.length} stopWhen rule(s)` : "no stopWhen"}`,
    async run(ctx): Promise<BrowserRun> {
      if (!readiness) throw new Error("openai-computer-use seat without a live preflight");
      const r = readiness;
      const seatBudget = caps.maxUsd !== null ? new SpendBudget("scenario.caps.maxUsd", caps.maxUsd) : undefined;
      const { outcome, brief } = await runComputerUseSeat({
        executor: ctx.executor,
        actor,
        seat: { ...(ctx.seat.persona ? { persona: ctx.seat.persona } : {}), ...(ctx.seat.instruction ? { instruction: ctx.seat.instruction } : {}) },
        readiness: r,
        origin: ctx.origin,
        sessionMs: ctx.sessionMs,
        ...(seatBudget ? { seatBudget } : {}),
        ...(studyBudget ? { studyBudget } : {}),
        scrubText: ctx.redact,
        signal: ctx.signal,
        onTurn: (turn, note) => ctx.progress(`turn ${turn}: ${note}`),
      });
      const personaId = ctx.seat.persona ?? actor.persona ?? DEFAULT_COMPUTER_USE_PERSONA;
      return meteredRun(outcome, { model: r.model, personaId, brief, endpointHost: r.endpoint.host, caps: usdCaps });
    },
  };
}

/**
 * A seat run of a participant that meters its own requests in the loop's outcome shape: the
 * `cua-loop` trace (model, persona, brief digest), and the request ledger priced from its lines.
 * `actorType`/`provider` override the trace's (a participant reusing the loop's projection).
 */
export function meteredRun(
  outcome: ComputerUseOutcome,
  o: {
    model: string;
    personaId: string;
    brief: string;
    endpointHost: string;
    caps: { maxUsd: number | null; maxTotalUsd: number | null };
    as?: Pick<ActorTrace, "actorType" | "provider">;
  },
): BrowserRun {
  return {
    outcome,
    trace: (m) => ({
      ...computerUseTrace(outcome, {
        participantId: m.participantId,
        model: o.model,
        personaId: o.personaId,
        promptDigest: briefDigest(o.brief),
        sessionId: m.sessionId,
        shotPaths: m.shotPaths,
        redact: m.redact,
      }),
      ...(o.as ?? {}),
      status: m.verdict.status,
      completionReason: m.verdict.completionReason,
    }),
    evidence: ({ participantId, today }) => {
      const m = computerUseLedger(outcome, { participantId, endpointHost: o.endpointHost, caps: o.caps, today });
      return { ledger: m.ledger, costLines: m.costLines, usd: m.ledger.usd ?? 0 };
    },
  };
}

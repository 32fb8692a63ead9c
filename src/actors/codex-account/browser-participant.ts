/**
 * `local-agent` (`localAgent: codex`) behind the {@link BrowserParticipant} seam. Preflight: an
 * account seat's spend is invisible (`account-unknown`), so a USD cap could never hold and is
 * refused; then one restricted session is started and closed without a model turn, so an
 * unqualified CLI, login or configuration is refused once, with the launcher's reason. Each seat
 * then starts its own session, closed whatever happened, its release recorded as the seat's
 * cleanup beside the desktop's.
 */

import { findActor } from "../../actor-registry/registry.ts";
import type { ActorDescriptor } from "../../actor-registry/types.ts";
import { HumanishError } from "../../errors.ts";
import type { LocalAgentActor } from "../../lab/schema.ts";
import type { BrowserCaps, BrowserParticipant, BrowserRun, BrowserRunContext } from "../browser-participant/participant.ts";
import { briefDigest } from "../computer-use/seat.ts";
import { DEFAULT_LOCAL_AGENT_PERSONA, localAgentBrief, runLocalAgentSeat } from "./participant.ts";
import { localAgentCostLine, localAgentTrace } from "./participant-trace.ts";
import { refuseNumericCaps } from "./profile.ts";
import { startCodexAccountSession } from "./session.ts";
import type { CodexAccountSession } from "./types.ts";

/** The local-agent participant of `actor` under `caps`. */
export function localAgentParticipant(actor: LocalAgentActor, caps: BrowserCaps): BrowserParticipant {
  let start: ((signal: AbortSignal) => Promise<CodexAccountSession>) | undefined;
  return {
    descriptor: findActor(actor.type) as ActorDescriptor,
    tasks: actor.tasks ?? [],
    async preflight(ctx) {
      refuseNumericCaps({ maxUsd: caps.maxUsd, maxTotalUsd: caps.maxTotalUsd }, "scenario.caps");
      const begin = (s: AbortSignal) => startCodexAccountSession({ purpose: "participant", signal: s, env: ctx.env });
      const probe = await begin(ctx.signal);
      const rel = await probe.close();
      if (rel.outcome !== "released" || rel.warning)
        throw new HumanishError(
          "HUMANISH_CODEX_CLEANUP_FAILED",
          `the readiness check's Codex app-server was not given back cleanly: ${rel.reason}${rel.keptDir ? ` (private directory kept: ${rel.keptDir})` : ""}`,
          { next: "see the recovery marker under $XDG_CACHE_HOME/humanish/codex-analysis-recovery/, then rerun" },
        );
      start = begin;
    },
    describeProgress: () => "local agent codex (signed-in account)",
    describeDryRun: () =>
      "local agent codex: the operator's signed-in Codex CLI in a restricted app-server session on this host (billing account-unknown; the login never enters the guest)",
    run: (ctx) => {
      if (!start) throw new Error("local-agent seat without an account session");
      return runSeat(actor, start, ctx);
    },
  };
}

async function runSeat(actor: LocalAgentActor, start: (signal: AbortSignal) => Promise<CodexAccountSession>, ctx: BrowserRunContext): Promise<BrowserRun> {
  const pid = ctx.seat.id;
  const brief = localAgentBrief(actor, {
    ...(ctx.seat.persona ? { persona: ctx.seat.persona } : {}),
    ...(ctx.seat.instruction ? { instruction: ctx.seat.instruction } : {}),
  });
  const session = await start(ctx.signal);
  const id = session.identity;
  ctx.log("browser-lab.account.ready", `${pid}: ${id.transport} ${id.cliVersion}, ${id.authClass}, model ${id.model} (${id.effort}), billing ${id.billing}`);
  try {
    const out = await runLocalAgentSeat({
      session,
      executor: ctx.executor,
      instructions: brief,
      origin: ctx.origin,
      ...(actor.tasks ? { tasks: actor.tasks } : {}),
      timeoutMs: ctx.sessionMs,
      scrubText: ctx.redact,
      signal: ctx.signal,
      onTurn: (turn, note) => ctx.progress(`turn ${turn}: ${note}`),
    });
    const personaId = ctx.seat.persona ?? actor.persona ?? DEFAULT_LOCAL_AGENT_PERSONA;
    return {
      outcome: { ...out, ...(out.answer ? { declaredOutcome: out.answer.outcome } : {}) },
      trace: (m) => ({
        ...localAgentTrace(out, {
          participantId: m.participantId,
          model: id.model,
          personaId,
          promptDigest: briefDigest(brief),
          sessionId: m.sessionId,
          shotPaths: m.shotPaths,
          redact: m.redact,
        }),
        // The lane's status folds in the hidden checks, exactly as the participant record does.
        status: m.verdict.status,
        completionReason: m.verdict.completionReason,
      }),
      evidence: ({ participantId }) => ({ costLines: [localAgentCostLine(out, participantId)], usd: 0 }),
    };
  } finally {
    const rel = await session.close();
    ctx.recordCleanup({
      id: `codex-app-server-${pid}`,
      provider: "host",
      kind: "app-server",
      participantId: pid,
      outcome: rel.outcome,
      reason: ctx.redact(`${rel.reason}${rel.warning ? ` (${rel.warning})` : ""}${rel.keptDir ? `; private directory kept: ${rel.keptDir}` : ""}`),
      at: new Date().toISOString(),
    });
    ctx.log(
      rel.outcome === "released" ? "browser-lab.account.released" : "browser-lab.account.unconfirmed",
      `${pid}: account session ${rel.outcome} (${rel.reason})`,
    );
  }
}

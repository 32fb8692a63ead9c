/**
 * `scripted-browser` behind the {@link BrowserParticipant} seam: the lab's steps on the seat's
 * desktop within the session budget, each kept frame handed to the lane at once, and the
 * `scripted-steps` trace. No model, no key, no spend.
 */

import { findActor } from "../../actor-registry/registry.ts";
import type { ActorDescriptor } from "../../actor-registry/types.ts";
import type { ActorTrace, CostLine, TraceItem } from "../../bundle/schemas.ts";
import type { ScriptedBrowserActor } from "../../lab/schema.ts";
import type { BrowserParticipant, BrowserRun, BrowserRunContext, BrowserTraceMeta } from "../browser-participant/participant.ts";
import { runScriptedBrowser, type ScriptedBrowserOutcome } from "./index.ts";

/** The persona id a scripted seat records when the lab names none. */
export const DEFAULT_SCRIPTED_PERSONA = "scripted-first-time-user";

/** The scripted participant of `actor`. */
export function scriptedBrowserParticipant(actor: ScriptedBrowserActor): BrowserParticipant {
  return {
    descriptor: findActor(actor.type) as ActorDescriptor,
    tasks: actor.tasks ?? [],
    preflight: async () => undefined,
    describeProgress: () => `${actor.steps.length} step(s)`,
    describeDryRun: () => `${actor.steps.length} step(s)`,
    run: (ctx) => runSeat(actor, ctx),
  };
}

async function runSeat(actor: ScriptedBrowserActor, ctx: BrowserRunContext): Promise<BrowserRun> {
  const deadline = AbortSignal.timeout(ctx.sessionMs);
  let outcome: ScriptedBrowserOutcome = await runScriptedBrowser({
    executor: ctx.executor,
    steps: actor.steps,
    origin: ctx.origin,
    width: ctx.screen.width,
    height: ctx.screen.height,
    signal: AbortSignal.any([ctx.signal, deadline]),
    onStep: (i, step) => ctx.progress(`step ${i + 1}/${actor.steps.length}: ${step.kind}`),
    ...(ctx.onScreenshot ? { onScreenshot: ctx.onScreenshot } : {}),
  });
  if (deadline.aborted && outcome.completionReason === "interrupted" && !ctx.signal.aborted) {
    outcome = { ...outcome, status: "timed_out", completionReason: "timed_out", reason: `session budget of ${ctx.sessionMs} ms ran out` };
  }
  const out = outcome;
  return {
    outcome: out,
    trace: (m) => scriptedTrace(actor, ctx.seat.persona, out, m),
    evidence: () => ({ costLines: [] as CostLine[], usd: 0 }),
  };
}

/** The outcome → `humanish.actor-trace.v1` (`scripted-steps`), screenshot items pointing at their files. */
function scriptedTrace(actor: ScriptedBrowserActor, seatPersona: string | undefined, out: ScriptedBrowserOutcome, m: BrowserTraceMeta): ActorTrace {
  const items: TraceItem[] = [];
  let shotIndex = 0;
  for (const it of out.items) {
    if (it.kind === "screenshot") {
      const shot = out.screenshots[shotIndex++];
      const path = shot ? m.shotPaths.get(shot.name) : undefined;
      items.push(path ? { ...it, screenshotRef: { path, redaction: "none" } } : it);
    } else items.push(it);
  }
  const final = out.screenshots.at(-1);
  const finalPath = final?.name.endsWith("-final") ? m.shotPaths.get(final.name) : undefined;
  if (final && finalPath) {
    items.push({
      id: `screenshot-${String(items.length + 1).padStart(3, "0")}`,
      kind: "screenshot",
      lifecycle: "completed",
      title: "final frame",
      at: final.at,
      screenshotRef: { path: finalPath, redaction: "none" },
    });
  }
  return {
    schema: "humanish.actor-trace.v1",
    participantId: m.participantId,
    actorType: "scripted-browser",
    provider: "humanish",
    protocol: "scripted-steps",
    lane: "scripted-browser",
    persona: { id: seatPersona ?? actor.persona ?? DEFAULT_SCRIPTED_PERSONA, traitsApplied: [], promptDigest: "000000000000" },
    redaction: {
      status: "passed",
      screenshots: "raw",
      notes: "screenshots are raw frames of the guest screen (browser chrome included); typed text is recorded as a length only",
    },
    startedAt: out.startedAt,
    completedAt: out.completedAt,
    durationMs: out.durationMs,
    status: m.verdict.status,
    completionReason: m.verdict.completionReason,
    reason: m.redact(out.reason),
    ids: { sessionId: m.sessionId },
    counts: {
      steps: actor.steps.length,
      ui_actions: items.filter((i) => i.kind === "ui_action").length,
      screenshots: out.screenshots.length,
      observations: out.observations.length,
    },
    items,
  };
}

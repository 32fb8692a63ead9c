/**
 * Terminal dry run: a contract-only bundle. No engine, no sandbox,
 * no key read for use, no network, no spend — on every target (`docker` and `e2b-terminal`).
 * The bundle records what a live run would do (subject, credentials channel by NAME, caps, the
 * declared runtime) and verifies.
 */
import type { ActorDescriptor } from "../../actor-registry/types.ts";
import { POLICY_BOUNDS } from "../../broker/index.ts";
import type { LifecycleEvent } from "../../bundle/schemas.ts";
import { createRunWriter } from "../../bundle/writer.ts";
import { labSeats } from "../../lab/routing.ts";
import type { TerminalLabConfig } from "../../lab/schema.ts";
import { dryRunLane } from "../../lanes/dry-run/index.ts";
import { studySecrets } from "../../secrets/index.ts";
import { assembleStudy } from "../../study/evidence.ts";
import { finishStudy } from "../../study/finish.ts";
import { pickSeatSpecs } from "../../study/rerun.ts";
import { runSeats } from "../../study/runner.ts";
import { briefDigest, composeBrief, newNonce } from "../../terminal-seat/brief.ts";
import type { TerminalPlan } from "../../terminal-seat/plan.ts";
import type { StudyContext, StudyResult } from "../types.ts";

/** Participant id of a one-seat terminal study (the first seat of a `count` study). */
export const TERMINAL_PARTICIPANT_ID = "p1";

/** Writes and verifies the contract-only bundle of a dry run: one contract-only participant per seat. */
export async function runTerminalDryRun(ctx: StudyContext<TerminalLabConfig>, plan: TerminalPlan): Promise<StudyResult> {
  const lab = ctx.lab;
  const descriptor: ActorDescriptor = plan.descriptor;
  const writer = createRunWriter({ cwd: ctx.cwd, runId: ctx.runId, secrets: studySecrets(ctx), route: "terminal", mode: "dry-run", lab: lab.id });
  const createdAt = new Date().toISOString();
  const product = lab.subject.product;
  const brief = composeBrief(lab, newNonce());
  const at = () => new Date().toISOString();
  const lifecycle: LifecycleEvent[] = [];
  const add = (event: string, message: string) => lifecycle.push({ at: at(), event, message: writer.redactor.text(message) });
  add("terminal-lab.run.created", `dry run ${ctx.runId}: lab ${lab.id}, actor ${descriptor.type}, target ${plan.target}; nothing is started, read or spent`);
  add(
    "terminal-lab.subject.declared",
    `product ${product.name}; public surfaces ${product.publicSurfaces.join(" ")}; ${product.install?.length ?? 0} install command(s); provenance UNPINNED; brief sha256:${briefDigest(brief)}`,
  );
  const keyNames = descriptor.runtimeKeyNames;
  const p = lab.policies;
  add(
    "terminal-lab.credentials.declared",
    `${keyNames.length ? `runtime key channel ${lab.execution.runtimeAuth ?? "openai-env"} via ${keyNames.join(" or ")} (not read in a dry run)` : "no runtime key (the participant calls no model)"}; ` +
      `policies allowPrivateRepoAccess=${p.allowPrivateRepoAccess} allowProviderCredentials=${p.allowProviderCredentials} allowPaymentCredentials=${p.allowPaymentCredentials} allowGitHubMutation=${p.allowGitHubMutation}`,
  );
  add(
    "terminal-lab.caps.declared",
    `maxUsd=${plan.caps.maxUsd ?? "unset"} maxJobs=${plan.caps.maxJobs ?? "unset"} maxMinutes=${plan.caps.maxMinutes ?? "unset"}`,
  );
  const runtime = plan.participant.runtime();
  if (runtime) {
    add(
      "terminal-lab.runtime.declared",
      `${runtime.package}@${runtime.requestedVersion}${runtime.requestedVersion === "latest" ? " (resolved to an exact version once, at run time)" : ""}, model ${runtime.requestedModel ?? "(none)"} (${runtime.modelStatus})${runtime.requestedReasoningEffort ? `, effort ${runtime.requestedReasoningEffort}` : ""}`,
    );
  }
  add("terminal-lab.contract.ready", `${(lab.actors[0].tasks ?? []).length} task(s) with hidden checks; a live run needs --live (or scenario.mode: live)`);

  const seats = pickSeatSpecs(labSeats(lab), ctx.seatIds);
  const run = await runSeats({
    seats,
    lane: dryRunLane({ actorType: descriptor.type, tasks: lab.actors[0].tasks ?? [] }),
    concurrency: Math.min(seats.length, POLICY_BOUNDS.perStudy[1]),
    signal: ctx.signal,
    caps: { maxTotalUsd: null, maxJobs: null },
    progress: () => undefined,
  });
  const assembled = assembleStudy(run, {
    lane: "dry-run",
    concurrency: Math.min(seats.length, POLICY_BOUNDS.perStudy[1]),
    maxTotalUsd: lab.scenario.caps?.maxTotalUsd ?? null,
    shape: { actorType: descriptor.type, tasks: lab.actors[0].tasks ?? [] },
  });
  return finishStudy({
    ctx,
    writer,
    route: "terminal",
    target: plan.target,
    createdAt,
    subject: { source: "terminal-product", name: product.name, publicSurfaces: product.publicSurfaces, provenance: "unpinned" },
    caps: plan.caps,
    assembled,
    lifecycle,
    costLines: [],
    gaps: [],
    warnings: [],
    redactionNotes: "dry run: no participant output exists",
  });
}

/**
 * Terminal dry run: a contract-only bundle. No engine, no sandbox,
 * no key read for use, no network, no spend — on every target (`docker` and `e2b-terminal`).
 * The bundle records what a live run would do (subject, credentials channel by NAME, caps, the
 * declared runtime) and verifies.
 */
import type { ActorDescriptor } from "../../actors/types.ts";
import type { LifecycleEvent, TaskResult } from "../../bundle/schemas.ts";
import { verifyRun } from "../../bundle/verify.ts";
import { createRunWriter } from "../../bundle/writer.ts";
import type { TerminalLabConfig } from "../../lab/schema.ts";
import { studySecrets } from "../../secrets/index.ts";
import type { StudyContext, StudyResult } from "../types.ts";
import { briefDigest, composeBrief, newNonce } from "./brief.ts";
import type { TerminalPlan } from "./preflight.ts";

/** Participant id of the one terminal participant. */
export const TERMINAL_PARTICIPANT_ID = "p1";

/** Writes and verifies the contract-only bundle of a dry run. */
export async function runTerminalDryRun(ctx: StudyContext<TerminalLabConfig>, plan: TerminalPlan): Promise<StudyResult> {
  const lab = ctx.lab;
  const pid = TERMINAL_PARTICIPANT_ID;
  const descriptor: ActorDescriptor = plan.descriptor;
  const writer = createRunWriter({ cwd: ctx.cwd, runId: ctx.runId, secrets: studySecrets(ctx), route: "terminal", mode: "dry-run", lab: lab.id });
  const createdAt = new Date().toISOString();
  ctx.progress({ participant: pid, phase: "write", detail: "dry run: contract only" });
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
    `${keyNames.length ? `runtime key channel openai-env via ${keyNames.join(" or ")} (not read in a dry run)` : "no runtime key (the participant calls no model)"}; ` +
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

  const tasks: TaskResult[] = (lab.actors[0].tasks ?? []).map((t) => ({
    id: t.id,
    goal: t.goal,
    participantId: pid,
    status: "not_run",
    passed: false,
    detail: "dry run: not checked",
  }));
  const bundle = await writer.finalize({
    route: "terminal",
    mode: "dry-run",
    target: plan.target,
    createdAt,
    lab: { id: lab.id, ...(lab.title ? { title: lab.title } : {}), source: ctx.labSource },
    subject: { source: "terminal-product", name: product.name, publicSurfaces: product.publicSurfaces, provenance: "unpinned" },
    outcome: { state: "completed" },
    lifecycle,
    participants: [
      {
        id: pid,
        actorType: descriptor.type,
        label: descriptor.type,
        status: "contract_proof_only",
        completionReason: null,
        reason: "dry run: contract only",
        trace: null,
      },
    ],
    tasks,
    caps: plan.caps,
    warnings: ctx.labWarnings,
    redactionNotes: "dry run: no participant output exists",
  });
  ctx.progress({ participant: pid, phase: "verify" });
  const verify = await verifyRun(writer.runDir);
  ctx.progress({ participant: pid, phase: "done", detail: verify.ok ? `contract verified; ${tasks.length} task(s) not run (dry run)` : "verify failed" });
  return {
    ok: verify.ok,
    runId: ctx.runId,
    runDir: writer.runDir,
    route: "terminal",
    mode: "dry-run",
    verdict: bundle.review.summary,
    participants: [{ id: pid, status: "contract_proof_only", completionReason: "none" }],
    tasks: tasks.map((t) => ({ id: t.id, goal: t.goal, passed: false, status: "not_run", ...(t.detail ? { detail: t.detail } : {}) })),
    reward: null,
    verify: { ok: verify.ok, shareSafety: verify.shareSafety.status },
    verification: verify,
    warnings: ctx.labWarnings.map((w) => ({ code: w.code, message: w.message })),
    ...(verify.ok
      ? {}
      : {
          error: {
            code: "HUMANISH_VERIFY_FAILED",
            message: verify.checks
              .filter((c) => !c.ok)
              .map((c) => `${c.name}: ${c.message}`)
              .join("; "),
          },
        }),
  };
}

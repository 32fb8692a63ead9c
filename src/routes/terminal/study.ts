/**
 * The parts of a live terminal study that do not depend on where its sandboxes run (Docker or
 * E2B): the study-level lifecycle events every target declares, the seats run through the study
 * runner (a runner that itself failed becomes a study whose seats never started), and the tail
 * from the seats to `run.json` (assembly, the evidence gaps, `finishStudy`).
 */
import type { RunWriter } from "../../bundle/writer.ts";
import { errorMessage, HumanishError, isHumanishError } from "../../errors.ts";
import type { TerminalLabConfig } from "../../lab/schema.ts";
import { assembleStudy, notStartedRun, type SeatEvidence } from "../../study/evidence.ts";
import { finishStudy } from "../../study/finish.ts";
import { type RunSeatsOptions, runSeats, type SeatsRun } from "../../study/index.ts";
import { briefDigest, composeBrief } from "../../terminal-seat/brief.ts";
import type { TerminalCaps, TerminalPlan } from "../../terminal-seat/plan.ts";
import type { StudyContext, StudyResult } from "../types.ts";

/** A study-level lifecycle event before its time stamp. */
export interface StudyEvent {
  event: string;
  message: string;
}

/** `terminal-lab.subject.declared`: the product, its public surfaces and the shared brief's digest (a placeholder nonce). */
export function subjectDeclared(lab: TerminalLabConfig): StudyEvent {
  const product = lab.subject.product;
  return {
    event: "terminal-lab.subject.declared",
    message: `product ${product.name}; public surfaces ${product.publicSurfaces.join(" ")}; provenance UNPINNED; shared brief sha256:${briefDigest(composeBrief(lab, "000000000000"))} (each seat's own nonce and lane fields in its brief)`,
  };
}

/** The lab's four credential policies, as the `terminal-lab.credentials.declared` event ends. */
export function policiesNote(lab: TerminalLabConfig): string {
  const p = lab.policies;
  return `policies allowPrivateRepoAccess=${p.allowPrivateRepoAccess} allowProviderCredentials=${p.allowProviderCredentials} allowPaymentCredentials=${p.allowPaymentCredentials} allowGitHubMutation=${p.allowGitHubMutation}`;
}

/**
 * The study-level events every live terminal study declares, in order: `terminal-lab.run.created`
 * (`created`), the subject, the caps (`capsNote` ends the message, e.g. when the spend cap is
 * after the fact), the credentials (`credentials`, then the lab's policies), then each warning of
 * the concurrency plan as `terminal-lab.study.waves`. `firstOutputMs` in ms.
 */
export function studyPreamble(
  lab: TerminalLabConfig,
  o: {
    created: string;
    caps: TerminalCaps;
    maxTotalUsd: number | null;
    firstOutputMs: number;
    capsNote?: string;
    credentials: string;
    warnings: readonly { message: string }[];
  },
): StudyEvent[] {
  const { caps } = o;
  return [
    { event: "terminal-lab.run.created", message: o.created },
    subjectDeclared(lab),
    {
      event: "terminal-lab.caps.declared",
      message: `maxUsd=${caps.maxUsd} (per seat) maxTotalUsd=${o.maxTotalUsd ?? "unset"} maxJobs=${caps.maxJobs ?? "unset"} maxMinutes=${caps.maxMinutes}; first-output deadline ${o.firstOutputMs} ms${o.capsNote ?? ""}`,
    },
    { event: "terminal-lab.credentials.declared", message: `${o.credentials}; ${policiesNote(lab)}` },
    ...o.warnings.map((w) => ({ event: "terminal-lab.study.waves", message: w.message })),
  ];
}

/**
 * The study-level lifecycle the bundle starts with: a many-seat study records the preamble once
 * here; a one-seat study keeps it in its seat's ledger instead (empty here).
 */
export function studyLifecycle(preamble: readonly StudyEvent[], seatCount: number, redact: (s: string) => string) {
  const at = new Date().toISOString();
  return seatCount > 1 ? preamble.map((e) => ({ at, event: e.event, message: redact(e.message) })) : [];
}

/**
 * Runs the seats with the study's progress sink (redacted; a sink that throws never stops the
 * study). A runner that itself failed (no host clock, a broken ledger) yields a run whose seats
 * never started, with the runner's error (`HUMANISH_TERMINAL_LAB_FAILED` for a non-HumanishError).
 */
export async function runTerminalSeats<L>(
  ctx: StudyContext<TerminalLabConfig>,
  redact: (s: string) => string,
  o: Omit<RunSeatsOptions<SeatEvidence<L>>, "signal" | "progress">,
): Promise<SeatsRun<SeatEvidence<L>>> {
  try {
    return await runSeats({
      ...o,
      signal: ctx.signal,
      progress: (participant, phase, detail, summary) => {
        try {
          ctx.progress({ participant, phase, ...(detail ? { detail: redact(detail) } : {}), ...summary });
        } catch {
          // a broken progress sink never stops a study
        }
      },
    });
  } catch (e) {
    const h = isHumanishError(e)
      ? e
      : new HumanishError("HUMANISH_TERMINAL_LAB_FAILED", `the study runner failed: ${errorMessage(e)}`, {
          next: "Rerun; report a bug if it repeats.",
        });
    return notStartedRun<L>(o.seats, { code: h.code, message: h.message, ...(h.next ? { next: h.next } : {}) }, ctx.signal.aborted);
  }
}

/**
 * The study's tail: the seats assembled for lane `lane`, the evidence gaps (unmeasured product
 * spend, then `gaps` of the target, then each seat whose participant never ran), `run.json`
 * written and verified by `finishStudy`.
 */
export function finishTerminalStudy<F extends { participantStarted: boolean }>(o: {
  ctx: StudyContext<TerminalLabConfig>;
  writer: RunWriter;
  plan: TerminalPlan;
  run: SeatsRun<SeatEvidence<F>>;
  target: "docker" | "e2b-terminal";
  lane: string;
  concurrency: { concurrency: number; warnings: { code: string; message: string }[] };
  maxTotalUsd: number | null;
  createdAt: string;
  lifecycle: { at: string; event: string; message: string }[];
  gaps: readonly string[];
  secretCount: number;
}): Promise<StudyResult> {
  const { ctx, plan, run } = o;
  const lab = ctx.lab;
  const product = lab.subject.product;
  const assembled = assembleStudy(run, {
    lane: o.lane,
    concurrency: o.concurrency.concurrency,
    maxTotalUsd: o.maxTotalUsd,
    shape: { actorType: plan.descriptor.type, tasks: lab.actors[0].tasks ?? [] },
  });
  const gaps = ["product, media and payment spend are unmeasured (no cost probe exists for this product)", ...o.gaps];
  for (const r of run.seats) {
    if (r.facts && !r.facts.lane.participantStarted && r.error)
      gaps.push(`${run.seats.length > 1 ? `seat ${r.seat.id}: ` : ""}the participant never ran (${r.error.code})`);
  }
  return finishStudy({
    ctx,
    writer: o.writer,
    route: "terminal",
    target: o.target,
    createdAt: o.createdAt,
    subject: { source: "terminal-product", name: product.name, publicSurfaces: product.publicSurfaces, provenance: "unpinned" },
    caps: plan.caps,
    assembled,
    lifecycle: o.lifecycle,
    costLines: [],
    gaps,
    warnings: o.concurrency.warnings,
    redactionNotes: `literal scrub of ${o.secretCount} provisioned secret value(s), then secret and local-path shapes, then truncation`,
  });
}

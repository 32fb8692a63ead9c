/**
 * The `e2b-terminal` lane: each seat gets its own E2B sandbox, its own participant, brief and
 * nonce. Codex reaches its model directly from the sandbox (no host gateway), with the key held
 * as `execution.runtimeAuth` says.
 *
 *   prepare      create the sandbox (`lifecycle: {onTimeout: "kill"}`, timeout = the seat's
 *                budget + a margin, metadata = run, seat and lab id only, the seat's egress
 *                policy); its exact id appended, fsync, to sandbox-receipts.ndjson BEFORE
 *                provisioning; readiness probe; for Codex the Node prerequisite and the unkeyed
 *                exact-version probe; then `product.install` as root, unkeyed
 *   openSession  hand the participant its sandbox
 *   participate  stdin off, first-output deadline, killed by pid at `scenario.caps.maxMinutes`
 *   check        hidden task checks in the sandbox after the participant
 *   finalize     always: kill by exact id and look it up (released / unconfirmed), then the
 *                seat's trace, ledgers, transcript and events, the same shapes as the Docker lane
 */
import { DIRECT_BASE_URL, directModelHost, SYSTEM_CA_BUNDLE } from "../../actors/codex-exec/command.ts";
import type { LatestVersion } from "../../actors/codex-exec/index.ts";
import type { TerminalParticipant, TerminalParticipantOutcome } from "../../actors/terminal-participant/participant.ts";
import type { CleanupProof, TaskResult } from "../../bundle/schemas.ts";
import type { RunWriter } from "../../bundle/writer.ts";
import { HumanishError } from "../../errors.ts";
import { TERMINAL_STUDY_DIR, type TerminalLabConfig } from "../../lab/schema.ts";
import type { E2BSandboxHandleApi, E2BSandboxProvider } from "../../sandbox/e2b.ts";
import type { ReleaseProof } from "../../sandbox/types.ts";
import { evidenceSummary, type SeatEvidence, type StudyError } from "../../study/evidence.ts";
import type { Lane, SeatHooks, SeatRelease, SeatSpec } from "../../study/types.ts";
import { SANDBOX_CA_PATH, type SandboxCa } from "../../terminal-seat/ca.ts";
import { createTerminalParticipant, type TerminalPlan } from "../../terminal-seat/plan.ts";
import { PARTICIPANT_USER, runInstall } from "../../terminal-seat/provision.ts";
import {
  checkSeat,
  copySandboxCa,
  participantResultError,
  recordRelease,
  seatRelease,
  terminalSeatBase,
  terminalSeatFailure,
} from "../../terminal-seat/seat.ts";
import { type E2BTerminalSeatFacts, writeE2BSeatEvidence } from "./evidence.ts";
import { ensureNode } from "./node.ts";
import type { E2BAccess } from "./preflight.ts";
import { e2bReadyProbe } from "./ready.ts";
import { type EgressPlan, e2bInstallFailureHint, egressPlan, sandboxTimeLine, seatMetadata, seatTimeoutMs } from "./spec.ts";

export type { E2BTerminalSeatFacts } from "./evidence.ts";

/** The system CA bundle plus the operator's extra CA, for Codex (which trusts one bundle). */
const COMBINED_CA_PATH = "/opt/humanish-ca-combined.pem";

export { checkE2BTemplate, type E2BAccess, resolveE2BAccess } from "./preflight.ts";

/** Default first-output deadline of a participant command, ms. */
export const E2B_FIRST_OUTPUT_MS = 90_000;

/** What the lane needs of the study. */
export interface E2BTerminalLaneOptions {
  lab: TerminalLabConfig;
  plan: TerminalPlan;
  access: E2BAccess;
  provider: E2BSandboxProvider;
  writer: RunWriter;
  runId: string;
  firstOutputMs: number;
  seatCount: number;
  /** `latest` resolved once for the study's Codex seats. */
  latest: LatestVersion;
  /** The command's env (the host's artifact cache for the pinned Node). */
  env: Record<string, string | undefined>;
  /** Extra CA trust for sandboxes behind an intercepting HTTPS proxy (`HUMANISH_SANDBOX_CA_CERTS`, else `NODE_EXTRA_CA_CERTS`), if set. */
  ca: SandboxCa | undefined;
  /** Study-level lifecycle events a one-seat study keeps in its seat's ledger. */
  preamble: readonly { event: string; message: string }[];
}

/** How a Codex seat reaches its model from the sandbox: the plan's auth mode and endpoint. */
function directAccess(plan: TerminalPlan): { auth: "openai-env" | "openai-egress"; baseURL: string } {
  return { auth: plan.model?.runtimeAuth ?? "openai-env", baseURL: plan.model?.endpoint.baseURL ?? DIRECT_BASE_URL };
}

/** The seat's egress policy for this lab (pure; computed once per study). */
export function laneEgress(lab: TerminalLabConfig, plan: TerminalPlan): EgressPlan {
  return egressPlan({
    egressAllow: lab.execution.egressAllow,
    codex: plan.descriptor.runtimeKeyNames.length > 0,
    modelHost: directModelHost(directAccess(plan)),
    installs: lab.subject.product.install?.length ?? 0,
    runtimeAuth: plan.model?.runtimeAuth,
    key: plan.runtimeKey?.value,
  });
}

/** The E2B terminal lane over one study's plan. */
export function e2bTerminalLane(o: E2BTerminalLaneOptions): Lane<SeatEvidence<E2BTerminalSeatFacts>> {
  const egress = laneEgress(o.lab, o.plan);
  return {
    name: "e2b-terminal",
    spentUsd: (f) => f.usd,
    jobs: (f) => f.jobs,
    jobsPerSeat: o.plan.descriptor.capabilities.byoModel ? 1 : 0,
    summary: evidenceSummary,
    session: (seat, hooks) => e2bSeat(o, egress, seat, hooks),
    harnessError: seatFailure,
  };
}

function e2bSeat(o: E2BTerminalLaneOptions, egress: EgressPlan, seat: SeatSpec, hooks: SeatHooks) {
  const { lab, plan, writer } = o;
  const pid = seat.id;
  const caps = plan.caps;
  const maxMinutes = caps.maxMinutes ?? 0;
  const product = lab.subject.product;
  const install = product.install ?? [];
  const installNext = e2bInstallFailureHint(lab.execution.egressAllow);
  const codex = plan.descriptor.runtimeKeyNames.length > 0;
  const workdir = TERMINAL_STUDY_DIR;
  const participant: TerminalParticipant = createTerminalParticipant(lab, { latest: o.latest });
  const base = terminalSeatBase({ lab, writer, seat, seatCount: o.seatCount, hooks, preamble: o.preamble });
  const { folder, redact, rec, log, setPhase, nonce, brief, guard } = base;
  let sandbox: E2BSandboxHandleApi | undefined;
  let createdId: string | undefined;
  let acquiredAt: number | undefined;
  let resources: { cpuCount: number; memoryMB: number } | undefined;
  let outcome: TerminalParticipantOutcome | undefined;
  let participantStarted = false;
  let checked: TaskResult[] | undefined;
  const provisionLog: string[] = [];
  const cleanup: CleanupProof[] = [];
  let evidence: SeatEvidence<E2BTerminalSeatFacts> | undefined;
  const timeoutMs = seatTimeoutMs({ maxMinutes, codex, installs: install.length });
  // Node tools take the extra CA beside their own roots; Codex takes one bundle, so it gets the
  // system bundle plus the extra CA (the system bundle is what E2B's egress proxy is trusted by).
  const networkEnv: Record<string, string> = o.ca ? { ...o.ca.env, ...(codex ? { CODEX_CA_CERTIFICATE: COMBINED_CA_PATH } : {}) } : {};

  /**
   * The sandbox ended under the seat (its E2B timeout, or a kill humanish did not make): what the
   * participant saw is a harness failure, never a finding about the product.
   */
  const sandboxLost = (id: string): StudyError => {
    const why = `the E2B sandbox ${id} ended before humanish released it (its E2B timeout, or a kill humanish did not make)`;
    if (outcome && outcome.completionReason !== "harness_error")
      outcome = { ...outcome, status: "failed", completionReason: "harness_error", reason: redact(`${why}; the participant saw: ${outcome.reason}`) };
    log.lifecycle("terminal-lab.sandbox.lost", why);
    return {
      code: "HUMANISH_E2B_SANDBOX_LOST",
      message: `${why}.`,
      next: "Rerun the study; if it repeats, raise scenario.caps.maxMinutes (the sandbox timeout follows it) or look the sandbox up in the E2B dashboard.",
    };
  };

  return {
    async prepare() {
      guard();
      hooks.progress("allocate", `creating E2B sandbox from template ${o.access.template}`);
      hooks.beforeCreate();
      sandbox = await o.provider.create({
        runId: o.runId,
        image: o.access.template,
        workdir,
        network: egress.policy ? "none" : "bridge",
        e2b: { metadata: seatMetadata({ runId: o.runId, seatId: pid, labId: lab.id }), timeoutMs, ...(egress.policy ? { network: egress.policy } : {}) },
        onCreated: async (id) => {
          createdId = id;
          acquiredAt = Date.now();
          hooks.created(id);
          await writer.appendNdjson(
            "sandbox-receipts.ndjson",
            { at: new Date().toISOString(), participantId: pid, provider: "e2b", id, kind: "sandbox", timeoutMs },
            { kind: "sandbox-receipts", durable: true },
          );
          log.lifecycle(
            "terminal-lab.sandbox.created",
            `e2b sandbox ${id} for ${pid} (template ${o.access.template}, E2B timeout ${timeoutMs} ms, killed on timeout); id recorded before provisioning`,
          );
          log.lifecycle("terminal-lab.egress.policy", egress.description);
        },
      });
      guard();
      resources = await sandbox.resources();
      await e2bReadyProbe(sandbox, hooks.signal);
      log.lifecycle("terminal-lab.sandbox.ready", `${workdir} ready (owned by the participant user, mode 0777); participant user ${PARTICIPANT_USER}`);
      if (o.ca) {
        await copySandboxCa(sandbox, o.ca, log);
        if (codex) {
          const r = await sandbox.exec({
            cmd: ["bash", "-c", `cat ${SYSTEM_CA_BUNDLE} ${SANDBOX_CA_PATH} > ${COMBINED_CA_PATH} && chmod 0644 ${COMBINED_CA_PATH}`],
            user: "root",
            cwd: "/",
            timeoutMs: 30_000,
            signal: hooks.signal,
          });
          if (r.exitCode !== 0) {
            throw new HumanishError(
              "HUMANISH_TERMINAL_LAB_CA_INVALID",
              `the extra CA bundle could not be joined to ${SYSTEM_CA_BUNDLE} in the sandbox (exit ${r.exitCode})`,
              {
                next: `Use a template with ca-certificates installed, or unset ${o.ca.source}.`,
              },
            );
          }
        }
      }
      if (codex) {
        await setPhase("provision", "Node runtime prerequisite");
        await ensureNode(sandbox, { recorder: log, signal: hooks.signal, env: o.env });
        guard();
      }
      await setPhase("provision", "participant runtime");
      await participant.prepare({ sandbox, user: PARTICIPANT_USER, workdir, recorder: log, signal: hooks.signal, networkEnv });
      guard();
      for (const [i, command] of install.entries()) {
        await setPhase("provision", `install ${i + 1}/${install.length}: ${command}`);
        await runInstall(sandbox, command, i, install.length, {
          workdir,
          signal: hooks.signal,
          rec,
          provisionLog,
          networkEnv,
          network: "bridge",
          next: installNext,
        });
        guard();
      }
      log.lifecycle("terminal-lab.product.prepared", `${install.length} install command(s) ran as root, unkeyed`);
      if (!codex && install.length > 0 && !lab.execution.egressAllow) {
        // The network was granted for product.install; a participant that calls no model gets none.
        await sandbox.detachNetwork();
        log.lifecycle("terminal-lab.network.detached", "egress denied after product.install; the participant runs with none");
      }
    },
    async openSession() {
      await setPhase("participate", plan.descriptor.type);
    },
    async participate() {
      if (!sandbox) return;
      participantStarted = true;
      const startedAt = Date.now();
      const auth = plan.model?.runtimeAuth ?? "openai-env";
      outcome = await participant.run({
        sandbox,
        user: PARTICIPANT_USER,
        workdir,
        recorder: log,
        signal: hooks.signal,
        networkEnv,
        brief,
        nonce,
        deadlines: { firstOutputMs: o.firstOutputMs, deadlineAt: startedAt + maxMinutes * 60_000 },
        ...(codex ? { modelDirect: directAccess(plan) } : {}),
        ...(codex && auth === "openai-env" && plan.runtimeKey ? { runtimeKey: plan.runtimeKey } : {}),
        redact,
      });
      // A sandbox that ended under the participant makes whatever it saw a harness failure.
      if ((await sandbox.alive()) === false) {
        const lost = sandboxLost(sandbox.id);
        throw new HumanishError(lost.code, lost.message, { next: lost.next });
      }
      if (outcome.deadline && outcome.deadline !== "interrupted") {
        log.lifecycle("terminal-lab.participant.deadline", `the ${outcome.deadline} deadline fired: ${outcome.reason}`);
      }
      log.lifecycle("terminal-lab.participant.ended", `${outcome.status}/${outcome.completionReason}: ${outcome.reason}`);
      guard();
    },
    async check() {
      if (sandbox) checked = await checkSeat(base, lab, sandbox, hooks);
    },
    async finalize(end: { error?: StudyError; interrupted: boolean }): Promise<SeatRelease> {
      let failure: StudyError | undefined = end.error;
      if (failure) log.lifecycle("terminal-lab.session.error", `${failure.code} in ${base.phase}: ${failure.message}`);
      await setPhase("teardown", createdId ? `releasing ${createdId}` : "nothing to release");
      let proof: ReleaseProof | undefined;
      if (sandbox) {
        // Asked before the kill: a sandbox E2B no longer runs ended under the seat.
        const gone = participantStarted && !failure && (await sandbox.alive()) === false;
        if (gone) failure = sandboxLost(sandbox.id);
        const released = await sandbox.releaseWithFacts();
        proof = released.proof;
        // Nothing left to kill: the sandbox ended before its release, under the seat.
        if (released.alreadyAbsent && participantStarted && !failure) failure = sandboxLost(sandbox.id);
      }
      const releasedAt = Date.now();
      recordRelease(base, proof, cleanup, end.interrupted);
      const sandboxLine = sandboxTimeLine({ participantId: pid, acquiredAt, releasedAt, resources, released: proof?.outcome === "released" });
      if (sandboxLine.usd !== null && sandboxLine.basis === "rate-table")
        log.lifecycle("terminal-lab.cost.measured", `sandbox time ${sandboxLine.note}: ${sandboxLine.usd} USD`);
      if (o.seatCount === 1) await writer.writeStatus({ phase: "write" }).catch(() => undefined);
      evidence = await writeE2BSeatEvidence({
        lab,
        seat,
        writer,
        rec,
        participant,
        descriptor: plan.descriptor,
        caps,
        brief,
        folder,
        outcome,
        checked,
        cleanup,
        sandboxLine,
        provisionLog,
        failure,
        interrupted: end.interrupted,
        facts: { participantStarted, ...(createdId ? { sandboxId: createdId } : {}) },
        redact,
      });
      const resultError =
        evidence.failure || end.interrupted
          ? undefined
          : participantResultError(outcome, evidence.participant.completionReason, { maxMinutes: caps.maxMinutes, firstOutputMs: o.firstOutputMs }, redact);
      if (resultError) evidence = { ...evidence, resultError };
      return seatRelease(proof);
    },
    snapshot(): SeatEvidence<E2BTerminalSeatFacts> {
      if (!evidence) throw new Error(`seat ${pid}: snapshot before finalize`);
      return evidence;
    },
  };
}

/** A harness failure of a seat step as a study error (non-HumanishError causes get a code). */
export function seatFailure(e: unknown, phase: string): StudyError {
  return terminalSeatFailure(e, phase, "E2B terminal study");
}

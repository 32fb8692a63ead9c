/**
 * The `docker` terminal lane: each seat gets its own Docker sandbox, its own participant, brief,
 * nonce and (for a model-driven participant) its own model gateway.
 *
 *   prepare      create the sandbox (its exact id appended, fsync, to sandbox-receipts.ndjson
 *                BEFORE provisioning), readiness probe, extra CA, participant runtime, then
 *                `product.install` as root, unkeyed; the model forwarder; the network taken away
 *                from a participant that calls no model (or reaches it only through the gateway)
 *   openSession  hand the participant its sandbox
 *   participate  stdin closed, first-output deadline, killed at `scenario.caps.maxMinutes`
 *   check        hidden task checks in the sandbox after the participant (never in the brief)
 *   finalize     always: close the gateway, release by exact id with proof, then the seat's
 *                trace, ledgers, transcript and events (in `seats/<id>/` when the study has many)
 */
import type { TerminalParticipant, TerminalParticipantOutcome } from "../../actors/terminal-participant/participant.ts";
import type { CleanupProof, CostLine, TaskResult } from "../../bundle/schemas.ts";
import type { RunWriter } from "../../bundle/writer.ts";
import type { DockerClient } from "../../docker/index.ts";
import { HumanishError } from "../../errors.ts";
import { TERMINAL_STUDY_DIR, type TerminalLabConfig } from "../../lab/schema.ts";
import { ledgerCostLines } from "../../models/ledger.ts";
import { PROJECT_LABEL } from "../../sandbox/controller.ts";
import { releaseContainer } from "../../sandbox/index.ts";
import type { ReleaseProof, Sandbox, SandboxProvider } from "../../sandbox/types.ts";
import { evidenceSummary, type SeatEvidence, type StudyError } from "../../study/evidence.ts";
import type { Lane, SeatHooks, SeatRelease, SeatSpec } from "../../study/types.ts";
import type { SandboxCa } from "../../terminal-seat/ca.ts";
import { deadlineLabel, isoDate, providerCostLine } from "../../terminal-seat/evidence.ts";
import { createTerminalParticipant, type TerminalPlan } from "../../terminal-seat/plan.ts";
import { PARTICIPANT_USER, readyProbe, runInstall } from "../../terminal-seat/provision.ts";
import {
  checkSeat,
  copySandboxCa,
  participantResultError,
  recordRelease,
  seatRelease,
  terminalSeatBase,
  terminalSeatFailure,
} from "../../terminal-seat/seat.ts";
import { cleanupFailure, jobsCapFailure, writeTerminalSeatFiles } from "../../terminal-seat/seat-files.ts";
import { ledgerProviderLine, MODEL_LEDGER_FILE, refusedRequestsNote, turnSumMismatch } from "./model-evidence.ts";
import { type ModelSeat, startSandboxForwarder } from "./model-seat.ts";
import type { EngineReady } from "./preflight.ts";

export { INSTALL_TIMEOUT_MS, installFailureHint, PARTICIPANT_USER } from "../../terminal-seat/provision.ts";

/** Default first-output deadline of a participant command, ms. */
export const DEFAULT_FIRST_OUTPUT_MS = 90_000;

/** What the lane needs of the study: its plan, engine, writer and the seats' model gateways. */
export interface DockerTerminalLaneOptions {
  lab: TerminalLabConfig;
  plan: TerminalPlan;
  engine: EngineReady;
  provider: SandboxProvider;
  writer: RunWriter;
  runId: string;
  cwd: string;
  ca: SandboxCa | undefined;
  diskMiB: number;
  firstOutputMs: number;
  seatCount: number;
  /** The gateway of each model-driven seat, opened before the study (its token is a secret of the writer). */
  modelSeats: ReadonlyMap<string, ModelSeat>;
  /**
   * Study-level lifecycle events a one-seat study keeps in its seat's ledger (as it always has);
   * a many-seat study records them once in run.json instead.
   */
  preamble: readonly { event: string; message: string }[];
}

/** The lane's own facts of a seat: whether its participant started, for the study's gaps. */
export interface TerminalSeatFacts {
  participantStarted: boolean;
}

/** The Docker terminal lane over one study's plan and engine. */
export function dockerTerminalLane(o: DockerTerminalLaneOptions): Lane<SeatEvidence<TerminalSeatFacts>> {
  return {
    name: "docker-terminal",
    spentUsd: (f) => f.usd,
    jobs: (f) => f.jobs,
    jobsPerSeat: o.plan.descriptor.capabilities.byoModel ? 1 : 0,
    summary: evidenceSummary,
    session: (seat, hooks) => terminalSeat(o, seat, hooks),
    harnessError: seatFailure,
  };
}

function terminalSeat(o: DockerTerminalLaneOptions, seat: SeatSpec, hooks: SeatHooks) {
  const { lab, plan, engine, writer, provider } = o;
  const pid = seat.id;
  const caps = plan.caps;
  const maxMinutes = caps.maxMinutes ?? 0;
  const product = lab.subject.product;
  const workdir = TERMINAL_STUDY_DIR;
  const modelSeat = o.modelSeats.get(pid);
  // Each seat runs its own participant instance (a runtime resolves its own version facts).
  const participant: TerminalParticipant = o.seatCount === 1 ? plan.participant : createTerminalParticipant(lab);
  const base = terminalSeatBase({ lab, writer, seat, seatCount: o.seatCount, hooks, preamble: o.preamble });
  const { folder, at, redact, rec, log, setPhase, nonce, brief, guard } = base;
  let sandbox: Sandbox | undefined;
  let createdId: string | undefined;
  let outcome: TerminalParticipantOutcome | undefined;
  let participantStarted = false;
  let checked: TaskResult[] | undefined;
  const provisionLog: string[] = [];
  const cleanup: CleanupProof[] = [];
  let evidence: SeatEvidence<TerminalSeatFacts> | undefined;
  const networkEnv = o.ca?.env ?? {};

  return {
    async prepare() {
      guard();
      hooks.progress("allocate", `creating sandbox from ${engine.image}`);
      hooks.beforeCreate();
      sandbox = await provider.create({
        runId: o.runId,
        image: engine.image,
        network: plan.network,
        diskBytes: o.diskMiB * 1024 * 1024,
        workdir,
        labels: { "humanish.lab": lab.id, "humanish.participant": pid, [PROJECT_LABEL]: o.cwd },
        ...(modelSeat ? { mounts: [modelSeat.mount] } : {}),
        onCreated: async (id) => {
          createdId = id;
          hooks.created(id);
          await writer.appendNdjson(
            "sandbox-receipts.ndjson",
            { at: new Date().toISOString(), participantId: pid, provider: provider.provider, id, kind: "sandbox", timeoutMs: maxMinutes * 60_000 },
            { kind: "sandbox-receipts", durable: true },
          );
          log.lifecycle(
            "terminal-lab.sandbox.created",
            `${provider.provider} sandbox ${id} for ${pid} (network ${plan.network}); id recorded before provisioning`,
          );
        },
      });
      guard();
      await readyProbe(sandbox, hooks.signal);
      log.lifecycle("terminal-lab.sandbox.ready", `${workdir} ready (root-owned, mode 0777); participant user ${PARTICIPANT_USER}`);
      if (o.ca) await copySandboxCa(sandbox, o.ca, log);
      await setPhase("provision", "participant runtime");
      await participant.prepare({ sandbox, user: PARTICIPANT_USER, workdir, recorder: log, signal: hooks.signal, networkEnv });
      guard();
      const install = product.install ?? [];
      for (const [i, command] of install.entries()) {
        await setPhase("provision", `install ${i + 1}/${install.length}: ${command}`);
        await runInstall(sandbox, command, i, install.length, { workdir, signal: hooks.signal, rec, provisionLog, networkEnv, network: plan.network });
        guard();
      }
      log.lifecycle("terminal-lab.product.prepared", `${install.length} install command(s) ran as root, unkeyed`);
      if (modelSeat) {
        await startSandboxForwarder(sandbox, modelSeat.gateway.socketName, hooks.signal);
        log.lifecycle(
          "terminal-lab.model-gateway.ready",
          `model gateway for ${plan.model?.endpoint.host} (${plan.model?.runtimeAuth}) reachable in the sandbox at ${modelSeat.access.baseURL}; ${caps.maxUsd === 0 ? "maxUsd=0: no model request will leave the sandbox" : `spend cap maxUsd=${caps.maxUsd} enforced before each request leaves`}`,
        );
      }
      if (plan.network === "bridge" && (!plan.descriptor.capabilities.byoModel || modelSeat)) {
        // The network was granted for product.install; a participant that calls no model gets none
        // (ARCHITECTURE.md invariant 2). Without a confirmed detach the seat does not go on.
        if (!sandbox.detachNetwork) {
          throw new HumanishError(
            "HUMANISH_SANDBOX_NETWORK_DETACH_FAILED",
            `the ${provider.provider} sandbox cannot take its network away before the participant`,
            {
              next: "run this lab on the docker target",
            },
          );
        }
        await sandbox.detachNetwork();
        log.lifecycle("terminal-lab.network.detached", "network taken away after product.install; the participant runs with none");
      }
    },
    async openSession() {
      await setPhase("participate", plan.descriptor.type);
    },
    async participate() {
      if (!sandbox) return;
      participantStarted = true;
      const startedAt = Date.now();
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
        ...(plan.runtimeKey && plan.model?.runtimeAuth !== "openai-egress" ? { runtimeKey: plan.runtimeKey } : {}),
        ...(modelSeat ? { modelGateway: modelSeat.access } : {}),
        redact,
      });
      if (modelSeat?.capReached() && outcome.claimed !== "passed") {
        // The gateway refused a request at the cap: the seat ended on its budget, not on its own
        // (a participant that still finished claiming success ended on its own; its checks decide).
        outcome = {
          ...outcome,
          status: "incomplete",
          completionReason: "budget_reached",
          reason: redact(`spend_limit: the model gateway refused a request at scenario.caps.maxUsd ${caps.maxUsd} USD (${outcome.reason})`),
        };
        log.lifecycle("terminal-lab.caps.spend_limit", `the model gateway refused ${modelSeat.ledger(pid).refused} request(s) at the spend cap`);
      }
      if (outcome.deadline && outcome.deadline !== "interrupted") {
        log.lifecycle("terminal-lab.participant.deadline", `the ${deadlineLabel(outcome.deadline)} deadline fired: ${outcome.reason}`);
      }
      log.lifecycle("terminal-lab.participant.ended", `${outcome.status}/${outcome.completionReason}: ${outcome.reason}`);
      guard();
    },
    async check() {
      if (sandbox) checked = await checkSeat(base, lab, sandbox, hooks);
    },
    async finalize(end: { error?: StudyError; interrupted: boolean }): Promise<SeatRelease> {
      const failure: StudyError | undefined = end.error;
      if (failure) log.lifecycle("terminal-lab.session.error", `${failure.code} in ${base.phase}: ${failure.message}`);
      await setPhase("teardown", createdId ? `releasing ${createdId}` : "nothing to release");
      await modelSeat?.close().catch(() => undefined);
      let proof: ReleaseProof | undefined;
      if (sandbox) proof = await sandbox.release();
      else if (createdId && provider.provider === "docker") proof = await releaseContainer(engine.docker as DockerClient, createdId);
      recordRelease(base, proof, cleanup, end.interrupted);
      evidence = await writeEvidence(failure, end.interrupted);
      return seatRelease(proof);
    },
    snapshot(): SeatEvidence<TerminalSeatFacts> {
      if (!evidence) throw new Error(`seat ${pid}: snapshot before finalize`);
      return evidence;
    },
  };

  /**
   * The participant's own writes filled its disk allowance (the sandbox was stopped): it ran out
   * of a resource the lab bounds, like a budget — an outcome of its behaviour, not a harness failure.
   */
  function diskBreachFallback(): { status: "failed"; completionReason: "budget_reached"; reason: string } | undefined {
    const b = participantStarted ? sandbox?.diskLimit?.().breach : undefined;
    if (!b) return undefined;
    const mib = Math.round(b.limitBytes / 1048576);
    return {
      status: "failed",
      completionReason: "budget_reached",
      reason: redact(`disk_limit: the participant wrote ${b.observedBytes} bytes, past execution.limits.diskMiB (${mib} MiB); the sandbox was stopped`),
    };
  }

  async function writeEvidence(seatError: StudyError | undefined, interrupted: boolean): Promise<SeatEvidence<TerminalSeatFacts>> {
    let failure: StudyError | undefined = seatError;
    // Caps: known spend over maxUsd fails closed; null never trips a cap.
    const keyedCommandRan = rec.commands.some((c) => c.envNames.some((n) => plan.descriptor.runtimeKeyNames.includes(n)));
    const today = isoDate();
    const modelLedger = modelSeat?.ledger(pid);
    const ledgerLines = modelLedger ? ledgerCostLines(modelLedger.lines, pid, today) : undefined;
    const providerLine = ledgerLines
      ? ledgerProviderLine(ledgerLines, pid, outcome?.tokenUsage?.turns.length ?? null)
      : providerCostLine({ descriptor: plan.descriptor, participantId: pid, outcome, keyedCommandRan, kind: "provider", today });
    // The participant tried the gateway for something it does not forward: evidence, not a fault.
    const refusedNote = modelLedger ? refusedRequestsNote(modelLedger) : undefined;
    if (refusedNote) log.lifecycle("terminal-lab.model-gateway.refused", refusedNote);
    if (modelLedger && outcome?.tokenUsage) {
      const mismatch = turnSumMismatch(modelLedger, outcome.tokenUsage);
      if (mismatch) log.lifecycle("terminal-lab.cost.cross-check.warning", mismatch);
    }
    if (!failure && caps.maxUsd !== null && providerLine.usd !== null && providerLine.usd > caps.maxUsd) {
      failure = {
        code: "HUMANISH_TERMINAL_LAB_CAPS_EXCEEDED",
        message: `estimated spend ${providerLine.usd} USD exceeds scenario.caps.maxUsd ${caps.maxUsd}.`,
        next: "Raise scenario.caps.maxUsd or narrow the mission; the participant's own verdict is kept in the bundle.",
      };
      log.lifecycle("terminal-lab.caps.exceeded", failure.message);
    }
    const knownJobs = providerLine.count ?? 0;
    const overJobs = failure ? undefined : jobsCapFailure(knownJobs, caps.maxJobs);
    if (overJobs) {
      failure = overJobs;
      log.lifecycle("terminal-lab.caps.exceeded", overJobs.message);
    }
    failure = cleanupFailure(cleanup, failure, { what: "sandbox", next: (ids) => `Remove it by id: docker rm -f ${ids}` });
    if (o.seatCount === 1) await writer.writeStatus({ phase: "write" }).catch(() => undefined);
    const runtime = participant.runtime();
    const diskBreach = diskBreachFallback();
    const written = await writeTerminalSeatFiles({
      lab,
      seat,
      writer,
      rec,
      descriptor: plan.descriptor,
      runtime,
      brief: base.brief,
      folder,
      outcome,
      checked,
      cleanup,
      provider: providerLine,
      maxUsd: caps.maxUsd,
      provisionLog,
      failure,
      interrupted,
      ...(diskBreach ? { fallback: diskBreach } : {}),
      ...(modelLedger
        ? { extra: [{ path: at(MODEL_LEDGER_FILE), write: () => writer.writeJson(at(MODEL_LEDGER_FILE), modelLedger, { kind: "model-ledger" }) }] }
        : {}),
      redact,
    });
    failure = written.failure;
    const record = written.record;
    const modelLines: CostLine[] = ledgerLines ?? [
      { ...providerLine, kind: "model-tokens" as const, ...(runtime?.requestedModel ? { modelId: runtime.requestedModel } : {}) },
    ];
    const sandboxLine: CostLine = {
      kind: "sandbox-minutes",
      participantId: pid,
      usd: 0,
      count: null,
      basis: "no-spend-signal",
      ratesAsOf: today,
      source: "humanish: a local Docker sandbox has no metered provider",
      reason: null,
    };
    const resultError =
      failure || interrupted
        ? undefined
        : participantResultError(outcome, record.completionReason, { maxMinutes: caps.maxMinutes, firstOutputMs: o.firstOutputMs }, redact);
    const usd = modelLines.reduce((a, l) => a + (l.usd ?? 0), 0);
    return {
      participant: record,
      tasks: written.tasks,
      cleanup,
      costLines: [...modelLines, sandboxLine],
      lifecycle: rec.lifecycle,
      ...(failure ? { failure: { ...failure, message: redact(failure.message) } } : {}),
      ...(resultError ? { resultError } : {}),
      folder,
      usd,
      jobs: knownJobs,
      lane: { participantStarted },
    };
  }
}

/** A harness failure of a seat step as a study error (non-HumanishError causes get a code). */
export function seatFailure(e: unknown, phase: string): StudyError {
  return terminalSeatFailure(e, phase, "terminal study");
}

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
import type { TerminalParticipant, TerminalParticipantOutcome } from "../../actors/terminal/participant.ts";
import type { CleanupProof, CostLine, RunParticipant, TaskResult } from "../../bundle/schemas.ts";
import type { RunWriter } from "../../bundle/writer.ts";
import type { DockerClient } from "../../docker/index.ts";
import { HumanishError, isHumanishError } from "../../errors.ts";
import { TERMINAL_STUDY_DIR, type TerminalLabConfig } from "../../lab/schema.ts";
import { ledgerCostLines } from "../../models/ledger.ts";
import { PROJECT_LABEL } from "../../sandbox/controller.ts";
import { releaseContainer } from "../../sandbox/index.ts";
import type { ReleaseProof, Sandbox, SandboxProvider } from "../../sandbox/types.ts";
import { evidenceSummary, type SeatEvidence, type StudyError, seatFolder } from "../../study/evidence.ts";
import type { Lane, SeatHooks, SeatRelease, SeatSpec } from "../../study/types.ts";
import { briefDigest, composeBrief, DEFAULT_PERSONA, newNonce } from "../../terminal/brief.ts";
import { SANDBOX_CA_PATH, type SandboxCa } from "../../terminal/ca.ts";
import {
  ACTOR_TRACE_FILE,
  buildActorTrace,
  buildTerminalLedgers,
  cleanupProof,
  deadlineLabel,
  isoDate,
  participantRecord,
  providerCostLine,
} from "../../terminal/evidence.ts";
import { createTerminalParticipant, type TerminalPlan } from "../../terminal/plan.ts";
import { Interrupted, PARTICIPANT_USER, readyProbe, runInstall } from "../../terminal/provision.ts";
import { createTerminalRecording, TERMINAL_EVENTS_FILE, type TerminalRecording } from "../../terminal/recorder.ts";
import { runTaskChecks } from "../../terminal/tasks.ts";
import { ledgerProviderLine, MODEL_LEDGER_FILE, refusedRequestsNote, turnSumMismatch } from "./model-evidence.ts";
import { type ModelSeat, startSandboxForwarder } from "./model-seat.ts";
import type { EngineReady } from "./preflight.ts";

export { INSTALL_TIMEOUT_MS, installFailureHint, PARTICIPANT_USER } from "../../terminal/provision.ts";

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
  const actor = lab.actors[0];
  const caps = plan.caps;
  const maxMinutes = caps.maxMinutes ?? 0;
  const product = lab.subject.product;
  const workdir = TERMINAL_STUDY_DIR;
  const folder = seatFolder(o.seatCount, pid);
  const at = (rel: string) => `${folder ?? ""}${rel}`;
  const redact = (s: string): string => writer.redactor.text(s);
  const modelSeat = o.modelSeats.get(pid);
  // Each seat runs its own participant instance (a runtime resolves its own version facts).
  const participant: TerminalParticipant = o.seatCount === 1 ? plan.participant : createTerminalParticipant(lab);
  let phase = "allocate";
  const rec: TerminalRecording = createTerminalRecording({
    writer,
    participantId: pid,
    redact,
    onProgress: (detail) => hooks.progress(phase, detail),
    eventsPath: at(TERMINAL_EVENTS_FILE),
  });
  const log = rec.recorder;
  const setPhase = async (next: string, detail?: string): Promise<void> => {
    phase = next;
    hooks.progress(next, detail ? redact(detail) : undefined);
    if (o.seatCount === 1) await writer.writeStatus({ phase: next, ...(detail ? { detail } : {}) }).catch(() => undefined);
  };
  const nonce = newNonce();
  const brief = composeBrief(lab, nonce, seat);
  const guard = (): void => {
    if (hooks.signal.aborted) throw new Interrupted();
  };
  let sandbox: Sandbox | undefined;
  let createdId: string | undefined;
  let outcome: TerminalParticipantOutcome | undefined;
  let participantStarted = false;
  let checked: TaskResult[] | undefined;
  const provisionLog: string[] = [];
  const cleanup: CleanupProof[] = [];
  let evidence: SeatEvidence<TerminalSeatFacts> | undefined;
  const networkEnv = o.ca?.env ?? {};

  if (o.seatCount === 1) for (const p of o.preamble) log.lifecycle(p.event, p.message);
  log.lifecycle(
    "terminal-lab.seat.created",
    `seat ${pid}${seat.persona ? ` (persona ${seat.persona})` : ""}: brief sha256:${briefDigest(brief)}${seat.instruction ? "; with the lane's own instruction" : ""}`,
  );

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
      if (o.ca) {
        await sandbox.writeFile(SANDBOX_CA_PATH, o.ca.pem, 0o644);
        log.lifecycle(
          "terminal-lab.sandbox.ca",
          `extra CA bundle (${o.ca.pem.length} bytes of public certificates) copied to ${SANDBOX_CA_PATH}; network commands get ${Object.keys(o.ca.env).join(", ")}`,
        );
      }
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
      if (modelSeat?.capReached() && outcome.status !== "passed") {
        // The gateway refused a request at the cap: the seat ended on its budget, not on its own.
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
      if (!sandbox) return;
      const tasks = actor.tasks ?? [];
      if (tasks.length === 0) return;
      await setPhase("check", `${tasks.length} hidden check(s)`);
      checked = await runTaskChecks(tasks, { sandbox, user: PARTICIPANT_USER, workdir, participantId: pid, recorder: log, redact, signal: hooks.signal });
      hooks.progress("check", `${checked.filter((t) => t.passed).length}/${tasks.length} passed`);
      guard();
    },
    async finalize(end: { error?: StudyError; interrupted: boolean }): Promise<SeatRelease> {
      let failure: StudyError | undefined = end.error;
      if (failure) log.lifecycle("terminal-lab.session.error", `${failure.code} in ${phase}: ${failure.message}`);
      await setPhase("teardown", createdId ? `releasing ${createdId}` : "nothing to release");
      await modelSeat?.close().catch(() => undefined);
      let proof: ReleaseProof | undefined;
      if (sandbox) proof = await sandbox.release();
      else if (createdId && provider.provider === "docker") proof = await releaseContainer(engine.docker as DockerClient, createdId);
      if (proof) {
        cleanup.push(cleanupProof(proof, pid));
        log.lifecycle(
          proof.outcome === "released" ? "terminal-lab.cleanup.verified" : "terminal-lab.cleanup.unconfirmed",
          `${proof.provider} ${proof.id}: ${proof.outcome} (${proof.reason})`,
        );
      } else {
        log.lifecycle("terminal-lab.cleanup.skipped", "no sandbox was created");
      }
      if (end.interrupted) log.lifecycle("terminal-lab.interrupted", "the study was stopped: the participant was stopped, the sandbox released");
      evidence = await writeEvidence(failure, end.interrupted);
      failure = evidence.failure;
      return proof ? { outcome: proof.outcome, id: proof.id, reason: proof.reason } : { outcome: "none", reason: "no sandbox was created" };
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
    if (!failure && caps.maxJobs !== null && knownJobs > caps.maxJobs) {
      failure = {
        code: "HUMANISH_TERMINAL_LAB_CAPS_EXCEEDED",
        message: `${knownJobs} known billable job(s) exceed scenario.caps.maxJobs ${caps.maxJobs}.`,
        next: "Raise scenario.caps.maxJobs; the participant's own verdict is kept in the bundle.",
      };
      log.lifecycle("terminal-lab.caps.exceeded", failure.message);
    }
    if (cleanup.some((c) => c.outcome !== "released")) {
      const prev = failure ? ` (after ${failure.code})` : "";
      failure = {
        code: "HUMANISH_TERMINAL_LAB_CLEANUP_UNPROVEN",
        message: `the sandbox release was not confirmed${prev}: ${cleanup.map((c) => `${c.id} ${c.reason}`).join("; ")}`,
        next: `Remove it by id: docker rm -f ${cleanup.map((c) => c.id).join(" ")}`,
      };
    }
    if (o.seatCount === 1) await writer.writeStatus({ phase: "write" }).catch(() => undefined);
    const writeErrors = await rec.flush();
    const tasks: TaskResult[] =
      checked ??
      (actor.tasks ?? []).map((t) => ({
        id: t.id,
        goal: t.goal,
        participantId: pid,
        status: "not_run" as const,
        passed: false,
        detail: interrupted ? "not checked: the study was interrupted" : failure ? `not checked: ${failure.code}` : "not checked",
      }));
    const runtime = participant.runtime();
    const record: RunParticipant = participantRecord({
      participantId: pid,
      actorType: plan.descriptor.type,
      outcome,
      fallback: diskBreachFallback() ?? {
        status: "failed",
        completionReason: interrupted ? "interrupted" : "harness_error",
        reason: redact(
          interrupted ? "interrupted before the participant ran" : failure ? `${failure.code}: ${failure.message}` : "the participant did not run",
        ),
      },
    });
    if (seat.persona) record.persona = seat.persona;
    const safeWrite = async (what: string, f: () => Promise<unknown>): Promise<void> => {
      try {
        await f();
      } catch (e) {
        writeErrors.push(`${what}: ${e instanceof Error ? e.message : String(e)}`);
      }
    };
    if (rec.eventLines() === 0)
      await safeWrite(at(TERMINAL_EVENTS_FILE), () => writer.writeArtifact(at(TERMINAL_EVENTS_FILE), "", { kind: "terminal-events" }));
    await safeWrite(at("terminal-transcript.txt"), () =>
      writer.writeArtifact(at("terminal-transcript.txt"), rec.transcript(), { kind: "terminal-transcript" }),
    );
    if (provisionLog.length > 0) await safeWrite(at("provision.log"), () => writer.writeArtifact(at("provision.log"), provisionLog.join(""), { kind: "log" }));
    if (outcome) {
      const trace = buildActorTrace({
        participantId: pid,
        actorType: plan.descriptor.type,
        descriptor: plan.descriptor,
        outcome,
        ...(runtime ? { runtime } : {}),
        personaId: seat.persona ?? actor.persona ?? DEFAULT_PERSONA,
        briefDigest: briefDigest(brief),
        ...(actor.type === "codex-exec" && actor.reasoningEffort ? { reasoningEffort: actor.reasoningEffort } : {}),
      });
      await safeWrite(at(ACTOR_TRACE_FILE), () => writer.writeJson(at(ACTOR_TRACE_FILE), trace, { kind: "actor-trace" }));
      if (record.trace !== null) record.trace = at(ACTOR_TRACE_FILE);
    }
    const ledgers = buildTerminalLedgers({
      productName: product.name,
      ...(runtime ? { runtime } : {}),
      lifecycle: rec.lifecycle,
      commandLog: rec.commandLog,
      provider: providerLine,
      maxUsd: caps.maxUsd,
      cleanup,
    });
    await safeWrite(at("terminal-ledgers.json"), () => writer.writeJson(at("terminal-ledgers.json"), ledgers, { kind: "terminal-ledgers" }));
    if (modelLedger) await safeWrite(at(MODEL_LEDGER_FILE), () => writer.writeJson(at(MODEL_LEDGER_FILE), modelLedger, { kind: "model-ledger" }));
    if (writeErrors.length > 0 && !failure) {
      failure = {
        code: "HUMANISH_BUNDLE_WRITE_FAILED",
        message: `evidence could not be written completely: ${writeErrors.join("; ")}`,
        next: "Check free disk space and permissions of .humanish/runs; the bundle will not verify.",
      };
    }
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
    const resultError = failure || interrupted ? undefined : participantResultError(outcome, record, caps.maxMinutes, o.firstOutputMs, redact);
    const usd = modelLines.reduce((a, l) => a + (l.usd ?? 0), 0);
    return {
      participant: record,
      tasks,
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

/**
 * The run itself is sound (the bundle records it) but the seat could not finish: a participant
 * that timed out or whose runtime failed gets a code and a next step.
 */
function participantResultError(
  outcome: TerminalParticipantOutcome | undefined,
  record: RunParticipant,
  maxMinutes: number | null,
  firstOutputMs: number,
  redact: (s: string) => string,
): StudyError | undefined {
  if (!outcome) return undefined;
  if (outcome.deadline === "first-output")
    return {
      code: "HUMANISH_TERMINAL_LAB_PARTICIPANT_TIMED_OUT",
      message: redact(`the participant printed nothing for ${Math.round(firstOutputMs / 1000)} s and was killed (first-output deadline): ${outcome.reason}`),
      next: "Make the participant's commands print progress and never wait for input (stdin is closed); terminal-transcript.txt shows where it stalled.",
    };
  if (outcome.deadline === "max-minutes")
    return {
      code: "HUMANISH_TERMINAL_LAB_PARTICIPANT_TIMED_OUT",
      message: redact(`the participant was killed at scenario.caps.maxMinutes (${maxMinutes} min): ${outcome.reason}`),
      next: "Raise scenario.caps.maxMinutes or narrow the mission; terminal-transcript.txt shows where it stalled.",
    };
  if (record.completionReason === "harness_error" || record.completionReason === "actor_error")
    return {
      code: "HUMANISH_TERMINAL_LAB_FAILED",
      message: redact(`the participant runtime failed: ${outcome.reason}`),
      next: "Read actor.json and terminal-transcript.txt in the run directory.",
    };
  return undefined;
}

/** A harness failure of a seat step as a study error (non-HumanishError causes get a code). */
export function seatFailure(e: unknown, phase: string): StudyError {
  const h = isHumanishError(e)
    ? e
    : new HumanishError("HUMANISH_TERMINAL_LAB_FAILED", `terminal study failed in ${phase}: ${e instanceof Error ? e.message : String(e)}`, {
        next: "Read the bundle's lifecycle (terminal-ledgers.json) and rerun; report a bug if it repeats.",
      });
  return { code: h.code, message: h.message, ...(h.next ? { next: h.next } : {}) };
}

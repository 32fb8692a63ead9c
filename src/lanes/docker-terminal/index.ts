import type { CostLine } from "../../bundle/schemas.ts";
import type { DockerClient } from "../../docker/index.ts";
import { HumanishError } from "../../errors.ts";
import { TERMINAL_STUDY_DIR } from "../../lab/schema.ts";
import { ledgerCostLines } from "../../models/ledger.ts";
import { PROJECT_LABEL } from "../../sandbox/controller.ts";
import { releaseContainer } from "../../sandbox/index.ts";
import type { ReleaseProof, Sandbox, SandboxProvider } from "../../sandbox/types.ts";
import type { SeatEvidence, StudyError } from "../../study/evidence.ts";
import { appendSandboxReceipt } from "../../study/receipts.ts";
import type { Lane, SeatHooks, SeatRelease, SeatSpec } from "../../study/types.ts";
import { deadlineLabel, isoDate, providerCostLine } from "../../terminal-seat/evidence.ts";
import { createTerminalParticipant } from "../../terminal-seat/plan.ts";
import { PARTICIPANT_USER, readyProbe } from "../../terminal-seat/provision.ts";
import { copySandboxCa, participantResultError, recordRelease, seatRelease, terminalSeatBase, terminalSeatFailure } from "../../terminal-seat/seat.ts";
import { cleanupFailure, jobsCapFailure, writeTerminalSeatFiles } from "../../terminal-seat/seat-files.ts";
import type { TerminalLaneStudy } from "../../terminal-seat/steps.ts";
import { participantEnded, provisionTerminalSeat, runTerminalParticipant, type TerminalSeatState, terminalLane } from "../../terminal-seat/steps.ts";
import { ledgerProviderLine, MODEL_LEDGER_FILE, refusedRequestsNote, turnSumMismatch } from "./model-evidence.ts";
import { type ModelSeat, startSandboxForwarder } from "./model-seat.ts";
import type { EngineReady } from "./preflight.ts";

export { INSTALL_TIMEOUT_MS, installFailureHint, PARTICIPANT_USER } from "../../terminal-seat/provision.ts";

/** Default first-output deadline of a participant command, ms. */
export const DEFAULT_FIRST_OUTPUT_MS = 90_000;

/** What the lane needs of the study: its plan, engine, writer and the seats' model gateways. */
export interface DockerTerminalLaneOptions extends TerminalLaneStudy {
  engine: EngineReady;
  provider: SandboxProvider;
  cwd: string;
  diskMiB: number;
  /** The gateway of each model-driven seat, opened before the study (its token is a secret of the writer). */
  modelSeats: ReadonlyMap<string, ModelSeat>;
}

/** The lane's own facts of a seat: whether its participant started, for the study's gaps. */
export interface TerminalSeatFacts {
  participantStarted: boolean;
}

/** The Docker terminal lane over one study's plan and engine. */
export function dockerTerminalLane(o: DockerTerminalLaneOptions): Lane<SeatEvidence<TerminalSeatFacts>> {
  return terminalLane(
    "docker-terminal",
    o.plan,
    { state: (seat, hooks) => terminalSeat(o, seat, hooks), prepare: prepareSeat, participate: participateSeat, finalize: finalizeSeat },
    seatFailure,
  );
}

/**
 * One Docker terminal seat's state, shared by its steps (filled in as the seat goes). Each seat
 * runs its own participant instance (a runtime resolves its own version facts).
 */
interface DockerSeat extends TerminalSeatState<Sandbox, TerminalSeatFacts> {
  o: DockerTerminalLaneOptions;
  modelSeat: ModelSeat | undefined;
}

/** A new seat's state (nothing created yet). */
function terminalSeat(o: DockerTerminalLaneOptions, seat: SeatSpec, hooks: SeatHooks): DockerSeat {
  const s: DockerSeat = {
    o,
    lab: o.lab,
    seat,
    hooks,
    participant: o.seatCount === 1 ? o.plan.participant : createTerminalParticipant(o.lab),
    modelSeat: o.modelSeats.get(seat.id),
    base: terminalSeatBase({ lab: o.lab, writer: o.writer, seat, seatCount: o.seatCount, hooks, preamble: o.preamble }),
    networkEnv: o.ca?.env ?? {},
    participantStarted: false,
    provisionLog: [],
    cleanup: [],
  };
  return s;
}

/**
 * Creates the seat's sandbox (its exact id appended, fsync, to sandbox-receipts.ndjson before
 * anything is provisioned in it) and waits for it to be ready.
 * @throws the provider's errors (`HUMANISH_SANDBOX_*`), Interrupted once the study was stopped
 */
async function createSeatSandbox(s: DockerSeat): Promise<Sandbox> {
  const { o, hooks, base } = s;
  const { lab, plan, engine, writer, provider } = o;
  const pid = s.seat.id;
  const maxMinutes = plan.caps.maxMinutes ?? 0;
  base.guard();
  hooks.progress("allocate", `creating sandbox from ${engine.image}`);
  hooks.beforeCreate();
  const sandbox = await provider.create({
    runId: o.runId,
    image: engine.image,
    network: plan.network,
    diskBytes: o.diskMiB * 1024 * 1024,
    workdir: TERMINAL_STUDY_DIR,
    labels: { "humanish.lab": lab.id, "humanish.participant": pid, [PROJECT_LABEL]: o.cwd },
    ...(s.modelSeat ? { mounts: [s.modelSeat.mount] } : {}),
    onCreated: async (id) => {
      s.createdId = id;
      hooks.created(id);
      await appendSandboxReceipt(writer, { participantId: pid, provider: provider.provider, id, kind: "sandbox", timeoutMs: maxMinutes * 60_000 });
      base.log.lifecycle(
        "terminal-lab.sandbox.created",
        `${provider.provider} sandbox ${id} for ${pid} (network ${plan.network}); id recorded before provisioning`,
      );
    },
  });
  s.sandbox = sandbox;
  base.guard();
  await readyProbe(sandbox, hooks.signal);
  base.log.lifecycle("terminal-lab.sandbox.ready", `${TERMINAL_STUDY_DIR} ready (root-owned, mode 0777); participant user ${PARTICIPANT_USER}`);
  return sandbox;
}

/**
 * The seat's `prepare`: the sandbox, the extra CA, the participant runtime and `product.install`
 * (as root, unkeyed), the model forwarder, then the network taken away from a participant that
 * calls no model (or reaches it only through the gateway).
 * @throws HUMANISH_SANDBOX_NETWORK_DETACH_FAILED when the sandbox cannot drop its network; the
 *   steps' own errors; Interrupted once the study was stopped
 */
async function prepareSeat(s: DockerSeat): Promise<void> {
  const { o, hooks, base, modelSeat } = s;
  const { plan, provider } = o;
  const caps = plan.caps;
  const sandbox = await createSeatSandbox(s);
  if (o.ca) await copySandboxCa(sandbox, o.ca, base.log);
  await provisionTerminalSeat(base, s.participant, sandbox, {
    install: o.lab.subject.product.install ?? [],
    networkEnv: s.networkEnv,
    network: plan.network,
    provisionLog: s.provisionLog,
    signal: hooks.signal,
  });
  if (modelSeat) {
    await startSandboxForwarder(sandbox, modelSeat.gateway.socketName, hooks.signal);
    base.log.lifecycle(
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
    base.log.lifecycle("terminal-lab.network.detached", "network taken away after product.install; the participant runs with none");
  }
}

/**
 * The seat's `participate`: the participant in the sandbox until it ends or a deadline fires; a
 * gateway that refused a request at the spend cap makes the seat end on its budget.
 * @throws Interrupted once the study was stopped
 */
async function participateSeat(s: DockerSeat): Promise<void> {
  const { o, base, modelSeat, sandbox } = s;
  const { plan } = o;
  const caps = plan.caps;
  if (!sandbox) return;
  s.participantStarted = true;
  let outcome = await runTerminalParticipant(base, s.participant, sandbox, {
    networkEnv: s.networkEnv,
    signal: s.hooks.signal,
    firstOutputMs: o.firstOutputMs,
    maxMinutes: caps.maxMinutes ?? 0,
    access: {
      ...(plan.runtimeKey && plan.model?.runtimeAuth !== "openai-egress" ? { runtimeKey: plan.runtimeKey } : {}),
      ...(modelSeat ? { modelGateway: modelSeat.access } : {}),
    },
  });
  s.outcome = outcome;
  if (modelSeat?.capReached() && outcome.claimed !== "passed") {
    // The gateway refused a request at the cap: the seat ended on its budget, not on its own
    // (a participant that still finished claiming success ended on its own; its checks decide).
    outcome = {
      ...outcome,
      status: "incomplete",
      completionReason: "budget_reached",
      reason: base.redact(`spend_limit: the model gateway refused a request at scenario.caps.maxUsd ${caps.maxUsd} USD (${outcome.reason})`),
    };
    s.outcome = outcome;
    base.log.lifecycle("terminal-lab.caps.spend_limit", `the model gateway refused ${modelSeat.ledger(s.seat.id).refused} request(s) at the spend cap`);
  }
  participantEnded(base, outcome, deadlineLabel);
}

/**
 * The seat's `finalize` (always, after the session opened teardown): close the gateway, release
 * the sandbox by exact id with proof (a container created but never handed over is removed by its
 * id), then the seat's evidence.
 */
async function finalizeSeat(s: DockerSeat, end: { error?: StudyError; interrupted: boolean }): Promise<SeatRelease> {
  const { o, base } = s;
  await s.modelSeat?.close().catch(() => undefined);
  let proof: ReleaseProof | undefined;
  if (s.sandbox) proof = await s.sandbox.release();
  else if (s.createdId && o.provider.provider === "docker") proof = await releaseContainer(o.engine.docker as DockerClient, s.createdId);
  recordRelease(base, proof, s.cleanup, end.interrupted);
  s.evidence = await writeEvidence(s, end.error, end.interrupted);
  return seatRelease(proof);
}

/**
 * The participant's own writes filled its disk allowance (the sandbox was stopped): it ran out
 * of a resource the lab bounds, like a budget — an outcome of its behaviour, not a harness failure.
 */
function diskBreachFallback(s: DockerSeat): { status: "failed"; completionReason: "budget_reached"; reason: string } | undefined {
  const b = s.participantStarted ? s.sandbox?.diskLimit?.().breach : undefined;
  if (!b) return undefined;
  const mib = Math.round(b.limitBytes / 1048576);
  return {
    status: "failed",
    completionReason: "budget_reached",
    reason: s.base.redact(`disk_limit: the participant wrote ${b.observedBytes} bytes, past execution.limits.diskMiB (${mib} MiB); the sandbox was stopped`),
  };
}

/**
 * The seat's model spend: the gateway's ledger lines when it had one (with its cross-checks
 * logged), else the participant's own estimate; USD, `count` the known billable jobs.
 */
function seatModelCost(s: DockerSeat, today: string) {
  const { o, base, modelSeat } = s;
  const pid = s.seat.id;
  const plan = o.plan;
  const keyedCommandRan = base.rec.commands.some((c) => c.envNames.some((n) => plan.descriptor.runtimeKeyNames.includes(n)));
  const modelLedger = modelSeat?.ledger(pid);
  const ledgerLines = modelLedger ? ledgerCostLines(modelLedger.lines, pid, today) : undefined;
  const providerLine = ledgerLines
    ? ledgerProviderLine(ledgerLines, pid, s.outcome?.tokenUsage?.turns.length ?? null)
    : providerCostLine({ descriptor: plan.descriptor, participantId: pid, outcome: s.outcome, keyedCommandRan, kind: "provider", today });
  // The participant tried the gateway for something it does not forward: evidence, not a fault.
  const refusedNote = modelLedger ? refusedRequestsNote(modelLedger) : undefined;
  if (refusedNote) base.log.lifecycle("terminal-lab.model-gateway.refused", refusedNote);
  if (modelLedger && s.outcome?.tokenUsage) {
    const mismatch = turnSumMismatch(modelLedger, s.outcome.tokenUsage);
    if (mismatch) base.log.lifecycle("terminal-lab.cost.cross-check.warning", mismatch);
  }
  return { modelLedger, ledgerLines, providerLine };
}

/**
 * The seat's failure after its caps and cleanup: known spend over `maxUsd` or known jobs over
 * `maxJobs` fail closed (null never trips a cap), then an unconfirmed release.
 */
function cappedFailure(s: DockerSeat, seatError: StudyError | undefined, usd: number | null, knownJobs: number): StudyError | undefined {
  const { base } = s;
  const caps = s.o.plan.caps;
  let failure = seatError;
  if (!failure && caps.maxUsd !== null && usd !== null && usd > caps.maxUsd) {
    failure = {
      code: "HUMANISH_TERMINAL_LAB_CAPS_EXCEEDED",
      message: `estimated spend ${usd} USD exceeds scenario.caps.maxUsd ${caps.maxUsd}.`,
      next: "Raise scenario.caps.maxUsd or narrow the mission; the participant's own verdict is kept in the bundle.",
    };
    base.log.lifecycle("terminal-lab.caps.exceeded", failure.message);
  }
  const overJobs = failure ? undefined : jobsCapFailure(knownJobs, caps.maxJobs);
  if (overJobs) {
    failure = overJobs;
    base.log.lifecycle("terminal-lab.caps.exceeded", overJobs.message);
  }
  return cleanupFailure(s.cleanup, failure, { what: "sandbox", next: (ids) => `Remove it by id: docker rm -f ${ids}` });
}

/** The seat's evidence: its costs and caps, its files written (trace, ledgers, transcript, events), and what it hands the study. */
async function writeEvidence(s: DockerSeat, seatError: StudyError | undefined, interrupted: boolean): Promise<SeatEvidence<TerminalSeatFacts>> {
  const { o, base, seat } = s;
  const { lab, plan, writer } = o;
  const { redact, at, folder } = base;
  const caps = plan.caps;
  const pid = seat.id;
  const today = isoDate();
  const { modelLedger, ledgerLines, providerLine } = seatModelCost(s, today);
  const knownJobs = providerLine.count ?? 0;
  let failure = cappedFailure(s, seatError, providerLine.usd, knownJobs);
  if (o.seatCount === 1) await writer.writeStatus({ phase: "write" }).catch(() => undefined);
  const runtime = s.participant.runtime();
  const diskBreach = diskBreachFallback(s);
  const written = await writeTerminalSeatFiles({
    lab,
    seat,
    writer,
    rec: base.rec,
    descriptor: plan.descriptor,
    runtime,
    brief: base.brief,
    folder,
    outcome: s.outcome,
    checked: s.checked,
    cleanup: s.cleanup,
    provider: providerLine,
    maxUsd: caps.maxUsd,
    provisionLog: s.provisionLog,
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
  const resultError =
    failure || interrupted
      ? undefined
      : participantResultError(s.outcome, record.completionReason, { maxMinutes: caps.maxMinutes, firstOutputMs: o.firstOutputMs }, redact);
  const usd = modelLines.reduce((a, l) => a + (l.usd ?? 0), 0);
  return {
    participant: record,
    tasks: written.tasks,
    cleanup: s.cleanup,
    costLines: [...modelLines, localSandboxLine(pid, today)],
    lifecycle: base.rec.lifecycle,
    ...(failure ? { failure: { ...failure, message: redact(failure.message) } } : {}),
    ...(resultError ? { resultError } : {}),
    folder,
    usd,
    jobs: knownJobs,
    lane: { participantStarted: s.participantStarted },
  };
}

/** The sandbox-minutes line of a local Docker sandbox: no metered provider, so 0 USD with that basis. */
function localSandboxLine(pid: string, today: string): CostLine {
  return {
    kind: "sandbox-minutes",
    participantId: pid,
    usd: 0,
    count: null,
    basis: "no-spend-signal",
    ratesAsOf: today,
    source: "humanish: a local Docker sandbox has no metered provider",
    reason: null,
  };
}

/** A harness failure of a seat step as a study error (non-HumanishError causes get a code). */
export function seatFailure(e: unknown, phase: string): StudyError {
  return terminalSeatFailure(e, phase, "terminal study");
}

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
import { HumanishError } from "../../errors.ts";
import { TERMINAL_STUDY_DIR, type TerminalLabConfig } from "../../lab/schema.ts";
import type { E2BSandboxHandleApi, E2BSandboxProvider } from "../../sandbox/e2b.ts";
import type { ReleaseProof } from "../../sandbox/types.ts";
import type { SeatEvidence, StudyError } from "../../study/evidence.ts";
import { appendSandboxReceipt } from "../../study/receipts.ts";
import type { Lane, SeatHooks, SeatRelease, SeatSpec } from "../../study/types.ts";
import { SANDBOX_CA_PATH, type SandboxCa } from "../../terminal-seat/ca.ts";
import { createTerminalParticipant, type TerminalPlan } from "../../terminal-seat/plan.ts";
import { PARTICIPANT_USER } from "../../terminal-seat/provision.ts";
import { copySandboxCa, participantResultError, recordRelease, seatRelease, terminalSeatBase, terminalSeatFailure } from "../../terminal-seat/seat.ts";
import type { TerminalLaneStudy } from "../../terminal-seat/steps.ts";
import { participantEnded, provisionTerminalSeat, runTerminalParticipant, type TerminalSeatState, terminalLane } from "../../terminal-seat/steps.ts";
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
export interface E2BTerminalLaneOptions extends TerminalLaneStudy {
  access: E2BAccess;
  provider: E2BSandboxProvider;
  /** `latest` resolved once for the study's Codex seats. */
  latest: LatestVersion;
  /** The command's env (the host's artifact cache for the pinned Node). */
  env: Record<string, string | undefined>;
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
  return terminalLane(
    "e2b-terminal",
    o.plan,
    { state: (seat, hooks) => e2bSeat(o, egress, seat, hooks), prepare: prepareSeat, participate: participateSeat, finalize: finalizeSeat },
    seatFailure,
  );
}

/** One E2B terminal seat's state, shared by its steps (filled in as the seat goes). */
interface E2BSeat extends TerminalSeatState<E2BSandboxHandleApi, E2BTerminalSeatFacts> {
  o: E2BTerminalLaneOptions;
  egress: EgressPlan;
  /** The participant is Codex (it reaches its model from the sandbox, and needs Node). */
  codex: boolean;
  /** The E2B timeout of the sandbox, ms. */
  timeoutMs: number;
  acquiredAt?: number;
  resources?: { cpuCount: number; memoryMB: number };
}

/** A new seat's state (nothing created yet). */
function e2bSeat(o: E2BTerminalLaneOptions, egress: EgressPlan, seat: SeatSpec, hooks: SeatHooks): E2BSeat {
  const { lab, plan } = o;
  const codex = plan.descriptor.runtimeKeyNames.length > 0;
  const s: E2BSeat = {
    o,
    lab,
    egress,
    seat,
    hooks,
    codex,
    participant: createTerminalParticipant(lab, { latest: o.latest }),
    base: terminalSeatBase({ lab, writer: o.writer, seat, seatCount: o.seatCount, hooks, preamble: o.preamble }),
    timeoutMs: seatTimeoutMs({ maxMinutes: plan.caps.maxMinutes ?? 0, codex, installs: (lab.subject.product.install ?? []).length }),
    // Node tools take the extra CA beside their own roots; Codex takes one bundle, so it gets the
    // system bundle plus the extra CA (the system bundle is what E2B's egress proxy is trusted by).
    networkEnv: o.ca ? { ...o.ca.env, ...(codex ? { CODEX_CA_CERTIFICATE: COMBINED_CA_PATH } : {}) } : {},
    participantStarted: false,
    provisionLog: [],
    cleanup: [],
  };
  return s;
}

/**
 * The sandbox ended under the seat (its E2B timeout, or a kill humanish did not make): what the
 * participant saw is a harness failure, never a finding about the product. Rewrites the seat's
 * outcome so, logs it, and gives the seat's `HUMANISH_E2B_SANDBOX_LOST` error.
 */
function sandboxLost(s: E2BSeat, id: string): StudyError {
  const why = `the E2B sandbox ${id} ended before humanish released it (its E2B timeout, or a kill humanish did not make)`;
  const outcome = s.outcome;
  if (outcome && outcome.completionReason !== "harness_error")
    s.outcome = { ...outcome, status: "failed", completionReason: "harness_error", reason: s.base.redact(`${why}; the participant saw: ${outcome.reason}`) };
  s.base.log.lifecycle("terminal-lab.sandbox.lost", why);
  return {
    code: "HUMANISH_E2B_SANDBOX_LOST",
    message: `${why}.`,
    next: "Rerun the study; if it repeats, raise scenario.caps.maxMinutes (the sandbox timeout follows it) or look the sandbox up in the E2B dashboard.",
  };
}

/**
 * Creates the seat's E2B sandbox (killed on its timeout, metadata = run, seat and lab id only,
 * the seat's egress policy); its exact id appended, fsync, to sandbox-receipts.ndjson before
 * anything is provisioned in it; then its resources and readiness.
 * @throws the provider's errors (`HUMANISH_E2B_*`), Interrupted once the study was stopped
 */
async function createSeatSandbox(s: E2BSeat): Promise<E2BSandboxHandleApi> {
  const { o, hooks, base, egress, timeoutMs } = s;
  const pid = s.seat.id;
  base.guard();
  hooks.progress("allocate", `creating E2B sandbox from template ${o.access.template}`);
  hooks.beforeCreate();
  const sandbox = await o.provider.create({
    runId: o.runId,
    image: o.access.template,
    workdir: TERMINAL_STUDY_DIR,
    network: egress.policy ? "none" : "bridge",
    e2b: { metadata: seatMetadata({ runId: o.runId, seatId: pid, labId: o.lab.id }), timeoutMs, ...(egress.policy ? { network: egress.policy } : {}) },
    onCreated: async (id) => {
      s.createdId = id;
      s.acquiredAt = Date.now();
      hooks.created(id);
      await appendSandboxReceipt(o.writer, { participantId: pid, provider: "e2b", id, kind: "sandbox", timeoutMs });
      base.log.lifecycle(
        "terminal-lab.sandbox.created",
        `e2b sandbox ${id} for ${pid} (template ${o.access.template}, E2B timeout ${timeoutMs} ms, killed on timeout); id recorded before provisioning`,
      );
      base.log.lifecycle("terminal-lab.egress.policy", egress.description);
    },
  });
  s.sandbox = sandbox;
  base.guard();
  s.resources = await sandbox.resources();
  await e2bReadyProbe(sandbox, hooks.signal);
  base.log.lifecycle(
    "terminal-lab.sandbox.ready",
    `${TERMINAL_STUDY_DIR} ready (owned by the participant user, mode 0777); participant user ${PARTICIPANT_USER}`,
  );
  return sandbox;
}

/**
 * Copies the extra CA into the sandbox; for Codex also joins it to the system bundle (Codex
 * trusts one bundle).
 * @throws HUMANISH_TERMINAL_LAB_CA_INVALID when the bundles cannot be joined
 */
async function installSeatCa(s: E2BSeat, sandbox: E2BSandboxHandleApi, ca: SandboxCa): Promise<void> {
  await copySandboxCa(sandbox, ca, s.base.log);
  if (!s.codex) return;
  const r = await sandbox.exec({
    cmd: ["bash", "-c", `cat ${SYSTEM_CA_BUNDLE} ${SANDBOX_CA_PATH} > ${COMBINED_CA_PATH} && chmod 0644 ${COMBINED_CA_PATH}`],
    user: "root",
    cwd: "/",
    timeoutMs: 30_000,
    signal: s.hooks.signal,
  });
  if (r.exitCode !== 0) {
    throw new HumanishError(
      "HUMANISH_TERMINAL_LAB_CA_INVALID",
      `the extra CA bundle could not be joined to ${SYSTEM_CA_BUNDLE} in the sandbox (exit ${r.exitCode})`,
      {
        next: `Use a template with ca-certificates installed, or unset ${ca.source}.`,
      },
    );
  }
}

/**
 * The seat's `prepare`: the sandbox, the extra CA, for Codex the Node prerequisite, the
 * participant runtime and `product.install` (as root, unkeyed), then egress denied to a
 * participant that calls no model when the lab grants none.
 * @throws the steps' own errors; Interrupted once the study was stopped
 */
async function prepareSeat(s: E2BSeat): Promise<void> {
  const { o, hooks, base, codex } = s;
  const lab = o.lab;
  const install = lab.subject.product.install ?? [];
  const sandbox = await createSeatSandbox(s);
  if (o.ca) await installSeatCa(s, sandbox, o.ca);
  if (codex) {
    await base.setPhase("provision", "Node runtime prerequisite");
    await ensureNode(sandbox, { recorder: base.log, signal: hooks.signal, env: o.env });
    base.guard();
  }
  await provisionTerminalSeat(base, s.participant, sandbox, {
    install,
    networkEnv: s.networkEnv,
    network: "bridge",
    next: e2bInstallFailureHint(lab.execution.egressAllow),
    provisionLog: s.provisionLog,
    signal: hooks.signal,
  });
  if (!codex && install.length > 0 && !lab.execution.egressAllow) {
    // The network was granted for product.install; a participant that calls no model gets none.
    await sandbox.detachNetwork();
    base.log.lifecycle("terminal-lab.network.detached", "egress denied after product.install; the participant runs with none");
  }
}

/**
 * The seat's `participate`: the participant in the sandbox (Codex reaching its model directly)
 * until it ends or a deadline fires.
 * @throws HUMANISH_E2B_SANDBOX_LOST when the sandbox ended under the participant; Interrupted
 *   once the study was stopped
 */
async function participateSeat(s: E2BSeat): Promise<void> {
  const { o, base, codex, sandbox } = s;
  const plan = o.plan;
  if (!sandbox) return;
  s.participantStarted = true;
  const auth = plan.model?.runtimeAuth ?? "openai-env";
  s.outcome = await runTerminalParticipant(base, s.participant, sandbox, {
    networkEnv: s.networkEnv,
    signal: s.hooks.signal,
    firstOutputMs: o.firstOutputMs,
    maxMinutes: plan.caps.maxMinutes ?? 0,
    access: {
      ...(codex ? { modelDirect: directAccess(plan) } : {}),
      ...(codex && auth === "openai-env" && plan.runtimeKey ? { runtimeKey: plan.runtimeKey } : {}),
    },
  });
  // A sandbox that ended under the participant makes whatever it saw a harness failure.
  if ((await sandbox.alive()) === false) {
    const lost = sandboxLost(s, sandbox.id);
    throw new HumanishError(lost.code, lost.message, { next: lost.next });
  }
  participantEnded(base, s.outcome, (d) => d);
}

/**
 * Kills the sandbox by exact id and looks it up; a sandbox already gone under a running seat
 * becomes the seat's `HUMANISH_E2B_SANDBOX_LOST`. The release proof (undefined: none was
 * created) and the seat's failure after it.
 */
async function releaseSeatSandbox(s: E2BSeat, failed: StudyError | undefined): Promise<{ proof: ReleaseProof | undefined; failure: StudyError | undefined }> {
  const sandbox = s.sandbox;
  let failure = failed;
  if (!sandbox) return { proof: undefined, failure };
  // Asked before the kill: a sandbox E2B no longer runs ended under the seat.
  const gone = s.participantStarted && !failure && (await sandbox.alive()) === false;
  if (gone) failure = sandboxLost(s, sandbox.id);
  const released = await sandbox.releaseWithFacts();
  // Nothing left to kill: the sandbox ended before its release, under the seat.
  if (released.alreadyAbsent && s.participantStarted && !failure) failure = sandboxLost(s, sandbox.id);
  return { proof: released.proof, failure };
}

/**
 * The seat's `finalize` (always, after the session opened teardown): release by exact id
 * (released / unconfirmed), the sandbox time line, then the seat's trace, ledgers, transcript and
 * events.
 */
async function finalizeSeat(s: E2BSeat, end: { error?: StudyError; interrupted: boolean }): Promise<SeatRelease> {
  const { o, base, seat } = s;
  const { lab, plan, writer } = o;
  const caps = plan.caps;
  const { proof, failure } = await releaseSeatSandbox(s, end.error);
  const releasedAt = Date.now();
  recordRelease(base, proof, s.cleanup, end.interrupted);
  const sandboxLine = sandboxTimeLine({
    participantId: seat.id,
    acquiredAt: s.acquiredAt,
    releasedAt,
    resources: s.resources,
    released: proof?.outcome === "released",
  });
  if (sandboxLine.usd !== null && sandboxLine.basis === "rate-table")
    base.log.lifecycle("terminal-lab.cost.measured", `sandbox time ${sandboxLine.note}: ${sandboxLine.usd} USD`);
  if (o.seatCount === 1) await writer.writeStatus({ phase: "write" }).catch(() => undefined);
  let evidence = await writeE2BSeatEvidence({
    lab,
    seat,
    writer,
    rec: base.rec,
    participant: s.participant,
    descriptor: plan.descriptor,
    caps,
    brief: base.brief,
    folder: base.folder,
    outcome: s.outcome,
    checked: s.checked,
    cleanup: s.cleanup,
    sandboxLine,
    provisionLog: s.provisionLog,
    failure,
    interrupted: end.interrupted,
    facts: { participantStarted: s.participantStarted, ...(s.createdId ? { sandboxId: s.createdId } : {}) },
    redact: base.redact,
  });
  const resultError =
    evidence.failure || end.interrupted
      ? undefined
      : participantResultError(s.outcome, evidence.participant.completionReason, { maxMinutes: caps.maxMinutes, firstOutputMs: o.firstOutputMs }, base.redact);
  if (resultError) evidence = { ...evidence, resultError };
  s.evidence = evidence;
  return seatRelease(proof);
}

/** A harness failure of a seat step as a study error (non-HumanishError causes get a code). */
export function seatFailure(e: unknown, phase: string): StudyError {
  return terminalSeatFailure(e, phase, "E2B terminal study");
}

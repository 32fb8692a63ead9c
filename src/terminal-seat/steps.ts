/**
 * The steps every terminal lane's seat runs the same way once it has a sandbox, whatever the
 * machine: provisioning the participant and the product, running the participant to its end, and
 * the opening of teardown. The lanes keep what differs (how the sandbox is created, what the
 * participant reaches its model through, how the sandbox is released and costed).
 */
import type { RunContext, TerminalParticipant, TerminalParticipantOutcome } from "../actors/terminal-participant/participant.ts";
import type { CleanupProof, TaskResult } from "../bundle/schemas.ts";
import type { RunWriter } from "../bundle/writer.ts";
import { TERMINAL_STUDY_DIR, type TerminalLabConfig } from "../lab/schema.ts";
import type { Sandbox } from "../sandbox/types.ts";
import { evidenceSummary, type SeatEvidence, type StudyError } from "../study/evidence.ts";
import type { Lane, SeatHooks, SeatRelease, SeatSession, SeatSpec } from "../study/types.ts";
import type { SandboxCa } from "./ca.ts";
import type { TerminalPlan } from "./plan.ts";
import { PARTICIPANT_USER, runInstall } from "./provision.ts";
import { checkSeat, type TerminalSeatBase } from "./seat.ts";

/** What every terminal seat keeps while it runs, filled in as it goes (a lane's seat state extends it with its own). */
export interface TerminalSeatState<S extends Sandbox, F> {
  lab: TerminalLabConfig;
  seat: SeatSpec;
  hooks: SeatHooks;
  base: TerminalSeatBase;
  participant: TerminalParticipant;
  /** Non-secret env of network-reaching commands (the extra CA). */
  networkEnv: Record<string, string>;
  sandbox?: S;
  createdId?: string;
  outcome?: TerminalParticipantOutcome;
  participantStarted: boolean;
  checked?: TaskResult[];
  provisionLog: string[];
  cleanup: CleanupProof[];
  evidence?: SeatEvidence<F>;
}

/** The steps a terminal lane writes for one seat; {@link terminalSeatSession} puts the rest around them. */
export interface TerminalSeatSteps {
  prepare(): Promise<void>;
  participate(): Promise<void>;
  /** Runs after the session opened teardown (the seat's error logged, the `teardown` phase). */
  finalize(end: { error?: StudyError; interrupted: boolean }): Promise<SeatRelease>;
}

/**
 * The seat session of a terminal lane over its state and its own steps: openSession enters the
 * `participate` phase (named by `actorType`, the plan's participant type), check runs the hidden checks in the
 * sandbox, finalize opens teardown before the lane's own, snapshot gives the evidence `finalize` wrote.
 */
export function terminalSeatSession<S extends Sandbox, F>(
  s: TerminalSeatState<S, F>,
  actorType: string,
  steps: TerminalSeatSteps,
): SeatSession<SeatEvidence<F>> {
  return {
    prepare: () => steps.prepare(),
    async openSession() {
      await s.base.setPhase("participate", actorType);
    },
    participate: () => steps.participate(),
    async check() {
      if (s.sandbox) s.checked = await checkSeat(s.base, s.lab, s.sandbox, s.hooks);
    },
    async finalize(end) {
      await beginTeardown(s.base, end.error, s.createdId);
      return steps.finalize(end);
    },
    snapshot(): SeatEvidence<F> {
      if (!s.evidence) throw new Error(`seat ${s.seat.id}: snapshot before finalize`);
      return s.evidence;
    },
  };
}

/** What a terminal lane writes of its seats: a new seat's state, and its own steps over it. */
export interface TerminalLaneSeats<T> {
  /** The state of a new seat (nothing created yet). */
  state(seat: SeatSpec, hooks: SeatHooks): T;
  prepare(s: T): Promise<void>;
  participate(s: T): Promise<void>;
  /** Runs after the session opened teardown (the seat's error logged, the `teardown` phase). */
  finalize(s: T, end: { error?: StudyError; interrupted: boolean }): Promise<SeatRelease>;
}

/** What every terminal lane needs of its study, whichever sandbox it runs seats in. */
export interface TerminalLaneStudy {
  lab: TerminalLabConfig;
  plan: TerminalPlan;
  writer: RunWriter;
  runId: string;
  /** First-output deadline of a participant command, ms. */
  firstOutputMs: number;
  seatCount: number;
  /** Extra CA trust for sandboxes behind an intercepting HTTPS proxy (`HUMANISH_SANDBOX_CA_CERTS`, else `NODE_EXTRA_CA_CERTS`), if set. */
  ca: SandboxCa | undefined;
  /**
   * Study-level lifecycle events a one-seat study keeps in its seat's ledger (as it always has);
   * a many-seat study records them once in run.json instead.
   */
  preamble: readonly { event: string; message: string }[];
}

/**
 * A terminal lane named `name` (`docker-terminal`, `e2b-terminal`) over the study's `plan`: a
 * seat's known spend (USD) and billable jobs are its evidence's, a participant that brings its
 * own model may start one job a seat, and each seat's session (see {@link terminalSeatSession})
 * runs the lane's steps over the seat's state. `harnessError` is the lane's study error for a
 * step that threw.
 */
export function terminalLane<F, T extends TerminalSeatState<Sandbox, F>>(
  name: string,
  plan: TerminalPlan,
  seats: TerminalLaneSeats<T>,
  harnessError: (e: unknown, phase: string) => StudyError,
): Lane<SeatEvidence<F>> {
  return {
    name,
    spentUsd: (f) => f.usd,
    jobs: (f) => f.jobs,
    jobsPerSeat: plan.descriptor.capabilities.byoModel ? 1 : 0,
    summary: evidenceSummary,
    session(seat, hooks) {
      const s = seats.state(seat, hooks);
      return terminalSeatSession<Sandbox, F>(s, plan.descriptor.type, {
        prepare: () => seats.prepare(s),
        participate: () => seats.participate(s),
        finalize: (end) => seats.finalize(s, end),
      });
    },
    harnessError,
  };
}

/**
 * Provisions the seat: the participant's runtime, then each `product.install` command as root,
 * unkeyed, in order (`network` is the sandbox's network while they run; `next` the lane's next
 * step of a failed install). Checks the interrupt guard after every step.
 * @throws Interrupted once the study was stopped; the participant's and runInstall's errors
 *   (`HUMANISH_TERMINAL_LAB_INSTALL_FAILED`, …)
 */
export async function provisionTerminalSeat(
  base: TerminalSeatBase,
  participant: TerminalParticipant,
  sandbox: Sandbox,
  o: {
    install: readonly string[];
    networkEnv: Record<string, string>;
    network: "none" | "bridge";
    next?: string;
    provisionLog: string[];
    signal: AbortSignal;
  },
): Promise<void> {
  const workdir = TERMINAL_STUDY_DIR;
  await base.setPhase("provision", "participant runtime");
  await participant.prepare({ sandbox, user: PARTICIPANT_USER, workdir, recorder: base.log, signal: o.signal, networkEnv: o.networkEnv });
  base.guard();
  const install = o.install;
  for (const [i, command] of install.entries()) {
    await base.setPhase("provision", `install ${i + 1}/${install.length}: ${command}`);
    await runInstall(sandbox, command, i, install.length, {
      workdir,
      signal: o.signal,
      rec: base.rec,
      provisionLog: o.provisionLog,
      networkEnv: o.networkEnv,
      network: o.network,
      ...(o.next !== undefined ? { next: o.next } : {}),
    });
    base.guard();
  }
  base.log.lifecycle("terminal-lab.product.prepared", `${install.length} install command(s) ran as root, unkeyed`);
}

/**
 * Runs the participant in the sandbox with the seat's brief and nonce: its first-output deadline
 * (`firstOutputMs`, ms) and its end at `maxMinutes` (minutes) from now; `access` is how it
 * reaches its model (a key, a gateway, direct egress), if at all.
 */
export function runTerminalParticipant(
  base: TerminalSeatBase,
  participant: TerminalParticipant,
  sandbox: Sandbox,
  o: {
    networkEnv: Record<string, string>;
    signal: AbortSignal;
    firstOutputMs: number;
    maxMinutes: number;
    access: Pick<RunContext, "runtimeKey" | "modelGateway" | "modelDirect">;
  },
): Promise<TerminalParticipantOutcome> {
  const startedAt = Date.now();
  return participant.run({
    sandbox,
    user: PARTICIPANT_USER,
    workdir: TERMINAL_STUDY_DIR,
    recorder: base.log,
    signal: o.signal,
    networkEnv: o.networkEnv,
    brief: base.brief,
    nonce: base.nonce,
    deadlines: { firstOutputMs: o.firstOutputMs, deadlineAt: startedAt + o.maxMinutes * 60_000 },
    ...o.access,
    redact: base.redact,
  });
}

/**
 * Records how the participant ended (the deadline that fired, named by `deadlineName`, then its
 * status), then checks the interrupt guard.
 * @throws Interrupted once the study was stopped
 */
export function participantEnded(
  base: TerminalSeatBase,
  outcome: TerminalParticipantOutcome,
  deadlineName: (d: NonNullable<TerminalParticipantOutcome["deadline"]>) => string,
): void {
  if (outcome.deadline && outcome.deadline !== "interrupted") {
    base.log.lifecycle("terminal-lab.participant.deadline", `the ${deadlineName(outcome.deadline)} deadline fired: ${outcome.reason}`);
  }
  base.log.lifecycle("terminal-lab.participant.ended", `${outcome.status}/${outcome.completionReason}: ${outcome.reason}`);
  base.guard();
}

/** Opens teardown: the seat's error (if any) in its lifecycle, then the `teardown` phase naming what is released. */
export async function beginTeardown(base: TerminalSeatBase, failure: StudyError | undefined, createdId: string | undefined): Promise<void> {
  if (failure) base.log.lifecycle("terminal-lab.session.error", `${failure.code} in ${base.phase}: ${failure.message}`);
  await base.setPhase("teardown", createdId ? `releasing ${createdId}` : "nothing to release");
}

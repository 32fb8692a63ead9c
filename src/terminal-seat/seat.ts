/**
 * What every terminal lane's seat shares, whatever machine it runs on (a Docker sandbox, an E2B
 * sandbox): its recording, its phases, its brief and nonce, the interrupt guard, the hidden
 * checks, the logged release, and how a participant that timed out or a failed step becomes a
 * study error. The lanes keep what differs: how the machine is created, provisioned and released.
 */
import type { TerminalParticipantOutcome } from "../actors/terminal-participant/participant.ts";
import type { CleanupProof, TaskResult } from "../bundle/schemas.ts";
import type { RunWriter } from "../bundle/writer.ts";
import { errorMessage, HumanishError, isHumanishError } from "../errors.ts";
import { TERMINAL_STUDY_DIR, type TerminalLabConfig } from "../lab/schema.ts";
import type { ReleaseProof, Sandbox } from "../sandbox/types.ts";
import { type StudyError, seatFolder } from "../study/evidence.ts";
import type { SeatHooks, SeatSpec } from "../study/types.ts";
import { briefDigest, composeBrief, newNonce } from "./brief.ts";
import { SANDBOX_CA_PATH, type SandboxCa } from "./ca.ts";
import { cleanupProof } from "./evidence.ts";
import { Interrupted, PARTICIPANT_USER } from "./provision.ts";
import { createTerminalRecording, TERMINAL_EVENTS_FILE, type TerminalRecording } from "./recorder.ts";
import { runTaskChecks } from "./tasks.ts";

/** One seat's shared state and steps (see {@link terminalSeatBase}). */
export interface TerminalSeatBase {
  pid: string;
  /** The seat's folder in the bundle (null: the root layout of a one-seat study). */
  folder: string | null;
  /** A bundle path of this seat's file `rel`. */
  at(rel: string): string;
  redact(s: string): string;
  rec: TerminalRecording;
  log: TerminalRecording["recorder"];
  /** The phase the seat is in (`allocate`, `provision`, `participate`, `check`, `teardown`). */
  readonly phase: string;
  /** Enter phase `next`: progress line, and the run's status file for a one-seat study. */
  setPhase(next: string, detail?: string): Promise<void>;
  nonce: string;
  brief: string;
  /** Throws {@link Interrupted} once the study was stopped. */
  guard(): void;
}

/**
 * The seat's recording, phases, nonce and brief; records the study's preamble (a one-seat
 * study keeps it in its seat's ledger) and the `terminal-lab.seat.created` event.
 */
export function terminalSeatBase(o: {
  lab: TerminalLabConfig;
  writer: RunWriter;
  seat: SeatSpec;
  seatCount: number;
  hooks: SeatHooks;
  preamble: readonly { event: string; message: string }[];
}): TerminalSeatBase {
  const { writer, seat, hooks } = o;
  const pid = seat.id;
  const folder = seatFolder(o.seatCount, pid);
  const at = (rel: string): string => `${folder ?? ""}${rel}`;
  const redact = (s: string): string => writer.redactor.text(s);
  let phase = "allocate";
  const rec = createTerminalRecording({
    writer,
    participantId: pid,
    redact,
    onProgress: (detail) => hooks.progress(phase, detail),
    eventsPath: at(TERMINAL_EVENTS_FILE),
  });
  const log = rec.recorder;
  const nonce = newNonce();
  const brief = composeBrief(o.lab, nonce, seat);
  if (o.seatCount === 1) for (const p of o.preamble) log.lifecycle(p.event, p.message);
  log.lifecycle(
    "terminal-lab.seat.created",
    `seat ${pid}${seat.persona ? ` (persona ${seat.persona})` : ""}: brief sha256:${briefDigest(brief)}${seat.instruction ? "; with the lane's own instruction" : ""}`,
  );
  return {
    pid,
    folder,
    at,
    redact,
    rec,
    log,
    get phase() {
      return phase;
    },
    async setPhase(next, detail) {
      phase = next;
      hooks.progress(next, detail ? redact(detail) : undefined);
      if (o.seatCount === 1) await writer.writeStatus({ phase: next, ...(detail ? { detail } : {}) }).catch(() => undefined);
    },
    nonce,
    brief,
    guard() {
      if (hooks.signal.aborted) throw new Interrupted();
    },
  };
}

/** Copies the extra CA bundle into the sandbox (public certificates only) and records it. */
export async function copySandboxCa(sandbox: Sandbox, ca: SandboxCa, log: TerminalSeatBase["log"]): Promise<void> {
  await sandbox.writeFile(SANDBOX_CA_PATH, ca.pem, 0o644);
  log.lifecycle(
    "terminal-lab.sandbox.ca",
    `extra CA bundle (${ca.pem.length} bytes of public certificates) copied to ${SANDBOX_CA_PATH}; network commands get ${Object.keys(ca.env).join(", ")}`,
  );
}

/** The hidden task checks after the participant, in the sandbox; undefined when the lab has none. */
export async function checkSeat(base: TerminalSeatBase, lab: TerminalLabConfig, sandbox: Sandbox, hooks: SeatHooks): Promise<TaskResult[] | undefined> {
  const tasks = lab.actors[0].tasks ?? [];
  if (tasks.length === 0) return undefined;
  await base.setPhase("check", `${tasks.length} hidden check(s)`);
  const checked = await runTaskChecks(tasks, {
    sandbox,
    user: PARTICIPANT_USER,
    workdir: TERMINAL_STUDY_DIR,
    participantId: base.pid,
    recorder: base.log,
    redact: base.redact,
    signal: hooks.signal,
  });
  hooks.progress("check", `${checked.filter((t) => t.passed).length}/${tasks.length} passed`);
  base.guard();
  return checked;
}

/**
 * Records the release: its proof joins `cleanup` and the lifecycle says verified, unconfirmed,
 * or skipped (no sandbox was created, `proof` undefined); then the interruption, if any.
 */
export function recordRelease(base: TerminalSeatBase, proof: ReleaseProof | undefined, cleanup: CleanupProof[], interrupted: boolean): void {
  if (proof) {
    cleanup.push(cleanupProof(proof, base.pid));
    base.log.lifecycle(
      proof.outcome === "released" ? "terminal-lab.cleanup.verified" : "terminal-lab.cleanup.unconfirmed",
      `${proof.provider} ${proof.id}: ${proof.outcome} (${proof.reason})`,
    );
  } else {
    base.log.lifecycle("terminal-lab.cleanup.skipped", "no sandbox was created");
  }
  if (interrupted) base.log.lifecycle("terminal-lab.interrupted", "the study was stopped: the participant was stopped, the sandbox released");
}

/** The release a seat hands the runner: the proof's outcome and id, or `none` when nothing was created. */
export function seatRelease(proof: ReleaseProof | undefined): { outcome: ReleaseProof["outcome"] | "none"; id?: string; reason: string } {
  return proof ? { outcome: proof.outcome, id: proof.id, reason: proof.reason } : { outcome: "none", reason: "no sandbox was created" };
}

/**
 * The run itself is sound (the bundle records it) but the seat could not finish: a participant
 * that timed out (`HUMANISH_TERMINAL_LAB_PARTICIPANT_TIMED_OUT`) or whose runtime failed
 * (`HUMANISH_TERMINAL_LAB_FAILED`, from the participant record's `completionReason`) gets a code
 * and a next step. `firstOutputMs` in ms, `maxMinutes` in minutes.
 */
export function participantResultError(
  outcome: TerminalParticipantOutcome | undefined,
  completionReason: string | null | undefined,
  limits: { maxMinutes: number | null; firstOutputMs: number },
  redact: (s: string) => string,
): StudyError | undefined {
  if (!outcome) return undefined;
  if (outcome.deadline === "first-output")
    return {
      code: "HUMANISH_TERMINAL_LAB_PARTICIPANT_TIMED_OUT",
      message: redact(
        `the participant printed nothing for ${Math.round(limits.firstOutputMs / 1000)} s and was killed (first-output deadline): ${outcome.reason}`,
      ),
      next: "Make the participant's commands print progress and never wait for input (stdin is closed); terminal-transcript.txt shows where it stalled.",
    };
  if (outcome.deadline === "max-minutes")
    return {
      code: "HUMANISH_TERMINAL_LAB_PARTICIPANT_TIMED_OUT",
      message: redact(`the participant was killed at scenario.caps.maxMinutes (${limits.maxMinutes} min): ${outcome.reason}`),
      next: "Raise scenario.caps.maxMinutes or narrow the mission; terminal-transcript.txt shows where it stalled.",
    };
  if (completionReason === "harness_error" || completionReason === "actor_error")
    return {
      code: "HUMANISH_TERMINAL_LAB_FAILED",
      message: redact(`the participant runtime failed: ${outcome.reason}`),
      next: "Read actor.json and terminal-transcript.txt in the run directory.",
    };
  return undefined;
}

/**
 * A harness failure of a seat step as a study error: a HumanishError keeps its code and next
 * step; any other cause becomes `HUMANISH_TERMINAL_LAB_FAILED` with `study` (e.g. "E2B terminal
 * study") and the phase in its message.
 */
export function terminalSeatFailure(e: unknown, phase: string, study: string): StudyError {
  const h = isHumanishError(e)
    ? e
    : new HumanishError("HUMANISH_TERMINAL_LAB_FAILED", `${study} failed in ${phase}: ${errorMessage(e)}`, {
        next: "Read the bundle's lifecycle (terminal-ledgers.json) and rerun; report a bug if it repeats.",
      });
  return { code: h.code, message: h.message, ...(h.next ? { next: h.next } : {}) };
}

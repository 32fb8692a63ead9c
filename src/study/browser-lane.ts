/**
 * The seat session both browser lanes (a local Docker guest, an E2B desktop) share: the lane
 * brings its machine — how a desktop is allocated, its executor, how it is released by exact id
 * — and this runs the rest the same way on either: the participant on the desktop's executor,
 * the hidden checks on its observations, the order of finalize, and the seat's evidence (verdict,
 * participant record, the one failure it reports) from study/browser-seat.ts's pieces.
 */
import type { BrowserParticipant, BrowserRun, BrowserRunContext, KeptScreenshot } from "../actors/browser-participant/index.ts";
import type { CleanupProof, CostLine, RunParticipant, TaskResult } from "../bundle/schemas.ts";
import type { RunWriter } from "../bundle/writer.ts";
import {
  type BrowserSeatBasics,
  type BrowserSeatFacts,
  browserSeatFailure,
  browserSeatGeometry,
  browserSeatVerdict,
  browserStopWhen,
  checkBrowserTasks,
  runSeatParticipant,
  type SeatEnd,
  uncheckedTasks,
  writeParticipantEvidence,
} from "./browser-seat.ts";
import type { SeatEvidence, StudyError } from "./evidence.ts";
import type { SeatHooks, SeatRelease, SeatSession, SeatSpec } from "./types.ts";

/** What a browser lane's machine gives the shared seat session. */
export interface BrowserSeatMachine {
  /** Allocates the desktop (its exact id recorded before it is provisioned); the lane's errors. */
  prepare(): Promise<void>;
  /** The desktop's browser-control executor; undefined while no desktop is ready. */
  executor(): BrowserRunContext["executor"] | undefined;
  /** Releases the desktop by exact id (its proof pushed to the seat's cleanup); never throws for a failed release. */
  release(): Promise<SeatRelease>;
  /** The seat's evidence once released (see {@link writeBrowserSeatEvidence}). */
  evidence(seatRun: BrowserSeatRun): Promise<SeatEvidence<BrowserSeatFacts>>;
}

/** What the seat learned before its evidence is written: the participant's run, the checked tasks, how it ended. */
export interface BrowserSeatRun {
  run: BrowserRun | undefined;
  tasks: TaskResult[];
  end: SeatEnd;
}

/**
 * The seat session of a browser lane over `machine`: openSession says the participant's progress
 * line; participate runs it on the machine's executor within `sessionMs` (ms); check evaluates the
 * participant's tasks on its observations of `origin`; finalize logs the seat's error, releases
 * the machine, then writes the evidence.
 */
export function browserSeatSession(o: {
  participant: BrowserParticipant;
  seat: SeatSpec;
  hooks: SeatHooks;
  basics: BrowserSeatBasics;
  origin: string;
  sessionMs: number;
  cleanup: CleanupProof[];
  onScreenshot?: (shot: KeptScreenshot) => void;
  machine: BrowserSeatMachine;
}): SeatSession<SeatEvidence<BrowserSeatFacts>> {
  const { participant, seat, hooks, basics, machine } = o;
  const { pid, log } = basics;
  let run: BrowserRun | undefined;
  let tasks: TaskResult[] = [];
  let evidence: SeatEvidence<BrowserSeatFacts> | undefined;
  return {
    prepare: () => machine.prepare(),
    async openSession() {
      hooks.progress("participate", participant.describeProgress());
    },
    async participate() {
      const executor = machine.executor();
      if (!executor) return;
      run = await runSeatParticipant(participant, {
        seat,
        executor,
        origin: o.origin,
        screen: basics.screen,
        sessionMs: o.sessionMs,
        hooks,
        basics,
        cleanup: o.cleanup,
        ...(o.onScreenshot ? { onScreenshot: o.onScreenshot } : {}),
      });
    },
    async check() {
      const declared = participant.tasks;
      if (!declared.length) return;
      hooks.progress("check", `${declared.length} hidden check(s)`);
      tasks = checkBrowserTasks(declared, pid, run?.outcome, o.origin);
    },
    async finalize(end: { error?: StudyError; interrupted: boolean }): Promise<SeatRelease> {
      const failedWith = end.error;
      if (failedWith) log("browser-lab.session.error", `${pid}: ${failedWith.code}: ${failedWith.message}`);
      const release = await machine.release();
      evidence = await machine.evidence({ run, tasks, end: { interrupted: end.interrupted, failedWith } });
      return release;
    },
    snapshot(): SeatEvidence<BrowserSeatFacts> {
      if (!evidence) throw new Error(`seat ${pid}: snapshot before finalize`);
      return evidence;
    },
  };
}

/**
 * Writes one browser seat's evidence and gives what it hands the study. Unchecked tasks say why;
 * the participant's status folds in the hidden checks (`checkFailed` is the reason when a check
 * failed after it finished); its trace records the same status, which `verify` cross-checks.
 * `unproven` are the releases this lane counts as not proven, worded by `unprovenText`;
 * `extraCostLines` the lane's own lines beside the participant's; `desktop` what the machine
 * reported (undefined: none ran) — its start ms, and `source` of its verified screen.
 */
export async function writeBrowserSeatEvidence(
  writer: RunWriter,
  o: {
    participant: BrowserParticipant;
    seat: SeatSpec;
    basics: BrowserSeatBasics;
    origin: string;
    seatRun: BrowserSeatRun;
    sessionId: string;
    live?: { settle: () => Promise<void>; written: ReadonlyMap<string, Uint8Array> };
    checkFailed: string;
    desktop: { startMs: number } | undefined;
    geometrySource: string;
    cleanup: CleanupProof[];
    unproven: (c: CleanupProof) => boolean;
    unprovenText: { what: string; next: (ids: string) => string };
    extraCostLines?: () => CostLine[];
  },
): Promise<SeatEvidence<BrowserSeatFacts>> {
  const { participant, seat, basics, seatRun } = o;
  const { pid, redact, device, screen, paths } = basics;
  const writeErrors: string[] = [];
  const { run, end } = seatRun;
  const tasks = seatRun.tasks.length ? seatRun.tasks : uncheckedTasks(participant.tasks, pid, end);
  const out = run?.outcome;
  const verdict = browserSeatVerdict(out, tasks, end, o.checkFailed, browserStopWhen(participant, o.origin));
  const written = run
    ? await writeParticipantEvidence(writer, run, { pid, sessionId: o.sessionId, verdict, paths, redact, ...(o.live ? { live: o.live } : {}) }, writeErrors)
    : undefined;
  const actorType = participant.descriptor.type;
  const record: RunParticipant = {
    id: pid,
    actorType,
    label: `${actorType} (${device.name})`,
    status: verdict.status,
    completionReason: verdict.completionReason,
    reason: redact(verdict.reason),
    claimed: verdict.claimed,
    goalCheck: { ...verdict.goalCheck, detail: redact(verdict.goalCheck.detail) },
    trace: written?.tracePath ?? null,
    ...(out ? { startedAt: out.startedAt, completedAt: out.completedAt, durationMs: out.durationMs } : {}),
    desktopGeometry: browserSeatGeometry(device, screen, o.desktop !== undefined, o.geometrySource),
    ...(seat.persona ? { persona: seat.persona } : {}),
    device: device.name,
  };
  const failure = browserSeatFailure({
    unproven: o.cleanup.filter(o.unproven),
    unprovenText: o.unprovenText,
    harnessError: out?.harnessError,
    writeErrors,
    failedWith: end.failedWith,
    redact,
  });
  return {
    participant: record,
    tasks,
    cleanup: o.cleanup,
    costLines: [...(written?.costLines ?? []), ...(o.extraCostLines?.() ?? [])],
    lifecycle: basics.lifecycle,
    ...(failure ? { failure } : {}),
    // The seat folder holds its trace; a seat stopped before its participant ran has none.
    folder: record.trace !== null ? paths.folder : null,
    usd: written?.usd ?? 0,
    jobs: 0,
    lane: { device: device.name, width: screen.width, height: screen.height, startMs: o.desktop?.startMs ?? null },
  };
}

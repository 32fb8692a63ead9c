/**
 * The evidence of one browser seat, the same whichever desktop it ran on (a local Docker guest
 * or an E2B desktop): its bundle paths, the hidden task checks, the participant's status folded
 * with those checks, its desktop geometry, which failure the seat reports, and the writes of its
 * screenshots, trace and request ledger, and the participant's run on the seat's desktop. Both browser lanes build their seat
 * evidence from these pieces so that report and verify treat the two lanes alike. The decisions
 * are pure; the writes go only through the run's writer.
 */
import {
  type BrowserParticipant,
  type BrowserParticipantOutcome,
  type BrowserRun,
  type BrowserRunContext,
  claimOf,
  type DeclaredOutcome,
  evaluateCheck,
  type KeptScreenshot,
  type ObservationRecord,
  type StopWhen,
  stopWhenObservation,
} from "../actors/browser-participant/index.ts";
import { type GoalVerdict, goalCheckOf, seatGoalVerdict } from "../bundle/goal.ts";
import type { CleanupProof, CostLine, DesktopGeometry, LifecycleEvent, TaskResult } from "../bundle/schemas.ts";
import type { RunWriter, WriteArtifactOptions } from "../bundle/writer.ts";
import { errorMessage } from "../errors.ts";
import type { DeviceName, DevicePreset } from "../lab/schema.ts";
import { guestScreen } from "../runtime/presets.ts";
import { type StudyError, seatFolder } from "./evidence.ts";
import type { SeatHooks, SeatSpec } from "./types.ts";

/** What every browser seat starts with: its redaction, lifecycle log, device, screen and bundle paths. */
export interface BrowserSeatBasics {
  pid: string;
  redact: (s: string) => string;
  lifecycle: LifecycleEvent[];
  /** Appends one lifecycle event (the message redacted). */
  log: (event: string, message: string) => void;
  device: { name: DeviceName; preset: DevicePreset };
  /** The desktop's screen (px): the device's, its width floored to Chromium's minimum. */
  screen: { width: number; height: number; floored: boolean };
  paths: BrowserSeatPaths;
}

/** The basics of seat `seat` of a `seatCount`-seat study; a seat without a device gets the 1440×950 desktop. */
export function browserSeatBasics(
  writer: RunWriter,
  seat: SeatSpec,
  devices: ReadonlyMap<string, { name: DeviceName; preset: DevicePreset }>,
  seatCount: number,
): BrowserSeatBasics {
  const pid = seat.id;
  const redact = (s: string) => writer.redactor.text(s);
  const lifecycle: LifecycleEvent[] = [];
  const log = (event: string, message: string) => {
    lifecycle.push({ at: new Date().toISOString(), event, message: redact(message) });
  };
  const device = devices.get(pid) ?? { name: "desktop" as const, preset: { width: 1440, height: 950, deviceScaleFactor: 1 } };
  return { pid, redact, lifecycle, log, device, screen: guestScreen(device.preset), paths: browserSeatPaths(seatCount, pid) };
}

/**
 * Runs the participant on one seat's desktop (the executor the lane handed over) within the
 * session budget, its progress on the seat's hooks and its own releases recorded in `cleanup`.
 * Logs how it ended. Never throws for participant outcomes.
 */
export async function runSeatParticipant(
  participant: BrowserParticipant,
  o: {
    seat: SeatSpec;
    executor: BrowserRunContext["executor"];
    origin: string;
    screen: { width: number; height: number };
    sessionMs: number;
    hooks: SeatHooks;
    basics: Pick<BrowserSeatBasics, "redact" | "log">;
    cleanup: CleanupProof[];
    onScreenshot?: (shot: KeptScreenshot) => void;
  },
): Promise<BrowserRun> {
  const { seat, hooks, basics } = o;
  const run = await participant.run({
    seat: { id: seat.id, persona: seat.persona, instruction: seat.instruction },
    executor: o.executor,
    origin: o.origin,
    screen: { width: o.screen.width, height: o.screen.height },
    signal: hooks.signal,
    sessionMs: o.sessionMs,
    redact: basics.redact,
    progress: (detail) => hooks.progress("participate", detail),
    log: basics.log,
    recordCleanup: (proof) => o.cleanup.push(proof),
    ...(o.onScreenshot ? { onScreenshot: o.onScreenshot } : {}),
  });
  const out = run.outcome;
  basics.log("browser-lab.participant.ended", `${seat.id}: ${out.status}/${out.completionReason}: ${out.reason}`);
  return run;
}

/** A browser lane's own facts of one seat (for the study's desktop ledger): device, screen px, desktop start ms. */
export interface BrowserSeatFacts {
  device: string;
  width: number;
  height: number;
  startMs: number | null;
}

/** A browser seat's bundle paths: its folder (null: root layout), trace, request ledger, screenshots. */
export interface BrowserSeatPaths {
  folder: string | null;
  trace: string;
  ledger: string;
  shot: (name: string) => string;
}

/**
 * Paths of one seat's trace, ledger and screenshots: a one-seat study keeps the root layout; a
 * many-seat study puts the trace and ledger in the seat's folder and its frames in
 * `screenshots/<id>/` (every screenshot of a bundle lives under `screenshots/`).
 */
export function browserSeatPaths(seats: number, id: string): BrowserSeatPaths {
  const folder = seatFolder(seats, id);
  return {
    folder,
    trace: folder ? `${folder}actor.json` : `actors/${id}.json`,
    ledger: folder ? `${folder}model-ledger.json` : `model-ledger-${id}.json`,
    shot: (name: string) => (folder ? `screenshots/${id}/${name}.png` : `screenshots/${id}-${name}.png`),
  };
}

/**
 * What any browser participant's outcome carries that the seat's evidence reads: the
 * participant's outcome without its claim and harness fault, which the seat reads elsewhere.
 */
export type BrowserSeatOutcome = Omit<BrowserParticipantOutcome, "declaredOutcome" | "harnessError">;

/** The hidden checks of `tasks` over the participant's observations of `origin`, one result each. */
export function checkBrowserTasks(
  tasks: readonly { id: string; goal: string; check: Parameters<typeof evaluateCheck>[0] }[],
  pid: string,
  outcome: { observations: readonly ObservationRecord[] } | undefined,
  origin: string,
): TaskResult[] {
  const obs = outcome?.observations ?? [];
  return tasks.map((t) => {
    const base = { id: t.id, goal: t.goal, participantId: pid };
    if (!outcome || obs.length === 0) return { ...base, status: "not_run" as const, passed: false, detail: "no observation was made" };
    const hit = evaluateCheck(t.check, obs, origin);
    return hit >= 0
      ? { ...base, status: "passed" as const, passed: true, detail: `observation ${hit + 1} of ${obs.length} satisfies the check` }
      : { ...base, status: "failed" as const, passed: false, detail: `none of ${obs.length} observation(s) of ${origin} satisfies the check` };
  });
}

/** How a seat ended, as its finalize learned it. */
export interface SeatEnd {
  interrupted: boolean;
  failedWith?: StudyError | undefined;
}

/** Results for tasks that were never checked, saying why (interrupted, the seat's failure code, or neither). */
export function uncheckedTasks(declared: readonly { id: string; goal: string }[], pid: string, end: SeatEnd): TaskResult[] {
  const detail = end.interrupted ? "not checked: interrupted" : end.failedWith ? `not checked: ${end.failedWith.code}` : "not checked";
  return declared.map((t) => ({ id: t.id, goal: t.goal, participantId: pid, status: "not_run" as const, passed: false, detail }));
}

/** The participant's status and reason after the hidden checks, as its record and its trace both carry them, with its claim. */
export type SeatVerdict = GoalVerdict;

/** What a browser participant's outcome says about its own result: a computer-use model's declared outcome, a local agent's final answer. */
export type ClaimingOutcome = Pick<BrowserSeatOutcome, "status" | "completionReason" | "reason"> & {
  observations?: readonly ObservationRecord[];
  declaredOutcome?: DeclaredOutcome;
  answer?: { outcome: DeclaredOutcome };
};

/** The participant's `stopWhen` and the app origin it is evaluated on, when it has one. */
export function browserStopWhen(participant: Pick<BrowserParticipant, "stopWhen">, origin: string): { rules: StopWhen; origin: string } | undefined {
  return participant.stopWhen ? { rules: participant.stopWhen, origin } : undefined;
}

/**
 * Fold the hidden checks into the participant's outcome by the one goal rule
 * (`seatGoalVerdict`): a seat reached the goal only when every task's check passed — or, in a
 * lab without tasks, when its `stopWhen` rule matched an observation of the app; with neither it
 * cannot. The participant's own word (a declared outcome, a final answer) is kept as `claimed`.
 * A seat whose participant never ran is `failed` (interrupted or a harness error). `checkFailed`
 * is the reason given when a check failed after the participant finished.
 */
export function browserSeatVerdict(
  out: ClaimingOutcome | undefined,
  tasks: readonly TaskResult[],
  end: SeatEnd,
  checkFailed: string,
  stopWhen?: { rules: StopWhen; origin: string },
): SeatVerdict {
  const observed = stopWhen && tasks.length === 0 && out ? stopWhenObservation(stopWhen.rules, out.observations ?? [], stopWhen.origin) : undefined;
  const check = goalCheckOf(tasks, observed);
  if (!out) {
    const { failedWith, interrupted } = end;
    const ending = {
      status: "failed" as const,
      completionReason: interrupted ? ("interrupted" as const) : ("harness_error" as const),
      reason: failedWith ? `${failedWith.code}: ${failedWith.message}` : interrupted ? "interrupted before the participant ran" : "the participant did not run",
    };
    return seatGoalVerdict(ending, "none", check);
  }
  const claim = claimOf(out.declaredOutcome ?? out.answer?.outcome);
  return seatGoalVerdict({ status: out.status, completionReason: out.completionReason, reason: out.reason }, claim, check, checkFailed);
}

/**
 * The seat's desktop geometry: the device's requested screen, and — once a desktop ran — the
 * verified screen (from `source`) and the browser window, with a warning when the width was
 * floored to Chromium's minimum.
 */
export function browserSeatGeometry(
  device: { name: DeviceName; preset: DevicePreset },
  screen: { width: number; height: number; floored: boolean },
  ran: boolean,
  source: string,
): DesktopGeometry {
  const size = { width: screen.width, height: screen.height };
  return {
    preset: device.name,
    screen: { requested: { width: device.preset.width, height: device.preset.height }, ...(ran ? { verified: size, source } : {}) },
    ...(ran ? { browserWindow: { ...size, source: "chromium --window-size" } } : {}),
    warnings: screen.floored ? [`screen width floored from ${device.preset.width} to ${screen.width} px (Chromium's minimum window width)`] : [],
  };
}

/**
 * The one failure a seat reports, most serious first: a release that was not proven (`unproven`,
 * with the lane's own wording), a harness error of the participant, evidence that could not be
 * written, else the failure the seat ended with.
 */
export function browserSeatFailure(o: {
  unproven: readonly CleanupProof[];
  /** The lane's wording of an unproven release: what was not confirmed, and how to remove it by id. */
  unprovenText: { what: string; next: (ids: string) => string };
  harnessError?: { code: string; message: string } | undefined;
  writeErrors: readonly string[];
  failedWith?: StudyError | undefined;
  redact: (s: string) => string;
}): StudyError | undefined {
  if (o.unproven.length)
    return {
      code: "HUMANISH_BROWSER_LAB_CLEANUP_UNPROVEN",
      message: `${o.unprovenText.what} was not confirmed: ${o.unproven.map((c) => `${c.id} ${c.reason}`).join("; ")}`,
      next: o.unprovenText.next(o.unproven.map((c) => c.id).join(" ")),
    };
  if (o.harnessError)
    return {
      code: o.harnessError.code,
      message: o.redact(o.harnessError.message),
      next:
        o.harnessError.code === "HUMANISH_HOST_STARVED"
          ? "rerun the study on a less busy machine, or with fewer seats at once (HUMANISH_MAX_CONCURRENCY)"
          : "read the actor trace in the run directory; rerun the study",
    };
  if (o.writeErrors.length)
    return {
      code: "HUMANISH_BUNDLE_WRITE_FAILED",
      message: `evidence could not be written completely: ${o.writeErrors.join("; ")}`,
      next: "check free disk space and permissions of .humanish/runs",
    };
  return o.failedWith;
}

/** Writes one JSON artifact; a failed write is added to `writeErrors` and gives null. */
export async function writeSeatJson(
  writer: RunWriter,
  path: string,
  value: unknown,
  kind: WriteArtifactOptions["kind"],
  writeErrors: string[],
): Promise<string | null> {
  try {
    await writer.writeJson(path, value, { kind });
    return path;
  } catch (e) {
    writeErrors.push(`${path}: ${errorMessage(e)}`);
    return null;
  }
}

/**
 * Writes every kept screenshot at `shot(name)`; their bundle paths by name (a failed write is
 * left out and noted). `written` holds the frames already written while the seat ran (same
 * name, same bytes, same path): they are listed without being written again.
 */
export async function writeSeatShots(
  writer: RunWriter,
  screenshots: readonly KeptScreenshot[],
  shot: (name: string) => string,
  writeErrors: string[],
  written?: ReadonlyMap<string, Uint8Array>,
): Promise<Map<string, string>> {
  const shotPaths = new Map<string, string>();
  for (const s of screenshots) {
    const path = shot(s.name);
    if (written?.get(s.name) === s.png && writer.tracked().has(path)) {
      shotPaths.set(s.name, path);
      continue;
    }
    try {
      await writer.writeArtifact(path, s.png, { kind: "screenshot" });
      shotPaths.set(s.name, path);
    } catch (e) {
      writeErrors.push(`${path}: ${errorMessage(e)}`);
    }
  }
  return shotPaths;
}

/**
 * Writes each frame into the bundle as soon as the participant keeps it (one write at a time, in
 * order), so a watcher of the run directory sees the seat's screen while it runs. A failed live
 * write is retried by {@link writeSeatShots} at the end. `settle()` waits for the writes so far;
 * `written` is what they wrote (pass it to writeSeatShots).
 */
export function liveSeatShots(writer: RunWriter, shot: (name: string) => string) {
  const written = new Map<string, Uint8Array>();
  let chain: Promise<void> = Promise.resolve();
  return {
    written: written as ReadonlyMap<string, Uint8Array>,
    keep(s: KeptScreenshot): void {
      chain = chain.then(() =>
        writer.writeArtifact(shot(s.name), s.png, { kind: "screenshot" }).then(
          () => void written.set(s.name, s.png),
          () => undefined,
        ),
      );
    },
    settle: (): Promise<void> => chain,
  };
}

/**
 * Writes what a participant's run left for the bundle: its screenshots (the frames written live
 * are listed, not written again), its trace with the seat's verdict, and its request ledger when
 * it metered requests. Its trace path (null when it could not be written), cost lines and known
 * spend (USD); a failed write is added to `writeErrors`.
 */
export async function writeParticipantEvidence(
  writer: RunWriter,
  run: BrowserRun,
  o: {
    pid: string;
    sessionId: string;
    verdict: Pick<SeatVerdict, "status" | "completionReason">;
    paths: BrowserSeatPaths;
    redact: (s: string) => string;
    live?: { settle: () => Promise<void>; written: ReadonlyMap<string, Uint8Array> };
  },
  writeErrors: string[],
): Promise<{ tracePath: string | null; costLines: CostLine[]; usd: number }> {
  await o.live?.settle();
  const shotPaths = await writeSeatShots(writer, run.outcome.screenshots, o.paths.shot, writeErrors, o.live?.written);
  const trace = run.trace({ participantId: o.pid, sessionId: o.sessionId, shotPaths, verdict: o.verdict, redact: o.redact });
  const tracePath = await writeSeatJson(writer, o.paths.trace, trace, "actor-trace", writeErrors);
  const ev = run.evidence({ participantId: o.pid, today: new Date().toISOString().slice(0, 10) });
  if (ev.ledger) await writeSeatJson(writer, o.paths.ledger, ev.ledger, "model-ledger", writeErrors);
  return { tracePath, costLines: ev.costLines, usd: ev.usd };
}

/**
 * The evidence of one browser seat, the same whichever desktop it ran on (a local Docker guest
 * or an E2B desktop): its bundle paths, the hidden task checks, the participant's status folded
 * with those checks, its desktop geometry, which failure the seat reports, and the writes of its
 * screenshots, trace and computer-use request ledger. Both browser lanes build their seat
 * evidence from these pieces so that report and verify treat the two lanes alike. The decisions
 * are pure; the writes go only through the run's writer.
 */
import {
  briefDigest,
  type ComputerUseOutcome,
  type ComputerUseReadiness,
  claimOf,
  computerUseLedger,
  computerUseTrace,
  type DeclaredOutcome,
  runComputerUseSeat,
  type StopWhen,
  stopWhenObservation,
} from "../actors/computer-use/index.ts";
import { evaluateCheck, type KeptScreenshot, type ObservationRecord } from "../actors/scripted-browser/index.ts";
import { type GoalVerdict, goalCheckOf, seatGoalVerdict } from "../bundle/goal.ts";
import type { ActorTrace, CleanupProof, DesktopGeometry, LifecycleEvent, TaskResult } from "../bundle/schemas.ts";
import type { RunWriter, WriteArtifactOptions } from "../bundle/writer.ts";
import { errorMessage } from "../errors.ts";
import type { ComputerUseActor, DeviceName, DevicePreset } from "../lab/schema.ts";
import { SpendBudget } from "../models/index.ts";
import { guestScreen } from "../runtime/presets.ts";
import { type StudyError, seatFolder } from "./evidence.ts";
import type { SeatHooks, SeatSpec } from "./types.ts";

/** `scenario.caps` a computer-use seat enforces before every request (USD; null = unset). */
export interface SpendCaps {
  maxUsd: number | null;
  maxTotalUsd: number | null;
}

/** One study's budget, shared by every computer-use seat of it (each request is admitted against it). */
export function studySpendBudget(caps: SpendCaps | undefined): SpendBudget | undefined {
  return caps?.maxTotalUsd != null ? new SpendBudget("scenario.caps.maxTotalUsd", caps.maxTotalUsd) : undefined;
}

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
 * The computer-use loop on one seat's desktop within the session budget (`sessionMs`), under the
 * seat's own cap and the study's shared budget; its progress goes to the seat's hooks. Never
 * throws for model, budget or desktop failures (see `runComputerUseSeat`).
 */
export function runBrowserComputerUse(o: {
  executor: Parameters<typeof runComputerUseSeat>[0]["executor"];
  actor: ComputerUseActor;
  seat: SeatSpec;
  readiness: ComputerUseReadiness;
  origin: string;
  sessionMs: number;
  caps: SpendCaps | undefined;
  studyBudget: SpendBudget | undefined;
  redact: (s: string) => string;
  hooks: SeatHooks;
}): Promise<{ outcome: ComputerUseOutcome; brief: string }> {
  const seatBudget = o.caps?.maxUsd != null ? new SpendBudget("scenario.caps.maxUsd", o.caps.maxUsd) : undefined;
  const { seat, studyBudget, hooks } = o;
  return runComputerUseSeat({
    executor: o.executor,
    actor: o.actor,
    seat: { ...(seat.persona ? { persona: seat.persona } : {}), ...(seat.instruction ? { instruction: seat.instruction } : {}) },
    readiness: o.readiness,
    origin: o.origin,
    sessionMs: o.sessionMs,
    ...(seatBudget ? { seatBudget } : {}),
    ...(studyBudget ? { studyBudget } : {}),
    scrubText: o.redact,
    signal: hooks.signal,
    onTurn: (turn, note) => hooks.progress("participate", `turn ${turn}: ${note}`),
  });
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

/** What any browser participant's outcome carries that the seat's evidence reads. */
export interface BrowserSeatOutcome {
  status: ActorTrace["status"];
  completionReason: ActorTrace["completionReason"];
  reason: string;
  startedAt: string;
  completedAt: string;
  durationMs: number;
  observations: readonly ObservationRecord[];
  screenshots: readonly KeptScreenshot[];
}

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

/** A lab's `stopWhen` and the app origin it is evaluated on, when the participant has one (computer-use). */
export function browserStopWhen(actor: { type: string; stopWhen?: StopWhen }, origin: string): { rules: StopWhen; origin: string } | undefined {
  return actor.type === "openai-computer-use" && actor.stopWhen ? { rules: actor.stopWhen, origin } : undefined;
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
 * A computer-use seat's request ledger (written at `paths.ledger`) and its cost lines.
 * `caps` are `scenario.caps` (USD; null = unset).
 */
export async function writeComputerUseLedger(
  writer: RunWriter,
  out: ComputerUseOutcome,
  o: { pid: string; endpointHost: string; caps: { maxUsd: number | null; maxTotalUsd: number | null }; path: string },
  writeErrors: string[],
) {
  const m = computerUseLedger(out, { participantId: o.pid, endpointHost: o.endpointHost, caps: o.caps, today: new Date().toISOString().slice(0, 10) });
  await writeSeatJson(writer, o.path, m.ledger, "model-ledger", writeErrors);
  return m;
}

/**
 * A computer-use seat's screenshots and trace; the trace carries the seat's verdict (the hidden
 * checks folded in, exactly as the participant record does). Its path, or null when it could not
 * be written.
 */
export async function writeComputerUseSeatTrace(
  writer: RunWriter,
  out: ComputerUseOutcome,
  o: {
    pid: string;
    model: string;
    personaId: string;
    brief: string | undefined;
    sessionId: string;
    verdict: Pick<SeatVerdict, "status" | "completionReason">;
    paths: Pick<BrowserSeatPaths, "trace" | "shot">;
    redact: (s: string) => string;
  },
  writeErrors: string[],
): Promise<string | null> {
  const shotPaths = await writeSeatShots(writer, out.screenshots, o.paths.shot, writeErrors);
  const trace: ActorTrace = {
    ...computerUseTrace(out, {
      participantId: o.pid,
      model: o.model,
      personaId: o.personaId,
      promptDigest: briefDigest(o.brief ?? ""),
      sessionId: o.sessionId,
      shotPaths,
      redact: o.redact,
    }),
    status: o.verdict.status,
    completionReason: o.verdict.completionReason,
  };
  return writeSeatJson(writer, o.paths.trace, trace, "actor-trace", writeErrors);
}

/**
 * The flow of a browser study the same on either target (a local Docker guest or an E2B
 * desktop): the dry run (the plan proved through the runner with nothing created), the live
 * seats run through the runner (a study-level error becomes the study's failure, never a crash),
 * and the tail from the seats to `run.json` (assembly, `desktop-ledgers.json`, `finishStudy`).
 * The targets keep what differs: their preflight, their lane, their lifecycle wording.
 */
import type { CostLine, LifecycleEvent, RunWriter } from "../../bundle/index.ts";
import type { BrowserLabConfig } from "../../lab/schema.ts";
import { dryRunLane } from "../../lanes/dry-run/index.ts";
import type { BrowserSeatFacts } from "../../study/browser-seat.ts";
import { assembleStudy, notStartedRun, type SeatEvidence, type StudyError } from "../../study/evidence.ts";
import { finishStudy } from "../../study/finish.ts";
import { type Lane, runSeats, type SeatSpec, type SeatsRun } from "../../study/index.ts";
import type { StudyContext, StudyResult } from "../types.ts";
import { capsOf, type StudyLog, studyDevices, studyFailure, writeDesktopLedger } from "./study-parts.ts";

/** The seats of a study, their devices, and the shape of its denominator (actor type, labels by device, tasks). */
export function studyShape(lab: BrowserLabConfig, seatIds: readonly string[] | undefined) {
  const devices = studyDevices(lab, seatIds);
  const actor = lab.actors[0];
  const deviceOf = new Map(devices.map((d) => [d.seat.id, d.name]));
  return {
    devices,
    deviceOf,
    shape: { actorType: actor.type, label: (seat: { id: string }) => `${actor.type} (${deviceOf.get(seat.id) ?? "desktop"})`, tasks: actor.tasks ?? [] },
  };
}

/** A browser study's target as run.json records it. */
export type BrowserTarget = "local" | "e2b-desktop";

/**
 * A dry run: the lifecycle says what a live run would do (`notes`, in order: run created,
 * subject declared, then the devices, then the contract), the dry-run lane proves the plan
 * through the runner with nothing created, served or spent, and `finishStudy` writes and
 * verifies the bundle. `concurrency` is the seats at once; `remote` as the runner's.
 */
export async function runBrowserDryRun(
  ctx: StudyContext<BrowserLabConfig>,
  writer: RunWriter,
  o: {
    target: BrowserTarget;
    appOrigin: string;
    notes: { created: string; subject: string; contract: string };
    /** The seats at once for a study of `seats` seats. */
    concurrency: (seats: number) => number;
    remote?: boolean;
  },
): Promise<StudyResult> {
  const lab = ctx.lab;
  const createdAt = new Date().toISOString();
  const lifecycle: LifecycleEvent[] = [];
  const add = (event: string, message: string) => lifecycle.push({ at: new Date().toISOString(), event, message: writer.redactor.text(message) });
  const { devices, deviceOf, shape } = studyShape(lab, ctx.seatIds);
  add("browser-lab.run.created", o.notes.created);
  add("browser-lab.subject.declared", o.notes.subject);
  add("browser-lab.devices.declared", devices.map((d) => `${d.name} ${d.preset.width}x${d.preset.height}`).join(", "));
  add("browser-lab.contract.ready", o.notes.contract);
  const seats = devices.map((d) => d.seat);
  const concurrency = o.concurrency(seats.length);
  const run = await runSeats({
    seats,
    lane: dryRunLane({ ...shape, extra: (seat) => ({ device: deviceOf.get(seat.id) ?? "desktop" }) }),
    concurrency,
    ...(o.remote ? { remote: true } : {}),
    signal: ctx.signal,
    caps: { maxTotalUsd: null, maxJobs: null },
    progress: () => undefined,
  });
  return finishStudy({
    ctx,
    writer,
    route: "browser",
    target: o.target,
    createdAt,
    subject: { source: "app-url", appUrl: `${o.appOrigin}/`, provenance: "declared-not-run" },
    caps: capsOf(lab),
    assembled: assembleStudy(run, { lane: "dry-run", concurrency, maxTotalUsd: lab.scenario.caps?.maxTotalUsd ?? null, shape }),
    lifecycle,
    costLines: [],
    gaps: [],
    warnings: [],
    redactionNotes: "dry run: no participant output exists",
  });
}

/**
 * Runs a live study's seats: `start` makes the lane (the target's study-level preparation
 * first), then the runner runs every seat on it. An error of `start` or of the runner is the
 * study's failure (logged; none when the study was interrupted) and its run has no seats.
 */
export async function runBrowserSeats(
  ctx: StudyContext<BrowserLabConfig>,
  writer: RunWriter,
  log: StudyLog,
  o: { seats: SeatSpec[]; concurrency: number; remote?: boolean; start: () => Promise<Lane<SeatEvidence<BrowserSeatFacts>>> },
): Promise<{ run: SeatsRun<SeatEvidence<BrowserSeatFacts>>; failure: StudyError | undefined }> {
  const lab = ctx.lab;
  let failure: StudyError | undefined;
  let run: SeatsRun<SeatEvidence<BrowserSeatFacts>> = { seats: [], heldSlots: [], knownUsd: 0, knownJobs: 0 };
  try {
    const lane = await o.start();
    await writer.writeStatus({ phase: "participate", detail: `${o.seats.length} seat(s)` });
    run = await runSeats({
      seats: o.seats,
      lane,
      concurrency: o.concurrency,
      ...(o.remote ? { remote: true } : {}),
      signal: ctx.signal,
      caps: { maxTotalUsd: lab.scenario.caps?.maxTotalUsd ?? null, maxJobs: null },
      progress: (participant, phase, detail, summary) => log.progress({ participant, phase, ...(detail ? { detail: log.redact(detail) } : {}), ...summary }),
    });
  } catch (e) {
    if (!ctx.signal.aborted) {
      failure = studyFailure(e);
      log.log("browser-lab.session.error", `${failure.code}: ${failure.message}`);
    }
  }
  return { run, failure };
}

/**
 * The live study's tail: seats the study never reached (the app, the image or the lane failed
 * first) still count, as not started; the interruption and a lost capacity lease logged; the
 * seats assembled for `lane`, `desktop-ledgers.json` written, then `finishStudy` (a study
 * failure, else a ledger write failure, is the study's failure).
 */
export async function finishBrowserStudy(
  ctx: StudyContext<BrowserLabConfig>,
  writer: RunWriter,
  log: StudyLog,
  o: {
    seatsRun: { run: SeatsRun<SeatEvidence<BrowserSeatFacts>>; failure: StudyError | undefined };
    lane: "local-guest" | "e2b-desktop";
    target: BrowserTarget;
    concurrency: { concurrency: number; warnings: { code: string; message: string }[] };
    createdAt: string;
    appOrigin: string;
    costLines: CostLine[];
    gaps: string[];
    redactionNotes: string;
  },
): Promise<StudyResult> {
  const lab = ctx.lab;
  const { devices, shape } = studyShape(lab, ctx.seatIds);
  const seats = devices.map((d) => d.seat);
  let { run, failure } = o.seatsRun;
  if (run.seats.length === 0) run = notStartedRun(seats, failure, ctx.signal.aborted);
  if (ctx.signal.aborted)
    log.log("browser-lab.interrupted", `${ctx.signal.reason === "SIGTERM" ? "SIGTERM" : "SIGINT"}: every seat was stopped, every desktop released`);
  if (run.leaseLost) log.log("browser-lab.study.lease-lost", run.leaseLost);
  const assembled = assembleStudy(run, { lane: o.lane, concurrency: o.concurrency.concurrency, maxTotalUsd: lab.scenario.caps?.maxTotalUsd ?? null, shape });
  failure ??= await writeDesktopLedger(writer, run, assembled.cleanup, devices);
  return finishStudy({
    ctx,
    writer,
    route: "browser",
    target: o.target,
    createdAt: o.createdAt,
    subject: { source: "app-url", appUrl: `${o.appOrigin}/`, provenance: "unpinned" },
    caps: capsOf(lab),
    assembled,
    lifecycle: log.lifecycle,
    costLines: o.costLines,
    gaps: o.gaps,
    ...(failure ? { failure } : {}),
    warnings: o.concurrency.warnings,
    redactionNotes: o.redactionNotes,
  });
}

/**
 * The pieces of a browser study the same on either target (a local Docker guest or an E2B
 * desktop): refusals, the lab's caps and session budget, the live run's lifecycle log and
 * progress sink, the study-level failure of an unexpected error, and `desktop-ledgers.json`.
 */
import type { BrowserCaps } from "../../actors/browser-participant/index.ts";
import type { CleanupProof, LifecycleEvent, RunWriter } from "../../bundle/index.ts";
import { errorMessage, HumanishError, isHumanishError } from "../../errors.ts";
import { labDevices } from "../../lab/routing.ts";
import type { BrowserLabConfig } from "../../lab/schema.ts";
import type { BrowserSeatFacts } from "../../study/browser-seat.ts";
import type { SeatEvidence, StudyError } from "../../study/evidence.ts";
import { pickSeats, type SeatsRun } from "../../study/index.ts";
import type { ProgressEvent, StudyContext } from "../types.ts";

/** Session budget of a browser seat when neither `execution.timeoutMs` nor `scenario.caps.maxMinutes` sets one, ms. */
export const DEFAULT_SESSION_MS = 10 * 60_000;

/**
 * The seats of a browser study with their devices: every seat of the lab, or (a continued run)
 * only `seatIds`, each keeping the device it had in the full lab.
 */
export function studyDevices(lab: BrowserLabConfig, seatIds: readonly string[] | undefined): ReturnType<typeof labDevices> {
  return pickSeats(
    labDevices(lab),
    seatIds,
    (d) => d.seat,
    (d, seat) => ({ ...d, seat }),
  );
}

/** @throws HumanishError `code` with `message` and the `next` step. */
export function refuse(code: string, message: string, next: string): never {
  throw new HumanishError(code, message, { next });
}

/** The lab's `scenario.caps` as the bundle records them (null = unset). */
export function capsOf(lab: BrowserLabConfig) {
  const c = lab.scenario.caps;
  return { maxUsd: c?.maxUsd ?? null, maxJobs: c?.maxJobs ?? null, maxMinutes: c?.maxMinutes ?? null };
}

/** The lab's `scenario.caps` a browser participant enforces itself (USD and tokens; null = unset). */
export function participantCaps(lab: BrowserLabConfig): BrowserCaps {
  const c = lab.scenario.caps;
  return { maxUsd: c?.maxUsd ?? null, maxTotalUsd: c?.maxTotalUsd ?? null, maxTokens: c?.maxTokens ?? null, maxTotalTokens: c?.maxTotalTokens ?? null };
}

/** Each seat's session budget, ms: `execution.timeoutMs`, else a positive `maxMinutes`, else {@link DEFAULT_SESSION_MS}. */
export function sessionMsOf(lab: BrowserLabConfig, caps: { maxMinutes: number | null }): number {
  return lab.execution.timeoutMs ?? (caps.maxMinutes && caps.maxMinutes > 0 ? caps.maxMinutes * 60_000 : DEFAULT_SESSION_MS);
}

/** A live study's study-level log and progress sink. */
export interface StudyLog {
  redact: (s: string) => string;
  lifecycle: LifecycleEvent[];
  /** Appends one lifecycle event (the message redacted). */
  log: (event: string, message: string) => void;
  /** Forwards to the context's progress sink; a broken sink never stops a study. */
  progress: (e: ProgressEvent) => void;
}

/** The study-level log of a live study writing through `writer`. */
export function studyLog(ctx: StudyContext<BrowserLabConfig>, writer: RunWriter): StudyLog {
  const redact = (s: string) => writer.redactor.text(s);
  const lifecycle: LifecycleEvent[] = [];
  const log = (event: string, message: string) => {
    lifecycle.push({ at: new Date().toISOString(), event, message: redact(message) });
  };
  const progress = (e: ProgressEvent) => {
    try {
      ctx.progress(e);
    } catch {
      /* a broken progress sink never stops a study */
    }
  };
  return { redact, lifecycle, log, progress };
}

/** An unexpected error of a running study as its failure: a HumanishError keeps its code, anything else is `HUMANISH_BROWSER_LAB_FAILED`. */
export function studyFailure(e: unknown): StudyError {
  const h = isHumanishError(e)
    ? e
    : new HumanishError("HUMANISH_BROWSER_LAB_FAILED", `browser study failed: ${errorMessage(e)}`, {
        next: "read the bundle's lifecycle and rerun",
        cause: e,
      });
  return { code: h.code, message: h.message, ...(h.next ? { next: h.next } : {}) };
}

/**
 * Writes `desktop-ledgers.json`: every desktop's cleanup proof and each seat's geometry (the
 * declared one when the seat never started). Its write failure, if any (never throws).
 */
export async function writeDesktopLedger(
  writer: RunWriter,
  run: SeatsRun<SeatEvidence<BrowserSeatFacts>>,
  cleanup: CleanupProof[],
  devices: readonly { name: string; preset: { width: number; height: number } }[],
): Promise<StudyError | undefined> {
  const doc = {
    schema: "humanish.desktop-cleanup.v1",
    desktops: cleanup,
    geometry: run.seats.map((r) => ({
      participantId: r.seat.id,
      preset: r.facts?.lane.device ?? devices[r.seat.index]?.name ?? "desktop",
      width: r.facts?.lane.width ?? devices[r.seat.index]?.preset.width ?? 0,
      height: r.facts?.lane.height ?? devices[r.seat.index]?.preset.height ?? 0,
      startMs: r.facts?.lane.startMs ?? null,
    })),
  };
  try {
    await writer.writeJson("desktop-ledgers.json", doc, { kind: "data" });
    return undefined;
  } catch (e) {
    return {
      code: "HUMANISH_BUNDLE_WRITE_FAILED",
      message: `desktop-ledgers.json: ${errorMessage(e)}`,
      next: "check free disk space and permissions of .humanish/runs",
    };
  }
}

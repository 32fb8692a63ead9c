/**
 * The `e2b-desktop` lane: each seat gets its own E2B desktop (Xvfb + XFCE from the template, real
 * Chromium with its sandbox at the app) and the study's browser participant on it (any
 * {@link BrowserParticipant} the actor registry lets run here; a model participant's key stays in
 * this host process, which makes every model request).
 *
 *   prepare      create the desktop (the exact sandbox id is appended, fsync, to
 *                sandbox-receipts.ndjson before the SDK starts anything in it), provision Chromium
 *   openSession  the participant gets the desktop's browser-control executor
 *   participate  the participant on the desktop's executor, within the session budget
 *   check        hidden task checks on the participant's observations
 *   finalize     release by exact id (kill + getInfo proof, or `retained` under the debug flag),
 *                then the seat's screenshots, trace and request ledger
 *
 * Same evidence as the local guest seat (trace, admitted screenshots, task funnel, ledger), so
 * report and verify treat both lanes alike. Study-level pieces (the app's files, the key) are the
 * route's.
 */
import type { BrowserParticipant, BrowserRun } from "../../actors/browser-participant/index.ts";
import type { CleanupProof, RunParticipant, TaskResult } from "../../bundle/schemas.ts";
import type { RunWriter } from "../../bundle/writer.ts";
import type { DeviceName, DevicePreset } from "../../lab/schema.ts";
import {
  type BrowserSeatFacts,
  browserSeatBasics,
  browserSeatFailure,
  browserSeatGeometry,
  browserSeatVerdict,
  browserStopWhen,
  checkBrowserTasks,
  runSeatParticipant,
  uncheckedTasks,
  writeParticipantEvidence,
} from "../../study/browser-seat.ts";
import { evidenceSummary, type SeatEvidence, type StudyError } from "../../study/evidence.ts";
import type { Lane, SeatHooks, SeatRelease, SeatSpec } from "../../study/types.ts";
import { desktopTimeLine } from "./cost.ts";
import { type E2BConnection, type E2BDesktop, openDesktop } from "./desktop.ts";
import type { AppPlacement } from "./reach.ts";
import { releaseDesktop } from "./release.ts";

export { desktopTimeLine, E2B_DESKTOP_RATES } from "./cost.ts";
export { type E2BConnection, openDesktop } from "./desktop.ts";
export { checkE2BDesktopLab, DEFAULT_E2B_DESKTOP_TEMPLATE } from "./doctor.ts";
export { e2bChord, e2bKeysym } from "./keys.ts";
export { planDesktopAction, shellCommand, shellQuote } from "./plan.ts";
export { type AppPlacement, placeApp } from "./reach.ts";
export { releaseDesktop, releaseVerdict } from "./release.ts";

/** Most seats one E2B study runs at once (the shared caps may lower it). */
export const E2B_DESKTOP_MAX_CONCURRENCY = 16;
/** Extra E2B lifetime past the session budget: provisioning, the closing checks and the release, ms. */
export const E2B_DESKTOP_MARGIN_MS = 5 * 60_000;

export interface E2BDesktopLaneOptions {
  writer: RunWriter;
  runId: string;
  labId: string;
  /** The study's participant, its live preflight done (it enforces the lab's caps itself). */
  participant: BrowserParticipant;
  conn: E2BConnection;
  template: string;
  app: AppPlacement;
  appFiles?: readonly { path: string; bytes: Uint8Array }[];
  devices: ReadonlyMap<string, { name: DeviceName; preset: DevicePreset }>;
  seatCount: number;
  sessionMs: number;
  /** Keep every desktop for debugging (outcome `retained`; E2B's own timeout still ends it). */
  retainForDebug?: boolean;
  /** The explicit live-view flag: receives each desktop's authenticated stream URL (a secret). */
  onLiveView?: (participantId: string, url: string) => void;
  onDesktopCreated?: (participantId: string, sandboxId: string) => void;
}

/** The E2B desktop lane of one study. */
export function e2bDesktopLane(o: E2BDesktopLaneOptions): Lane<SeatEvidence<BrowserSeatFacts>> {
  return {
    name: "e2b-desktop",
    spentUsd: (facts) => facts.usd,
    jobs: () => 0,
    summary: evidenceSummary,
    session: (seat, hooks) => e2bSeat(o, seat, hooks),
  };
}

function e2bSeat(o: E2BDesktopLaneOptions, seat: SeatSpec, hooks: SeatHooks) {
  const writer = o.writer;
  const basics = browserSeatBasics(writer, seat, o.devices, o.seatCount);
  const { pid, redact, lifecycle, log, device, screen, paths } = basics;
  const participant = o.participant;
  const origin = o.app.url.origin;
  let sandboxId: string | undefined;
  let acquiredAt: number | undefined;
  let releasedAt: number | undefined;
  let desktop: E2BDesktop | undefined;
  let run: BrowserRun | undefined;
  let tasks: TaskResult[] = [];
  let failedWith: StudyError | undefined;
  let interrupted = false;
  const cleanup: CleanupProof[] = [];
  let evidence: SeatEvidence<BrowserSeatFacts> | undefined;

  return {
    async prepare() {
      hooks.progress("allocate", `E2B desktop ${o.template} ${screen.width}x${screen.height}`);
      hooks.beforeCreate();
      desktop = await openDesktop({
        conn: o.conn,
        template: o.template,
        width: screen.width,
        height: screen.height,
        timeoutMs: o.sessionMs + E2B_DESKTOP_MARGIN_MS,
        metadata: { "humanish.run": o.runId, "humanish.seat": pid, "humanish.lab": o.labId },
        app: o.app,
        ...(o.appFiles ? { appFiles: o.appFiles } : {}),
        ...(o.onLiveView ? { onLiveView: (url: string) => o.onLiveView?.(pid, url) } : {}),
        signal: hooks.signal,
        onCreated: async (id) => {
          sandboxId = id;
          acquiredAt = Date.now();
          hooks.created(id);
          await writer.appendNdjson(
            "sandbox-receipts.ndjson",
            { at: new Date().toISOString(), participantId: pid, provider: "e2b", id, kind: "desktop", timeoutMs: o.sessionMs + E2B_DESKTOP_MARGIN_MS },
            { kind: "sandbox-receipts", durable: true },
          );
          log("browser-lab.desktop.created", `E2B desktop ${id} (template ${o.template}) for ${pid} (${device.name}); id recorded before provisioning`);
          o.onDesktopCreated?.(pid, id);
        },
      });
      log(
        "browser-lab.desktop.ready",
        `${pid}: ${desktop.browser} shows ${o.app.kind === "served" ? "the app served inside the desktop" : origin} in ${Math.round(desktop.startMs)} ms (its sandbox verified: renderers run in namespaces of their own; the sandbox is never switched off)${desktop.liveView ? "; live view started with requireAuth (its URL is not recorded)" : ""}`,
      );
    },
    async openSession() {
      hooks.progress("participate", participant.describeProgress());
    },
    async participate() {
      if (!desktop) return;
      run = await runSeatParticipant(participant, { seat, executor: desktop.executor, origin, screen, sessionMs: o.sessionMs, hooks, basics, cleanup });
    },
    async check() {
      const declared = participant.tasks;
      if (!declared.length) return;
      hooks.progress("check", `${declared.length} hidden check(s)`);
      tasks = checkBrowserTasks(declared, pid, run?.outcome, origin);
    },
    async finalize(end: { error?: StudyError; interrupted: boolean }): Promise<SeatRelease> {
      failedWith = end.error;
      interrupted = end.interrupted;
      if (failedWith) log("browser-lab.session.error", `${pid}: ${failedWith.code}: ${failedWith.message}`);
      let release: SeatRelease = { outcome: "none", reason: "no desktop was created" };
      if (sandboxId) {
        const id = sandboxId;
        const at = new Date().toISOString();
        if (o.retainForDebug) {
          hooks.progress("teardown", `retaining ${id} for debugging`);
          cleanup.push({
            id,
            provider: "e2b",
            kind: "desktop",
            participantId: pid,
            outcome: "retained",
            reason: "debug retention flag; E2B's timeout still kills it",
            at,
          });
          log("browser-lab.cleanup.retained", `E2B desktop ${id}: retained for debugging (E2B kills it when its timeout passes)`);
          release = { outcome: "retained", id, reason: "debug retention flag" };
        } else {
          hooks.progress("teardown", `releasing ${id}`);
          const proof = await releaseDesktop(id, o.conn);
          releasedAt = Date.now();
          cleanup.push({ id, provider: "e2b", kind: "desktop", participantId: pid, outcome: proof.outcome, reason: proof.reason, at: proof.at });
          log(
            proof.outcome === "released" ? "browser-lab.cleanup.verified" : "browser-lab.cleanup.unconfirmed",
            `E2B desktop ${id}: ${proof.outcome} (${proof.reason})${proof.warning ? `; warning: ${proof.warning}` : ""}`,
          );
          release = { outcome: proof.outcome, id, reason: proof.reason };
        }
      }
      evidence = await writeEvidence();
      return release;
    },
    snapshot(): SeatEvidence<BrowserSeatFacts> {
      if (!evidence) throw new Error(`seat ${pid}: snapshot before finalize`);
      return evidence;
    },
  };

  async function writeEvidence(): Promise<SeatEvidence<BrowserSeatFacts>> {
    const writeErrors: string[] = [];
    const end = { interrupted, failedWith };
    if (!tasks.length) tasks = uncheckedTasks(participant.tasks, pid, end);
    const out = run?.outcome;
    const verdict = browserSeatVerdict(out, tasks, end, "the participant finished but a hidden check failed", browserStopWhen(participant, origin));
    const written = run ? await writeParticipantEvidence(writer, run, { pid, sessionId: sandboxId ?? "none", verdict, paths, redact }, writeErrors) : undefined;
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
      desktopGeometry: browserSeatGeometry(device, screen, desktop !== undefined, "e2b-xvfb+admitted-frame"),
      ...(seat.persona ? { persona: seat.persona } : {}),
      device: device.name,
    };
    // A retained desktop is a recorded choice, not an unproven release: only `unconfirmed` fails the seat.
    const failure = browserSeatFailure({
      unproven: cleanup.filter((c) => c.outcome === "unconfirmed"),
      unprovenText: {
        what: "an E2B desktop release",
        next: (ids) => `kill it by id in the E2B dashboard or with the e2b CLI (e2b sandbox kill ${ids}); it also ends when its timeout passes`,
      },
      harnessError: out?.harnessError,
      writeErrors,
      failedWith,
      redact,
    });
    return {
      participant: record,
      tasks,
      cleanup,
      costLines: [
        ...(written?.costLines ?? []),
        desktopTimeLine({
          participantId: pid,
          acquiredAt,
          releasedAt,
          resources: desktop?.resources,
          released: cleanup.every((c) => c.outcome === "released"),
        }),
      ],
      lifecycle,
      ...(failure ? { failure } : {}),
      folder: record.trace !== null ? paths.folder : null,
      usd: written?.usd ?? 0,
      jobs: 0,
      lane: { device: device.name, width: screen.width, height: screen.height, startMs: desktop?.startMs ?? null },
    };
  }
}

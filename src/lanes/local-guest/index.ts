/**
 * The `local` guest lane: each seat gets its own Docker guest desktop (real Chromium under its
 * own sandbox, browser control over a socket) and the study's browser participant on it (any
 * {@link BrowserParticipant}: the lane only allocates the machine, hands over its executor and
 * releases it).
 *
 *   prepare      allocate the guest (the exact id is appended, fsync, to sandbox-receipts.ndjson before it is provisioned)
 *   openSession  the participant's progress line
 *   participate  the participant on the guest's browser-control executor, within the session budget
 *   check        hidden task checks on the participant's observations
 *   finalize     release by exact id (always), then the seat's screenshots, trace and ledger
 *
 * Study-level pieces (serving the app, the guest image, the participant's preflight) are the
 * route's; this lane only sees one seat at a time.
 */

import type { BrowserParticipant, BrowserRun } from "../../actors/browser-participant/index.ts";
import type { CleanupProof, RunParticipant, TaskResult } from "../../bundle/schemas.ts";
import type { RunWriter } from "../../bundle/writer.ts";
import type { DockerClient } from "../../docker/index.ts";
import type { DeviceName, DevicePreset } from "../../lab/schema.ts";
import { allocateDesktop, type LocalDesktop } from "../../runtime/desktop.ts";
import type { GuestImage } from "../../runtime/guest-image.ts";
import { PROJECT_LABEL } from "../../sandbox/controller.ts";
import { releaseContainer } from "../../sandbox/release.ts";
import type { ReleaseProof } from "../../sandbox/types.ts";
import {
  type BrowserSeatFacts,
  browserSeatBasics,
  browserSeatFailure,
  browserSeatGeometry,
  browserSeatVerdict,
  browserStopWhen,
  checkBrowserTasks,
  liveSeatShots,
  runSeatParticipant,
  uncheckedTasks,
  writeParticipantEvidence,
} from "../../study/browser-seat.ts";
import { evidenceSummary, type SeatEvidence, type StudyError } from "../../study/evidence.ts";
import type { Lane, SeatHooks, SeatRelease, SeatSpec } from "../../study/types.ts";

export interface LocalGuestLaneOptions {
  docker: DockerClient;
  image: GuestImage;
  writer: RunWriter;
  runId: string;
  /** Project directory (labels the guest for the orphan sweep). */
  cwd: string;
  /** The study's participant, its live preflight done (it enforces the lab's caps itself). */
  participant: BrowserParticipant;
  appUrl: URL;
  /** Every seat's device, by seat id. */
  devices: ReadonlyMap<string, { name: DeviceName; preset: DevicePreset }>;
  /** Seats in the study (decides the bundle layout). */
  seatCount: number;
  sessionMs: number;
  /** Extra container labels (tests). */
  labels?: Record<string, string>;
  onDesktopCreated?: (participantId: string, containerId: string) => void;
}

/** The local guest lane over one study's served app and guest image. */
export function localGuestLane(o: LocalGuestLaneOptions): Lane<SeatEvidence<BrowserSeatFacts>> {
  return {
    name: "local-guest",
    spentUsd: (facts) => facts.usd,
    jobs: () => 0,
    summary: evidenceSummary,
    session: (seat, hooks) => guestSeat(o, seat, hooks),
  };
}

function guestSeat(o: LocalGuestLaneOptions, seat: SeatSpec, hooks: SeatHooks) {
  const writer = o.writer;
  const basics = browserSeatBasics(writer, seat, o.devices, o.seatCount);
  const { pid, redact, log, device, screen, paths, lifecycle } = basics;
  const participant = o.participant;
  let containerId: string | undefined;
  let desktop: LocalDesktop | undefined;
  let run: BrowserRun | undefined;
  let tasks: TaskResult[] = [];
  let proof: ReleaseProof | undefined;
  let failedWith: StudyError | undefined;
  let interrupted = false;
  const cleanup: CleanupProof[] = [];
  let evidence: SeatEvidence<BrowserSeatFacts> | undefined;
  const live = liveSeatShots(writer, paths.shot);

  return {
    async prepare() {
      hooks.progress("allocate", `${device.name} ${screen.width}x${screen.height}`);
      hooks.beforeCreate();
      desktop = await allocateDesktop({
        docker: o.docker,
        image: o.image,
        runId: o.runId,
        participantId: pid,
        appPort: Number(o.appUrl.port),
        initialPath: "/",
        width: screen.width,
        height: screen.height,
        lifetimeMs: Math.min(30 * 60_000, o.sessionMs + 5 * 60_000),
        labels: { ...(o.labels ?? {}), [PROJECT_LABEL]: o.cwd },
        signal: hooks.signal,
        onCreated: async (id) => {
          containerId = id;
          hooks.created(id);
          await writer.appendNdjson(
            "sandbox-receipts.ndjson",
            { at: new Date().toISOString(), participantId: pid, provider: "docker", id, kind: "desktop", timeoutMs: o.sessionMs },
            { kind: "sandbox-receipts", durable: true },
          );
          log("browser-lab.desktop.created", `docker guest ${id} for ${pid} (${device.name}); id recorded before provisioning`);
          o.onDesktopCreated?.(pid, id);
        },
      });
      log("browser-lab.desktop.ready", `${pid}: browser control ready in ${Math.round(desktop.startMs)} ms (Chromium sandbox verified by the guest)`);
    },
    async openSession() {
      hooks.progress("participate", participant.describeProgress());
    },
    async participate() {
      if (!desktop) return;
      run = await runSeatParticipant(participant, {
        seat,
        executor: desktop.executor,
        origin: o.appUrl.origin,
        screen,
        sessionMs: o.sessionMs,
        hooks,
        basics,
        cleanup,
        onScreenshot: (shot) => live.keep(shot),
      });
    },
    async check() {
      const declaredTasks = participant.tasks;
      if (!declaredTasks.length) return;
      hooks.progress("check", `${declaredTasks.length} hidden check(s)`);
      tasks = checkBrowserTasks(declaredTasks, pid, run?.outcome, o.appUrl.origin);
    },
    async finalize(end: { error?: StudyError; interrupted: boolean }): Promise<SeatRelease> {
      failedWith = end.error;
      interrupted = end.interrupted;
      if (failedWith) log("browser-lab.session.error", `${pid}: ${failedWith.code}: ${failedWith.message}`);
      hooks.progress("teardown", containerId ? `releasing ${containerId.slice(0, 12)}` : "nothing to release");
      if (desktop) proof = await desktop.release();
      else if (containerId) proof = await releaseContainer(o.docker, containerId);
      if (proof && proof.id !== "none") {
        cleanup.push({ id: proof.id, provider: "docker", kind: "desktop", participantId: pid, outcome: proof.outcome, reason: proof.reason, at: proof.at });
        log(
          proof.outcome === "released" ? "browser-lab.cleanup.verified" : "browser-lab.cleanup.unconfirmed",
          `docker guest ${proof.id}: ${proof.outcome} (${proof.reason})`,
        );
      }
      evidence = await writeEvidence();
      return proof && proof.id !== "none"
        ? { outcome: proof.outcome, id: proof.id, reason: proof.reason }
        : { outcome: "none", reason: "no guest was created" };
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
    // The participant's status folds in the hidden checks (all steps ran but a check failed →
    // incomplete); its trace records the same status, which `verify` cross-checks.
    const out = run?.outcome;
    const verdict = browserSeatVerdict(out, tasks, end, "all steps ran but a hidden check failed", browserStopWhen(participant, o.appUrl.origin));
    const written = run
      ? await writeParticipantEvidence(writer, run, { pid, sessionId: desktop?.identity.generation ?? "none", verdict, paths, redact, live }, writeErrors)
      : undefined;
    const actorType = participant.descriptor.type;
    const participantRecord: RunParticipant = {
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
      desktopGeometry: browserSeatGeometry(device, screen, desktop !== undefined, "xvfb+admitted-frame"),
      ...(seat.persona ? { persona: seat.persona } : {}),
      device: device.name,
    };
    // Docker guests are never retained: anything short of `released` (a participant's own resource too) fails the seat.
    const failure = browserSeatFailure({
      unproven: cleanup.filter((c) => c.outcome !== "released"),
      unprovenText: { what: "a desktop release", next: (ids) => `remove it by id: docker rm -f ${ids}` },
      harnessError: out?.harnessError,
      writeErrors,
      failedWith,
      redact,
    });
    return {
      participant: participantRecord,
      tasks,
      cleanup,
      costLines: written?.costLines ?? [],
      lifecycle,
      ...(failure ? { failure } : {}),
      // The seat folder holds its trace; a seat stopped before its participant ran has none.
      folder: participantRecord.trace !== null ? paths.folder : null,
      usd: written?.usd ?? 0,
      jobs: 0,
      lane: { device: device.name, width: screen.width, height: screen.height, startMs: desktop?.startMs ?? null },
    };
  }
}

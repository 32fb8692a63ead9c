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

import type { BrowserParticipant } from "../../actors/browser-participant/index.ts";
import type { CleanupProof } from "../../bundle/schemas.ts";
import type { RunWriter } from "../../bundle/writer.ts";
import type { DockerClient } from "../../docker/index.ts";
import type { DeviceName, DevicePreset } from "../../lab/schema.ts";
import { allocateDesktop, type LocalDesktop } from "../../runtime/desktop.ts";
import type { GuestImage } from "../../runtime/guest-image.ts";
import { PROJECT_LABEL } from "../../sandbox/controller.ts";
import { releaseContainer } from "../../sandbox/release.ts";
import type { ReleaseProof } from "../../sandbox/types.ts";
import { browserSeatSession, writeBrowserSeatEvidence } from "../../study/browser-lane.ts";
import { type BrowserSeatBasics, type BrowserSeatFacts, browserSeatBasics, liveSeatShots } from "../../study/browser-seat.ts";
import { evidenceSummary, type SeatEvidence } from "../../study/evidence.ts";
import { appendSandboxReceipt } from "../../study/receipts.ts";
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
  /** The host port the app answers on (a statically served app's ephemeral port; else appUrl's). */
  appHostPort: number;
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
  const basics = browserSeatBasics(o.writer, seat, o.devices, o.seatCount);
  const cleanup: CleanupProof[] = [];
  const live = liveSeatShots(o.writer, basics.paths.shot);
  const guest: GuestSeat = { o, seat, hooks, basics, cleanup, live };
  return browserSeatSession({
    participant: o.participant,
    seat,
    hooks,
    basics,
    origin: o.appUrl.origin,
    sessionMs: o.sessionMs,
    cleanup,
    onScreenshot: (shot) => live.keep(shot),
    machine: {
      prepare: () => allocateGuest(guest),
      executor: () => guest.desktop?.executor,
      release: () => releaseGuest(guest),
      evidence: (seatRun) =>
        writeBrowserSeatEvidence(o.writer, {
          participant: o.participant,
          seat,
          basics,
          origin: o.appUrl.origin,
          seatRun,
          sessionId: guest.desktop?.identity.generation ?? "none",
          live,
          checkFailed: "all steps ran but a hidden check failed",
          desktop: guest.desktop,
          geometrySource: "xvfb+admitted-frame",
          cleanup,
          // Docker guests are never retained: anything short of `released` (a participant's own resource too) fails the seat.
          unproven: (c) => c.outcome !== "released",
          unprovenText: { what: "a desktop release", next: (ids) => `remove it by id: docker rm -f ${ids}` },
        }),
    },
  });
}

/** One local guest seat's machine state (filled in as the seat goes). */
interface GuestSeat {
  o: LocalGuestLaneOptions;
  seat: SeatSpec;
  hooks: SeatHooks;
  basics: BrowserSeatBasics;
  cleanup: CleanupProof[];
  live: ReturnType<typeof liveSeatShots>;
  containerId?: string;
  desktop?: LocalDesktop;
}

/**
 * Allocates the seat's Docker guest desktop; its exact id is appended, fsync, to
 * sandbox-receipts.ndjson before it is provisioned.
 * @throws allocateDesktop's errors (`HUMANISH_DESKTOP_*`, `HUMANISH_DOCKER_*`)
 */
async function allocateGuest(g: GuestSeat): Promise<void> {
  const { o, hooks, basics } = g;
  const { pid, log, device, screen } = basics;
  hooks.progress("allocate", `${device.name} ${screen.width}x${screen.height}`);
  hooks.beforeCreate();
  g.desktop = await allocateDesktop({
    docker: o.docker,
    image: o.image,
    runId: o.runId,
    participantId: pid,
    appPort: Number(o.appUrl.port),
    appHostPort: o.appHostPort,
    initialPath: "/",
    width: screen.width,
    height: screen.height,
    lifetimeMs: Math.min(30 * 60_000, o.sessionMs + 5 * 60_000),
    labels: { ...(o.labels ?? {}), [PROJECT_LABEL]: o.cwd },
    signal: hooks.signal,
    onCreated: async (id) => {
      g.containerId = id;
      hooks.created(id);
      await appendSandboxReceipt(o.writer, { participantId: pid, provider: "docker", id, kind: "desktop", timeoutMs: o.sessionMs });
      log("browser-lab.desktop.created", `docker guest ${id} for ${pid} (${device.name}); id recorded before provisioning`);
      o.onDesktopCreated?.(pid, id);
    },
  });
  log("browser-lab.desktop.ready", `${pid}: browser control ready in ${Math.round(g.desktop.startMs)} ms (Chromium sandbox verified by the guest)`);
}

/** Releases the guest by exact id (always; a container created but never handed over by its id), its proof logged into the seat's cleanup. */
async function releaseGuest(g: GuestSeat): Promise<SeatRelease> {
  const { o, hooks, basics, containerId } = g;
  const { pid, log } = basics;
  hooks.progress("teardown", containerId ? `releasing ${containerId.slice(0, 12)}` : "nothing to release");
  let proof: ReleaseProof | undefined;
  if (g.desktop) proof = await g.desktop.release();
  else if (containerId) proof = await releaseContainer(o.docker, containerId);
  if (!proof || proof.id === "none") return { outcome: "none", reason: "no guest was created" };
  g.cleanup.push({ id: proof.id, provider: "docker", kind: "desktop", participantId: pid, outcome: proof.outcome, reason: proof.reason, at: proof.at });
  log(
    proof.outcome === "released" ? "browser-lab.cleanup.verified" : "browser-lab.cleanup.unconfirmed",
    `docker guest ${proof.id}: ${proof.outcome} (${proof.reason})`,
  );
  return { outcome: proof.outcome, id: proof.id, reason: proof.reason };
}

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
import type { BrowserParticipant } from "../../actors/browser-participant/index.ts";
import type { CleanupProof } from "../../bundle/schemas.ts";
import type { RunWriter } from "../../bundle/writer.ts";
import type { DeviceName, DevicePreset } from "../../lab/schema.ts";
import { browserSeatSession, writeBrowserSeatEvidence } from "../../study/browser-lane.ts";
import { type BrowserSeatBasics, type BrowserSeatFacts, browserSeatBasics } from "../../study/browser-seat.ts";
import { evidenceSummary, type SeatEvidence } from "../../study/evidence.ts";
import { appendSandboxReceipt } from "../../study/receipts.ts";
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
  const basics = browserSeatBasics(o.writer, seat, o.devices, o.seatCount);
  const cleanup: CleanupProof[] = [];
  const d: DesktopSeat = { o, hooks, basics, cleanup };
  const origin = o.app.url.origin;
  return browserSeatSession({
    participant: o.participant,
    seat,
    hooks,
    basics,
    origin,
    sessionMs: o.sessionMs,
    cleanup,
    machine: {
      prepare: () => openSeatDesktop(d),
      executor: () => d.desktop?.executor,
      release: () => releaseSeatDesktop(d),
      evidence: (seatRun) =>
        writeBrowserSeatEvidence(o.writer, {
          participant: o.participant,
          seat,
          basics,
          origin,
          seatRun,
          sessionId: d.sandboxId ?? "none",
          checkFailed: "the participant finished but a hidden check failed",
          desktop: d.desktop,
          geometrySource: "e2b-xvfb+admitted-frame",
          cleanup,
          // A retained desktop is a recorded choice, not an unproven release: only `unconfirmed` fails the seat.
          unproven: (c) => c.outcome === "unconfirmed",
          unprovenText: {
            what: "an E2B desktop release",
            next: (ids) => `kill it by id in the E2B dashboard or with the e2b CLI (e2b sandbox kill ${ids}); it also ends when its timeout passes`,
          },
          extraCostLines: () => [
            desktopTimeLine({
              participantId: basics.pid,
              acquiredAt: d.acquiredAt,
              releasedAt: d.releasedAt,
              resources: d.desktop?.resources,
              released: cleanup.every((c) => c.outcome === "released"),
            }),
          ],
        }),
    },
  });
}

/** One E2B desktop seat's machine state (filled in as the seat goes); times in epoch ms. */
interface DesktopSeat {
  o: E2BDesktopLaneOptions;
  hooks: SeatHooks;
  basics: BrowserSeatBasics;
  cleanup: CleanupProof[];
  sandboxId?: string;
  acquiredAt?: number;
  releasedAt?: number;
  desktop?: E2BDesktop;
}

/**
 * Opens the seat's E2B desktop (E2B lifetime = the session budget + {@link E2B_DESKTOP_MARGIN_MS});
 * its exact sandbox id is appended, fsync, to sandbox-receipts.ndjson before the SDK starts
 * anything in it; then Chromium is provisioned at the app.
 * @throws openDesktop's errors (`HUMANISH_E2B_*`)
 */
async function openSeatDesktop(d: DesktopSeat): Promise<void> {
  const { o, hooks, basics } = d;
  const { pid, log, device, screen } = basics;
  const timeoutMs = o.sessionMs + E2B_DESKTOP_MARGIN_MS;
  hooks.progress("allocate", `E2B desktop ${o.template} ${screen.width}x${screen.height}`);
  hooks.beforeCreate();
  const desktop = await openDesktop({
    conn: o.conn,
    template: o.template,
    width: screen.width,
    height: screen.height,
    timeoutMs,
    metadata: { "humanish.run": o.runId, "humanish.seat": pid, "humanish.lab": o.labId },
    app: o.app,
    ...(o.appFiles ? { appFiles: o.appFiles } : {}),
    ...(o.onLiveView ? { onLiveView: (url: string) => o.onLiveView?.(pid, url) } : {}),
    signal: hooks.signal,
    onCreated: async (id) => {
      d.sandboxId = id;
      d.acquiredAt = Date.now();
      hooks.created(id);
      await appendSandboxReceipt(o.writer, { participantId: pid, provider: "e2b", id, kind: "desktop", timeoutMs });
      log("browser-lab.desktop.created", `E2B desktop ${id} (template ${o.template}) for ${pid} (${device.name}); id recorded before provisioning`);
      o.onDesktopCreated?.(pid, id);
    },
  });
  d.desktop = desktop;
  log(
    "browser-lab.desktop.ready",
    `${pid}: ${desktop.browser} shows ${o.app.kind === "served" ? "the app served inside the desktop" : o.app.url.origin} in ${Math.round(desktop.startMs)} ms (its sandbox verified: renderers run in namespaces of their own; the sandbox is never switched off)${desktop.liveView ? "; live view started with requireAuth (its URL is not recorded)" : ""}`,
  );
}

/**
 * Releases the desktop by exact id (kill + getInfo proof), or keeps it under the debug flag
 * (`retained`; E2B's own timeout still ends it); the outcome joins the seat's cleanup.
 */
async function releaseSeatDesktop(d: DesktopSeat): Promise<SeatRelease> {
  const { o, hooks, basics, cleanup } = d;
  const { pid, log } = basics;
  const id = d.sandboxId;
  if (!id) return { outcome: "none", reason: "no desktop was created" };
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
    return { outcome: "retained", id, reason: "debug retention flag" };
  }
  hooks.progress("teardown", `releasing ${id}`);
  const proof = await releaseDesktop(id, o.conn);
  d.releasedAt = Date.now();
  cleanup.push({ id, provider: "e2b", kind: "desktop", participantId: pid, outcome: proof.outcome, reason: proof.reason, at: proof.at });
  log(
    proof.outcome === "released" ? "browser-lab.cleanup.verified" : "browser-lab.cleanup.unconfirmed",
    `E2B desktop ${id}: ${proof.outcome} (${proof.reason})${proof.warning ? `; warning: ${proof.warning}` : ""}`,
  );
  return { outcome: proof.outcome, id, reason: proof.reason };
}

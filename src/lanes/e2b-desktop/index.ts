/**
 * The `e2b-desktop` lane: each `openai-computer-use` seat gets its own E2B desktop (Xvfb + XFCE
 * from the template, real Chromium with its sandbox at the app) and the computer-use loop on it;
 * the model key stays in this host process, which makes every model request.
 *
 *   prepare      create the desktop (the exact sandbox id is appended, fsync, to
 *                sandbox-receipts.ndjson before the SDK starts anything in it), provision Chromium
 *   openSession  the participant gets the desktop's browser-control executor
 *   participate  the computer-use loop within the session budget
 *   check        hidden task checks on the participant's observations
 *   finalize     release by exact id (kill + getInfo proof, or `retained` under the debug flag),
 *                then the seat's screenshots, trace and request ledger
 *
 * Same evidence as the local guest seat (trace, admitted screenshots, task funnel, ledger), so
 * report and verify treat both lanes alike. Study-level pieces (the app's files, the key) are the
 * route's.
 */
import {
  briefDigest,
  type ComputerUseOutcome,
  type ComputerUseReadiness,
  computerUseLedger,
  computerUseTrace,
  DEFAULT_COMPUTER_USE_PERSONA,
  runComputerUseSeat,
} from "../../actors/computer-use/index.ts";
import { evaluateCheck } from "../../actors/scripted-browser/index.ts";
import type { ActorTrace, CleanupProof, DesktopGeometry, LifecycleEvent, RunParticipant, TaskResult } from "../../bundle/schemas.ts";
import type { RunWriter } from "../../bundle/writer.ts";
import type { BrowserTask, ComputerUseActor, DeviceName, DevicePreset } from "../../lab/schema.ts";
import { SpendBudget } from "../../models/index.ts";
import { guestScreen } from "../../runtime/presets.ts";
import { evidenceSummary, type SeatEvidence, type StudyError, seatFolder } from "../../study/evidence.ts";
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

/** The lane's own facts of one seat (for the study's desktop ledger). */
export interface E2BSeatFacts {
  device: string;
  width: number;
  height: number;
  startMs: number | null;
}

/** Most seats one E2B study runs at once (the shared caps may lower it). */
export const E2B_DESKTOP_MAX_CONCURRENCY = 16;
/** Extra E2B lifetime past the session budget: provisioning, the closing checks and the release, ms. */
export const E2B_DESKTOP_MARGIN_MS = 5 * 60_000;

export interface E2BDesktopLaneOptions {
  writer: RunWriter;
  runId: string;
  labId: string;
  actor: ComputerUseActor;
  computerUse: ComputerUseReadiness;
  /** `scenario.caps` the loop enforces before every request (USD; null = unset). */
  caps: { maxUsd: number | null; maxTotalUsd: number | null };
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

function seatPaths(seats: number, id: string) {
  const folder = seatFolder(seats, id);
  return {
    folder,
    trace: folder ? `${folder}actor.json` : `actors/${id}.json`,
    ledger: folder ? `${folder}model-ledger.json` : `model-ledger-${id}.json`,
    shot: (name: string) => (folder ? `screenshots/${id}/${name}.png` : `screenshots/${id}-${name}.png`),
  };
}

function checkTasks(tasks: readonly BrowserTask[], pid: string, outcome: ComputerUseOutcome | undefined, origin: string): TaskResult[] {
  const obs = outcome?.observations ?? [];
  return tasks.map((t) => {
    if (!outcome || obs.length === 0)
      return { id: t.id, goal: t.goal, participantId: pid, status: "not_run" as const, passed: false, detail: "no observation was made" };
    const hit = evaluateCheck(t.check, obs, origin);
    return hit >= 0
      ? {
          id: t.id,
          goal: t.goal,
          participantId: pid,
          status: "passed" as const,
          passed: true,
          detail: `observation ${hit + 1} of ${obs.length} satisfies the check`,
        }
      : {
          id: t.id,
          goal: t.goal,
          participantId: pid,
          status: "failed" as const,
          passed: false,
          detail: `none of ${obs.length} observation(s) of ${origin} satisfies the check`,
        };
  });
}

/** The E2B desktop lane of one study. */
export function e2bDesktopLane(o: E2BDesktopLaneOptions): Lane<SeatEvidence<E2BSeatFacts>> {
  const studyBudget = o.caps.maxTotalUsd != null ? new SpendBudget("scenario.caps.maxTotalUsd", o.caps.maxTotalUsd) : undefined;
  return {
    name: "e2b-desktop",
    spentUsd: (facts) => facts.usd,
    jobs: () => 0,
    summary: evidenceSummary,
    session: (seat, hooks) => e2bSeat(o, seat, hooks, studyBudget),
  };
}

function e2bSeat(o: E2BDesktopLaneOptions, seat: SeatSpec, hooks: SeatHooks, studyBudget: SpendBudget | undefined) {
  const pid = seat.id;
  const writer = o.writer;
  const redact = (s: string) => writer.redactor.text(s);
  const lifecycle: LifecycleEvent[] = [];
  const log = (event: string, message: string) => lifecycle.push({ at: new Date().toISOString(), event, message: redact(message) });
  const device = o.devices.get(pid) ?? { name: "desktop" as const, preset: { width: 1440, height: 950, deviceScaleFactor: 1 } };
  const screen = guestScreen(device.preset);
  const paths = seatPaths(o.seatCount, pid);
  const origin = o.app.url.origin;
  let sandboxId: string | undefined;
  let acquiredAt: number | undefined;
  let releasedAt: number | undefined;
  let desktop: E2BDesktop | undefined;
  let outcome: ComputerUseOutcome | undefined;
  let brief: string | undefined;
  let tasks: TaskResult[] = [];
  let failedWith: StudyError | undefined;
  let interrupted = false;
  const cleanup: CleanupProof[] = [];
  let evidence: SeatEvidence<E2BSeatFacts> | undefined;

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
        `${pid}: ${desktop.browser} shows ${o.app.kind === "served" ? "the app served inside the desktop" : origin} in ${Math.round(desktop.startMs)} ms (its sandbox verified: renderers run in namespaces of their own; --no-sandbox is never passed)${desktop.liveView ? "; live view started with requireAuth (its URL is not recorded)" : ""}`,
      );
    },
    async openSession() {
      hooks.progress("participate", `computer-use model ${o.computerUse.model}`);
    },
    async participate() {
      if (!desktop) return;
      const seatBudget = o.caps.maxUsd != null ? new SpendBudget("scenario.caps.maxUsd", o.caps.maxUsd) : undefined;
      const ran = await runComputerUseSeat({
        executor: desktop.executor,
        actor: o.actor,
        seat: { ...(seat.persona ? { persona: seat.persona } : {}), ...(seat.instruction ? { instruction: seat.instruction } : {}) },
        readiness: o.computerUse,
        origin,
        sessionMs: o.sessionMs,
        ...(seatBudget ? { seatBudget } : {}),
        ...(studyBudget ? { studyBudget } : {}),
        scrubText: redact,
        signal: hooks.signal,
        onTurn: (turn, note) => hooks.progress("participate", `turn ${turn}: ${note}`),
      });
      outcome = ran.outcome;
      brief = ran.brief;
      log("browser-lab.participant.ended", `${pid}: ${outcome.status}/${outcome.completionReason}: ${outcome.reason}`);
    },
    async check() {
      const declared = o.actor.tasks ?? [];
      if (!declared.length) return;
      hooks.progress("check", `${declared.length} hidden check(s)`);
      tasks = checkTasks(declared, pid, outcome, origin);
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
    snapshot(): SeatEvidence<E2BSeatFacts> {
      if (!evidence) throw new Error(`seat ${pid}: snapshot before finalize`);
      return evidence;
    },
  };

  function seatFailure(writeErrors: string[]): StudyError | undefined {
    const bad = cleanup.filter((c) => c.outcome === "unconfirmed");
    if (bad.length)
      return {
        code: "HUMANISH_BROWSER_LAB_CLEANUP_UNPROVEN",
        message: `an E2B desktop release was not confirmed: ${bad.map((c) => `${c.id} ${c.reason}`).join("; ")}`,
        next: `kill it by id in the E2B dashboard or with the e2b CLI (e2b sandbox kill ${bad.map((c) => c.id).join(" ")}); it also ends when its timeout passes`,
      };
    if (outcome?.harnessError)
      return {
        code: outcome.harnessError.code,
        message: redact(outcome.harnessError.message),
        next: "read the actor trace in the run directory; rerun the study",
      };
    if (writeErrors.length)
      return {
        code: "HUMANISH_BUNDLE_WRITE_FAILED",
        message: `evidence could not be written completely: ${writeErrors.join("; ")}`,
        next: "check free disk space and permissions of .humanish/runs",
      };
    return failedWith;
  }

  async function writeEvidence(): Promise<SeatEvidence<E2BSeatFacts>> {
    const writeErrors: string[] = [];
    const declared = o.actor.tasks ?? [];
    if (!tasks.length)
      tasks = declared.map((t) => ({
        id: t.id,
        goal: t.goal,
        participantId: pid,
        status: "not_run" as const,
        passed: false,
        detail: interrupted ? "not checked: interrupted" : failedWith ? `not checked: ${failedWith.code}` : "not checked",
      }));
    const geometry: DesktopGeometry = {
      preset: device.name,
      screen: {
        requested: { width: device.preset.width, height: device.preset.height },
        ...(desktop ? { verified: { width: screen.width, height: screen.height }, source: "e2b-xvfb+admitted-frame" } : {}),
      },
      ...(desktop ? { browserWindow: { width: screen.width, height: screen.height, source: "chromium --window-size" } } : {}),
      warnings: screen.floored ? [`screen width floored from ${device.preset.width} to ${screen.width} px (Chromium's minimum window width)`] : [],
    };
    const out = outcome;
    const allPassed = tasks.length > 0 && tasks.every((t) => t.passed);
    const status: ActorTrace["status"] = !out ? "failed" : out.status === "passed" ? (tasks.length === 0 || allPassed ? "passed" : "incomplete") : out.status;
    const completionReason: ActorTrace["completionReason"] = !out
      ? interrupted
        ? "interrupted"
        : "harness_error"
      : out.status === "passed"
        ? status === "passed"
          ? "goal_satisfied"
          : "turn_completed"
        : out.completionReason;
    const tracePath = out ? await writeTrace(out, status, completionReason, writeErrors) : null;
    const participant: RunParticipant = {
      id: pid,
      actorType: o.actor.type,
      label: `${o.actor.type} (${device.name})`,
      status,
      completionReason,
      reason: redact(
        !out
          ? failedWith
            ? `${failedWith.code}: ${failedWith.message}`
            : interrupted
              ? "interrupted before the participant ran"
              : "the participant did not run"
          : status === "incomplete" && out.status === "passed"
            ? "the participant finished but a hidden check failed"
            : out.reason,
      ),
      trace: tracePath,
      ...(out ? { startedAt: out.startedAt, completedAt: out.completedAt, durationMs: out.durationMs } : {}),
      desktopGeometry: geometry,
      ...(seat.persona ? { persona: seat.persona } : {}),
      device: device.name,
    };
    const model = out ? await writeModelLedger(out, writeErrors) : undefined;
    const failure = seatFailure(writeErrors);
    return {
      participant,
      tasks,
      cleanup,
      costLines: [
        ...(model?.costLines ?? []),
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
      folder: participant.trace !== null ? paths.folder : null,
      usd: model?.ledger.usd ?? 0,
      jobs: 0,
      lane: { device: device.name, width: screen.width, height: screen.height, startMs: desktop?.startMs ?? null },
    };
  }

  async function writeModelLedger(out: ComputerUseOutcome, writeErrors: string[]) {
    const m = computerUseLedger(out, {
      participantId: pid,
      endpointHost: o.computerUse.endpoint.host,
      caps: o.caps,
      today: new Date().toISOString().slice(0, 10),
    });
    try {
      await writer.writeJson(paths.ledger, m.ledger, { kind: "model-ledger" });
    } catch (e) {
      writeErrors.push(`${paths.ledger}: ${e instanceof Error ? e.message : String(e)}`);
    }
    return m;
  }

  async function writeTrace(
    out: ComputerUseOutcome,
    status: ActorTrace["status"],
    completionReason: ActorTrace["completionReason"],
    writeErrors: string[],
  ): Promise<string | null> {
    const shotPaths = new Map<string, string>();
    for (const shot of out.screenshots) {
      const path = paths.shot(shot.name);
      try {
        await writer.writeArtifact(path, shot.png, { kind: "screenshot" });
        shotPaths.set(shot.name, path);
      } catch (e) {
        writeErrors.push(`${path}: ${e instanceof Error ? e.message : String(e)}`);
      }
    }
    const trace: ActorTrace = {
      ...computerUseTrace(out, {
        participantId: pid,
        model: o.computerUse.model,
        personaId: seat.persona ?? o.actor.persona ?? DEFAULT_COMPUTER_USE_PERSONA,
        promptDigest: briefDigest(brief ?? ""),
        sessionId: sandboxId ?? "none",
        shotPaths,
        redact,
      }),
      status,
      completionReason,
    };
    try {
      await writer.writeJson(paths.trace, trace, { kind: "actor-trace" });
      return paths.trace;
    } catch (e) {
      writeErrors.push(`${paths.trace}: ${e instanceof Error ? e.message : String(e)}`);
      return null;
    }
  }
}

/**
 * The `local` guest lane: each seat gets its own Docker guest desktop (real Chromium under its
 * own sandbox, browser control over a socket) and a browser participant on it: the scripted
 * one, the OpenAI computer-use loop (its key stays in this host process), or a local agent (the
 * operator's signed-in Codex CLI in a restricted app-server session on this host).
 *
 *   prepare      allocate the guest (the exact id is appended, fsync, to sandbox-receipts.ndjson before it is provisioned)
 *   openSession  the participant gets the guest's browser-control executor
 *   participate  the scripted steps or the computer-use loop, within the session budget
 *   check        hidden task checks on the participant's observations
 *   finalize     release by exact id (always), then the seat's screenshots and trace
 *
 * Study-level pieces (serving the app, the guest image) are the route's; this lane only sees one
 * seat at a time.
 */

import { DEFAULT_LOCAL_AGENT_PERSONA, type LocalAgentOutcome, localAgentBrief, runLocalAgentSeat } from "../../actors/codex-account/participant.ts";
import { localAgentCostLine, localAgentTrace } from "../../actors/codex-account/participant-trace.ts";
import type { CodexAccountSession } from "../../actors/codex-account/types.ts";
import { briefDigest, type ComputerUseOutcome, type ComputerUseReadiness, DEFAULT_COMPUTER_USE_PERSONA } from "../../actors/computer-use/index.ts";
import { runScriptedBrowser, type ScriptedBrowserOutcome } from "../../actors/scripted-browser/index.ts";
import type { ActorTrace, CleanupProof, RunParticipant, TaskResult, TraceItem } from "../../bundle/schemas.ts";
import type { RunWriter } from "../../bundle/writer.ts";
import type { DockerClient } from "../../docker/index.ts";
import type { ComputerUseActor, DeviceName, DevicePreset, LocalAgentActor, ScriptedBrowserActor } from "../../lab/schema.ts";
import type { SpendBudget } from "../../models/index.ts";
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
  runBrowserComputerUse,
  type SeatVerdict,
  studySpendBudget,
  uncheckedTasks,
  writeComputerUseLedger,
  writeComputerUseSeatTrace,
  writeSeatJson,
  writeSeatShots,
} from "../../study/browser-seat.ts";
import { evidenceSummary, type SeatEvidence, type StudyError } from "../../study/evidence.ts";
import type { Lane, SeatHooks, SeatRelease, SeatSpec } from "../../study/types.ts";

/** The lane's own facts of one seat (for the study's desktop ledger). */
export type GuestSeatFacts = BrowserSeatFacts;

export interface LocalGuestLaneOptions {
  docker: DockerClient;
  image: GuestImage;
  writer: RunWriter;
  runId: string;
  /** Project directory (labels the guest for the orphan sweep). */
  cwd: string;
  actor: ScriptedBrowserActor | ComputerUseActor | LocalAgentActor;
  /** For an `openai-computer-use` actor: what its live preflight resolved (model, endpoint, key). */
  computerUse?: ComputerUseReadiness;
  /** For a `local-agent` actor: starts one restricted account session for a seat (closed by the lane). */
  localAgent?: { startSession: (signal: AbortSignal) => Promise<CodexAccountSession> };
  /** `scenario.caps` the computer-use loop enforces before every request (USD; null = unset). */
  caps?: { maxUsd: number | null; maxTotalUsd: number | null };
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

/** What a browser participant returns (the computer-use outcome adds its requests and spend). */
type BrowserOutcome = ScriptedBrowserOutcome | ComputerUseOutcome | LocalAgentOutcome;

/** The local guest lane over one study's served app and guest image. */
export function localGuestLane(o: LocalGuestLaneOptions): Lane<SeatEvidence<GuestSeatFacts>> {
  const studyBudget = studySpendBudget(o.caps);
  return {
    name: "local-guest",
    spentUsd: (facts) => facts.usd,
    jobs: () => 0,
    summary: evidenceSummary,
    session: (seat, hooks) => guestSeat(o, seat, hooks, studyBudget),
  };
}

function guestSeat(o: LocalGuestLaneOptions, seat: SeatSpec, hooks: SeatHooks, studyBudget: SpendBudget | undefined) {
  const writer = o.writer;
  const { pid, redact, log, device, screen, paths, lifecycle } = browserSeatBasics(writer, seat, o.devices, o.seatCount);
  let containerId: string | undefined;
  let desktop: LocalDesktop | undefined;
  let outcome: BrowserOutcome | undefined;
  let brief: string | undefined;
  let tasks: TaskResult[] = [];
  let proof: ReleaseProof | undefined;
  let failedWith: StudyError | undefined;
  let interrupted = false;
  const cleanup: CleanupProof[] = [];
  let evidence: SeatEvidence<GuestSeatFacts> | undefined;
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
      hooks.progress(
        "participate",
        o.actor.type === "scripted-browser"
          ? `${o.actor.steps.length} step(s)`
          : o.actor.type === "local-agent"
            ? "local agent codex (signed-in account)"
            : `computer-use model ${o.computerUse?.model ?? "(unresolved)"}`,
      );
    },
    async participate() {
      if (!desktop) return;
      if (o.actor.type === "openai-computer-use") {
        await participateComputerUse(o.actor, desktop);
        return;
      }
      if (o.actor.type === "local-agent") {
        await participateLocalAgent(o.actor, desktop);
        return;
      }
      const actor = o.actor;
      const deadline = AbortSignal.timeout(o.sessionMs);
      outcome = await runScriptedBrowser({
        executor: desktop.executor,
        steps: actor.steps,
        origin: o.appUrl.origin,
        width: screen.width,
        height: screen.height,
        signal: AbortSignal.any([hooks.signal, deadline]),
        onStep: (i, step) => hooks.progress("participate", `step ${i + 1}/${actor.steps.length}: ${step.kind}`),
        onScreenshot: (shot) => live.keep(shot),
      });
      if (deadline.aborted && outcome.completionReason === "interrupted" && !hooks.signal.aborted) {
        outcome = { ...outcome, status: "timed_out", completionReason: "timed_out", reason: `session budget of ${o.sessionMs} ms ran out` };
      }
      log("browser-lab.participant.ended", `${pid}: ${outcome.status}/${outcome.completionReason}: ${outcome.reason}`);
    },
    async check() {
      const declaredTasks = o.actor.tasks ?? [];
      if (!declaredTasks.length) return;
      hooks.progress("check", `${declaredTasks.length} hidden check(s)`);
      tasks = checkBrowserTasks(declaredTasks, pid, outcome, o.appUrl.origin);
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
    snapshot(): SeatEvidence<GuestSeatFacts> {
      if (!evidence) throw new Error(`seat ${pid}: snapshot before finalize`);
      return evidence;
    },
  };

  /** The computer-use loop on this seat's desktop; its key and endpoint came from the live preflight. */
  async function participateComputerUse(actor: ComputerUseActor, d: LocalDesktop): Promise<void> {
    if (!o.computerUse) throw new Error("openai-computer-use seat without a live preflight");
    const ran = await runBrowserComputerUse({
      executor: d.executor,
      actor,
      seat,
      readiness: o.computerUse,
      origin: o.appUrl.origin,
      sessionMs: o.sessionMs,
      caps: o.caps,
      studyBudget,
      redact,
      hooks,
    });
    outcome = ran.outcome;
    brief = ran.brief;
    log("browser-lab.participant.ended", `${pid}: ${outcome.status}/${outcome.completionReason}: ${outcome.reason}`);
  }

  /**
   * The local agent on this seat's desktop, in its own restricted account session: started here,
   * closed here whatever happened, and its release recorded beside the desktop's.
   */
  async function participateLocalAgent(actor: LocalAgentActor, d: LocalDesktop): Promise<void> {
    if (!o.localAgent) throw new Error("local-agent seat without an account session");
    brief = localAgentBrief(actor, { ...(seat.persona ? { persona: seat.persona } : {}), ...(seat.instruction ? { instruction: seat.instruction } : {}) });
    const session = await o.localAgent.startSession(hooks.signal);
    log(
      "browser-lab.account.ready",
      `${pid}: ${session.identity.transport} ${session.identity.cliVersion}, ${session.identity.authClass}, model ${session.identity.model} (${session.identity.effort}), billing ${session.identity.billing}`,
    );
    try {
      outcome = await runLocalAgentSeat({
        session,
        executor: d.executor,
        instructions: brief,
        origin: o.appUrl.origin,
        ...(actor.tasks ? { tasks: actor.tasks } : {}),
        timeoutMs: o.sessionMs,
        scrubText: redact,
        signal: hooks.signal,
        onTurn: (turn, note) => hooks.progress("participate", `turn ${turn}: ${note}`),
      });
      log("browser-lab.participant.ended", `${pid}: ${outcome.status}/${outcome.completionReason}: ${outcome.reason}`);
    } finally {
      const rel = await session.close();
      cleanup.push({
        id: `codex-app-server-${pid}`,
        provider: "host",
        kind: "app-server",
        participantId: pid,
        outcome: rel.outcome,
        reason: redact(`${rel.reason}${rel.warning ? ` (${rel.warning})` : ""}${rel.keptDir ? `; private directory kept: ${rel.keptDir}` : ""}`),
        at: new Date().toISOString(),
      });
      log(
        rel.outcome === "released" ? "browser-lab.account.released" : "browser-lab.account.unconfirmed",
        `${pid}: account session ${rel.outcome} (${rel.reason})`,
      );
    }
  }

  async function writeEvidence(): Promise<SeatEvidence<GuestSeatFacts>> {
    const writeErrors: string[] = [];
    const end = { interrupted, failedWith };
    if (!tasks.length) tasks = uncheckedTasks(o.actor.tasks ?? [], pid, end);
    // The participant's status folds in the hidden checks (all steps ran but a check failed →
    // incomplete); its trace records the same status, which `verify` cross-checks.
    const out = outcome;
    const verdict = browserSeatVerdict(out, tasks, end, "all steps ran but a hidden check failed", browserStopWhen(o.actor, o.appUrl.origin));
    const tracePath = out ? await writeTrace(out, verdict, writeErrors) : null;
    const participant: RunParticipant = {
      id: pid,
      actorType: o.actor.type,
      label: `${o.actor.type} (${device.name})`,
      status: verdict.status,
      completionReason: verdict.completionReason,
      reason: redact(verdict.reason),
      claimed: verdict.claimed,
      goalCheck: { ...verdict.goalCheck, detail: redact(verdict.goalCheck.detail) },
      trace: tracePath,
      ...(out ? { startedAt: out.startedAt, completedAt: out.completedAt, durationMs: out.durationMs } : {}),
      desktopGeometry: browserSeatGeometry(device, screen, desktop !== undefined, "xvfb+admitted-frame"),
      ...(seat.persona ? { persona: seat.persona } : {}),
      device: device.name,
    };
    // Docker guests are never retained: anything short of `released` (the account session's too) fails the seat.
    const failure = browserSeatFailure({
      unproven: cleanup.filter((c) => c.outcome !== "released"),
      unprovenText: { what: "a desktop release", next: (ids) => `remove it by id: docker rm -f ${ids}` },
      harnessError: out?.harnessError,
      writeErrors,
      failedWith,
      redact,
    });
    const model =
      out && "requests" in out
        ? await writeComputerUseLedger(
            writer,
            out,
            {
              pid,
              endpointHost: o.computerUse?.endpoint.host ?? "unresolved",
              caps: o.caps ?? { maxUsd: null, maxTotalUsd: null },
              path: paths.ledger,
            },
            writeErrors,
          )
        : undefined;
    return {
      participant,
      tasks,
      cleanup,
      costLines: model?.costLines ?? (out && "identity" in out ? [localAgentCostLine(out, pid)] : []),
      lifecycle,
      ...(failure ? { failure } : {}),
      // The seat folder holds its trace; a seat stopped before its participant ran has none.
      folder: participant.trace !== null ? paths.folder : null,
      usd: model?.ledger.usd ?? 0,
      jobs: 0,
      lane: { device: device.name, width: screen.width, height: screen.height, startMs: desktop?.startMs ?? null },
    };
  }

  /** The local agent's screenshots and trace, with the seat's verdict. */
  async function writeLocalAgentTrace(out: LocalAgentOutcome, verdict: SeatVerdict, writeErrors: string[]): Promise<string | null> {
    const shotPaths = await writeSeatShots(writer, out.screenshots, paths.shot, writeErrors);
    const a = o.actor as LocalAgentActor;
    const trace: ActorTrace = {
      ...localAgentTrace(out, {
        participantId: pid,
        model: out.identity.model,
        personaId: seat.persona ?? a.persona ?? DEFAULT_LOCAL_AGENT_PERSONA,
        promptDigest: briefDigest(brief ?? ""),
        sessionId: desktop?.identity.generation ?? "none",
        shotPaths,
        redact,
      }),
      // The lane's status folds in the hidden checks, exactly as the participant record does.
      status: verdict.status,
      completionReason: verdict.completionReason,
    };
    return writeSeatJson(writer, paths.trace, trace, "actor-trace", writeErrors);
  }

  async function writeTrace(out: BrowserOutcome, verdict: SeatVerdict, writeErrors: string[]): Promise<string | null> {
    if ("requests" in out) {
      const a = o.actor as ComputerUseActor;
      return writeComputerUseSeatTrace(
        writer,
        out,
        {
          pid,
          model: o.computerUse?.model ?? a.model ?? "unresolved",
          personaId: seat.persona ?? a.persona ?? DEFAULT_COMPUTER_USE_PERSONA,
          brief,
          sessionId: desktop?.identity.generation ?? "none",
          verdict,
          paths,
          redact,
        },
        writeErrors,
      );
    }
    if ("identity" in out) return writeLocalAgentTrace(out, verdict, writeErrors);
    const items: TraceItem[] = [];
    await live.settle();
    const shotPaths = await writeSeatShots(writer, out.screenshots, paths.shot, writeErrors, live.written);
    let shotIndex = 0;
    for (const it of out.items) {
      if (it.kind === "screenshot") {
        const shot = out.screenshots[shotIndex++];
        const path = shot ? shotPaths.get(shot.name) : undefined;
        items.push(path ? { ...it, screenshotRef: { path, redaction: "none" } } : it);
      } else items.push(it);
    }
    const final = out.screenshots.at(-1);
    if (final?.name.endsWith("-final") && shotPaths.has(final.name)) {
      items.push({
        id: `screenshot-${String(items.length + 1).padStart(3, "0")}`,
        kind: "screenshot",
        lifecycle: "completed",
        title: "final frame",
        at: final.at,
        screenshotRef: { path: shotPaths.get(final.name)!, redaction: "none" },
      });
    }
    const a = o.actor;
    const trace: ActorTrace = {
      schema: "humanish.actor-trace.v1",
      participantId: pid,
      actorType: "scripted-browser",
      provider: "humanish",
      protocol: "scripted-steps",
      lane: "scripted-browser",
      persona: { id: seat.persona ?? a.persona ?? "scripted-first-time-user", traitsApplied: [], promptDigest: "000000000000" },
      redaction: {
        status: "passed",
        screenshots: "raw",
        notes: "screenshots are raw frames of the guest screen (browser chrome included); typed text is recorded as a length only",
      },
      startedAt: out.startedAt,
      completedAt: out.completedAt,
      durationMs: out.durationMs,
      status: verdict.status,
      completionReason: verdict.completionReason,
      reason: redact(out.reason),
      ids: { sessionId: desktop?.identity.generation ?? "none" },
      counts: {
        steps: a.type === "scripted-browser" ? a.steps.length : 0,
        ui_actions: items.filter((i) => i.kind === "ui_action").length,
        screenshots: out.screenshots.length,
        observations: out.observations.length,
      },
      items,
    };
    return writeSeatJson(writer, paths.trace, trace, "actor-trace", writeErrors);
  }
}

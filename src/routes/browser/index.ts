/**
 * The browser route (issue 4 §6–§7; ARCHITECTURE.md "Data flow"): `subject.source: app-url`
 * (loopback only), `execution.target: local`, actor `scripted-browser`.
 *
 * Live: serve the app on loopback → ensure the guest image → per device preset (1 = desktop,
 * 2 = desktop + mobile) allocate a guest desktop (id recorded before provisioning), run the
 * scripted participant over browser control, evaluate the hidden task checks on its
 * observations, release the desktop by exact id → write the bundle (admitted screenshots,
 * `ui_action` trace, desktop geometry, cleanup proof) → verify. Dry run: a contract-only bundle
 * with no engine, browser or network.
 */

import { evaluateCheck, runScriptedBrowser, type ScriptedBrowserOutcome } from "../../actors/scripted-browser/index.ts";
import type {
  ActorTrace,
  CleanupProof,
  CostLine,
  DesktopGeometry,
  LifecycleEvent,
  RunOutcome,
  RunParticipant,
  TaskResult,
  TraceItem,
} from "../../bundle/index.ts";
import { createRunWriter, deriveReview, type RunWriter, stakeholderLine, summarizeCost, verifyRun } from "../../bundle/index.ts";
import { createDockerClient, type DockerClient } from "../../docker/index.ts";
import { HumanishError, isHumanishError } from "../../errors.ts";
import { embeddedRootName } from "../../lab/embedded-apps.ts";
import { labDevices } from "../../lab/routing.ts";
import type { BrowserLabConfig, BrowserTask, LabConfig, ScriptedBrowserActor } from "../../lab/schema.ts";
import { allocateDesktop, type LocalDesktop } from "../../runtime/desktop.ts";
import { ensureGuestImage, type GuestImage } from "../../runtime/guest-image.ts";
import { guestScreen } from "../../runtime/presets.ts";
import { PROJECT_LABEL } from "../../sandbox/controller.ts";
import { releaseContainer } from "../../sandbox/release.ts";
import type { ReleaseProof } from "../../sandbox/types.ts";
import { studySecrets } from "../../secrets/index.ts";
import type { ProgressEvent, StudyContext, StudyResult } from "../types.ts";
import { type AppServer, startApp } from "./serve.ts";

/** Default wall-clock budget of one participant session when the lab sets none, ms. */
export const DEFAULT_SESSION_MS = 10 * 60_000;

/** Dependencies a test may inject (the real engine by default). */
export interface BrowserStudyDeps {
  docker?: DockerClient;
  /** Extra labels on guest containers (tests). */
  labels?: Record<string, string>;
  /** Called with each guest container id as soon as it exists (tests, benchmarks). */
  onDesktopCreated?: (participantId: string, containerId: string) => void;
}

function isoDate(): string {
  return new Date().toISOString().slice(0, 10);
}

function refuse(code: string, message: string, next: string): never {
  throw new HumanishError(code, message, { next });
}

/** Preflight checks that need no engine: route, actor, target, loopback URL. */
function planBrowserStudy(lab: LabConfig): { lab: BrowserLabConfig; actor: ScriptedBrowserActor; appUrl: URL } {
  if (lab.subject.source !== "app-url") {
    refuse(
      "HUMANISH_BROWSER_LAB_SUBJECT_INVALID",
      `lab ${lab.id} is not an app-url study (subject.source ${lab.subject.source})`,
      "run it through its own route, or set subject.source: app-url",
    );
  }
  const b = lab as BrowserLabConfig;
  const actor = b.actors[0];
  if (actor.type !== "scripted-browser") {
    refuse(
      "HUMANISH_BROWSER_ACTOR_UNSUPPORTED",
      `actors[0].type ${actor.type} is not runnable on the local browser route yet`,
      "use type: scripted-browser for local studies",
    );
  }
  if (b.execution.target !== "local") {
    refuse(
      "HUMANISH_BROWSER_TARGET_UNSUPPORTED",
      `execution.target ${b.execution.target} is not supported by the local browser route`,
      "use execution.target: local",
    );
  }
  const appUrl = new URL(b.subject.appUrl);
  if (!(appUrl.protocol === "http:" && (appUrl.hostname === "127.0.0.1" || appUrl.hostname === "localhost") && Number(appUrl.port) >= 1024)) {
    refuse(
      "HUMANISH_BROWSER_APP_URL_INVALID",
      `subject.appUrl ${b.subject.appUrl} must be http://127.0.0.1:<port ≥ 1024>/…`,
      "serve the app on a loopback port above 1023",
    );
  }
  return { lab: b, actor: actor as ScriptedBrowserActor, appUrl };
}

/**
 * Run one browser study and return the result the CLI prints (`humanish.browser-lab-result.v1`).
 * @throws HumanishError for preflight failures before any run directory exists:
 *   `HUMANISH_BROWSER_*` (route/actor/target/URL), `HUMANISH_RUN_ID_IN_USE`.
 */
export async function runBrowserStudy(ctx: StudyContext<LabConfig>, deps: BrowserStudyDeps = {}): Promise<StudyResult> {
  const plan = planBrowserStudy(ctx.lab);
  ctx.progress({ participant: "p1", phase: "preflight" });
  if (ctx.mode === "dry-run") return runDryRun(ctx as StudyContext<BrowserLabConfig>, plan);
  return runLive(ctx as StudyContext<BrowserLabConfig>, plan, deps);
}

function labRef(ctx: StudyContext<BrowserLabConfig>) {
  const lab = ctx.lab;
  return { id: lab.id, ...(lab.title ? { title: lab.title } : {}), source: ctx.labSource };
}

function capsOf(lab: BrowserLabConfig) {
  const c = lab.scenario.caps;
  return { maxUsd: c?.maxUsd ?? null, maxJobs: c?.maxJobs ?? null, maxMinutes: c?.maxMinutes ?? null };
}

async function runDryRun(ctx: StudyContext<BrowserLabConfig>, plan: ReturnType<typeof planBrowserStudy>): Promise<StudyResult> {
  const { lab, actor } = plan;
  const writer = createRunWriter({ cwd: ctx.cwd, runId: ctx.runId, secrets: studySecrets(ctx), route: "browser", mode: "dry-run", lab: lab.id });
  const createdAt = new Date().toISOString();
  const devices = labDevices(lab);
  const lifecycle: LifecycleEvent[] = [];
  const add = (event: string, message: string) => lifecycle.push({ at: new Date().toISOString(), event, message: writer.redactor.text(message) });
  add("browser-lab.run.created", `dry run ${ctx.runId}: lab ${lab.id}, actor scripted-browser, target local; nothing is started, served or spent`);
  add(
    "browser-lab.subject.declared",
    `app ${plan.appUrl.origin} (loopback); serve ${lab.subject.serve?.static ? `static ${embeddedRootName(lab.subject.serve.static.root) !== undefined ? lab.subject.serve.static.root : "(project directory)"}` : lab.subject.serve?.command ? "command" : "external"}`,
  );
  add("browser-lab.devices.declared", devices.map((d) => `${d.name} ${d.preset.width}x${d.preset.height}`).join(", "));
  add(
    "browser-lab.contract.ready",
    `${actor.steps.length} step(s), ${(actor.tasks ?? []).length} task(s) with hidden checks; a live run needs --live (or scenario.mode: live)`,
  );
  const participants: RunParticipant[] = devices.map((d, i) => ({
    id: `p${i + 1}`,
    actorType: "scripted-browser",
    label: `scripted-browser (${d.name})`,
    status: "contract_proof_only",
    completionReason: null,
    reason: "dry run: contract only",
    trace: null,
  }));
  const tasks: TaskResult[] = participants.flatMap((p) =>
    (actor.tasks ?? []).map((t) => ({
      id: t.id,
      goal: t.goal,
      participantId: p.id,
      status: "not_run" as const,
      passed: false,
      detail: "dry run: not checked",
    })),
  );
  const bundle = await writer.finalize({
    route: "browser",
    mode: "dry-run",
    target: "local",
    createdAt,
    lab: labRef(ctx),
    subject: { source: "app-url", appUrl: `${plan.appUrl.origin}/`, provenance: "declared-not-run" },
    outcome: { state: "completed" },
    lifecycle,
    participants,
    tasks,
    caps: capsOf(lab),
    warnings: ctx.labWarnings,
    redactionNotes: "dry run: no participant output exists",
  });
  const verify = await verifyRun(writer.runDir);
  ctx.progress({ participant: "p1", phase: "done", detail: verify.ok ? "verified" : "verify failed", tasksPassed: 0, tasksTotal: tasks.length });
  return {
    ok: verify.ok,
    runId: ctx.runId,
    runDir: writer.runDir,
    route: "browser",
    mode: "dry-run",
    verdict: bundle.review.summary,
    participants: participants.map((p) => ({ id: p.id, status: p.status, completionReason: "none" })),
    tasks: tasks.map((t) => ({ id: t.id, goal: t.goal, passed: false, status: t.status, ...(t.detail ? { detail: t.detail } : {}) })),
    reward: tasks.length ? 0 : null,
    verify: { ok: verify.ok, shareSafety: verify.shareSafety.status },
    verification: verify,
    warnings: ctx.labWarnings.map((w) => ({ code: w.code, message: w.message })),
    ...(verify.ok
      ? {}
      : {
          error: {
            code: "HUMANISH_VERIFY_FAILED",
            message: verify.checks
              .filter((c) => !c.ok)
              .map((c) => `${c.name}: ${c.message}`)
              .join("; "),
            next: `humanish verify --run ${ctx.runId}`,
          },
        }),
  };
}

/** One participant's session on one device. */
interface Session {
  participantId: string;
  device: string;
  declared: { width: number; height: number };
  screen: { width: number; height: number; floored: boolean };
  containerId?: string;
  desktop?: LocalDesktop;
  outcome?: ScriptedBrowserOutcome;
  tasks: TaskResult[];
  proof?: ReleaseProof;
  startMs?: number;
}

function checkTasks(tasks: readonly BrowserTask[], s: Session, origin: string): TaskResult[] {
  const obs = s.outcome?.observations ?? [];
  return tasks.map((t) => {
    if (!s.outcome || obs.length === 0)
      return { id: t.id, goal: t.goal, participantId: s.participantId, status: "not_run" as const, passed: false, detail: "no observation was made" };
    const hit = evaluateCheck(t.check, obs, origin);
    return hit >= 0
      ? {
          id: t.id,
          goal: t.goal,
          participantId: s.participantId,
          status: "passed" as const,
          passed: true,
          detail: `observation ${hit + 1} of ${obs.length} satisfies the check`,
        }
      : {
          id: t.id,
          goal: t.goal,
          participantId: s.participantId,
          status: "failed" as const,
          passed: false,
          detail: `none of ${obs.length} observation(s) of ${origin} satisfies the check`,
        };
  });
}

async function runLive(ctx: StudyContext<BrowserLabConfig>, plan: ReturnType<typeof planBrowserStudy>, deps: BrowserStudyDeps): Promise<StudyResult> {
  const { lab, actor, appUrl } = plan;
  const docker = deps.docker ?? createDockerClient({ ...(ctx.env.DOCKER_HOST ? { socketPath: ctx.env.DOCKER_HOST.replace(/^unix:\/\//, "") } : {}) });
  const secrets = studySecrets(ctx);
  const writer: RunWriter = createRunWriter({ cwd: ctx.cwd, runId: ctx.runId, secrets, route: "browser", mode: "live", lab: lab.id });
  const redact = (s: string) => writer.redactor.text(s);
  const createdAt = new Date().toISOString();
  const lifecycle: LifecycleEvent[] = [];
  const log = (event: string, message: string) => lifecycle.push({ at: new Date().toISOString(), event, message: redact(message) });
  const progress = (e: ProgressEvent) => {
    try {
      ctx.progress(e);
    } catch {
      /* a broken progress sink never stops a study */
    }
  };
  const caps = capsOf(lab);
  const sessionMs = lab.execution.timeoutMs ?? (caps.maxMinutes && caps.maxMinutes > 0 ? caps.maxMinutes * 60_000 : DEFAULT_SESSION_MS);
  const sessions: Session[] = labDevices(lab).map((d, i) => ({
    participantId: `p${i + 1}`,
    device: d.name,
    declared: { width: d.preset.width, height: d.preset.height },
    screen: guestScreen(d.preset),
    tasks: [],
  }));
  log(
    "browser-lab.run.created",
    `run ${ctx.runId}: lab ${lab.id}, actor scripted-browser, target local, ${sessions.length} participant(s) (${sessions.map((s) => s.device).join(" + ")})`,
  );
  let app: AppServer | undefined;
  let image: GuestImage | undefined;
  let failure: HumanishError | undefined;
  const cleanup: CleanupProof[] = [];
  try {
    await writer.writeStatus({ phase: "provision", detail: "serving the app" });
    app = await startApp({ appUrl: appUrl.href, ...(lab.subject.serve ? { serve: lab.subject.serve } : {}), cwd: ctx.cwd, env: ctx.env, signal: ctx.signal });
    log("browser-lab.subject.served", `app ${appUrl.origin} answers (${app.kind}); reachable from the guest only through its forwarded socket`);
    if (app.embedded) {
      const e = app.embedded;
      log(
        "browser-lab.subject.embedded",
        `embedded app ${e.name} from ${e.package} ${e.dir}: ${e.files.length} file(s), ${e.bytes} bytes, sha256 ${e.sha256} (listed in served-app.json)`,
      );
      await writer.writeJson("served-app.json", { schema: "humanish.served-app.v1", source: "embedded", ...e }, { kind: "data" });
    }
    progress({ participant: "p1", phase: "preflight", detail: "guest image" });
    image = await ensureGuestImage(docker, {
      env: ctx.env,
      signal: ctx.signal,
      onProgress: (m) =>
        typeof m.stream === "string" &&
        m.stream.trim() &&
        progress({ participant: "p1", phase: "preflight", detail: `building guest image: ${m.stream.trim().slice(0, 120)}` }),
    });
    log(
      "browser-lab.runtime.ready",
      `guest image ${image.ref} (${image.origin}${image.built ? ", built by this run" : ""}), runtime revision ${image.runtimeRevision}`,
    );
    for (const s of sessions) {
      if (ctx.signal.aborted) break;
      const pid = s.participantId;
      try {
        progress({ participant: pid, phase: "allocate", detail: `${s.device} ${s.screen.width}x${s.screen.height}` });
        await writer.writeStatus({ phase: "allocate", detail: `${pid} ${s.device}` });
        s.desktop = await allocateDesktop({
          docker,
          image,
          runId: ctx.runId,
          participantId: pid,
          appPort: Number(appUrl.port),
          initialPath: "/",
          width: s.screen.width,
          height: s.screen.height,
          lifetimeMs: Math.min(30 * 60_000, sessionMs + 5 * 60_000),
          labels: { ...(deps.labels ?? {}), [PROJECT_LABEL]: ctx.cwd },
          signal: ctx.signal,
          onCreated: async (id) => {
            s.containerId = id;
            await writer.appendNdjson(
              "sandbox-receipts.ndjson",
              { at: new Date().toISOString(), participantId: pid, provider: "docker", id, kind: "desktop", timeoutMs: sessionMs },
              { kind: "sandbox-receipts", durable: true },
            );
            log("browser-lab.desktop.created", `docker guest ${id} for ${pid} (${s.device}); id recorded before provisioning`);
            deps.onDesktopCreated?.(pid, id);
          },
        });
        s.startMs = s.desktop.startMs;
        log("browser-lab.desktop.ready", `${pid}: browser control ready in ${Math.round(s.desktop.startMs)} ms (Chromium sandbox verified by the guest)`);
        progress({ participant: pid, phase: "participate", detail: `${actor.steps.length} step(s)` });
        await writer.writeStatus({ phase: "participate", detail: pid });
        const deadline = AbortSignal.timeout(sessionMs);
        s.outcome = await runScriptedBrowser({
          executor: s.desktop.executor,
          steps: actor.steps,
          origin: appUrl.origin,
          width: s.screen.width,
          height: s.screen.height,
          signal: AbortSignal.any([ctx.signal, deadline]),
          onStep: (i, step) => progress({ participant: pid, phase: "participate", detail: `step ${i + 1}/${actor.steps.length}: ${step.kind}` }),
        });
        if (deadline.aborted && s.outcome.completionReason === "interrupted" && !ctx.signal.aborted) {
          s.outcome = { ...s.outcome, status: "timed_out", completionReason: "timed_out", reason: `session budget of ${sessionMs} ms ran out` };
        }
        log("browser-lab.participant.ended", `${pid}: ${s.outcome.status}/${s.outcome.completionReason}: ${s.outcome.reason}`);
        const tasks = actor.tasks ?? [];
        if (tasks.length) {
          progress({ participant: pid, phase: "check", detail: `${tasks.length} hidden check(s)` });
          s.tasks = checkTasks(tasks, s, appUrl.origin);
          progress({ participant: pid, phase: "check", tasksPassed: s.tasks.filter((t) => t.passed).length, tasksTotal: tasks.length });
        }
      } finally {
        progress({ participant: pid, phase: "teardown", detail: s.containerId ? `releasing ${s.containerId.slice(0, 12)}` : "nothing to release" });
        if (s.desktop) s.proof = await s.desktop.release();
        else if (s.containerId) s.proof = await releaseContainer(docker, s.containerId);
        if (s.proof && s.proof.id !== "none") {
          cleanup.push({
            id: s.proof.id,
            provider: "docker",
            kind: "desktop",
            participantId: pid,
            outcome: s.proof.outcome,
            reason: s.proof.reason,
            at: s.proof.at,
          });
          log(
            s.proof.outcome === "released" ? "browser-lab.cleanup.verified" : "browser-lab.cleanup.unconfirmed",
            `docker guest ${s.proof.id}: ${s.proof.outcome} (${s.proof.reason})`,
          );
        }
      }
    }
  } catch (e) {
    if (!ctx.signal.aborted) {
      failure = isHumanishError(e)
        ? e
        : new HumanishError("HUMANISH_BROWSER_LAB_FAILED", `browser study failed: ${e instanceof Error ? e.message : String(e)}`, {
            next: "read the bundle's lifecycle and rerun",
            cause: e,
          });
      log("browser-lab.session.error", `${failure.code}: ${failure.message}`);
    }
  } finally {
    await app?.close().catch(() => undefined);
  }
  const interrupted = ctx.signal.aborted ? (ctx.signal.reason === "SIGTERM" ? "SIGTERM" : "SIGINT") : undefined;
  if (interrupted) log("browser-lab.interrupted", `${interrupted}: the participant was stopped, the desktop released`);
  if (!failure) {
    const harness = sessions.find((s) => s.outcome?.harnessError);
    if (harness)
      failure = new HumanishError(harness.outcome!.harnessError!.code, redact(harness.outcome!.harnessError!.message), {
        next: "read the actor trace in the run directory; rerun the study",
      });
  }
  if (cleanup.some((c) => c.outcome !== "released")) {
    failure = new HumanishError(
      "HUMANISH_BROWSER_LAB_CLEANUP_UNPROVEN",
      `a desktop release was not confirmed: ${cleanup
        .filter((c) => c.outcome !== "released")
        .map((c) => `${c.id} ${c.reason}`)
        .join("; ")}`,
      {
        next: `remove it by id: docker rm -f ${cleanup
          .filter((c) => c.outcome !== "released")
          .map((c) => c.id)
          .join(" ")}`,
      },
    );
  }

  // Evidence.
  await writer.writeStatus({ phase: "write" }).catch(() => undefined);
  const writeErrors: string[] = [];
  const participants: RunParticipant[] = [];
  const allTasks: TaskResult[] = [];
  for (const s of sessions) {
    const pid = s.participantId;
    const o = s.outcome;
    const tasksDeclared = actor.tasks ?? [];
    const tasks = s.tasks.length
      ? s.tasks
      : tasksDeclared.map((t) => ({
          id: t.id,
          goal: t.goal,
          participantId: pid,
          status: "not_run" as const,
          passed: false,
          detail: interrupted ? "not checked: interrupted" : failure ? `not checked: ${failure.code}` : "not checked",
        }));
    allTasks.push(...tasks);
    const geometry: DesktopGeometry = {
      preset: s.device,
      screen: { requested: s.declared, ...(s.desktop ? { verified: { width: s.screen.width, height: s.screen.height }, source: "xvfb+admitted-frame" } : {}) },
      ...(s.desktop ? { browserWindow: { width: s.screen.width, height: s.screen.height, source: "chromium --window-size" } } : {}),
      warnings: s.screen.floored ? [`screen width floored from ${s.declared.width} to ${s.screen.width} px (Chromium's minimum window width)`] : [],
    };
    // The participant's status folds in the hidden checks (all steps ran but a check failed →
    // incomplete); its trace records the same status, which `verify` cross-checks.
    const allPassed = tasks.length > 0 && tasks.every((t) => t.passed);
    const status: RunParticipant["status"] = !o ? "failed" : o.status === "passed" ? (tasks.length === 0 || allPassed ? "passed" : "incomplete") : o.status;
    const completionReason: RunParticipant["completionReason"] = !o
      ? interrupted
        ? "interrupted"
        : "harness_error"
      : o.status === "passed"
        ? status === "passed"
          ? "goal_satisfied"
          : "turn_completed"
        : o.completionReason;
    let tracePath: string | null = null;
    if (o) {
      const items: TraceItem[] = [];
      const shotPaths = new Map<string, string>();
      for (const shot of o.screenshots) {
        const path = `screenshots/${pid}-${shot.name}.png`;
        try {
          await writer.writeArtifact(path, shot.png, { kind: "screenshot" });
          shotPaths.set(shot.name, path);
        } catch (e) {
          writeErrors.push(`${path}: ${e instanceof Error ? e.message : String(e)}`);
        }
      }
      let shotIndex = 0;
      for (const it of o.items) {
        if (it.kind === "screenshot") {
          const shot = o.screenshots[shotIndex++];
          const path = shot ? shotPaths.get(shot.name) : undefined;
          items.push(path ? { ...it, screenshotRef: { path, redaction: "none" } } : it);
        } else items.push(it);
      }
      const final = o.screenshots.at(-1);
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
      const counts: Record<string, number> = {
        steps: actor.steps.length,
        ui_actions: items.filter((i) => i.kind === "ui_action").length,
        screenshots: o.screenshots.length,
        observations: o.observations.length,
      };
      const trace: ActorTrace = {
        schema: "humanish.actor-trace.v1",
        participantId: pid,
        actorType: "scripted-browser",
        provider: "humanish",
        protocol: "scripted-steps",
        lane: "scripted-browser",
        persona: { id: actor.persona ?? "scripted-first-time-user", traitsApplied: [], promptDigest: "000000000000" },
        redaction: {
          status: "passed",
          screenshots: "raw",
          notes: "screenshots are raw frames of the guest screen (browser chrome included); typed text is recorded as a length only",
        },
        startedAt: o.startedAt,
        completedAt: o.completedAt,
        durationMs: o.durationMs,
        status,
        completionReason,
        reason: redact(o.reason),
        ids: { sessionId: s.desktop?.identity.generation ?? "none" },
        counts,
        items,
      };
      tracePath = `actors/${pid}.json`;
      try {
        await writer.writeJson(tracePath, trace, { kind: "actor-trace" });
      } catch (e) {
        writeErrors.push(`${tracePath}: ${e instanceof Error ? e.message : String(e)}`);
        tracePath = null;
      }
    }
    participants.push({
      id: pid,
      actorType: "scripted-browser",
      label: `scripted-browser (${s.device})`,
      status,
      completionReason,
      reason: redact(
        !o
          ? failure
            ? `${failure.code}: ${failure.message}`
            : "the participant did not run"
          : status === "incomplete" && o.status === "passed"
            ? "all steps ran but a hidden check failed"
            : o.reason,
      ),
      trace: tracePath,
      ...(o ? { startedAt: o.startedAt, completedAt: o.completedAt, durationMs: o.durationMs } : {}),
      desktopGeometry: geometry,
    });
  }
  const cleanupDoc = {
    schema: "humanish.desktop-cleanup.v1",
    desktops: cleanup,
    geometry: sessions.map((s) => ({
      participantId: s.participantId,
      preset: s.device,
      width: s.screen.width,
      height: s.screen.height,
      startMs: s.startMs ?? null,
    })),
  };
  try {
    await writer.writeJson("desktop-ledgers.json", cleanupDoc, { kind: "data" });
  } catch (e) {
    writeErrors.push(`desktop-ledgers.json: ${e instanceof Error ? e.message : String(e)}`);
  }
  if (writeErrors.length && !failure) {
    failure = new HumanishError("HUMANISH_BUNDLE_WRITE_FAILED", `evidence could not be written completely: ${writeErrors.join("; ")}`, {
      next: "check free disk space and permissions of .humanish/runs",
    });
  }
  const outcome: RunOutcome = interrupted
    ? { state: "interrupted", interrupted }
    : failure
      ? { state: "failed", error: { code: failure.code, message: redact(failure.message), ...(failure.next ? { next: failure.next } : {}) } }
      : { state: "completed" };
  const today = isoDate();
  const costLines: CostLine[] = [
    {
      kind: "model-tokens",
      usd: 0,
      count: 0,
      basis: "no-spend-signal",
      ratesAsOf: today,
      source: "humanish: the scripted-browser participant calls no model",
      reason: null,
    },
    {
      kind: "desktop-minutes",
      usd: 0,
      count: null,
      basis: "no-spend-signal",
      ratesAsOf: today,
      source: "humanish: a local Docker guest desktop has no metered provider",
      reason: null,
    },
  ];
  const review = deriveReview({ mode: "live", outcome, participants, tasks: allTasks, gaps: ["the app's own spend is unmeasured"] });
  const bundle = await writer.finalize({
    route: "browser",
    mode: "live",
    target: "local",
    createdAt,
    lab: labRef(ctx),
    subject: { source: "app-url", appUrl: `${appUrl.origin}/`, provenance: "unpinned" },
    outcome,
    lifecycle,
    participants,
    tasks: allTasks,
    review,
    caps,
    cost: summarizeCost(costLines),
    cleanup,
    warnings: ctx.labWarnings,
    redactionNotes: `literal scrub of ${secrets.length} provisioned secret value(s), then secret and local-path shapes; typed text recorded as a length only`,
  });
  await writer.writeStatus({ phase: "verify" }).catch(() => undefined);
  const verify = await verifyRun(writer.runDir);
  const passed = allTasks.filter((t) => t.passed).length;
  progress({ participant: "p1", phase: "done", detail: verify.ok ? "verified" : "verify failed", tasksPassed: passed, tasksTotal: allTasks.length });
  let error = failure ? { code: failure.code, message: redact(failure.message), ...(failure.next ? { next: failure.next } : {}) } : undefined;
  if (!error && !verify.ok) {
    error = {
      code: "HUMANISH_VERIFY_FAILED",
      message: redact(
        verify.checks
          .filter((c) => !c.ok)
          .map((c) => `${c.name}: ${c.message}`)
          .join("; "),
      ),
      next: `humanish verify --run ${ctx.runId}`,
    };
  }
  return {
    ok: !error && !interrupted && verify.ok,
    runId: ctx.runId,
    runDir: writer.runDir,
    route: "browser",
    mode: "live",
    verdict: stakeholderLine(bundle.review),
    participants: participants.map((p) => ({ id: p.id, status: p.status, completionReason: p.completionReason ?? "none" })),
    tasks: allTasks.map((t) => ({ id: t.id, goal: t.goal, passed: t.passed, status: t.status, ...(t.detail ? { detail: t.detail } : {}) })),
    reward: allTasks.length ? passed / allTasks.length : null,
    verify: { ok: verify.ok, shareSafety: verify.shareSafety.status },
    verification: verify,
    warnings: ctx.labWarnings.map((w) => ({ code: w.code, message: w.message })),
    ...(error ? { error } : {}),
    ...(interrupted ? { interrupted } : {}),
  };
}

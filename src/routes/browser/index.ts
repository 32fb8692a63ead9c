/**
 * The browser route (ARCHITECTURE.md "Data flow"): `subject.source: app-url` (loopback only),
 * `execution.target: local`, any browser actor (chosen once by `actors/browser-participant`'s factory). The route is thin: lab → plan → the
 * study runner with the `local` guest lane (src/lanes/local-guest), then the shared tail.
 *
 * Live: serve the app on loopback → ensure the guest image → plan the seats (lanes' devices, or
 * `count`: 2 without lanes = desktop + mobile, every other seat desktop) and the concurrency
 * (the ledger's slots, each guest's memory limit) → the runner gives each seat its own guest
 * desktop (id recorded before provisioning), the participant, hidden checks and release by
 * exact id → write the bundle (each seat's admitted screenshots and `ui_action` trace, desktop
 * geometry, cleanup proofs, the study section) → verify. Dry run: the same seats through the
 * contract lane, with no engine, browser or network.
 */

import os from "node:os";
import { type BrowserParticipant, browserParticipant } from "../../actors/browser-participant/index.ts";
import { POLICY_BOUNDS } from "../../broker/index.ts";
import type { CostLine } from "../../bundle/index.ts";
import { createRunWriter, type RunWriter } from "../../bundle/index.ts";
import { type DockerClient, dockerClientFor } from "../../docker/index.ts";
import { embeddedRootName } from "../../lab/embedded-apps.ts";
import type { BrowserActor, BrowserLabConfig, LabConfig } from "../../lab/schema.ts";
import { localGuestLane } from "../../lanes/local-guest/index.ts";
import { GUEST_MEMORY_BYTES } from "../../runtime/desktop.ts";
import { ensureGuestImage, type GuestImage } from "../../runtime/guest-image.ts";
import { studySecrets } from "../../secrets/index.ts";
import { planStudyConcurrency } from "../../study/index.ts";
import type { StudyContext, StudyResult } from "../types.ts";
import { type E2BDesktopStudyDeps, runE2BDesktopStudy } from "./e2b-desktop.ts";
import { type AppServer, startApp } from "./serve.ts";
import { finishBrowserStudy, runBrowserDryRun, runBrowserSeats } from "./study-flow.ts";
import { capsOf, participantCaps, refuse, sessionMsOf, studyDevices, studyLog } from "./study-parts.ts";

/** Default wall-clock budget of one participant session when the lab sets none, ms. */
export { DEFAULT_SESSION_MS } from "./study-parts.ts";

/** Dependencies a test may inject (the real engine by default). */
export interface BrowserStudyDeps {
  docker?: DockerClient;
  /** Extra labels on guest containers (tests). */
  labels?: Record<string, string>;
  /** Called with each guest container id as soon as it exists (tests, benchmarks). */
  onDesktopCreated?: (participantId: string, containerId: string) => void;
  /** Memory the study may use, bytes (default: the kernel's available memory). */
  availableMemoryBytes?: number;
}

function isoDate(): string {
  return new Date().toISOString().slice(0, 10);
}

/** Preflight checks that need no engine: route, actor, target, loopback URL. */
function planBrowserStudy(lab: LabConfig): { lab: BrowserLabConfig; actor: BrowserActor; appUrl: URL } {
  if (lab.subject.source !== "app-url") {
    refuse(
      "HUMANISH_BROWSER_LAB_SUBJECT_INVALID",
      `lab ${lab.id} is not an app-url study (subject.source ${lab.subject.source})`,
      "run it through its own route, or set subject.source: app-url",
    );
  }
  const b = lab as BrowserLabConfig;
  const actor = b.actors[0];
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
  return { lab: b, actor, appUrl };
}

/**
 * Run one browser study and return the result the CLI prints (`humanish.browser-lab-result.v1`).
 * @throws HumanishError for preflight failures before any run directory exists:
 *   `HUMANISH_BROWSER_*` (route/actor/target/URL), `HUMANISH_RUN_ID_IN_USE`.
 */
export async function runBrowserStudy(ctx: StudyContext<LabConfig>, deps: BrowserStudyDeps & E2BDesktopStudyDeps = {}): Promise<StudyResult> {
  // An E2B desktop study has its own preflight (the app must be reachable from E2B) and lane.
  if (ctx.lab.subject.source === "app-url" && (ctx.lab as BrowserLabConfig).execution.target === "e2b-desktop") {
    ctx.progress({ participant: "p1", phase: "preflight" });
    return runE2BDesktopStudy(ctx as StudyContext<BrowserLabConfig>, deps);
  }
  const plan = planBrowserStudy(ctx.lab);
  ctx.progress({ participant: "p1", phase: "preflight" });
  if (ctx.mode === "dry-run") return runDryRun(ctx as StudyContext<BrowserLabConfig>, plan);
  return runLive(ctx as StudyContext<BrowserLabConfig>, plan, deps);
}

async function runDryRun(ctx: StudyContext<BrowserLabConfig>, plan: ReturnType<typeof planBrowserStudy>): Promise<StudyResult> {
  const { lab, actor } = plan;
  const writer = createRunWriter({ cwd: ctx.cwd, runId: ctx.runId, secrets: studySecrets(ctx), route: "browser", mode: "dry-run", lab: lab.id });
  const serve = lab.subject.serve;
  return runBrowserDryRun(ctx, writer, {
    target: "local",
    appOrigin: plan.appUrl.origin,
    notes: {
      created: `dry run ${ctx.runId}: lab ${lab.id}, actor ${actor.type}, target local; nothing is started, served or spent`,
      subject: `app ${plan.appUrl.origin} (loopback); serve ${serve?.static ? `static ${embeddedRootName(serve.static.root) !== undefined ? serve.static.root : "(project directory)"}` : serve?.command ? "command" : "external"}`,
      contract: `${browserParticipant(actor, participantCaps(lab)).describeDryRun()}, ${(actor.tasks ?? []).length} task(s) with hidden checks; a live run needs --live (or scenario.mode: live)`,
    },
    concurrency: (seats) => Math.min(seats, POLICY_BOUNDS.perStudy[1]),
  });
}

/**
 * Memory a machine can give a study, bytes: what the kernel says is available now (the guests'
 * own limits are the honest per-seat bound it is divided by).
 */
export function availableMemoryBytes(): number {
  return os.freemem();
}

/**
 * The study-level preparation of a live browser study: serve the app on loopback (its
 * provenance in the lifecycle, an embedded app's files in served-app.json), then make sure the
 * guest image exists (building it with progress on first use).
 */
async function serveAndEnsureImage(
  ctx: StudyContext<BrowserLabConfig>,
  appUrl: URL,
  docker: DockerClient,
  writer: RunWriter,
  log: (event: string, message: string) => void,
  say: (detail: string) => void,
): Promise<{ app: AppServer; image: GuestImage }> {
  const lab = ctx.lab;
  await writer.writeStatus({ phase: "provision", detail: "serving the app" });
  const app = await startApp({
    appUrl: appUrl.href,
    ...(lab.subject.serve ? { serve: lab.subject.serve } : {}),
    cwd: ctx.cwd,
    env: ctx.env,
    signal: ctx.signal,
    owner: { runId: ctx.runId, project: ctx.cwd },
  });
  try {
    log(
      "browser-lab.subject.served",
      `app ${appUrl.origin} answers (${app.kind}${app.kind === "static" ? `, served on host port ${app.port}` : ""}${app.hostProcessId ? `, process group ${app.hostProcessId} recorded for the orphan sweep` : ""}); reachable from the guest only through its forwarded socket`,
    );
    if (app.embedded) {
      const e = app.embedded;
      log(
        "browser-lab.subject.embedded",
        `embedded app ${e.name} from ${e.package} ${e.dir}: ${e.files.length} file(s), ${e.bytes} bytes, sha256 ${e.sha256} (listed in served-app.json)`,
      );
      await writer.writeJson("served-app.json", { schema: "humanish.served-app.v1", source: "embedded", ...e }, { kind: "data" });
    }
    say("guest image");
    const image = await ensureGuestImage(docker, {
      env: ctx.env,
      signal: ctx.signal,
      onProgress: (m) => typeof m.stream === "string" && m.stream.trim() && say(`building guest image: ${m.stream.trim().slice(0, 120)}`),
    });
    log(
      "browser-lab.runtime.ready",
      `guest image ${image.ref} (${image.origin}${image.built ? ", built by this run" : ""}), runtime revision ${image.runtimeRevision}`,
    );
    return { app, image };
  } catch (e) {
    await app.close().catch(() => undefined);
    throw e;
  }
}

/** The run's cost lines: a local guest is not metered; a participant without a model calls none. */
function browserCostLines(today: string, modelParticipant: boolean): CostLine[] {
  const desktopLine: CostLine = {
    kind: "desktop-minutes",
    usd: 0,
    count: null,
    basis: "no-spend-signal",
    ratesAsOf: today,
    source: "humanish: a local Docker guest desktop has no metered provider",
    reason: null,
  };
  // A model seat's lines come from its own evidence (its request ledger, an account's null line).
  if (modelParticipant) return [desktopLine];
  return [
    {
      kind: "model-tokens",
      usd: 0,
      count: 0,
      basis: "no-spend-signal",
      ratesAsOf: today,
      source: "humanish: the scripted-browser participant calls no model",
      reason: null,
    },
    desktopLine,
  ];
}

async function runLive(ctx: StudyContext<BrowserLabConfig>, plan: ReturnType<typeof planBrowserStudy>, deps: BrowserStudyDeps): Promise<StudyResult> {
  const { lab, actor, appUrl } = plan;
  const docker = deps.docker ?? dockerClientFor(ctx.env);
  const seatDevices = studyDevices(lab, ctx.seatIds);
  const seats = seatDevices.map((d) => d.seat);
  const concurrency = planStudyConcurrency({
    seats: seats.length,
    requested: lab.execution.concurrency,
    env: ctx.env,
    seatMemoryBytes: GUEST_MEMORY_BYTES,
    availableMemoryBytes: deps.availableMemoryBytes ?? availableMemoryBytes(),
  });
  // The participant's own preflight (a key, a priced model under a USD cap, an account probe) —
  // refused here, before any run directory exists.
  const participant: BrowserParticipant = browserParticipant(actor, participantCaps(lab));
  await participant.preflight({ env: ctx.env, signal: ctx.signal });
  const secrets = studySecrets(ctx);
  const writer: RunWriter = createRunWriter({ cwd: ctx.cwd, runId: ctx.runId, secrets, route: "browser", mode: "live", lab: lab.id });
  const studyLogger = studyLog(ctx, writer);
  const { log, progress } = studyLogger;
  const createdAt = new Date().toISOString();
  const sessionMs = sessionMsOf(lab, capsOf(lab));
  log(
    "browser-lab.run.created",
    `run ${ctx.runId}: lab ${lab.id}, actor ${actor.type}, target local, ${seats.length} seat(s) (${seatDevices.map((d) => `${d.seat.id} ${d.name}`).join(", ")}), concurrency ${concurrency.concurrency}`,
  );
  for (const w of concurrency.warnings) log("browser-lab.study.waves", w.message);
  let app: AppServer | undefined;
  let seatsRun: Awaited<ReturnType<typeof runBrowserSeats>>;
  const first = seats[0]!.id;
  try {
    seatsRun = await runBrowserSeats(ctx, writer, studyLogger, {
      seats,
      concurrency: concurrency.concurrency,
      start: async () => {
        const served = await serveAndEnsureImage(ctx, appUrl, docker, writer, log, (detail) => progress({ participant: first, phase: "preflight", detail }));
        app = served.app;
        return localGuestLane({
          docker,
          image: served.image,
          writer,
          runId: ctx.runId,
          cwd: ctx.cwd,
          participant,
          appUrl,
          appHostPort: served.app.port,
          devices: new Map(seatDevices.map((d) => [d.seat.id, { name: d.name, preset: d.preset }])),
          seatCount: seats.length,
          sessionMs,
          ...(deps.labels ? { labels: deps.labels } : {}),
          ...(deps.onDesktopCreated ? { onDesktopCreated: deps.onDesktopCreated } : {}),
        });
      },
    });
  } finally {
    await app?.close().catch(() => undefined);
  }
  return finishBrowserStudy(ctx, writer, studyLogger, {
    seatsRun,
    lane: "local-guest",
    target: "local",
    concurrency,
    createdAt,
    appOrigin: appUrl.origin,
    costLines: browserCostLines(isoDate(), participant.descriptor.modelParticipant),
    gaps: ["the app's own spend is unmeasured"],
    redactionNotes: `literal scrub of ${secrets.length} provisioned secret value(s), then secret and local-path shapes; typed text recorded as a length only`,
  });
}

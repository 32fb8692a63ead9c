/**
 * The browser route on `execution.target: e2b-desktop`: each seat runs the study's browser
 * participant (any the actor registry lets run on this target) on its own E2B desktop
 * (src/lanes/e2b-desktop), a model key staying in this host process.
 *
 * Live: preflight before any run directory exists (the actor, `E2B_DEBUG` unset, the E2B key by
 * name, the model key, the app's placement — a public https URL, or `serve.static` whose files are
 * read here and served inside each desktop; a loopback URL without it is refused) → the runner
 * gives each seat its desktop (id recorded before provisioning), the loop, the hidden checks and
 * the release proof → the bundle (the same evidence as the local guest) → verify.
 * Dry run: the same seats through the dry-run lane; nothing is created, read or spent.
 */
import { lstat, readdir, readFile } from "node:fs/promises";
import { join, relative, sep } from "node:path";
import { findActor, listActors } from "../../actor-registry/registry.ts";
import { type BrowserParticipant, browserParticipant } from "../../actors/browser-participant/index.ts";
import { createRunWriter } from "../../bundle/index.ts";
import { isHumanishError } from "../../errors.ts";
import { embeddedRootName } from "../../lab/embedded-apps.ts";
import type { BrowserLabConfig } from "../../lab/schema.ts";
import { type AppPlacement, DEFAULT_E2B_DESKTOP_TEMPLATE, E2B_DESKTOP_MAX_CONCURRENCY, e2bDesktopLane, placeApp } from "../../lanes/e2b-desktop/index.ts";
import { studySecrets } from "../../secrets/index.ts";
import { planConcurrency } from "../../study/index.ts";
import type { StudyContext, StudyResult } from "../types.ts";
import { loadEmbeddedApp } from "./embedded-app.ts";
import { finishBrowserStudy, runBrowserDryRun, runBrowserSeats } from "./study-flow.ts";
import { capsOf, participantCaps, refuse, sessionMsOf, studyDevices, studyLog } from "./study-parts.ts";

/** The env variable holding the E2B key (read by name; its value never leaves this process). */
export const E2B_KEY_NAME = "E2B_API_KEY";
/** The explicit debug retention flag (value `debug`). */
export const RETAIN_FLAG = "HUMANISH_E2B_DESKTOP_RETAIN";
/** Bounds of a project directory served inside the desktop. */
const MAX_APP_FILES = 2_000;
const MAX_APP_BYTES = 64 * 1024 * 1024;

/** What a test or the CLI may inject. */
export interface E2BDesktopStudyDeps {
  /**
   * Keep every desktop (outcome `retained`; E2B's timeout still ends each one). From the command
   * line: `HUMANISH_E2B_DESKTOP_RETAIN=debug`. A retained desktop never counts as a proven
   * release, so the bundle then fails verification on purpose.
   */
  retainForDebug?: boolean;
  /** The explicit live-view flag: each desktop's authenticated stream URL (a secret) goes here only. */
  onLiveView?: (participantId: string, url: string) => void;
  onDesktopCreated?: (participantId: string, sandboxId: string) => void;
}

/** The seats that run at once: the seats, `execution.concurrency`, 16, and `HUMANISH_MAX_CONCURRENCY`. */
export function e2bDesktopConcurrency(seats: number, requested: number | undefined, env: Record<string, string | undefined>) {
  // E2B desktops take no memory of this machine: the memory term is set so it never binds.
  return planConcurrency({
    seats,
    ...(requested !== undefined ? { requested } : {}),
    ...(env.HUMANISH_MAX_CONCURRENCY !== undefined ? { envMax: env.HUMANISH_MAX_CONCURRENCY } : {}),
    perStudyLimit: E2B_DESKTOP_MAX_CONCURRENCY,
    seatMemoryBytes: 1,
    availableMemoryBytes: Number.MAX_SAFE_INTEGER,
  });
}

/**
 * Preflight of a live E2B desktop study: nothing exists yet when it throws.
 * @throws HumanishError `HUMANISH_BROWSER_ACTOR_UNSUPPORTED`, `HUMANISH_E2B_DEBUG_REFUSED`,
 *   `HUMANISH_E2B_DESKTOP_RETAIN_INVALID`,
 *   `HUMANISH_E2B_KEY_MISSING`, `HUMANISH_E2B_DESKTOP_APP_UNREACHABLE`, and the participant's
 *   own preflight codes (e.g. `HUMANISH_CUA_*`).
 */
export async function e2bDesktopPreflight(lab: BrowserLabConfig, env: Record<string, string | undefined>, signal: AbortSignal = new AbortController().signal) {
  const actor = lab.actors[0];
  if (!findActor(actor.type)?.targets.includes("e2b-desktop"))
    refuse(
      "HUMANISH_BROWSER_ACTOR_UNSUPPORTED",
      `actor ${actor.type} cannot run on execution.target e2b-desktop`,
      `use a participant that runs there (${e2bDesktopActors().join(", ")}), or execution.target: local`,
    );
  if (env.E2B_DEBUG !== undefined && env.E2B_DEBUG !== "" && env.E2B_DEBUG !== "false")
    refuse(
      "HUMANISH_E2B_DEBUG_REFUSED",
      "E2B_DEBUG is set: in debug mode the E2B SDK skips kills and reports them as done, so no release could be proven",
      "unset E2B_DEBUG and rerun",
    );
  const retain = env[RETAIN_FLAG];
  if (retain !== undefined && retain !== "" && retain !== "debug")
    refuse(
      "HUMANISH_E2B_DESKTOP_RETAIN_INVALID",
      `${RETAIN_FLAG} must be \`debug\` or unset (got ${JSON.stringify(retain.slice(0, 40))})`,
      `unset ${RETAIN_FLAG}, or set it to debug to keep each desktop`,
    );
  const apiKey = env[E2B_KEY_NAME];
  if (!apiKey)
    refuse(
      "HUMANISH_E2B_KEY_MISSING",
      `an e2b-desktop study needs ${E2B_KEY_NAME}, which is not set`,
      `export ${E2B_KEY_NAME}=e2b_… (it stays in the humanish process), or run without --live for a dry run`,
    );
  const app = placeApp(lab.subject.appUrl, lab.subject.serve);
  const participant: BrowserParticipant = browserParticipant(actor, participantCaps(lab));
  await participant.preflight({ env, signal });
  const conn = {
    apiKey,
    ...(env.E2B_API_URL ? { apiUrl: env.E2B_API_URL } : {}),
    ...(env.E2B_SANDBOX_URL ? { sandboxUrl: env.E2B_SANDBOX_URL } : {}),
    ...(env.E2B_DOMAIN ? { domain: env.E2B_DOMAIN } : {}),
  };
  return { participant, app, conn, template: lab.execution.template ?? DEFAULT_E2B_DESKTOP_TEMPLATE, retainForDebug: retain === "debug" };
}

/** Every actor type the registry lets run on an E2B desktop. */
function e2bDesktopActors(): string[] {
  return listActors()
    .filter((a) => a.targets.includes("e2b-desktop"))
    .map((a) => a.type);
}

/**
 * The files of a served app: an embedded app's, or a project directory's (regular files only,
 * symlinks skipped, at most 2000 files and 64 MiB).
 * @throws HumanishError `HUMANISH_BROWSER_SERVE_FAILED` naming the directory or the bound.
 */
export async function servedAppFiles(cwd: string, root: string): Promise<{ files: { path: string; bytes: Uint8Array }[]; note: string }> {
  const embedded = embeddedRootName(root);
  if (embedded !== undefined) {
    const app = await loadEmbeddedApp(embedded);
    return {
      files: app.files.map((f) => ({ path: f.path, bytes: f.bytes })),
      note: `embedded app ${app.name} from ${app.package}: ${app.files.length} file(s), ${app.bytes} bytes, sha256 ${app.sha256}`,
    };
  }
  const base = join(cwd, root);
  const files: { path: string; bytes: Uint8Array }[] = [];
  let bytes = 0;
  const walk = async (dir: string): Promise<void> => {
    for (const name of (await readdir(dir)).sort()) {
      const full = join(dir, name);
      const st = await lstat(full);
      if (st.isDirectory()) await walk(full);
      else if (st.isFile()) {
        bytes += st.size;
        if (files.length + 1 > MAX_APP_FILES || bytes > MAX_APP_BYTES)
          refuse(
            "HUMANISH_BROWSER_SERVE_FAILED",
            `subject.serve.static.root ${root} is over ${MAX_APP_FILES} files or ${MAX_APP_BYTES} bytes`,
            "serve a smaller build directory",
          );
        files.push({ path: relative(base, full).split(sep).join("/"), bytes: new Uint8Array(await readFile(full)) });
      }
    }
  };
  try {
    await walk(base);
  } catch (e) {
    if (isHumanishError(e)) throw e;
    refuse(
      "HUMANISH_BROWSER_SERVE_FAILED",
      `subject.serve.static.root ${root} cannot be read (${(e as Error).message})`,
      "point serve.static.root at a directory inside the project",
    );
  }
  if (!files.some((f) => f.path === "index.html"))
    refuse("HUMANISH_BROWSER_SERVE_FAILED", `subject.serve.static.root ${root} has no index.html`, "point serve.static.root at the app's build directory");
  return { files, note: `project directory ${root}: ${files.length} file(s), ${bytes} bytes` };
}

/** Run one e2b-desktop browser study (live or dry run). */
export async function runE2BDesktopStudy(ctx: StudyContext<BrowserLabConfig>, deps: E2BDesktopStudyDeps = {}): Promise<StudyResult> {
  return ctx.mode === "dry-run" ? runDryRun(ctx) : runLive(ctx, deps);
}

async function runDryRun(ctx: StudyContext<BrowserLabConfig>): Promise<StudyResult> {
  const lab = ctx.lab;
  const actor = lab.actors[0];
  const writer = createRunWriter({ cwd: ctx.cwd, runId: ctx.runId, secrets: studySecrets(ctx), route: "browser", mode: "dry-run", lab: lab.id });
  const serve = lab.subject.serve?.static;
  const origin = new URL(lab.subject.appUrl).origin;
  return runBrowserDryRun(ctx, writer, {
    target: "e2b-desktop",
    appOrigin: origin,
    notes: {
      created: `dry run ${ctx.runId}: lab ${lab.id}, actor ${actor.type}, target e2b-desktop (template ${lab.execution.template ?? DEFAULT_E2B_DESKTOP_TEMPLATE}); nothing is created, served or spent`,
      subject: serve ? `app served inside each desktop from ${serve.root} at its loopback ${origin}` : `public app ${origin}`,
      contract: `${browserParticipant(actor, participantCaps(lab)).describeDryRun()} (${E2B_KEY_NAME} is needed live), ${(actor.tasks ?? []).length} task(s) with hidden checks; a live run needs --live (or scenario.mode: live)`,
    },
    concurrency: (seats) => Math.min(seats, lab.execution.concurrency ?? seats, E2B_DESKTOP_MAX_CONCURRENCY),
    remote: true,
  });
}

async function runLive(ctx: StudyContext<BrowserLabConfig>, deps: E2BDesktopStudyDeps): Promise<StudyResult> {
  const lab = ctx.lab;
  const pre = await e2bDesktopPreflight(lab, ctx.env, ctx.signal);
  const devices = studyDevices(lab, ctx.seatIds);
  const seats = devices.map((d) => d.seat);
  const concurrency = e2bDesktopConcurrency(seats.length, lab.execution.concurrency, ctx.env);
  const served = pre.app.kind === "served" ? await servedAppFiles(ctx.cwd, pre.app.root) : undefined;
  const secrets = studySecrets(ctx);
  const writer = createRunWriter({ cwd: ctx.cwd, runId: ctx.runId, secrets, route: "browser", mode: "live", lab: lab.id });
  const studyLogger = studyLog(ctx, writer);
  const { log } = studyLogger;
  const createdAt = new Date().toISOString();
  const sessionMs = sessionMsOf(lab, capsOf(lab));
  log(
    "browser-lab.run.created",
    `run ${ctx.runId}: lab ${lab.id}, actor ${pre.participant.descriptor.type}, target e2b-desktop (template ${pre.template}), ${seats.length} seat(s), concurrency ${concurrency.concurrency}`,
  );
  log("browser-lab.subject.placed", placementNote(pre.app, served?.note));
  for (const w of concurrency.warnings) log("browser-lab.study.waves", w.message);
  const seatsRun = await runBrowserSeats(ctx, writer, studyLogger, {
    seats,
    concurrency: concurrency.concurrency,
    remote: true,
    start: async () =>
      e2bDesktopLane({
        writer,
        runId: ctx.runId,
        labId: lab.id,
        participant: pre.participant,
        conn: pre.conn,
        template: pre.template,
        app: pre.app,
        ...(served ? { appFiles: served.files } : {}),
        devices: new Map(devices.map((d) => [d.seat.id, { name: d.name, preset: d.preset }])),
        seatCount: seats.length,
        sessionMs,
        ...((deps.retainForDebug ?? pre.retainForDebug) ? { retainForDebug: true } : {}),
        ...(deps.onLiveView ? { onLiveView: deps.onLiveView } : {}),
        ...(deps.onDesktopCreated ? { onDesktopCreated: deps.onDesktopCreated } : {}),
      }),
  });
  return finishBrowserStudy(ctx, writer, studyLogger, {
    seatsRun,
    lane: "e2b-desktop",
    target: "e2b-desktop",
    concurrency,
    createdAt,
    appOrigin: pre.app.url.origin,
    costLines: [],
    gaps: ["the app's own spend is unmeasured", "E2B desktop time is an estimate over create → confirmed release at published rates, not E2B's invoice"],
    redactionNotes: `literal scrub of ${secrets.length} provisioned secret value(s), then secret and local-path shapes; typed text recorded as a length only; the live-view URL is never recorded`,
  });
}

function placementNote(app: AppPlacement, served: string | undefined): string {
  return app.kind === "public"
    ? `public app ${app.url.origin}, opened by each desktop's Chromium`
    : `${served ?? "the app"} uploaded into each desktop and served there on its loopback ${app.url.origin}`;
}

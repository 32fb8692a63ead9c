/** `humanish lab list | inspect | run` — parse and print; the study itself lives in src/routes/. */
import { relative } from "node:path";
import { UNCONFINED_POWERS } from "../../adapters/confine.ts";
import { checkScorerRef, loadScorer } from "../../adapters/load.ts";
import {
  assertRunId,
  CONTRADICTION_FINDING,
  combineChain,
  defaultTrust,
  loadSigningKey,
  loadVerifiedChain,
  newRunId,
  resolveRunDir,
  runDirFor,
} from "../../bundle/index.ts";
import { HumanishError } from "../../errors.ts";
import {
  type LabConfig,
  type LabOrigin,
  type LoadedLab,
  labSeats,
  listLabs,
  loadLab,
  MAX_SEATS,
  parseLab,
  resolveLabMode,
  selectLabBackend,
} from "../../lab/index.ts";
import type { Observer } from "../../observer/index.ts";
import { runStudy, type StudyContext, type StudyResult } from "../../routes/index.ts";
import { decideQuickStartMode } from "../../runtime/quick-start.ts";
import { secretIn } from "../../secrets/index.ts";
import { parseRerunWhich, planRerun, type RerunPlan } from "../../study/rerun.ts";
import { SIGNAL_EXIT_CODE, trapInterrupts } from "../interrupt.ts";
import { type CommandOutcome, failure, inertText } from "../output.ts";
import { createProgressDisplay } from "../progress.ts";
import { type CommandContext, strFlag } from "./context.ts";

/** `lab list`: always exit 0; labs that fail to parse are listed with their error. */
export async function labList(ctx: CommandContext): Promise<CommandOutcome> {
  const labs = await listLabs(ctx.cwd);
  const human = labs.length
    ? labs
        .map(
          (l) =>
            `${l.id.padEnd(24)} ${String(l.route ?? "invalid").padEnd(9)} ${l.source}${l.error ? `  ✗ ${l.error.message}` : l.title ? `  ${l.title}` : ""}`,
        )
        .join("\n")
    : "no labs yet: humanish init";
  return { result: { schema: ctx.spec.schema, ok: true, cwd: ctx.cwd, labs }, human };
}

/** `lab inspect <lab>`: the validated config, route and warnings. */
export async function labInspect(ctx: CommandContext): Promise<CommandOutcome> {
  const loaded = await loadLab(ctx.args.lab!, ctx.cwd);
  const route = selectLabBackend(loaded.config);
  // A bad review.scorer.ref is refused here as lab run refuses it (checked, not imported).
  await checkScorerRef({ config: loaded.config, ...(loaded.path ? { labPath: loaded.path } : {}), cwd: ctx.cwd });
  const human = [
    `${loaded.config.id} · ${route} · ${loaded.config.scenario?.mode ?? "dry-run"}  (${loaded.ref})`,
    loaded.config.title ? `title: ${loaded.config.title}` : "",
    ...loaded.warnings.map((w) => `warning ${w.code}: ${w.message}`),
    "",
    JSON.stringify(loaded.config, null, 2),
  ]
    .filter((l) => l !== "")
    .join("\n");
  return {
    result: {
      schema: ctx.spec.schema,
      ok: true,
      cwd: ctx.cwd,
      lab: loaded.config.id,
      ref: loaded.ref,
      sha256: loaded.sha256,
      route,
      config: loaded.config,
      warnings: loaded.warnings,
    },
    human,
  };
}

/**
 * `lab run <lab>`: resolve → route → the route's study. SIGINT/SIGTERM abort the study; the
 * route still tears down and writes the bundle, then we exit 130/143.
 */
export async function labRun(ctx: CommandContext): Promise<CommandOutcome> {
  const { loaded, rerun, route, scorer } = await prepareLabRun(ctx, {
    count: strFlag(ctx, "count"),
    rerunFrom: strFlag(ctx, "rerun-failed-from"),
    rerunWhich: strFlag(ctx, "rerun-which"),
    scorer: strFlag(ctx, "scorer"),
  });
  const quickStart = isQuickStartLab(ctx.args.lab!, loaded.origin) && !ctx.flags.live && !ctx.flags["dry-run"] && !rerun;
  let { mode, modeReason } = flagOrLabMode(ctx, loaded.config);
  if (rerun && mode === "dry-run") {
    throw new HumanishError("HUMANISH_LAB_OPTION_CONFLICT", `a continued run runs live, but this one would be a dry run (${modeReason.message})`, {
      next: `add --live: humanish lab run ${ctx.args.lab} --rerun-failed-from ${rerun.continues.runId} --live`,
    });
  }
  const runId = labRunId(ctx, loaded, strFlag(ctx, "run-id"));
  const trap = trapRunInterrupts(ctx);
  if (quickStart) {
    const decided = await quickStartMode(ctx, route, trap.signal);
    const interrupted = trap.received;
    if (interrupted) {
      trap.release();
      const stopped = new HumanishError("HUMANISH_INTERRUPTED", `interrupted by ${interrupted} before the study started; nothing was run`, {
        next: "humanish lab run default",
      });
      return { ...failure("humanish.lab-run-result.v1", stopped, { lab: loaded.config.id, interrupted }), exitCode: SIGNAL_EXIT_CODE[interrupted] };
    }
    ({ mode, modeReason } = decided);
  }

  // The Observer binds before the study starts: a port in use refuses the study, nothing runs.
  let observer: Observer | undefined;
  try {
    observer = await startWatch(ctx, strFlag(ctx, "watch"), runId, loaded.config);
  } catch (e) {
    trap.release();
    throw e;
  }
  const { display, progress } = progressSink(ctx, observer);
  const study: StudyContext<typeof loaded.config> = {
    cwd: ctx.cwd,
    lab: loaded.config,
    labSource: { ref: loaded.ref, sha256: loaded.sha256 },
    labWarnings: loaded.warnings,
    runId,
    mode,
    env: ctx.env,
    secrets: ctx.secrets,
    signal: trap.signal,
    progress,
    ...(scorer ? { scorer } : {}),
    ...(rerun ? { seatIds: rerun.seats, continues: rerun.continues } : {}),
  };
  if (rerun && !ctx.json) {
    ctx.io.stderr(`humanish: continuing run ${rerun.continues.runId} (${rerun.before.line}): rerunning ${rerun.seats.join(", ")} (${rerun.continues.which})\n`);
  }
  let result: StudyResult;
  try {
    result = await runStudy(study);
  } catch (e) {
    // Interrupted before the run existed (e.g. during preflight or an image build): still 130/143.
    const interrupted = trap.received;
    if (interrupted) {
      const outcome = failure("humanish.lab-run-result.v1", e, { lab: loaded.config.id, interrupted });
      return { ...outcome, exitCode: SIGNAL_EXIT_CODE[interrupted] };
    }
    throw e;
  } finally {
    display?.done();
    if (observer) await endWatch(ctx, observer);
    trap.release();
  }
  return labRunOutcome(ctx, { result, loaded, rerun, route, modeReason, observer, received: trap.received });
}

/** The study's progress sink: the Observer (when watching), then the stderr display (human mode only). */
function progressSink(ctx: CommandContext, observer: Observer | undefined) {
  const display = ctx.json
    ? undefined
    : createProgressDisplay({ stream: { write: (s: string) => ctx.io.stderr(s), columns: process.stderr.columns }, isTTY: ctx.io.stderrIsTTY });
  const toDisplay = display ? (e: Parameters<StudyContext["progress"]>[0]) => display.update(e) : () => {};
  const progress: StudyContext["progress"] = observer
    ? (e) => {
        observer.progress(e);
        toDisplay(e);
      }
    : toDisplay;
  return { display, progress };
}

/**
 * What `lab run` settles before anything runs: the lab (with `--count`, or the seats of a
 * continued run, planned from the verified earlier run before anything else is loaded), its
 * route, the signing key and the product adapter (loaded fail-closed).
 * @throws HumanishError HUMANISH_LAB_OPTION_CONFLICT (--dry-run with --live), the lab's,
 *   the continued run's, the signing key's and the scorer's refusals
 */
async function prepareLabRun(
  ctx: CommandContext,
  flags: { count: string | undefined; rerunFrom: string | undefined; rerunWhich: string | undefined; scorer: string | undefined },
) {
  if (ctx.flags["dry-run"] && ctx.flags.live) {
    throw new HumanishError("HUMANISH_LAB_OPTION_CONFLICT", "--dry-run and --live cannot be combined", { next: "pass one of --dry-run or --live" });
  }
  let loaded = withSeatCount(await loadLab(ctx.args.lab!, ctx.cwd), flags.count);
  // A continued run is planned from the verified earlier run before anything else is loaded.
  const rerun = await continueFrom(ctx, loaded, flags.rerunFrom, flags.rerunWhich);
  if (rerun) loaded = withRerunSeats(loaded, rerun);
  const route = selectLabBackend(loaded.config);
  // Every bundle is signed when sealed: a key that would be refused then (an insecure config
  // directory, a malformed HUMANISH_SIGNING_KEY) is refused now, before a sandbox or a cent.
  loadSigningKey(ctx.env);
  // The product adapter loads fail-closed here, before any engine, key, sandbox or spend.
  const scorerFlag = flags.scorer;
  const scorer = await loadScorer({
    config: loaded.config,
    ...(loaded.path ? { labPath: loaded.path } : {}),
    ...(scorerFlag !== undefined ? { flag: scorerFlag } : {}),
    cwd: ctx.cwd,
    env: ctx.env,
  });
  if (scorer?.confinement.mode === "unconfined") {
    ctx.io.stderr(`humanish: warning: the scorer ${scorer.provenance.ref} runs UNCONFINED (${scorer.confinement.reason}); ${UNCONFINED_POWERS}\n`);
  }
  return { loaded, rerun, route, scorer };
}

/**
 * The run's id: `requested` (`--run-id`), else a new one from the lab id.
 * @throws HumanishError a malformed `--run-id`; HUMANISH_SECRET_IN_IDENTIFIER when the lab id
 *   or the run id carries a secret value (an identifier becomes a directory name and structure
 *   in every file, which is never scrubbed)
 */
function labRunId(ctx: CommandContext, loaded: LoadedLab, requested: string | undefined): string {
  if (requested !== undefined) assertRunId(requested);
  const runId = requested ?? newRunId(loaded.config.id);
  for (const [what, value, fix] of [
    // The lab id first: a run id made from it (no --run-id) would otherwise be blamed.
    ["lab id", loaded.config.id, `rename the lab's id in ${loaded.ref}`],
    ["run id", runId, "choose another --run-id (or omit it)"],
  ] as const) {
    if (secretIn(value, ctx.secrets) !== undefined) {
      throw new HumanishError("HUMANISH_SECRET_IN_IDENTIFIER", `the ${what} contains the value of a secret variable; nothing was written`, {
        next: fix,
      });
    }
  }
  return runId;
}

/**
 * Traps SIGINT/SIGTERM for the run. The first signal decides the outcome and the exit code.
 * Later ones never cut the finish short: a process that quits mid-cleanup leaves no run.json
 * and a status stuck "running", while the cleanup itself is bounded (every release step and
 * hook has its own deadline).
 */
function trapRunInterrupts(ctx: CommandContext) {
  return trapInterrupts({
    first: (sig) => {
      if (!ctx.json) ctx.io.stderr(`\nhumanish: ${sig} — stopping the participant, then releasing its sandbox and writing the bundle\n`);
    },
    repeat: (_sig, count) => {
      if (count === 1 && !ctx.json) ctx.io.stderr("humanish: cleanup is running and every step of it has a deadline; the bundle is written when it ends\n");
    },
  });
}

/**
 * The command's outcome from the study's result: the envelope (the run directory project-relative,
 * the interruption as its error when the study gave none, a continued run's combined line) and
 * the exit code — 130/143 when interrupted, 2 when the run failed, else 0.
 */
async function labRunOutcome(
  ctx: CommandContext,
  o: {
    result: StudyResult;
    loaded: LoadedLab;
    rerun: RerunPlan | undefined;
    route: string;
    modeReason: ModeReason;
    observer: Observer | undefined;
    received: ReturnType<typeof trapInterrupts>["received"];
  },
): Promise<CommandOutcome> {
  const { result, loaded, rerun, observer } = o;
  const why = result.interrupted ?? o.received;
  // The analyst never fails a study; in human mode a live study says why it has no findings.
  const a = result.analysis;
  if (!ctx.json && a?.outcome === "skipped" && result.mode === "live") ctx.io.stderr(`humanish: findings skipped: ${inertText(a.skipped ?? "")}\n`);
  const schema = o.route === "terminal" ? "humanish.terminal-lab-result.v1" : "humanish.browser-lab-result.v1";
  // Project-relative, so scripts can use it (an absolute local path is redacted from stdout).
  const runDir = relative(ctx.cwd, result.runDir) || result.runDir;
  const envelope = {
    schema,
    ...result,
    runDir,
    ok: result.ok && !why,
    lab: loaded.config.id,
    labRef: loaded.ref,
    modeReason: o.modeReason,
    ...(observer ? { watchUrl: observer.url } : {}),
    ...(why ? { interrupted: why } : {}),
    ...(rerun ? { continues: rerun.continues, combined: await combinedAfter(ctx, result) } : {}),
  };
  if (why && !envelope.error) {
    envelope.error = {
      code: "HUMANISH_INTERRUPTED",
      message: `the run was interrupted by ${why}; cleanup ran and the partial bundle is in ${runDir}`,
      next: `humanish verify --run ${result.runId}`,
    };
  }
  return { result: envelope, human: renderStudy(envelope), exitCode: why ? SIGNAL_EXIT_CODE[why] : envelope.ok ? 0 : 2 };
}

/**
 * `--rerun-failed-from RUN [--rerun-which harness|not-reached]`: the seats to run again, planned
 * from the verified chain of runs ending at RUN (src/study/rerun.ts). Undefined without the flag.
 * @throws HumanishError HUMANISH_LAB_OPTION_CONFLICT (with --count, or --rerun-which alone),
 *   HUMANISH_RUN_NOT_FOUND, HUMANISH_RERUN_UNVERIFIED (RUN or a run it continues does not
 *   verify), HUMANISH_CONTINUES_BROKEN, and the planner's HUMANISH_RERUN_* refusals
 */
async function continueFrom(ctx: CommandContext, loaded: LoadedLab, from: string | undefined, which: string | undefined): Promise<RerunPlan | undefined> {
  if (from === undefined) {
    if (which === undefined) return undefined;
    throw new HumanishError("HUMANISH_LAB_OPTION_CONFLICT", "--rerun-which needs --rerun-failed-from RUN", {
      next: `humanish lab run ${ctx.args.lab} --rerun-failed-from <run> --rerun-which ${which}`,
    });
  }
  if (strFlag(ctx, "count") !== undefined) {
    throw new HumanishError(
      "HUMANISH_LAB_OPTION_CONFLICT",
      "--count and --rerun-failed-from cannot be combined: a continued run reruns seats of the earlier run",
      {
        next: "remove --count",
      },
    );
  }
  const rerunWhich = parseRerunWhich(which);
  const dir = await resolveRunDir(ctx.cwd, from);
  let verified: Awaited<ReturnType<typeof loadVerifiedChain>>;
  try {
    verified = await loadVerifiedChain(dir, defaultTrust(ctx.env));
  } catch (e) {
    if (!(e instanceof HumanishError) || e.code !== "HUMANISH_INVALID_RUN_BUNDLE") throw e;
    throw new HumanishError("HUMANISH_RERUN_UNVERIFIED", `cannot continue ${from}: ${e.message}; only a verified run is continued`, {
      next: e.next ?? `humanish verify --run ${from}`,
      cause: e,
    });
  }
  return planRerun({
    chain: verified.chain,
    runJsonSha256: verified.last.runJsonSha256,
    lab: { id: loaded.config.id, sha256: loaded.sha256 },
    which: rerunWhich,
  });
}

/**
 * The lab with every seat the rerun names. A lab that counts its seats (`count`) and was run with
 * `--count N` has seats p1…pN the lab text alone does not declare: it is re-validated with the
 * earlier run's seat count.
 * @throws HumanishError HUMANISH_RERUN_SEATS_UNKNOWN when the lab declares no such seat
 */
function withRerunSeats(loaded: LoadedLab, rerun: RerunPlan): LoadedLab {
  const missing = (l: LoadedLab) => {
    const ids = new Set(labSeats(l.config).map((s) => s.id));
    return rerun.seats.filter((id) => !ids.has(id));
  };
  if (missing(loaded).length === 0) return loaded;
  const actor = loaded.config.actors[0];
  const counted = !("lanes" in actor && actor.lanes) && !("roster" in actor && actor.roster);
  const widened = counted ? withSeatCount(loaded, String(rerun.before.total)) : loaded;
  const still = missing(widened);
  if (still.length === 0) return widened;
  throw new HumanishError(
    "HUMANISH_RERUN_SEATS_UNKNOWN",
    `the lab ${loaded.config.id} declares no seat ${still.join(", ")} that run ${rerun.continues.runId} reruns`,
    {
      next: "run the lab as a new study",
    },
  );
}

/** How long a finished study keeps its Observer up for the pages still open on it, ms. */
const WATCH_LINGER_MS = 3000;

/**
 * `--watch [PORT]`: the Observer of this run, bound now (so a port in use refuses the study);
 * its URL goes to stderr in both output modes (stdout stays one JSON document).
 * @throws HumanishError HUMANISH_PORT_IN_USE, HUMANISH_INVALID_PORT
 */
async function startWatch(ctx: CommandContext, raw: string | undefined, runId: string, lab: LabConfig): Promise<Observer | undefined> {
  if (raw === undefined) return undefined;
  const { checkObserverPort, observerPlanOf, startObserver } = await import("../../observer/index.ts");
  const observer = startObserver({
    runId,
    runDir: runDirFor(ctx.cwd, runId),
    cwd: ctx.cwd,
    secrets: ctx.secrets,
    plan: observerPlanOf(lab),
    port: checkObserverPort(raw),
  });
  ctx.io.stderr(`humanish: observer at ${observer.url} (live while the study runs)\n`);
  return observer;
}

/**
 * After the study: publish the final state (the report link) and, while a page is still
 * connected, keep serving a moment so it receives it; then stop.
 */
async function endWatch(ctx: CommandContext, observer: Observer): Promise<void> {
  observer.feed.scanNow();
  if (observer.server.connections() > 0) {
    if (!ctx.json) ctx.io.stderr(`humanish: the run is over; the observer page shows the report link (humanish watch keeps it open)\n`);
    await Bun.sleep(WATCH_LINGER_MS);
  }
  await observer.stop();
}

/**
 * `--count N` (1–16): the lab re-validated with N seats. Throws `HUMANISH_LAB_INVALID` naming
 * `--count` for a value that is not such an integer, or the lab's own refusal (e.g. it names
 * its seats with lanes).
 */
function withSeatCount(loaded: LoadedLab, raw: string | undefined): LoadedLab {
  if (raw === undefined) return loaded;
  const n = Number(raw);
  if (!/^[0-9]{1,2}$/.test(raw) || n < 1 || n > MAX_SEATS) {
    throw new HumanishError("HUMANISH_LAB_INVALID", `--count must be an integer from 1 to ${MAX_SEATS} (got ${JSON.stringify(raw)})`, {
      next: `pass --count 1 to --count ${MAX_SEATS}, or omit it to use the lab's actors[0].count`,
    });
  }
  const r = parseLab(loaded.text, { source: loaded.ref, seatCount: n });
  if (!r.ok) throw new HumanishError(r.error.code, r.error.message, { next: "remove --count, or fix the lab" });
  return { ...loaded, config: r.config, warnings: r.warnings };
}

/** Why a study ran in its mode: a stable code and one sentence (`--json` carries it as `modeReason`). */
type ModeReason = { code: string; message: string };

/**
 * The quick-start rule applies to `lab run default` when `default` resolves to the embedded lab
 * (a project lab named `default` keeps its own mode rule, like every other lab).
 */
export function isQuickStartLab(ref: string, origin: LabOrigin): boolean {
  return ref === "default" && origin === "embedded";
}

/** The mode the flags or the lab's `scenario.mode` choose (every lab but the quick start's). */
function flagOrLabMode(ctx: CommandContext, lab: LabConfig): { mode: "dry-run" | "live"; modeReason: ModeReason } {
  const mode = resolveLabMode(lab, ctx.flags.live ? "live" : ctx.flags["dry-run"] ? "dry-run" : undefined);
  const modeReason: ModeReason = ctx.flags.live
    ? { code: "flag-live", message: "--live was passed" }
    : ctx.flags["dry-run"]
      ? { code: "flag-dry-run", message: "--dry-run was passed" }
      : { code: "lab-mode", message: `the lab's scenario.mode is ${lab.scenario.mode}` };
  return { mode, modeReason };
}

/**
 * The quick start's mode (src/runtime/quick-start.ts): live when the engine is usable, building
 * the route's image on first use with its `Step …` lines on stderr (human mode); otherwise dry
 * run, said in one stderr line.
 */
async function quickStartMode(ctx: CommandContext, route: string, signal: AbortSignal): Promise<{ mode: "dry-run" | "live"; modeReason: ModeReason }> {
  let announced = false;
  const decided = await decideQuickStartMode({
    env: ctx.env,
    image: route === "terminal" ? "sandbox" : "guest",
    signal,
    onProgress: (line) => {
      if (ctx.json || !line.startsWith("Step ")) return;
      if (!announced) ctx.io.stderr("humanish: building the local image on first use (once; `humanish runtime setup` does the same)\n");
      announced = true;
      ctx.io.stderr(`  ${inertText(line)}\n`);
    },
  });
  if (decided.mode === "dry-run" && !signal.aborted) {
    ctx.io.stderr(`humanish: running the default lab as a dry run: ${inertText(decided.modeReason.message)}\n`);
  }
  return decided;
}

/**
 * The combined result of a continued run, read back from the verified chain it now ends (null
 * when the new bundle does not verify or a link cannot be followed: the run's own result stands).
 */
async function combinedAfter(
  ctx: CommandContext,
  result: StudyResult,
): Promise<{ line: string; total: number; reachedGoal: number; harnessFailed: number; runIds: string[] } | null> {
  if (!result.verify.ok) return null;
  try {
    const c = combineChain((await loadVerifiedChain(result.runDir, defaultTrust(ctx.env))).chain);
    return { line: c.line, total: c.total, reachedGoal: c.reachedGoal, harnessFailed: c.harnessFailed, runIds: c.runIds };
  } catch {
    return null;
  }
}

/** Human summary; `r.runDir` is already project-relative. */
function renderStudy(r: StudyResult & { lab: string; modeReason?: ModeReason; combined?: { line: string } | null }): string {
  const dir = r.runDir;
  const lines = [`${r.lab} · ${r.route} · ${r.mode}`, r.verdict];
  if (r.combined) lines.push(`combined: ${r.combined.line}`);
  for (const p of r.participants)
    lines.push(
      `participant ${p.id}: ${p.status} (${p.completionReason})${p.claimed && p.claimed !== "none" ? `; claimed ${p.claimed}` : ""}${p.contradicted ? ` — finding: ${CONTRADICTION_FINDING}` : ""}`,
    );
  if (r.adapter) {
    const s = r.adapter.score;
    lines.push(
      r.adapter.hooks === "loaded-only"
        ? `adapter: ${r.adapter.ref} loaded (dry run: no hook ran)`
        : `adapter: ${s ? `${s.namespace} ${s.status} ${s.score}/100 — ${s.summary}` : "no score"} · ${r.adapter.feedbackCandidates} feedback candidate(s) · ${r.adapter.artifacts.length} file(s)`,
    );
  }
  const a = r.analysis;
  if (a && a.outcome !== "skipped")
    lines.push(`findings: ${a.findings ?? 0} (analysis ${a.id ?? "—"} by ${a.provider ?? "?"}: ${a.outcome}) · humanish analyze show --run ${r.runId}`);
  lines.push(`run:    ${dir}`);
  lines.push(`verify: ${r.verify.ok ? "ok" : "FAILED"} · ${r.verify.shareSafety}`);
  lines.push(`report: ${dir}/report/index.html`);
  for (const w of r.warnings) lines.push(`warning ${w.code}: ${w.message}`);
  if (r.modeReason?.code === "engine-ready")
    lines.push("live: the default lab runs live when a Docker engine is usable (a scripted participant spends nothing); --dry-run for a contract-only run");
  if (r.mode === "dry-run") lines.push("dry run: contract only, nothing was started or spent; add --live to run it for real");
  return lines.join("\n");
}

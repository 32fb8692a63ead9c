/**
 * The terminal route: one participant uses a real command-line product inside a local Docker
 * sandbox (issue 2 §4, §7; reference contracts.md §5; ARCHITECTURE.md "Data flow").
 *
 *   preflight   actor, subject, target, caps, runtime key by NAME, engine, image — before anything exists
 *   allocate    sandbox created; its exact id appended (fsync) to `sandbox-receipts.ndjson` BEFORE provisioning
 *   provision   participant runtime (e.g. Codex CLI at an exact version, probed without a key), then
 *               `product.install` commands as root, unkeyed
 *   participate stdin closed, first-output deadline, killed at `scenario.caps.maxMinutes`
 *   check       hidden task checks in the sandbox after the participant (never in the brief)
 *   teardown    in `finally`: release by exact id, cleanup proof
 *   write       trace, ledgers, transcript, events, then `run.json`; then `verifyRun`
 * A failure or an interruption after the run directory exists still leaves a bundle that says
 * what happened; a failure before it (preflight) throws a HumanishError and creates nothing.
 */

import { decodeText, tailText } from "../../actors/terminal/exec.ts";
import type { TerminalParticipantOutcome } from "../../actors/terminal/participant.ts";
import { deriveReview, stakeholderLine, summarizeCost } from "../../bundle/derive.ts";
import type { CleanupProof, RunOutcome, TaskResult } from "../../bundle/schemas.ts";
import { verifyRun } from "../../bundle/verify.ts";
import { createRunWriter } from "../../bundle/writer.ts";
import type { DockerClient } from "../../docker/index.ts";
import { HumanishError, isHumanishError } from "../../errors.ts";
import { isTerminalLab } from "../../lab/routing.ts";
import { type LabConfig, TERMINAL_STUDY_DIR, type TerminalLabConfig } from "../../lab/schema.ts";
import { PROJECT_LABEL } from "../../sandbox/controller.ts";
import { createDockerSandboxProvider, DEFAULT_DISK_BYTES, releaseContainer } from "../../sandbox/index.ts";
import type { ReleaseProof, Sandbox, SandboxProvider } from "../../sandbox/types.ts";
import { studySecrets } from "../../secrets/index.ts";
import type { ProgressEvent, StudyContext, StudyResult } from "../types.ts";
import { briefDigest, composeBrief, DEFAULT_PERSONA, newNonce } from "./brief.ts";
import { loadSandboxCa, SANDBOX_CA_PATH, type SandboxCa } from "./ca.ts";
import { runTerminalDryRun, TERMINAL_PARTICIPANT_ID } from "./dry-run.ts";
import {
  ACTOR_TRACE_FILE,
  buildActorTrace,
  buildTerminalLedgers,
  cleanupProof,
  deadlineLabel,
  isoDate,
  participantRecord,
  providerCostLine,
} from "./evidence.ts";
import { checkEngine, type EngineReady, planTerminalStudy, type TerminalPlan } from "./preflight.ts";
import { createTerminalRecording, TERMINAL_EVENTS_FILE, type TerminalRecording } from "./recorder.ts";
import { runTaskChecks } from "./tasks.ts";

export { briefDigest, composeBrief, DEFAULT_MISSION, DEFAULT_PERSONA } from "./brief.ts";
export { TERMINAL_PARTICIPANT_ID } from "./dry-run.ts";
export { checkEngine, createTerminalParticipant, type EngineReady, planTerminalStudy, type TerminalCaps, type TerminalPlan } from "./preflight.ts";

/** The non-root user participants, installs of the participant runtime aside, run as. */
export const PARTICIPANT_USER = "user";
/** Default first-output deadline of a participant command, ms. */
export const DEFAULT_FIRST_OUTPUT_MS = 90_000;
/** Deadline of one `product.install` command, ms. */
export const INSTALL_TIMEOUT_MS = 600_000;
/** Deadline of the sandbox readiness probe, ms. */
const READY_TIMEOUT_MS = 60_000;
/** Disk bound of a sandbox when the lab sets no `execution.limits.diskMiB`, MiB. */
const DEFAULT_DISK_MIB = DEFAULT_DISK_BYTES / (1024 * 1024);

/** Optional seams (tests, later backends). The CLI passes none. */
export interface TerminalStudyDeps {
  /** Docker client (default: the engine the command's env names, see resolveDockerSocket). */
  docker?: DockerClient;
  /** Sandbox provider (default: the Docker provider over `docker`). */
  sandboxProvider?: SandboxProvider;
  /** First-output deadline of participant commands, ms (default {@link DEFAULT_FIRST_OUTPUT_MS}). */
  firstOutputMs?: number;
}

/**
 * Runs one terminal study end to end and returns the result the CLI prints
 * (`humanish.terminal-lab-result.v1`).
 * @throws HumanishError for preflight failures (nothing was created): `HUMANISH_TERMINAL_LAB_*`,
 *   `HUMANISH_DOCKER_UNAVAILABLE`, `HUMANISH_SANDBOX_IMAGE_MISSING`, `HUMANISH_IMAGE_BUILD_FAILED`,
 *   `HUMANISH_RUN_ID_IN_USE`, `HUMANISH_INTERRUPTED` (signal during preflight).
 */
export async function runTerminalStudy(ctx: StudyContext<LabConfig>, deps: TerminalStudyDeps = {}): Promise<StudyResult> {
  const lab = ctx.lab;
  if (!isTerminalLab(lab)) {
    throw new HumanishError("HUMANISH_TERMINAL_LAB_SUBJECT_INVALID", `lab ${lab.id} is not a terminal-product study (subject.source ${lab.subject.source}).`, {
      next: "Run it through its own route (humanish lab run picks it), or set subject.source: terminal-product.",
    });
  }
  const tctx = ctx as StudyContext<TerminalLabConfig>;
  ctx.progress({ participant: TERMINAL_PARTICIPANT_ID, phase: "preflight" });
  const plan = planTerminalStudy(lab, ctx.mode, ctx.env);
  if (ctx.mode === "dry-run") return runTerminalDryRun(tctx, plan);
  const ca = loadSandboxCa(ctx.env);
  const interruptedInPreflight = (cause?: unknown) =>
    new HumanishError(
      "HUMANISH_INTERRUPTED",
      `The study was interrupted (${signalName(ctx.signal)}) during preflight; no sandbox or run directory was created.`,
      {
        next: "Run the lab again.",
        ...(cause ? { cause } : {}),
      },
    );
  let engine: EngineReady;
  try {
    engine = await checkEngine(lab, {
      ...(deps.docker ? { docker: deps.docker } : {}),
      env: ctx.env,
      signal: ctx.signal,
      onBuild: (line) => ctx.progress({ participant: TERMINAL_PARTICIPANT_ID, phase: "preflight", detail: `building sandbox image: ${line}` }),
    });
  } catch (e) {
    // An image build aborted by SIGINT surfaces as a build error; report the interruption instead.
    if (ctx.signal.aborted) throw interruptedInPreflight(e);
    throw e;
  }
  if (ctx.signal.aborted) throw interruptedInPreflight();
  return runLive(tctx, plan, engine, deps, ca);
}

function signalName(signal: AbortSignal): "SIGINT" | "SIGTERM" {
  return signal.reason === "SIGTERM" ? "SIGTERM" : "SIGINT";
}

class Interrupted extends Error {}

async function runLive(
  ctx: StudyContext<TerminalLabConfig>,
  plan: TerminalPlan,
  engine: EngineReady,
  deps: TerminalStudyDeps,
  ca: SandboxCa | undefined,
): Promise<StudyResult> {
  const lab = ctx.lab;
  const pid = TERMINAL_PARTICIPANT_ID;
  const actor = lab.actors[0];
  const secrets = studySecrets(ctx);
  if (plan.runtimeKey) secrets.push(plan.runtimeKey.value);
  const writer = createRunWriter({ cwd: ctx.cwd, runId: ctx.runId, secrets, route: "terminal", mode: "live", lab: lab.id });
  const redact = (s: string): string => writer.redactor.text(s);
  const createdAt = new Date().toISOString();
  let phase = "allocate";
  const progress = (e: Omit<ProgressEvent, "participant">): void => {
    try {
      ctx.progress({ participant: pid, ...e });
    } catch {
      // a broken progress sink never stops a study
    }
  };
  const setPhase = async (next: string, detail?: string): Promise<void> => {
    phase = next;
    progress({ phase: next, ...(detail ? { detail: redact(detail) } : {}) });
    await writer.writeStatus({ phase: next, ...(detail ? { detail } : {}) }).catch(() => undefined);
  };
  const rec: TerminalRecording = createTerminalRecording({
    writer,
    participantId: pid,
    redact,
    onProgress: (detail) => progress({ phase, detail }),
  });
  const log = rec.recorder;
  const nonce = newNonce();
  const brief = composeBrief(lab, nonce);
  const caps = plan.caps;
  const maxMinutes = caps.maxMinutes ?? 0;
  const product = lab.subject.product;
  const workdir = TERMINAL_STUDY_DIR;
  const diskMiB = lab.execution.limits?.diskMiB ?? DEFAULT_DISK_MIB;
  const provider = deps.sandboxProvider ?? createDockerSandboxProvider({ docker: engine.docker });

  log.lifecycle(
    "terminal-lab.run.created",
    `run ${ctx.runId}: lab ${lab.id}, actor ${plan.descriptor.type}, target docker, image ${engine.image}${engine.built ? " (built by this run)" : ""}; ${engine.node ? `node ${engine.node.version} (tarball sha256 ${engine.node.sha256})${engine.node.npmVersion ? `, npm ${engine.node.npmVersion}` : ""}` : "node unrecorded (the image carries no humanish.node labels)"}; disk limit ${diskMiB} MiB`,
  );
  log.lifecycle(
    "terminal-lab.subject.declared",
    `product ${product.name}; public surfaces ${product.publicSurfaces.join(" ")}; provenance UNPINNED; brief sha256:${briefDigest(brief)}`,
  );
  log.lifecycle(
    "terminal-lab.caps.declared",
    `maxUsd=${caps.maxUsd} maxJobs=${caps.maxJobs ?? "unset"} maxMinutes=${caps.maxMinutes}; first-output deadline ${deps.firstOutputMs ?? DEFAULT_FIRST_OUTPUT_MS} ms`,
  );
  const p = lab.policies;
  log.lifecycle(
    "terminal-lab.credentials.declared",
    `${plan.runtimeKey ? `runtime key from ${plan.runtimeKey.sourceName} (value never recorded)` : "no runtime key"}; policies allowPrivateRepoAccess=${p.allowPrivateRepoAccess} allowProviderCredentials=${p.allowProviderCredentials} allowPaymentCredentials=${p.allowPaymentCredentials} allowGitHubMutation=${p.allowGitHubMutation}`,
  );

  let sandbox: Sandbox | undefined;
  let createdId: string | undefined;
  let outcome: TerminalParticipantOutcome | undefined;
  let participantStarted = false;
  let checked: TaskResult[] | undefined;
  let failure: HumanishError | undefined;
  const provisionLog: string[] = [];
  const cleanup: CleanupProof[] = [];
  const guard = (): void => {
    if (ctx.signal.aborted) throw new Interrupted();
  };

  try {
    guard();
    progress({ phase: "allocate", detail: `creating sandbox from ${engine.image}` });
    sandbox = await provider.create({
      runId: ctx.runId,
      image: engine.image,
      network: plan.network,
      diskBytes: diskMiB * 1024 * 1024,
      workdir,
      labels: { "humanish.lab": lab.id, "humanish.participant": pid, [PROJECT_LABEL]: ctx.cwd },
      onCreated: async (id) => {
        createdId = id;
        await writer.appendNdjson(
          "sandbox-receipts.ndjson",
          { at: new Date().toISOString(), participantId: pid, provider: provider.provider, id, kind: "sandbox", timeoutMs: maxMinutes * 60_000 },
          { kind: "sandbox-receipts", durable: true },
        );
        log.lifecycle("terminal-lab.sandbox.created", `${provider.provider} sandbox ${id} (network ${plan.network}); id recorded before provisioning`);
      },
    });
    guard();
    await readyProbe(sandbox, ctx.signal);
    log.lifecycle("terminal-lab.sandbox.ready", `${workdir} ready (root-owned, mode 0777); participant user ${PARTICIPANT_USER}`);
    if (ca) {
      await sandbox.writeFile(SANDBOX_CA_PATH, ca.pem, 0o644);
      log.lifecycle(
        "terminal-lab.sandbox.ca",
        `extra CA bundle (${ca.pem.length} bytes of public certificates) copied to ${SANDBOX_CA_PATH}; network commands get ${Object.keys(ca.env).join(", ")}`,
      );
    }

    await setPhase("provision", "participant runtime");
    const networkEnv = ca?.env ?? {};
    await plan.participant.prepare({ sandbox, user: PARTICIPANT_USER, workdir, recorder: log, signal: ctx.signal, networkEnv });
    guard();
    const install = product.install ?? [];
    for (const [i, command] of install.entries()) {
      await setPhase("provision", `install ${i + 1}/${install.length}: ${command}`);
      await runInstall(sandbox, command, i, install.length, { workdir, signal: ctx.signal, rec, provisionLog, networkEnv, network: plan.network });
      guard();
    }
    log.lifecycle("terminal-lab.product.prepared", `${install.length} install command(s) ran as root, unkeyed`);
    if (plan.network === "bridge" && !plan.descriptor.capabilities.byoModel) {
      // The network was granted for product.install; a participant that calls no model gets none
      // (ARCHITECTURE.md invariant 2). Without a confirmed detach the study does not go on.
      if (!sandbox.detachNetwork) {
        throw new HumanishError(
          "HUMANISH_SANDBOX_NETWORK_DETACH_FAILED",
          `the ${provider.provider} sandbox cannot take its network away before the participant`,
          {
            next: "run this lab on the docker target",
          },
        );
      }
      await sandbox.detachNetwork();
      log.lifecycle("terminal-lab.network.detached", "network taken away after product.install; the participant runs with none");
    }

    await setPhase("participate", plan.descriptor.type);
    participantStarted = true;
    const startedAt = Date.now();
    outcome = await plan.participant.run({
      sandbox,
      user: PARTICIPANT_USER,
      workdir,
      recorder: log,
      signal: ctx.signal,
      networkEnv,
      brief,
      nonce,
      deadlines: { firstOutputMs: deps.firstOutputMs ?? DEFAULT_FIRST_OUTPUT_MS, deadlineAt: startedAt + maxMinutes * 60_000 },
      ...(plan.runtimeKey ? { runtimeKey: plan.runtimeKey } : {}),
      redact,
    });
    if (outcome.deadline && outcome.deadline !== "interrupted") {
      log.lifecycle("terminal-lab.participant.deadline", `the ${deadlineLabel(outcome.deadline)} deadline fired: ${outcome.reason}`);
    }
    log.lifecycle("terminal-lab.participant.ended", `${outcome.status}/${outcome.completionReason}: ${outcome.reason}`);
    guard();

    const tasks = actor.tasks ?? [];
    if (tasks.length > 0) {
      await setPhase("check", `${tasks.length} hidden check(s)`);
      checked = await runTaskChecks(tasks, { sandbox, user: PARTICIPANT_USER, workdir, participantId: pid, recorder: log, redact, signal: ctx.signal });
      const passed = checked.filter((t) => t.passed).length;
      progress({ phase: "check", tasksPassed: passed, tasksTotal: tasks.length });
    }
    guard();
  } catch (e) {
    if (!(e instanceof Interrupted) && !ctx.signal.aborted) {
      failure = isHumanishError(e)
        ? e
        : new HumanishError("HUMANISH_TERMINAL_LAB_FAILED", `terminal study failed in ${phase}: ${e instanceof Error ? e.message : String(e)}`, {
            next: "Read the bundle's lifecycle (terminal-ledgers.json) and rerun; report a bug if it repeats.",
            cause: e,
          });
      log.lifecycle("terminal-lab.session.error", `${failure.code} in ${phase}: ${failure.message}`);
    }
  } finally {
    await setPhase("teardown", createdId ? `releasing ${createdId}` : "nothing to release");
    let proof: ReleaseProof | undefined;
    if (sandbox) proof = await sandbox.release();
    else if (createdId && provider.provider === "docker") proof = await releaseContainer(engine.docker, createdId);
    if (proof) {
      cleanup.push(cleanupProof(proof, pid));
      log.lifecycle(
        proof.outcome === "released" ? "terminal-lab.cleanup.verified" : "terminal-lab.cleanup.unconfirmed",
        `${proof.provider} ${proof.id}: ${proof.outcome} (${proof.reason})`,
      );
    } else {
      log.lifecycle("terminal-lab.cleanup.skipped", "no sandbox was created");
    }
  }

  const interrupted = ctx.signal.aborted ? signalName(ctx.signal) : undefined;
  if (interrupted) log.lifecycle("terminal-lab.interrupted", `${interrupted}: the participant was stopped, the sandbox released`);

  // Caps (reference §5.5): known spend over maxUsd fails closed; null never trips a cap.
  const keyedCommandRan = rec.commands.some((c) => c.envNames.some((n) => plan.descriptor.runtimeKeyNames.includes(n)));
  const today = isoDate();
  const providerLine = providerCostLine({ descriptor: plan.descriptor, participantId: pid, outcome, keyedCommandRan, kind: "provider", today });
  if (!failure && caps.maxUsd !== null && providerLine.usd !== null && providerLine.usd > caps.maxUsd) {
    failure = new HumanishError("HUMANISH_TERMINAL_LAB_CAPS_EXCEEDED", `estimated spend ${providerLine.usd} USD exceeds scenario.caps.maxUsd ${caps.maxUsd}.`, {
      next: "Raise scenario.caps.maxUsd or narrow the mission; the participant's own verdict is kept in the bundle.",
    });
    log.lifecycle("terminal-lab.caps.exceeded", failure.message);
  }
  const knownJobs = providerLine.count ?? 0;
  if (!failure && caps.maxJobs !== null && knownJobs > caps.maxJobs) {
    failure = new HumanishError("HUMANISH_TERMINAL_LAB_CAPS_EXCEEDED", `${knownJobs} known billable job(s) exceed scenario.caps.maxJobs ${caps.maxJobs}.`, {
      next: "Raise scenario.caps.maxJobs; the participant's own verdict is kept in the bundle.",
    });
    log.lifecycle("terminal-lab.caps.exceeded", failure.message);
  }
  if (cleanup.some((c) => c.outcome !== "released")) {
    const prev = failure ? ` (after ${failure.code})` : "";
    failure = new HumanishError(
      "HUMANISH_TERMINAL_LAB_CLEANUP_UNPROVEN",
      `the sandbox release was not confirmed${prev}: ${cleanup.map((c) => `${c.id} ${c.reason}`).join("; ")}`,
      {
        next: `Remove it by id: docker rm -f ${cleanup.map((c) => c.id).join(" ")}`,
      },
    );
  }

  await setPhase("write");
  const writeErrors = await rec.flush();
  const tasksDeclared = actor.tasks ?? [];
  const tasks: TaskResult[] =
    checked ??
    tasksDeclared.map((t) => ({
      id: t.id,
      goal: t.goal,
      participantId: pid,
      status: "not_run" as const,
      passed: false,
      detail: interrupted ? "not checked: the study was interrupted" : failure ? `not checked: ${failure.code}` : "not checked",
    }));
  const runtime = plan.participant.runtime();
  const participant = participantRecord({
    participantId: pid,
    actorType: plan.descriptor.type,
    outcome,
    fallback: {
      status: "failed",
      completionReason: interrupted ? "interrupted" : "harness_error",
      reason: redact(
        interrupted
          ? `interrupted by ${interrupted} before the participant ran`
          : failure
            ? `${failure.code}: ${failure.message}`
            : "the participant did not run",
      ),
    },
  });

  const safeWrite = async (what: string, f: () => Promise<unknown>): Promise<void> => {
    try {
      await f();
    } catch (e) {
      writeErrors.push(`${what}: ${e instanceof Error ? e.message : String(e)}`);
    }
  };
  if (rec.eventLines() === 0) await safeWrite(TERMINAL_EVENTS_FILE, () => writer.writeArtifact(TERMINAL_EVENTS_FILE, "", { kind: "terminal-events" }));
  await safeWrite("terminal-transcript.txt", () => writer.writeArtifact("terminal-transcript.txt", rec.transcript(), { kind: "terminal-transcript" }));
  if (provisionLog.length > 0) await safeWrite("provision.log", () => writer.writeArtifact("provision.log", provisionLog.join(""), { kind: "log" }));
  if (outcome) {
    const trace = buildActorTrace({
      participantId: pid,
      actorType: plan.descriptor.type,
      descriptor: plan.descriptor,
      outcome,
      ...(runtime ? { runtime } : {}),
      personaId: actor.persona ?? DEFAULT_PERSONA,
      briefDigest: briefDigest(brief),
      ...(actor.type === "codex-exec" && actor.reasoningEffort ? { reasoningEffort: actor.reasoningEffort } : {}),
    });
    await safeWrite(ACTOR_TRACE_FILE, () => writer.writeJson(ACTOR_TRACE_FILE, trace, { kind: "actor-trace" }));
  }
  const ledgers = buildTerminalLedgers({
    productName: product.name,
    ...(runtime ? { runtime } : {}),
    lifecycle: rec.lifecycle,
    commandLog: rec.commandLog,
    provider: providerLine,
    maxUsd: caps.maxUsd,
    cleanup,
  });
  await safeWrite("terminal-ledgers.json", () => writer.writeJson("terminal-ledgers.json", ledgers, { kind: "terminal-ledgers" }));
  if (writeErrors.length > 0 && !failure) {
    failure = new HumanishError("HUMANISH_BUNDLE_WRITE_FAILED", `evidence could not be written completely: ${writeErrors.join("; ")}`, {
      next: "Check free disk space and permissions of .humanish/runs; the bundle will not verify.",
    });
  }

  const runOutcome: RunOutcome = interrupted
    ? { state: "interrupted", interrupted }
    : failure
      ? { state: "failed", error: { code: failure.code, message: redact(failure.message), ...(failure.next ? { next: failure.next } : {}) } }
      : { state: "completed" };
  const modelLine = { ...providerLine, kind: "model-tokens" as const, ...(runtime?.requestedModel ? { modelId: runtime.requestedModel } : {}) };
  const sandboxLine = {
    kind: "sandbox-minutes" as const,
    participantId: pid,
    usd: 0,
    count: null,
    basis: "no-spend-signal" as const,
    ratesAsOf: today,
    source: "humanish: a local Docker sandbox has no metered provider",
    reason: null,
  };
  const gaps = ["product, media and payment spend are unmeasured (no cost probe exists for this product)"];
  if (failure && participantStarted === false) gaps.push(`the participant never ran (${failure.code})`);
  const review = deriveReview({ mode: "live", outcome: runOutcome, participants: [participant], tasks, gaps });
  const bundle = await writer.finalize({
    route: "terminal",
    mode: "live",
    target: "docker",
    createdAt,
    lab: { id: lab.id, ...(lab.title ? { title: lab.title } : {}), source: ctx.labSource },
    subject: { source: "terminal-product", name: product.name, publicSurfaces: product.publicSurfaces, provenance: "unpinned" },
    outcome: runOutcome,
    lifecycle: rec.lifecycle,
    participants: [participant],
    tasks,
    review,
    caps,
    cost: summarizeCost([modelLine, sandboxLine]),
    cleanup,
    warnings: ctx.labWarnings,
    redactionNotes: `literal scrub of ${secrets.length} provisioned secret value(s), then secret and local-path shapes, then truncation`,
  });
  await setPhase("verify");
  const verify = await verifyRun(writer.runDir);
  const passed = tasks.filter((t) => t.passed).length;
  progress({ phase: "done", detail: verify.ok ? "verified" : "verify failed", tasksPassed: passed, tasksTotal: tasks.length });

  const participantFailed = participant.completionReason === "harness_error" || participant.completionReason === "actor_error";
  let error = failure ? { code: failure.code, message: redact(failure.message), ...(failure.next ? { next: failure.next } : {}) } : undefined;
  if (!error && !interrupted && outcome && (outcome.deadline === "first-output" || outcome.deadline === "max-minutes")) {
    // The run itself is sound (the bundle records a timed-out participant), but the study could
    // not finish: say so with a code and a next step (issue 2 §14 "a participant that hangs").
    const firstOutputS = Math.round((deps.firstOutputMs ?? DEFAULT_FIRST_OUTPUT_MS) / 1000);
    error =
      outcome.deadline === "first-output"
        ? {
            code: "HUMANISH_TERMINAL_LAB_PARTICIPANT_TIMED_OUT",
            message: redact(`the participant printed nothing for ${firstOutputS} s and was killed (first-output deadline): ${outcome.reason}`),
            next: "Make the participant's commands print progress and never wait for input (stdin is closed); terminal-transcript.txt shows where it stalled.",
          }
        : {
            code: "HUMANISH_TERMINAL_LAB_PARTICIPANT_TIMED_OUT",
            message: redact(`the participant was killed at scenario.caps.maxMinutes (${caps.maxMinutes} min): ${outcome.reason}`),
            next: "Raise scenario.caps.maxMinutes or narrow the mission; terminal-transcript.txt shows where it stalled.",
          };
  }
  if (!error && !interrupted && participantFailed && outcome) {
    error = {
      code: "HUMANISH_TERMINAL_LAB_FAILED",
      message: redact(`the participant runtime failed: ${outcome.reason}`),
      next: "Read actor.json and terminal-transcript.txt in the run directory.",
    };
  }
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
    route: "terminal",
    mode: "live",
    verdict: stakeholderLine(bundle.review),
    participants: [{ id: pid, status: participant.status, completionReason: participant.completionReason ?? "none" }],
    tasks: tasks.map((t) => ({ id: t.id, goal: t.goal, passed: t.passed, status: t.status, ...(t.detail ? { detail: t.detail } : {}) })),
    reward: tasks.length > 0 ? passed / tasks.length : null,
    verify: { ok: verify.ok, shareSafety: verify.shareSafety.status },
    verification: verify,
    warnings: ctx.labWarnings.map((w) => ({ code: w.code, message: w.message })),
    ...(error ? { error } : {}),
    ...(interrupted ? { interrupted } : {}),
  };
}

/**
 * Readiness: the engine created the study directory (the container's working dir) owned by root;
 * root opens it to everyone (0777) — root keeps ownership, so unkeyed install commands can chmod
 * what they create without any capability — and the participant user and `timeout` must exist.
 */
async function readyProbe(sandbox: Sandbox, signal: AbortSignal): Promise<void> {
  const script = `chmod 0777 ${TERMINAL_STUDY_DIR} && id -u ${PARTICIPANT_USER} >/dev/null && command -v timeout >/dev/null && echo HUMANISH_SHELL_READY`;
  let out = "";
  let code = -1;
  try {
    const r = await sandbox.exec({ cmd: ["bash", "-c", script], user: "root", cwd: TERMINAL_STUDY_DIR, timeoutMs: READY_TIMEOUT_MS, signal });
    out = decodeText(r.stdout) + decodeText(r.stderr);
    code = r.exitCode;
  } catch (e) {
    if (signal.aborted) throw new Interrupted();
    throw new HumanishError("HUMANISH_TERMINAL_LAB_SANDBOX_NOT_READY", `the sandbox did not become ready: ${e instanceof Error ? e.message : String(e)}`, {
      next: `The image needs a user "${PARTICIPANT_USER}" with home /home/${PARTICIPANT_USER}, bash and coreutils (timeout); remove execution.image to use the humanish sandbox image.`,
    });
  }
  if (code !== 0 || !out.includes("HUMANISH_SHELL_READY")) {
    if (signal.aborted) throw new Interrupted();
    throw new HumanishError("HUMANISH_TERMINAL_LAB_SANDBOX_NOT_READY", `the sandbox readiness probe exited ${code}: ${tailText(out.trim(), 300)}`, {
      next: `The image needs a user "${PARTICIPANT_USER}" with home /home/${PARTICIPANT_USER}, bash and coreutils (timeout); remove execution.image to use the humanish sandbox image.`,
    });
  }
}

/**
 * The next step of a failed install, for the lab's network: a lab without network may simply
 * need `execution.network: bridge`; a lab that has it must look elsewhere (name, version, registry).
 */
export function installFailureHint(network: "none" | "bridge"): string {
  return network === "bridge"
    ? "Fix that install command (the full output is in provision.log in the run directory); it ran as root with network (execution.network: bridge), so check the package name and version and that the registry answers from this machine."
    : "Fix that install command (the full output is in provision.log in the run directory); it ran as root with no network: if it downloads anything, set execution.network: bridge in the lab.";
}

/** Runs one `product.install` command as root, unkeyed; throws `HUMANISH_TERMINAL_LAB_INSTALL_FAILED`. */
async function runInstall(
  sandbox: Sandbox,
  command: string,
  index: number,
  total: number,
  o: { workdir: string; signal: AbortSignal; rec: TerminalRecording; provisionLog: string[]; networkEnv: Record<string, string>; network: "none" | "bridge" },
): Promise<void> {
  const argv = ["bash", "-c", 'exec 0</dev/null; exec "$@"', "humanish-install", "bash", "-lc", command];
  const env = { ...o.networkEnv, HOME: "/root", DEBIAN_FRONTEND: "noninteractive" };
  const chunks: Uint8Array[] = [];
  let r: Awaited<ReturnType<typeof sandbox.exec>>;
  try {
    r = await sandbox.exec({
      cmd: argv,
      env,
      user: "root",
      cwd: o.workdir,
      timeoutMs: INSTALL_TIMEOUT_MS,
      signal: o.signal,
      onStdout: (c) => chunks.push(c),
      onStderr: (c) => chunks.push(c),
    });
  } catch (e) {
    if (o.signal.aborted) throw new Interrupted();
    throw e;
  }
  o.rec.recorder.command({
    label: `install-${index + 1}`,
    argv,
    envNames: Object.keys(env).sort(),
    user: "root",
    exitCode: r.exitCode,
    timedOut: r.timedOut,
    deadline: null,
    durationMs: r.durationMs,
  });
  const text = chunks.length > 0 ? chunks.map((c) => decodeText(c)).join("") : decodeText(r.stdout) + decodeText(r.stderr);
  o.provisionLog.push(
    `$ ${command}\n${text}${text.endsWith("\n") || text === "" ? "" : "\n"}[exit ${r.exitCode}${r.timedOut ? ", timed out" : ""} after ${Math.round(r.durationMs)} ms]\n`,
  );
  if (o.signal.aborted) throw new Interrupted();
  if (r.exitCode !== 0 || r.timedOut) {
    o.rec.recorder.lifecycle("terminal-lab.product.install.error", `product.install[${index}] exited ${r.exitCode}${r.timedOut ? " (timed out)" : ""}`);
    throw new HumanishError(
      "HUMANISH_TERMINAL_LAB_INSTALL_FAILED",
      `subject.product.install[${index}] (${index + 1} of ${total}) ${r.timedOut ? `timed out after ${INSTALL_TIMEOUT_MS} ms` : `exited ${r.exitCode}`}: ${tailText(text.trim(), 400)}`,
      {
        next: installFailureHint(o.network),
      },
    );
  }
}

/**
 * The terminal route: seats use a real command-line product, each inside its own sandbox — a
 * local Docker one, or an E2B one on `execution.target: e2b-terminal` (./e2b.ts) (ARCHITECTURE.md
 * "Data flow"). The route is thin: lab → plan → the study runner with the terminal lane of the
 * target (src/lanes/docker-terminal, src/lanes/e2b-terminal), then the shared tail (src/study).
 *
 *   preflight   actor, subject, target, caps, runtime key by NAME, engine, image — before anything exists
 *   plan        seats (count, lanes or roster), concurrency (the ledger's slots, each sandbox's memory limit)
 *   seats       per seat, in the runner: reserve a slot → allocate (exact id recorded before
 *               provisioning) → provision → participate → check → release by exact id, always
 *   write       every seat's evidence, then `run.json` with the study section; then `verifyRun`
 * A failure or an interruption after the run directory exists still leaves a bundle that says
 * what happened; a failure before it (preflight) throws a HumanishError and creates nothing.
 */

import os from "node:os";
import { createRunWriter } from "../../bundle/writer.ts";
import type { DockerClient } from "../../docker/index.ts";
import { HumanishError } from "../../errors.ts";
import { isTerminalLab, labSeats } from "../../lab/routing.ts";
import type { LabConfig, TerminalLabConfig } from "../../lab/schema.ts";
import { DEFAULT_FIRST_OUTPUT_MS, dockerTerminalLane, type TerminalSeatFacts } from "../../lanes/docker-terminal/index.ts";
import { type ModelSeat, openModelSeat, studyBudget } from "../../lanes/docker-terminal/model-seat.ts";
import { checkEngine, type EngineReady } from "../../lanes/docker-terminal/preflight.ts";
import type { E2BSandboxProvider } from "../../sandbox/e2b.ts";
import { createDockerSandboxProvider, DEFAULT_DISK_BYTES, DEFAULT_MEMORY_BYTES } from "../../sandbox/index.ts";
import type { SandboxProvider } from "../../sandbox/types.ts";
import { studySecrets } from "../../secrets/index.ts";
import type { SeatEvidence } from "../../study/evidence.ts";
import { pickSeatSpecs, planStudyConcurrency, type SeatSpec, type SeatsRun } from "../../study/index.ts";
import { loadSandboxCa, type SandboxCa } from "../../terminal-seat/ca.ts";
import { planTerminalStudy, type TerminalPlan } from "../../terminal-seat/plan.ts";
import type { TerminalLaneStudy } from "../../terminal-seat/steps.ts";
import type { StudyContext, StudyResult } from "../types.ts";
import { runTerminalDryRun, TERMINAL_PARTICIPANT_ID } from "./dry-run.ts";
import { runE2BTerminalStudy } from "./e2b.ts";
import { finishTerminalStudy, runTerminalSeats, studyLifecycle, studyPreamble } from "./study.ts";

export {
  DEFAULT_FIRST_OUTPUT_MS,
  INSTALL_TIMEOUT_MS,
  installFailureHint,
  PARTICIPANT_USER,
} from "../../lanes/docker-terminal/index.ts";
export { checkEngine, type EngineReady } from "../../lanes/docker-terminal/preflight.ts";
export { briefDigest, composeBrief, DEFAULT_MISSION, DEFAULT_PERSONA } from "../../terminal-seat/brief.ts";
export { createTerminalParticipant, planTerminalStudy, type TerminalCaps, type TerminalPlan } from "../../terminal-seat/plan.ts";
export { TERMINAL_PARTICIPANT_ID } from "./dry-run.ts";

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
  /** Memory the study may use, bytes (default: the kernel's available memory). */
  availableMemoryBytes?: number;
  /** E2B sandbox provider for `e2b-terminal` (default: the `e2b` SDK at the env's E2B endpoints). */
  e2bProvider?: E2BSandboxProvider;
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
  if (plan.target === "e2b-terminal") return runE2BTerminalStudy(tctx, plan, deps);
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

/**
 * Opens the gateway of each model-driven seat before the study: a model seat reaches its model
 * only through its own gateway (its socket directory is mounted at create time, and its token
 * must be a secret of the writer from the start). One study budget for all seats: maxTotalUsd
 * bounds their sum, not each seat. Empty for a participant that calls no model.
 * @throws openModelSeat's errors, every gateway opened so far closed first
 */
async function openModelSeats(plan: TerminalPlan, seats: readonly SeatSpec[], maxTotalUsd: number | null): Promise<Map<string, ModelSeat>> {
  const modelSeats = new Map<string, ModelSeat>();
  const study = maxTotalUsd !== null ? studyBudget(maxTotalUsd) : undefined;
  try {
    if (plan.model)
      for (const seat of seats)
        modelSeats.set(
          seat.id,
          openModelSeat({
            endpoint: plan.model.endpoint,
            runtimeAuth: plan.model.runtimeAuth,
            key: plan.runtimeKey,
            maxUsd: plan.caps.maxUsd ?? 0,
            maxTotalUsd,
            ...(study ? { study } : {}),
          }),
        );
  } catch (e) {
    await closeAll(modelSeats);
    throw e;
  }
  return modelSeats;
}

/** Closes every model seat's gateway (a failed close is ignored: the gateway is gone with the process). */
function closeAll(modelSeats: ReadonlyMap<string, ModelSeat>): Promise<unknown> {
  return Promise.all([...modelSeats.values()].map((m) => m.close().catch(() => undefined)));
}

/** The study-level events of a Docker terminal study (see studyPreamble); `diskMiB` in MiB, `firstOutputMs` in ms. */
function dockerPreamble(
  ctx: StudyContext<TerminalLabConfig>,
  plan: TerminalPlan,
  engine: EngineReady,
  o: { seats: number; concurrency: ReturnType<typeof planStudyConcurrency>; diskMiB: number; maxTotalUsd: number | null; firstOutputMs: number },
) {
  const lab = ctx.lab;
  const node = engine.node
    ? `node ${engine.node.version} (tarball sha256 ${engine.node.sha256})${engine.node.npmVersion ? `, npm ${engine.node.npmVersion}` : ""}`
    : "node unrecorded (the image carries no humanish.node labels)";
  return studyPreamble(lab, {
    created: `run ${ctx.runId}: lab ${lab.id}, actor ${plan.descriptor.type}, target docker, image ${engine.image}${engine.built ? " (built by this run)" : ""}; ${node}; disk limit ${o.diskMiB} MiB; ${o.seats} seat(s), concurrency ${o.concurrency.concurrency}`,
    caps: plan.caps,
    maxTotalUsd: o.maxTotalUsd,
    firstOutputMs: o.firstOutputMs,
    credentials: plan.runtimeKey ? `runtime key from ${plan.runtimeKey.sourceName} (value never recorded)` : "no runtime key",
    warnings: o.concurrency.warnings,
  });
}

async function runLive(
  ctx: StudyContext<TerminalLabConfig>,
  plan: TerminalPlan,
  engine: EngineReady,
  deps: TerminalStudyDeps,
  ca: SandboxCa | undefined,
): Promise<StudyResult> {
  const lab = ctx.lab;
  const seats = pickSeatSpecs(labSeats(lab), ctx.seatIds);
  // Each seat's sandbox is created with this memory limit: the honest bound of what it may take.
  const concurrency = planStudyConcurrency({
    seats: seats.length,
    requested: lab.execution.concurrency,
    env: ctx.env,
    seatMemoryBytes: DEFAULT_MEMORY_BYTES,
    availableMemoryBytes: deps.availableMemoryBytes ?? os.freemem(),
  });
  const secrets = studySecrets(ctx);
  if (plan.runtimeKey) secrets.push(plan.runtimeKey.value);
  const maxTotalUsd = lab.scenario.caps?.maxTotalUsd ?? null;
  const modelSeats = await openModelSeats(plan, seats, maxTotalUsd);
  for (const m of modelSeats.values()) secrets.push(m.access.token);
  let writer: ReturnType<typeof createRunWriter>;
  try {
    writer = createRunWriter({ cwd: ctx.cwd, runId: ctx.runId, secrets, route: "terminal", mode: "live", lab: lab.id });
  } catch (e) {
    await closeAll(modelSeats);
    throw e;
  }
  const redact = (s: string): string => writer.redactor.text(s);
  const createdAt = new Date().toISOString();
  const diskMiB = lab.execution.limits?.diskMiB ?? DEFAULT_DISK_MIB;
  const provider = deps.sandboxProvider ?? createDockerSandboxProvider({ docker: engine.docker });
  const firstOutputMs = deps.firstOutputMs ?? DEFAULT_FIRST_OUTPUT_MS;
  const preamble = dockerPreamble(ctx, plan, engine, { seats: seats.length, concurrency, diskMiB, maxTotalUsd, firstOutputMs });
  const lifecycle = studyLifecycle(preamble, seats.length, redact);
  const study: TerminalLaneStudy = { lab, plan, writer, runId: ctx.runId, firstOutputMs, seatCount: seats.length, ca, preamble };
  const lane = dockerTerminalLane({ ...study, engine, provider, cwd: ctx.cwd, diskMiB, modelSeats });
  let run: SeatsRun<SeatEvidence<TerminalSeatFacts>>;
  try {
    run = await runTerminalSeats(ctx, redact, { seats, lane, concurrency: concurrency.concurrency, caps: { maxTotalUsd, maxJobs: plan.caps.maxJobs } });
  } finally {
    await closeAll(modelSeats);
  }
  if (ctx.signal.aborted && seats.length > 1)
    lifecycle.push({
      at: new Date().toISOString(),
      event: "terminal-lab.interrupted",
      message: `${signalName(ctx.signal)}: every seat was stopped, every sandbox released`,
    });
  if (run.leaseLost) lifecycle.push({ at: new Date().toISOString(), event: "terminal-lab.study.lease-lost", message: redact(run.leaseLost) });
  return finishTerminalStudy({
    ctx,
    writer,
    plan,
    run,
    target: "docker",
    lane: "docker-terminal",
    concurrency,
    maxTotalUsd,
    createdAt,
    lifecycle,
    gaps: [],
    secretCount: secrets.length,
  });
}

/**
 * The terminal route on `execution.target: e2b-terminal`: the same study as on Docker, each seat
 * in its own E2B sandbox (src/lanes/e2b-terminal). Preflight before the run directory: E2B_DEBUG
 * refused, E2B_API_KEY present by name; no host engine, no image, no gateway. Concurrency is the
 * lab's (up to 16 seats at once), the study's caps and `HUMANISH_MAX_CONCURRENCY` — the host's
 * memory is not a bound, the sandboxes are remote.
 */
import { latestOnce } from "../../actors/codex-exec/index.ts";
import { createRunWriter } from "../../bundle/writer.ts";
import { labSeats } from "../../lab/routing.ts";
import type { TerminalLabConfig } from "../../lab/schema.ts";
import { E2B_FIRST_OUTPUT_MS, e2bTerminalLane, laneEgress, resolveE2BAccess } from "../../lanes/e2b-terminal/index.ts";
import { createE2BSandboxProvider, DEFAULT_E2B_TEMPLATE, type E2BSandboxProvider } from "../../sandbox/e2b.ts";
import { studySecrets } from "../../secrets/index.ts";
import { pickSeatSpecs, planConcurrency } from "../../study/index.ts";
import { loadSandboxCa } from "../../terminal-seat/ca.ts";
import type { TerminalPlan } from "../../terminal-seat/plan.ts";
import type { TerminalLaneStudy } from "../../terminal-seat/steps.ts";
import type { StudyContext, StudyResult } from "../types.ts";
import { finishTerminalStudy, runTerminalSeats, studyLifecycle, studyPreamble } from "./study.ts";

/** Most E2B seats one study runs at once. */
export const E2B_MAX_CONCURRENCY = 16;

/** Seams for tests. */
export interface E2BStudyDeps {
  e2bProvider?: E2BSandboxProvider;
  firstOutputMs?: number;
}

/**
 * Runs a live E2B terminal study; returns the result the CLI prints.
 * @throws HumanishError before anything exists: `HUMANISH_E2B_DEBUG_REFUSED`,
 *   `HUMANISH_TERMINAL_LAB_KEYS_MISSING`, `HUMANISH_TERMINAL_LAB_EGRESS_RULE_CONFLICT`,
 *   `HUMANISH_MAX_CONCURRENCY_INVALID`, `HUMANISH_RUN_ID_IN_USE`.
 */
export async function runE2BTerminalStudy(ctx: StudyContext<TerminalLabConfig>, plan: TerminalPlan, deps: E2BStudyDeps = {}): Promise<StudyResult> {
  const lab = ctx.lab;
  const template = lab.execution.template ?? DEFAULT_E2B_TEMPLATE;
  const access = resolveE2BAccess(ctx.env, template);
  // Refuses a conflicting egress rule, or a bad CA bundle, before anything is created.
  laneEgress(lab, plan);
  const ca = loadSandboxCa(ctx.env);
  const seats = pickSeatSpecs(labSeats(lab), ctx.seatIds);
  const concurrency = planConcurrency({
    seats: seats.length,
    ...(lab.execution.concurrency !== undefined ? { requested: lab.execution.concurrency } : {}),
    ...(ctx.env.HUMANISH_MAX_CONCURRENCY !== undefined ? { envMax: ctx.env.HUMANISH_MAX_CONCURRENCY } : {}),
    perStudyLimit: E2B_MAX_CONCURRENCY,
    // Remote sandboxes take no host memory: one unit per seat makes memory no bound.
    seatMemoryBytes: 1,
    availableMemoryBytes: E2B_MAX_CONCURRENCY,
  });
  const secrets = studySecrets(ctx);
  secrets.push(access.apiKey);
  if (plan.runtimeKey) secrets.push(plan.runtimeKey.value);
  const writer = createRunWriter({ cwd: ctx.cwd, runId: ctx.runId, secrets, route: "terminal", mode: "live", lab: lab.id });
  const redact = (s: string): string => writer.redactor.text(s);
  const createdAt = new Date().toISOString();
  const caps = plan.caps;
  const maxTotalUsd = lab.scenario.caps?.maxTotalUsd ?? null;
  const provider = deps.e2bProvider ?? createE2BSandboxProvider({ apiKey: access.apiKey, connection: access.connection });
  const firstOutputMs = deps.firstOutputMs ?? E2B_FIRST_OUTPUT_MS;
  const auth = plan.model?.runtimeAuth;
  const preamble = studyPreamble(lab, {
    created: `run ${ctx.runId}: lab ${lab.id}, actor ${plan.descriptor.type}, target e2b-terminal, template ${template}; ${seats.length} seat(s), concurrency ${concurrency.concurrency}`,
    caps,
    maxTotalUsd,
    firstOutputMs,
    ...(auth ? { capsNote: "; the model spend cap is after-the-fact (Codex reaches its model directly from E2B)" } : {}),
    credentials: `E2B key from E2B_API_KEY (value never recorded); ${plan.runtimeKey ? `runtime key from ${plan.runtimeKey.sourceName} held by ${auth === "openai-egress" ? "the sandbox's E2B egress rule for api.openai.com" : "the Codex command's env as CODEX_API_KEY"} (value never recorded)` : "no runtime key"}`,
    warnings: concurrency.warnings,
  });
  const lifecycle = studyLifecycle(preamble, seats.length, redact);
  const study: TerminalLaneStudy = { lab, plan, writer, runId: ctx.runId, firstOutputMs, seatCount: seats.length, ca, preamble };
  const lane = e2bTerminalLane({ ...study, access, provider, latest: latestOnce(), env: ctx.env });
  const run = await runTerminalSeats(ctx, redact, {
    seats,
    lane,
    concurrency: concurrency.concurrency,
    caps: { maxTotalUsd, maxJobs: caps.maxJobs },
    remote: true,
  });
  if (ctx.signal.aborted && seats.length > 1)
    lifecycle.push({ at: new Date().toISOString(), event: "terminal-lab.interrupted", message: "every seat was stopped, every sandbox released" });
  return finishTerminalStudy({
    ctx,
    writer,
    plan,
    run,
    target: "e2b-terminal",
    lane: "e2b-terminal",
    concurrency,
    maxTotalUsd,
    createdAt,
    lifecycle,
    gaps: auth
      ? ["model spend is unpriced: Codex reached its model directly from E2B, so no gateway observed the model or enforced the cap before each request"]
      : [],
    secretCount: secrets.length,
  });
}

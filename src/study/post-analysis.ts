/**
 * The study's post-run analyst: after the bundle is sealed and verified, one `humanish analyze`
 * through the same code path (src/analysis/run.ts: its evidence bounds, admission and cap are
 * unchanged), stored in the same bundle as `analysis/<NNNN>/`. It never fails a study: a reason
 * it could not run is an outcome (`skipped`), said on stderr and carried in the `--json` result.
 *
 * When `review.analysis` is absent the default is the metered OpenAI analyst, but only when the
 * study ran live, `OPENAI_API_KEY` is set and a cap is derivable (`scenario.caps.maxTotalUsd`):
 * a dry run spends nothing and no analyst ever runs without a USD cap it was told.
 */

import { errorMessage } from "../errors.ts";
import type { AnalysisConfig } from "../lab/index.ts";

/** What the post-run analyst did; `id` is the attempt (`0001`), `skipped` the reason it did not run. */
export interface PostAnalysisOutcome {
  outcome: "complete" | "partial" | "rejected" | "failed" | "skipped";
  id?: string;
  skipped?: string;
  provider?: "openai" | "codex";
  findings?: number;
  /** Known cost, USD; null when the provider's billing does not say. */
  costUsd?: number | null;
}

/** The analyst to run, or the reason none runs. */
export type AnalystPlan =
  | { run: true; provider: "openai" | "codex"; model: string | null; question: string | null; maxCostUsd: number | null }
  | { run: false; reason: string };

export interface PlanInput {
  /** `review.analysis` as parsed: absent, `false`, or an analyst. */
  analysis: AnalysisConfig | false | undefined;
  mode: "dry-run" | "live";
  /** `scenario.caps.maxTotalUsd`, the study's own cap (the default analyst's cap when none is set). */
  maxTotalUsd: number | undefined;
  env: Record<string, string | undefined>;
  /** The study's result: an analyst reads only a study that completed and verified. */
  studyOk: boolean;
}

/** Which analyst runs (pure: see the module doc for the default). */
export function planAnalyst(p: PlanInput): AnalystPlan {
  if (p.analysis === false) return { run: false, reason: "review.analysis is false" };
  if (p.mode !== "live") return { run: false, reason: "a dry run spends nothing (run with --live for findings)" };
  if (!p.studyOk) return { run: false, reason: "the study did not complete with a verified bundle (harness trouble is never a finding)" };
  const a = p.analysis ?? { provider: "openai" as const };
  if (a.provider === "codex") return { run: true, provider: "codex", model: a.model ?? null, question: a.question ?? null, maxCostUsd: null };
  if (!p.env.OPENAI_API_KEY)
    return {
      run: false,
      reason: `OPENAI_API_KEY is not set${p.analysis ? "" : " (the default analyst is openai; set review.analysis: false to silence this)"}`,
    };
  const cap = a.maxCost ?? (p.maxTotalUsd !== undefined && p.maxTotalUsd > 0 ? p.maxTotalUsd : undefined);
  if (cap === undefined) return { run: false, reason: "no USD cap for the analyst: set review.analysis.maxCost (or scenario.caps.maxTotalUsd above 0)" };
  return { run: true, provider: "openai", model: a.model ?? null, question: a.question ?? null, maxCostUsd: cap };
}

export interface PostAnalysisInput extends PlanInput {
  runDir: string;
  /** Secret values of the study, scrubbed from what is stored. */
  secrets: readonly string[];
  signal: AbortSignal;
}

/** Runs the planned analyst on the sealed bundle at `runDir`; never throws. */
export async function runPostAnalysis(i: PostAnalysisInput): Promise<PostAnalysisOutcome> {
  const plan = planAnalyst(i);
  if (!plan.run) return { outcome: "skipped", skipped: plan.reason };
  if (i.signal.aborted) return { outcome: "skipped", skipped: "the study was interrupted", provider: plan.provider };
  try {
    const { ANALYSIS_TIMEOUT_MS, analyzeRun } = await import("../analysis/run.ts");
    const provider =
      plan.provider === "openai"
        ? (await import("../analysis/provider-openai.ts")).createOpenAIAnalysisProvider(i.env)
        : (await import("../analysis/provider-codex.ts")).createCodexAnalysisProvider({ env: i.env });
    const o = await analyzeRun({
      runDir: i.runDir,
      provider,
      model: plan.model,
      question: plan.question,
      maxCostUsd: plan.maxCostUsd,
      maxOutputTokens: null,
      timeoutMs: ANALYSIS_TIMEOUT_MS,
      dryRun: false,
      // A fresh study has no earlier attempt; a reused one would be the same evidence and config.
      rerun: false,
      signal: i.signal,
      secrets: i.secrets,
    });
    const outcome = o.status === "dry_run" ? "skipped" : o.status;
    return {
      outcome,
      ...(o.attempt ? { id: o.attempt } : {}),
      provider: plan.provider,
      findings: o.findings,
      costUsd: o.usage?.costUsd ?? null,
    };
  } catch (e) {
    // Every refusal before sending (no login, over the cap, a sensitive shape) throws: nothing
    // was sent, so the study's result stands and the reason is the outcome.
    const code = typeof (e as { code?: unknown }).code === "string" ? `${(e as { code: string }).code}: ` : "";
    return { outcome: "skipped", provider: plan.provider, skipped: `${code}${errorMessage(e)}` };
  }
}

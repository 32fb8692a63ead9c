/** `humanish analyze` and `humanish analyze show` — parse flags, call src/analysis/, print. */
import { relative } from "node:path";
import { resolveRunDir } from "../../bundle/index.ts";
import { HumanishError } from "../../errors.ts";
import type { CommandOutcome } from "../output.ts";
import { type CommandContext, intFlag, strFlag } from "./context.ts";

/** `--max-cost` as USD: a plain non-negative decimal. */
function usdFlag(raw: string | undefined): number | null {
  if (raw === undefined) return null;
  if (!/^\d+(\.\d+)?$/.test(raw) || !Number.isFinite(Number(raw)))
    throw new HumanishError("HUMANISH_ANALYSIS_CONFIG_INVALID", `--max-cost must be a non-negative amount in USD, got ${JSON.stringify(raw)}`, {
      next: "pass e.g. --max-cost 1",
    });
  return Number(raw);
}

/** The provider the operator named, built for this invocation's env. */
async function providerFor(name: string, env: Record<string, string | undefined>) {
  if (name === "openai") {
    const { createOpenAIAnalysisProvider } = await import("../../analysis/provider-openai.ts");
    return createOpenAIAnalysisProvider(env);
  }
  if (name === "codex") {
    // The restricted Codex account analyst; its module is loaded only when asked for.
    const { createCodexAnalysisProvider } = await import("../../analysis/provider-codex.ts");
    return createCodexAnalysisProvider({ env });
  }
  throw new HumanishError("HUMANISH_ANALYSIS_CONFIG_INVALID", `--provider must be openai or codex, got ${JSON.stringify(name)}`, {
    next: "pass --provider openai (default) or --provider codex; there is no fallback between them",
  });
}

/** Exit code of an analysis whose measured cost exceeded `--max-cost`. */
export const EXIT_CAP_EXCEEDED = 3;

function usd(n: number | null | undefined): string {
  return n === null || n === undefined ? "unknown" : `$${n.toFixed(6)}`;
}

/**
 * `analyze [--run ID|latest] --max-cost USD [--model M] [--question Q] [--dry-run]
 * [--timeout-ms N] [--max-output-tokens N] [--rerun] [--provider openai|codex]`.
 * Exit 0 when the analysis (or the dry run's estimate) is accepted, 2 otherwise, and
 * {@link EXIT_CAP_EXCEEDED} when the request was billed above `--max-cost` (the attempt is
 * stored and labelled `capExceeded`; its findings are kept, the cap failed).
 */
export async function analyzeCommand(ctx: CommandContext): Promise<CommandOutcome> {
  const { ANALYSIS_TIMEOUT_MS, analyzeRun } = await import("../../analysis/run.ts");
  const providerName = strFlag(ctx, "provider") ?? "openai";
  const dryRun = ctx.flags["dry-run"] === true;
  const runDir = await resolveRunDir(ctx.cwd, strFlag(ctx, "run") ?? "latest");
  const provider = await providerFor(providerName, ctx.env);
  // SIGINT/SIGTERM abort the request (ctx.signal, trapped by the CLI); the attempt is still
  // stored with its diagnostics, and the CLI then exits 130/143.
  const o = await analyzeRun({
    runDir,
    provider,
    model: strFlag(ctx, "model") ?? null,
    question: strFlag(ctx, "question") ?? null,
    maxCostUsd: usdFlag(strFlag(ctx, "max-cost")),
    maxOutputTokens: ctx.flags["max-output-tokens"] === undefined ? null : intFlag(ctx, "max-output-tokens", 0, "HUMANISH_ANALYSIS_CONFIG_INVALID"),
    timeoutMs: intFlag(ctx, "timeout-ms", ANALYSIS_TIMEOUT_MS, "HUMANISH_ANALYSIS_CONFIG_INVALID", 1),
    dryRun,
    rerun: ctx.flags.rerun === true,
    signal: ctx.signal,
    secrets: ctx.secrets,
  });
  const accepted = o.dryRun || o.status === "complete" || o.status === "partial";
  const result = {
    schema: ctx.spec.schema,
    ok: accepted && !o.capExceeded,
    capExceeded: o.capExceeded,
    run: o.runId,
    dryRun: o.dryRun,
    reused: o.reused,
    status: o.status,
    attempt: o.attempt,
    artifactPath: o.artifactPath,
    diagnosticsPath: o.attempt ? `.humanish/runs/${o.runId}/analysis/${o.attempt}/diagnostics.json` : null,
    provider: o.provider,
    model: o.model,
    admission: {
      estimatedUsd: o.estimate.usd,
      maxCostUsd: o.maxCostUsd,
      admitted: true,
      inputTokens: o.estimate.inputTokens,
      imageTokens: o.estimate.imageTokens,
      maxOutputTokens: o.estimate.maxOutputTokens,
      ratesAsOf: o.estimate.ratesAsOf,
    },
    selection: o.selection,
    usage: o.usage,
    findings: o.findings,
    rejectedFindings: o.rejectedFindings,
    warnings: o.warnings,
    ...(accepted && o.capExceeded
      ? {
          error: {
            code: "HUMANISH_ANALYSIS_CAP_EXCEEDED",
            message: `analysis ${o.attempt} of run ${o.runId} was billed ${usd(o.usage?.costUsd)}, over --max-cost $${o.maxCostUsd}: the cap did not hold (the answer is stored, labelled capExceeded)`,
            next: `check the model's rates (the estimate was ≤ ${usd(o.estimate.usd)}) and the provider's bill; lower --max-output-tokens or pick a cheaper --model before the next attempt`,
          },
        }
      : {}),
    ...(accepted
      ? {}
      : {
          error: {
            code: o.status === "failed" ? "HUMANISH_ANALYSIS_REQUEST_FAILED" : "HUMANISH_ANALYSIS_OUTPUT_REJECTED",
            message: `analysis ${o.attempt} of run ${o.runId} was ${o.status}: ${o.error?.message ?? "no reason given"}`,
            next: `read .humanish/runs/${o.runId}/analysis/${o.attempt}/diagnostics.json; re-run with --rerun when the cause is fixed`,
          },
        }),
  };
  const sel = o.selection;
  const head = `${sel.evidence} evidence item(s) from ${sel.participants} participant(s), ${sel.images} screenshot(s)${sel.omitted ? `, ${sel.omitted} not sent (listed)` : ""}`;
  const est = `estimate ≤ ${usd(o.estimate.usd)} (${o.estimate.inputTokens} input tokens, ≤ ${o.estimate.maxOutputTokens ?? "?"} output)${o.maxCostUsd !== null ? ` within --max-cost $${o.maxCostUsd}` : ""}`;
  const human = o.dryRun
    ? `dry run: analysis of ${o.runId} by ${o.provider}${o.model ? ` (${o.model})` : ""} would send ${head}; ${est}. Nothing was sent.`
    : `analysis ${o.attempt} of ${o.runId}: ${o.status}${o.reused ? " (reused: same evidence and config; --rerun for a new attempt)" : ""} · ${o.findings} finding(s)${o.rejectedFindings ? `, ${o.rejectedFindings} rejected` : ""} · cost ${usd(o.usage?.costUsd)} (${o.usage?.costLabel ?? "not-sent"}) · ${head}${o.artifactPath ? `\n${o.artifactPath}` : ""}`;
  const overspent = o.capExceeded ? `\nCAP EXCEEDED: billed ${usd(o.usage?.costUsd)} over --max-cost $${o.maxCostUsd}` : "";
  return { result, human: human + overspent, ...(o.capExceeded ? { exitCode: EXIT_CAP_EXCEEDED } : {}) };
}

/** `analyze show [--run ID|latest]`: the latest attempt's findings; exit 2 when it was rejected or failed. */
export async function analyzeShowCommand(ctx: CommandContext): Promise<CommandOutcome> {
  const { latestAnalysis } = await import("../../analysis/run.ts");
  const runDir = await resolveRunDir(ctx.cwd, strFlag(ctx, "run") ?? "latest");
  const a = await latestAnalysis(runDir);
  const r = a.record;
  const ok = r.status === "complete" || r.status === "partial";
  const findings = r.result?.findings ?? [];
  const human = [
    `analysis ${a.attempt} of ${r.runId} (${relative(ctx.cwd, runDir)}): ${r.status} · ${r.provider}${r.model ? ` ${r.model}` : ""} · ${findings.length} finding(s)${r.rejectedFindings ? `, ${r.rejectedFindings} rejected` : ""} · cost ${usd(r.usage.costUsd)} (${r.usage.costLabel})`,
    ...(r.result?.summary ? [r.result.summary] : []),
    ...findings.map(
      (f) =>
        `  [${f.severity}] ${f.id} ${f.title} — ${f.kind}; participants ${f.participants.join(", ") || "none"}; evidence ${f.evidence.join(", ")}\n      → ${f.recommendation}`,
    ),
    ...(r.error ? [`  ${r.error.code}: ${r.error.message}`] : []),
  ].join("\n");
  return {
    result: {
      schema: ctx.spec.schema,
      ok,
      run: r.runId,
      attempt: a.attempt,
      attempts: a.attempts,
      analysis: r,
      diagnostics: a.diagnostics,
      ...(ok
        ? {}
        : {
            error: {
              code: r.status === "failed" ? "HUMANISH_ANALYSIS_REQUEST_FAILED" : "HUMANISH_ANALYSIS_OUTPUT_REJECTED",
              message: `the latest analysis (${a.attempt}) was ${r.status}: ${r.error?.message ?? ""}`,
              next: `run \`humanish analyze --run ${r.runId} --rerun --max-cost 1\``,
            },
          }),
    },
    human,
  };
}

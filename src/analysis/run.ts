/**
 * `analyzeRun`: one `humanish analyze` from a verified bundle to a stored attempt, provider-blind.
 *
 *   verify + read once → select evidence → sensitive-text check → build the prompt →
 *   estimate → provider.admit + the cap (refused before anything is sent) → dry run stops here →
 *   reuse an identical earlier attempt unless `rerun` → provider.preflight → provider.run (once) →
 *   validate → store `analysis/<NNNN>/` (every dispatched request is stored, a rejected or failed
 *   one too: it was sent and may have been billed).
 */

import type { AnalysisDiagnostics, AnalysisRecord, AnalysisRequestLine, AnalysisRequests, AnalysisStatus, TrustSet } from "../bundle/index.ts";
import { findSensitive, round6 } from "../bundle/index.ts";
import { canonicalJson } from "../bundle/signing/canonical.ts";
import { sha256Hex } from "../bytes/sha256.ts";
import { HumanishError } from "../errors.ts";
import { type AdmissionDetail, assertWithinCap, estimateRequest, outputAllowance } from "./admission.ts";
import { buildPrompt, PROMPT_VERSION, promptDigest } from "./prompt.ts";
import type { AnalysisProvider, AnalysisProviderResult, AnalysisRunOptions } from "./provider.ts";
import { type BundleView, type EvidenceSelection, SELECTION_LIMITS, type SelectionLimits, selectEvidence } from "./select.ts";
import { attemptsView, listedAttempts, loadVerifiedBundle, nextAttempt, readAttempt, storeAttempt, withAnalysisLock } from "./store.ts";
import { type ValidatedOutput, validateOutput } from "./validate.ts";

/** Default and most `timeoutMs` (ms): the whole request, headers and body. */
export const ANALYSIS_TIMEOUT_MS = 600_000;

/** What the operator asked for. Units: USD, tokens, ms. */
export interface AnalyzeOptions {
  runDir: string;
  provider: AnalysisProvider;
  model: string | null;
  question: string | null;
  maxCostUsd: number | null;
  maxOutputTokens: number | null;
  timeoutMs: number;
  dryRun: boolean;
  rerun: boolean;
  signal: AbortSignal;
  trust?: TrustSet;
  /** Secret values of this invocation, scrubbed from what is stored (the bundle writer's redactor). */
  secrets?: readonly string[];
  limits?: SelectionLimits;
  now?: () => Date;
}

/** What one analyze did. `status` is the attempt's, `dry_run`, or the reused attempt's. */
export interface AnalyzeOutcome {
  runId: string;
  dryRun: boolean;
  reused: boolean;
  status: AnalysisStatus | "dry_run";
  attempt: string | null;
  artifactPath: string | null;
  provider: string;
  model: string | null;
  estimate: AdmissionDetail;
  maxCostUsd: number | null;
  selection: { participants: number; evidence: number; omitted: number; images: number; textBytes: number; imageBytes: number };
  usage: AnalysisRecord["usage"] | null;
  findings: number;
  rejectedFindings: number;
  error: { code: string; message: string } | null;
  /** True when the measured cost exceeded `maxCostUsd` (a failure of the cap, however the answer fared). */
  capExceeded: boolean;
  warnings: string[];
}

/** True when a measured cost went over the operator's cap (an unknown cost or no cap never does). Units: USD. */
export function overCap(costUsd: number | null, maxCostUsd: number | null): boolean {
  return costUsd !== null && maxCostUsd !== null && costUsd > maxCostUsd;
}

/** The warning of an overspent attempt. Units: USD. */
function overspendWarning(costUsd: number | null, maxCostUsd: number | null): string[] {
  return overCap(costUsd, maxCostUsd) ? [`cap exceeded: the request was billed ${costUsd} USD, over --max-cost ${maxCostUsd} USD`] : [];
}

/** What a selection covers, in counts and bytes: the outcome's `selection` and the record's `coverage`. */
function selectionSummary(sel: EvidenceSelection): AnalyzeOutcome["selection"] {
  return {
    participants: sel.participants.length,
    evidence: sel.items.length,
    omitted: sel.omitted.length,
    images: sel.images,
    textBytes: sel.textBytes,
    imageBytes: sel.imageBytes,
  };
}

/**
 * Secret or local-path shapes in what would be sent: the bundle was redacted when written, so
 * a hit means something slipped through, and nothing is sent.
 * @throws HumanishError HUMANISH_ANALYSIS_SENSITIVE_EVIDENCE naming the item and the shape
 */
function assertNothingSensitive(sel: EvidenceSelection): void {
  for (const item of sel.items) {
    const hit = findSensitive(item.text, 1)[0];
    if (hit)
      throw new HumanishError("HUMANISH_ANALYSIS_SENSITIVE_EVIDENCE", `evidence ${item.ref.id} contains a ${hit.shape} shape; nothing was sent`, {
        next: "run `humanish verify` on the run (its public-safety scan names the file) and re-run the study once the leak is fixed",
      });
  }
}

/** Everything decided before sending: the packet, the prompt, the options, the estimate, the digests. */
interface Prepared {
  /** The run record and its analysis files ({@link attemptsView}). */
  view: BundleView;
  sel: EvidenceSelection;
  prompt: ReturnType<typeof buildPrompt>;
  options: AnalysisRunOptions;
  identity: Record<string, string | number | boolean | null>;
  model: string | null;
  estimate: AdmissionDetail;
  inputDigest: string;
  configDigest: string;
}

/**
 * Verifies the run and selects its evidence; returns the selection and the part of the bundle
 * the later steps read ({@link attemptsView}). The full view lives only in this frame, so it is
 * unreachable once this returns.
 */
async function selectVerified(o: AnalyzeOptions): Promise<{ view: BundleView; sel: EvidenceSelection }> {
  const full = await loadVerifiedBundle(o.runDir, o.trust);
  const sel = selectEvidence(full, o.limits ?? SELECTION_LIMITS);
  return { view: attemptsView(full), sel };
}

/** Verify, select, build, estimate and admit (throws for every refusal; nothing is sent). */
async function prepare(o: AnalyzeOptions): Promise<Prepared> {
  if (!Number.isInteger(o.timeoutMs) || o.timeoutMs < 1 || o.timeoutMs > ANALYSIS_TIMEOUT_MS)
    throw new HumanishError("HUMANISH_ANALYSIS_CONFIG_INVALID", `--timeout-ms must be a whole number from 1 to ${ANALYSIS_TIMEOUT_MS}, got ${o.timeoutMs}`, {
      next: `pass e.g. --timeout-ms ${ANALYSIS_TIMEOUT_MS}, or omit it`,
    });
  const { view, sel } = await selectVerified(o);
  assertNothingSensitive(sel);
  const prompt = buildPrompt(sel, o.question);
  const metered = o.provider.billing === "metered";
  const asked: AnalysisRunOptions = { model: o.model, maxCostUsd: o.maxCostUsd, maxOutputTokens: o.maxOutputTokens, timeoutMs: o.timeoutMs, signal: o.signal };
  const identity = await o.provider.identity(asked);
  const model = typeof identity.model === "string" ? identity.model : o.model;
  // An account-billed provider has no rate: its allowance is the operator's (which it refuses when numeric).
  const allowance = metered ? outputAllowance(prompt, model, o.maxOutputTokens, o.maxCostUsd) : o.maxOutputTokens;
  const options: AnalysisRunOptions = { ...asked, maxOutputTokens: allowance };
  const estimate = metered ? estimateRequest(prompt, model, allowance) : { ...estimateRequest(prompt, null, allowance), usd: null };
  o.provider.admit(options, estimate);
  assertWithinCap(estimate, o.maxCostUsd);
  const config = {
    promptVersion: PROMPT_VERSION,
    provider: o.provider.name,
    model,
    question: o.question,
    maxCostUsd: o.maxCostUsd,
    maxOutputTokens: allowance,
    identity,
  };
  return { view, sel, prompt, options, identity, model, estimate, inputDigest: promptDigest(prompt), configDigest: sha256Hex(canonicalJson(config)) };
}

/** The newest accepted attempt made from the same prompt and config, if any. */
function reusable(p: Prepared): { attempt: string; record: AnalysisRecord } | null {
  for (const attempt of listedAttempts(p.view).reverse()) {
    const prev = readAttempt(p.view, attempt);
    if (!prev || (prev.record.status !== "complete" && prev.record.status !== "partial")) continue;
    if (prev.record.inputDigest === p.inputDigest && prev.record.configDigest === p.configDigest) return { attempt, record: prev.record };
  }
  return null;
}

/** The request ledger line of one sent request (the cost-labelling rule: a null cost carries its reason). */
function ledgerLine(o: AnalyzeOptions, sent: string, result: AnalysisProviderResult): AnalysisRequestLine {
  const { outcome, request } = result;
  const known = request.costUsd !== null;
  return {
    at: sent,
    provider: o.provider.name,
    model: request.model,
    responseId: request.responseId,
    outcome: outcome.status,
    httpStatus: outcome.status === "failed" ? (outcome.httpStatus ?? null) : null,
    inputTokens: request.usage.inputTokens,
    outputTokens: request.usage.outputTokens,
    costUsd: known ? round6(request.costUsd!) : null,
    costLabel: !known && request.costLabel === "priced" ? "unpriced-token-usage" : request.costLabel,
    ratesAsOf: known ? (request.ratesAsOf ?? null) : null,
    source: known ? (request.rateSource ?? null) : null,
    reason: known ? null : (request.costReason ?? (request.costLabel === "account-unknown" ? "account-unknown" : "no_token_usage")),
    durationMs: request.durationMs,
  };
}

/** The three documents of a sent attempt. */
function documentsOf(
  o: AnalyzeOptions,
  p: Prepared,
  attempt: string,
  times: { createdAt: string; completedAt: string },
  line: AnalysisRequestLine,
  v: ValidatedOutput,
) {
  const runId = p.view.bundle.runId;
  const { sel, estimate } = p;
  const record: AnalysisRecord = {
    schema: "humanish.analysis.v1",
    runId,
    attempt,
    status: v.status,
    ...times,
    provider: o.provider.name,
    model: line.model,
    question: o.question,
    inputDigest: p.inputDigest,
    configDigest: p.configDigest,
    identity: p.identity,
    estimate: {
      inputTokens: estimate.inputTokens,
      imageTokens: estimate.imageTokens,
      outputTokens: estimate.maxOutputTokens,
      usd: estimate.usd,
      maxCostUsd: o.maxCostUsd,
    },
    usage: { inputTokens: line.inputTokens, outputTokens: line.outputTokens, costUsd: line.costUsd, costLabel: line.costLabel },
    coverage: selectionSummary(sel),
    evidence: sel.items.map((i) => i.ref),
    omitted: sel.omitted,
    result: v.result,
    rejectedFindings: v.rejectedFindings.length,
    error: v.error,
    capExceeded: overCap(line.costUsd, o.maxCostUsd),
  };
  const diagnostics: AnalysisDiagnostics = {
    schema: "humanish.analysis-diagnostics.v1",
    runId,
    attempt,
    rejectedFindings: v.rejectedFindings,
    rejectedOutput: v.rejectedOutput,
  };
  const requests: AnalysisRequests = { schema: "humanish.analysis-requests.v1", runId, attempt, requests: [line] };
  return { record, diagnostics, requests };
}

/**
 * Run one analysis (see the module doc). Throws HumanishError for every refusal before sending.
 * A real analysis holds the run's analysis lock from the first read to the re-seal, so two of
 * them never take the same attempt number; a dry run writes nothing and takes no lock.
 */
export async function analyzeRun(o: AnalyzeOptions): Promise<AnalyzeOutcome> {
  return o.dryRun ? analyzeLocked(o) : withAnalysisLock(o.runDir, () => analyzeLocked(o));
}

async function analyzeLocked(o: AnalyzeOptions): Promise<AnalyzeOutcome> {
  const now = o.now ?? (() => new Date());
  const createdAt = now().toISOString();
  const p = await prepare(o);
  const runId = p.view.bundle.runId;
  const omitted = p.sel.omitted.length;
  const base = {
    runId,
    provider: o.provider.name,
    model: p.model,
    estimate: p.estimate,
    maxCostUsd: o.maxCostUsd,
    selection: selectionSummary(p.sel),
    warnings: omitted ? [`${omitted} evidence item(s) did not fit the packet; they are listed in the analysis's omitted list`] : [],
  };
  const none = { usage: null, findings: 0, rejectedFindings: 0, error: null, capExceeded: false };
  if (o.dryRun) return { ...base, ...none, dryRun: true, reused: false, status: "dry_run", attempt: null, artifactPath: null };
  const prev = o.rerun ? null : reusable(p);
  if (prev) {
    const r = prev.record;
    const artifactPath = `.humanish/runs/${runId}/analysis/${prev.attempt}/analysis.json`;
    return {
      ...base,
      ...none,
      dryRun: false,
      reused: true,
      status: r.status,
      attempt: prev.attempt,
      artifactPath,
      usage: r.usage,
      findings: r.result?.findings.length ?? 0,
      rejectedFindings: r.rejectedFindings,
      capExceeded: overCap(r.usage.costUsd, r.estimate.maxCostUsd),
      warnings: [...base.warnings, ...overspendWarning(r.usage.costUsd, r.estimate.maxCostUsd)],
    };
  }
  await o.provider.preflight?.(p.options);
  const sent = now().toISOString();
  const result = await o.provider.run(p.prompt, p.options);
  const scope = { evidence: new Map(p.sel.items.map((i) => [i.ref.id, i.ref])), participants: new Set(p.sel.participants), tasks: new Set(p.sel.tasks) };
  const v = validateOutput(result.outcome, scope);
  const attempt = nextAttempt(p.view);
  const docs = documentsOf(o, p, attempt, { createdAt, completedAt: now().toISOString() }, ledgerLine(o, sent, result), v);
  const hadReport = p.view.bundle.artifacts.some((a) => a.kind === "report");
  const stored = await storeAttempt(o.runDir, docs, { hadReport, secrets: o.secrets ?? [] });
  const rejected = v.rejectedFindings.length;
  return {
    ...base,
    model: docs.record.model,
    dryRun: false,
    reused: false,
    status: v.status,
    attempt,
    artifactPath: stored.artifactPath,
    usage: docs.record.usage,
    findings: v.result?.findings.length ?? 0,
    rejectedFindings: rejected,
    error: v.error,
    capExceeded: docs.record.capExceeded === true,
    warnings: [
      ...base.warnings,
      ...(rejected ? [`${rejected} finding(s) rejected: see analysis/${attempt}/diagnostics.json`] : []),
      ...overspendWarning(docs.record.usage.costUsd, o.maxCostUsd),
    ],
  };
}

/** The latest stored attempt of the verified run at `runDir`. */
export async function latestAnalysis(
  runDir: string,
  trust?: TrustSet,
): Promise<{ attempt: string; record: AnalysisRecord; diagnostics: AnalysisDiagnostics | null; attempts: string[] }> {
  const view = await loadVerifiedBundle(runDir, trust);
  const attempts = listedAttempts(view);
  const attempt = attempts.at(-1);
  if (!attempt)
    throw new HumanishError("HUMANISH_ANALYSIS_NOT_FOUND", `run ${view.bundle.runId} has no analysis yet`, {
      next: `run \`humanish analyze --run ${view.bundle.runId} --max-cost 1\` (see the estimate first with --dry-run)`,
    });
  const got = readAttempt(view, attempt);
  if (!got)
    throw new HumanishError("HUMANISH_ANALYSIS_INVALID", `analysis/${attempt}/analysis.json does not parse`, {
      next: `run \`humanish verify --run ${view.bundle.runId}\``,
    });
  return { attempt, ...got, attempts };
}

/**
 * What `humanish analyze` stores in a run bundle, as zod schemas — pure data, no I/O. They live in
 * the bundle layer because `verify` re-checks them; `src/analysis/` writes them.
 *
 * One attempt is a folder `analysis/<NNNN>/` (four digits, from 0001) holding three listed
 * artifacts of kind `analysis`:
 * - `analysis.json` (`humanish.analysis.v1`): what was asked, what evidence the model saw (and
 *   what did not fit), the estimate, the usage, and the accepted findings (or null);
 * - `diagnostics.json` (`humanish.analysis-diagnostics.v1`): every finding rejected and why,
 *   and the rejected output when the whole answer was refused, incomplete or invalid;
 * - `requests.json` (`humanish.analysis-requests.v1`): the request ledger (usage and cost; an
 *   unknown number is null with a reason, never 0).
 *
 * The model's answer itself is {@link AnalysisOutputSchema}: findings
 * `{id, title, severity, kind, participants[], tasks[], evidence[], recommendation}`.
 */
import { z } from "zod";
import { IsoTime, RatesDate, RunIdSchema, Sha256Hex } from "./schemas.ts";

const NonNegInt = z.number().int().nonnegative();
const NonNegNum = z.number().finite().nonnegative();

/** How severe a finding is for the product team. */
export const FindingSeveritySchema = z.enum(["blocker", "major", "minor", "info"]);
/**
 * Where a finding comes from: `observed` (what participants did, what the checks and screens
 * show), `participant_reported` (what a participant said; narration is never observation),
 * `harness` (humanish or the runtime failed: never a finding about the product).
 */
export const FindingKindSchema = z.enum(["observed", "participant_reported", "harness"]);

/** One finding as the model writes it. Ids are the packet's evidence ids and the bundle's participant and task ids. */
export const FindingSchema = z.strictObject({
  id: z.string().min(1).max(64),
  title: z.string().min(1).max(300),
  severity: FindingSeveritySchema,
  kind: FindingKindSchema,
  participants: z.array(z.string().min(1)).max(64),
  tasks: z.array(z.string().min(1)).max(64),
  evidence: z.array(z.string().min(1)).max(64),
  recommendation: z.string().max(2000),
});
export type Finding = z.infer<typeof FindingSchema>;

/** The model's whole answer (the structured-output contract). */
export const AnalysisOutputSchema = z.strictObject({
  summary: z.string().max(4000),
  findings: z.array(FindingSchema).max(50),
  limitations: z.array(z.string().max(1000)).max(20),
});
export type AnalysisOutput = z.infer<typeof AnalysisOutputSchema>;

/**
 * What an evidence item is grounded in: `observed` (checks, commands, actions, screens, the
 * transcript), `participant` (the participant's own words), `harness` (the runner's record of a
 * failure or its lifecycle).
 */
export const EvidenceBasisSchema = z.enum(["observed", "participant", "harness"]);
export type EvidenceBasis = z.infer<typeof EvidenceBasisSchema>;

/** Kinds of evidence items. */
export const EvidenceKindSchema = z.enum(["run", "status", "reason", "task", "trace", "transcript", "screenshot"]);
export type EvidenceKind = z.infer<typeof EvidenceKindSchema>;

/** Evidence ids: `<seat>/<what>[…]`, e.g. `p2/transcript#L41-L80`, `p1/screenshot/0007`, `run/summary`. */
export const EvidenceIdSchema = z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}\/[A-Za-z0-9._#/-]{1,160}$/, "not an evidence id");

/** One item the model saw. `source.path` is a listed artifact (`run.json` for the run's own facts). */
export const EvidenceRefSchema = z.strictObject({
  id: EvidenceIdSchema,
  kind: EvidenceKindSchema,
  basis: EvidenceBasisSchema,
  /** The bundle participant the item belongs to (null for run-level items). */
  participantId: z.string().min(1).nullable(),
  source: z.strictObject({
    path: z.string().min(1),
    /** 1-based inclusive line range of a transcript excerpt. */
    lines: z.tuple([z.number().int().positive(), z.number().int().positive()]).optional(),
    /** Trace item id, task id or screenshot ordinal the item was cut from. */
    item: z.string().min(1).optional(),
  }),
  /** Bytes of the text (or downscaled PNG) sent. */
  bytes: NonNegInt,
  /** SHA-256 of the text (or downscaled PNG) sent. */
  sha256: Sha256Hex,
  /** The first characters of a text item, for the report. */
  preview: z.string().max(600).optional(),
  /** Screenshots: the size sent and the size captured, in pixels. */
  image: z
    .strictObject({
      width: z.number().int().positive(),
      height: z.number().int().positive(),
      originalWidth: z.number().int().positive(),
      originalHeight: z.number().int().positive(),
    })
    .optional(),
});
export type EvidenceRef = z.infer<typeof EvidenceRefSchema>;

/** Why a candidate item was not sent. */
export const OmissionReasonSchema = z.enum(["item_budget", "text_budget", "image_budget", "image_bytes", "unreadable", "participant_budget"]);

/** One item that did not fit (listed, never silently dropped). */
export const OmittedEvidenceSchema = z.strictObject({
  id: EvidenceIdSchema,
  kind: EvidenceKindSchema,
  participantId: z.string().min(1).nullable(),
  reason: OmissionReasonSchema,
  /** Size of the item as it would have been sent (text bytes, or the PNG's stored bytes). */
  bytes: NonNegInt,
});
export type OmittedEvidence = z.infer<typeof OmittedEvidenceSchema>;

/** How a cost number was obtained (the cost-labelling rule: a number is dated and sourced, a null has a reason). */
export const AnalysisCostLabelSchema = z.enum(["priced", "unpriced-token-usage", "account-unknown", "not-sent"]);

/** Analysis attempt states: `complete` (every finding accepted), `partial` (some rejected), `rejected` (the output), `failed` (the request). */
export const AnalysisStatusSchema = z.enum(["complete", "partial", "rejected", "failed"]);
export type AnalysisStatus = z.infer<typeof AnalysisStatusSchema>;

/** `analysis/<NNNN>/analysis.json`. */
export const AnalysisRecordSchema = z.strictObject({
  schema: z.literal("humanish.analysis.v1"),
  runId: RunIdSchema,
  attempt: z.string().regex(/^\d{4}$/),
  status: AnalysisStatusSchema,
  createdAt: IsoTime,
  completedAt: IsoTime,
  provider: z.enum(["openai", "codex"]),
  model: z.string().min(1).nullable(),
  question: z.string().nullable(),
  /** SHA-256 of the prompt sent (instructions and every part's digest). */
  inputDigest: Sha256Hex,
  /** SHA-256 of the configuration (provider, model, question, caps, provider identity). */
  configDigest: Sha256Hex,
  identity: z.record(z.string(), z.union([z.string(), z.number(), z.boolean(), z.null()])),
  estimate: z.strictObject({
    inputTokens: NonNegInt,
    imageTokens: NonNegInt,
    outputTokens: NonNegInt.nullable(),
    /** Worst-case USD of the request; null when unpriced or account-billed. */
    usd: NonNegNum.nullable(),
    maxCostUsd: NonNegNum.nullable(),
  }),
  usage: z.strictObject({
    inputTokens: NonNegInt.nullable(),
    outputTokens: NonNegInt.nullable(),
    costUsd: NonNegNum.nullable(),
    costLabel: AnalysisCostLabelSchema,
  }),
  coverage: z.strictObject({
    participants: NonNegInt,
    evidence: NonNegInt,
    omitted: NonNegInt,
    images: NonNegInt,
    textBytes: NonNegInt,
    imageBytes: NonNegInt,
  }),
  evidence: z.array(EvidenceRefSchema),
  omitted: z.array(OmittedEvidenceSchema),
  /** The accepted answer (findings that passed validation); null when the output was rejected or the request failed. */
  result: AnalysisOutputSchema.nullable(),
  rejectedFindings: NonNegInt,
  error: z.strictObject({ code: z.string().min(1), message: z.string() }).nullable(),
  /**
   * True when the measured cost (`usage.costUsd`) came out above `estimate.maxCostUsd`: the cap
   * failed (the answer is kept — it was paid for — but labelled). Absent in records written
   * before this was recorded; an unknown cost is never counted as exceeding.
   */
  capExceeded: z.boolean().optional(),
});
export type AnalysisRecord = z.infer<typeof AnalysisRecordSchema>;

/**
 * Why a whole output was rejected. `all_findings_rejected` (added later; older bundles never
 * carry it): a valid answer none of whose findings passed validation — the findings themselves
 * are in `rejectedFindings`.
 */
export const RejectedOutputReasonSchema = z.enum(["refusal", "incomplete", "invalid_json", "schema_violation", "request_failed", "all_findings_rejected"]);

/** `analysis/<NNNN>/diagnostics.json`. */
export const AnalysisDiagnosticsSchema = z.strictObject({
  schema: z.literal("humanish.analysis-diagnostics.v1"),
  runId: RunIdSchema,
  attempt: z.string().regex(/^\d{4}$/),
  rejectedFindings: z.array(z.strictObject({ findingId: z.string().nullable(), finding: z.unknown(), problems: z.array(z.string().min(1)).min(1) })),
  rejectedOutput: z
    .strictObject({
      reason: RejectedOutputReasonSchema,
      detail: z.string(),
      /** The raw text the provider returned (bounded), or null when it returned none. */
      text: z.string().nullable(),
    })
    .nullable(),
});
export type AnalysisDiagnostics = z.infer<typeof AnalysisDiagnosticsSchema>;

/** One request of the ledger. Units: tokens, USD, ms. */
export const AnalysisRequestLineSchema = z.strictObject({
  at: IsoTime,
  provider: z.enum(["openai", "codex"]),
  model: z.string().min(1),
  responseId: z.string().min(1).nullable(),
  /** The provider outcome's status (`completed`, `incomplete`, `refused`, `failed`). */
  outcome: z.enum(["completed", "incomplete", "refused", "failed"]),
  httpStatus: z.number().int().nullable(),
  inputTokens: NonNegInt.nullable(),
  outputTokens: NonNegInt.nullable(),
  costUsd: NonNegNum.nullable(),
  costLabel: AnalysisCostLabelSchema,
  ratesAsOf: RatesDate.nullable(),
  source: z.string().min(1).nullable(),
  /** Why `costUsd` is null (e.g. `no_token_usage`, `no_rate_for_model`, `account-unknown`). */
  reason: z.string().min(1).nullable(),
  durationMs: NonNegNum,
});
export type AnalysisRequestLine = z.infer<typeof AnalysisRequestLineSchema>;

/** `analysis/<NNNN>/requests.json`. */
export const AnalysisRequestsSchema = z.strictObject({
  schema: z.literal("humanish.analysis-requests.v1"),
  runId: RunIdSchema,
  attempt: z.string().regex(/^\d{4}$/),
  requests: z.array(AnalysisRequestLineSchema),
});
export type AnalysisRequests = z.infer<typeof AnalysisRequestsSchema>;

/** The three files of an attempt folder. */
export const ANALYSIS_FILES = ["analysis.json", "diagnostics.json", "requests.json"] as const;

/** `analysis/<NNNN>/<file>` → attempt and file, or null for any other path. */
export function analysisPathParts(path: string): { attempt: string; file: (typeof ANALYSIS_FILES)[number] } | null {
  const m = /^analysis\/(\d{4})\/(analysis\.json|diagnostics\.json|requests\.json)$/.exec(path);
  return m ? { attempt: m[1]!, file: m[2] as (typeof ANALYSIS_FILES)[number] } : null;
}

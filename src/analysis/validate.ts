/**
 * Output validation — pure: a provider's raw answer in, accepted findings and diagnostics out.
 *
 * A refusal, an incomplete answer, invalid JSON, a schema violation (an unknown enum word
 * included) or a failed request is a rejected output: kept whole as diagnostics, never a
 * success. In a valid answer each finding is checked on its own and rejected into diagnostics
 * when it cites an evidence id that was not sent, names a participant or task the bundle does
 * not have, repeats an id, or claims a kind its evidence cannot carry: an `observed` finding
 * must cite observed evidence (a participant's words alone make it `participant_reported`), a
 * `participant_reported` one the participant's words, a `harness` one the harness's record.
 * An answer whose every finding is rejected is itself a rejected output (`all_findings_rejected`):
 * nothing in it can be acted on, so it is never `partial` and never a success; each finding
 * stays in diagnostics with its problems.
 */
import {
  type AnalysisDiagnostics,
  type AnalysisOutput,
  AnalysisOutputSchema,
  type AnalysisStatus,
  type EvidenceRef,
  type Finding,
  FindingSchema,
} from "../bundle/index.ts";
import { zodIssues } from "../text/zod-issues.ts";
import type { AnalysisProviderOutcome } from "./provider.ts";

/** Most characters of a rejected output kept as diagnostics. */
export const MAX_REJECTED_TEXT_CHARS = 256 * 1024;

/** What the bundle and the packet allow a finding to reference. */
export interface ReferenceScope {
  evidence: ReadonlyMap<string, EvidenceRef>;
  participants: ReadonlySet<string>;
  tasks: ReadonlySet<string>;
}

/** The verdict on one answer. */
export interface ValidatedOutput {
  status: AnalysisStatus;
  result: AnalysisOutput | null;
  rejectedFindings: AnalysisDiagnostics["rejectedFindings"];
  rejectedOutput: AnalysisDiagnostics["rejectedOutput"];
  error: { code: string; message: string } | null;
}

function rejected(
  reason: NonNullable<ValidatedOutput["rejectedOutput"]>["reason"],
  detail: string,
  text: string | null | undefined,
  code: string,
): ValidatedOutput {
  return {
    status: reason === "request_failed" ? "failed" : "rejected",
    result: null,
    rejectedFindings: [],
    rejectedOutput: { reason, detail, text: text === undefined || text === null ? null : text.slice(0, MAX_REJECTED_TEXT_CHARS) },
    error: { code, message: detail },
  };
}

/** Every problem with one schema-valid finding (none: accepted). */
export function findingProblems(f: Finding, scope: ReferenceScope): string[] {
  const problems: string[] = [];
  if (f.evidence.length === 0) problems.push("cites no evidence");
  const cited: EvidenceRef[] = [];
  for (const id of f.evidence) {
    const ref = scope.evidence.get(id);
    if (ref) cited.push(ref);
    else problems.push(`cites evidence ${id}, which was not in the packet`);
  }
  for (const p of f.participants) if (!scope.participants.has(p)) problems.push(`names participant ${p}, who is not in the bundle`);
  for (const t of f.tasks) if (!scope.tasks.has(t)) problems.push(`names task ${t}, which is not in the bundle`);
  if (cited.length === f.evidence.length && cited.length > 0) {
    const has = (b: EvidenceRef["basis"]) => cited.some((r) => r.basis === b);
    if (f.kind === "observed" && !has("observed"))
      problems.push("is marked observed but cites no observed evidence (a participant's or the harness's account alone is not an observation)");
    if (f.kind === "participant_reported" && !has("participant")) problems.push("is marked participant_reported but cites nothing the participant said");
    if (f.kind === "harness" && !has("harness")) problems.push("is marked harness but cites no record of a harness failure");
  }
  return problems;
}

/** Judge a provider's answer against the scope (see the module doc). */
export function validateOutput(outcome: AnalysisProviderOutcome, scope: ReferenceScope): ValidatedOutput {
  if (outcome.status === "failed") return rejected("request_failed", `${outcome.code}: ${outcome.message}`, null, outcome.code);
  if (outcome.status === "refused") return rejected("refusal", `the model refused: ${outcome.refusal.slice(0, 500)}`, outcome.refusal, "refusal");
  if (outcome.status === "incomplete") return rejected("incomplete", `the answer is incomplete (${outcome.reason})`, outcome.outputText, "output_incomplete");
  let raw: unknown;
  try {
    raw = JSON.parse(outcome.outputText);
  } catch (e) {
    return rejected("invalid_json", `the answer is not JSON: ${(e as Error).message}`, outcome.outputText, "invalid_json");
  }
  const parsed = AnalysisOutputSchema.safeParse(raw);
  if (!parsed.success) {
    // Name the findings that break the schema, so the diagnostics say which one and where.
    const findings =
      raw && typeof raw === "object" && Array.isArray((raw as { findings?: unknown }).findings) ? ((raw as { findings: unknown[] }).findings as unknown[]) : [];
    const which = findings
      .map((f, i) => ({ i, r: FindingSchema.safeParse(f) }))
      .filter((x) => !x.r.success)
      .map((x) => `findings[${x.i}]`);
    return rejected(
      "schema_violation",
      `the answer does not match the findings schema: ${zodIssues(parsed.error, 8)}${which.length ? ` (${which.join(", ")})` : ""}`,
      outcome.outputText,
      "schema_violation",
    );
  }
  const accepted: Finding[] = [];
  const rejectedFindings: ValidatedOutput["rejectedFindings"] = [];
  const seen = new Set<string>();
  for (const f of parsed.data.findings) {
    const problems = findingProblems(f, scope);
    if (seen.has(f.id)) problems.push(`repeats finding id ${f.id}`);
    seen.add(f.id);
    if (problems.length) rejectedFindings.push({ findingId: f.id, finding: f, problems });
    else accepted.push(f);
  }
  if (accepted.length === 0 && rejectedFindings.length > 0) {
    const v = rejected(
      "all_findings_rejected",
      `every finding (${rejectedFindings.length}) was rejected, first ${rejectedFindings[0]!.findingId}: ${rejectedFindings[0]!.problems[0]}`,
      outcome.outputText,
      "all_findings_rejected",
    );
    return { ...v, rejectedFindings };
  }
  return {
    status: rejectedFindings.length ? "partial" : "complete",
    result: { ...parsed.data, findings: accepted },
    rejectedFindings,
    rejectedOutput: null,
    error: null,
  };
}

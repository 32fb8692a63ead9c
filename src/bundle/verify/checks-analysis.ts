/**
 * `analysis records`: every `humanish analyze` attempt the bundle lists (`analysis/<NNNN>/`)
 * is whole (its three files listed), matches its schemas, names this run, cites only what
 * exists (each finding's evidence in the attempt's own evidence list, its participants and tasks
 * in the bundle, each evidence source a listed artifact), counts what it says it counts, and
 * labels its cost (a number is dated and sourced, a null carries a reason) and any overspend of
 * its `--max-cost` (`capExceeded`, named on the check's line). Pure.
 */

import { zodIssues } from "../../text/zod-issues.ts";
import {
  type AnalysisDiagnostics,
  AnalysisDiagnosticsSchema,
  type AnalysisRecord,
  AnalysisRecordSchema,
  type AnalysisRequests,
  AnalysisRequestsSchema,
  analysisPathParts,
} from "../analysis-records.ts";
import { round6 } from "../derive.ts";
import type { RunBundle } from "../schemas.ts";
import type { CheckOutcome, VerifyContext } from "./context.ts";
import { decodeText } from "./scan.ts";

interface Attempt {
  record?: AnalysisRecord;
  diagnostics?: AnalysisDiagnostics;
  requests?: AnalysisRequests;
  listed: Set<string>;
}

function parseFile(ctx: VerifyContext, path: string, problems: string[]): unknown {
  const bytes = ctx.files.get(path);
  if (!bytes) return undefined;
  const text = decodeText(bytes);
  if (text === null) return void problems.push(`${path}: not UTF-8 text`);
  try {
    return JSON.parse(text);
  } catch {
    return void problems.push(`${path}: not JSON`);
  }
}

/** Each finding's references against the record's evidence and the bundle's participants and tasks. */
function referencesResolve(b: RunBundle, dir: string, r: AnalysisRecord, problems: string[]): void {
  const listed = new Set(["run.json", ...b.artifacts.map((a) => a.path)]);
  const ids = new Set<string>();
  for (const e of r.evidence) {
    if (ids.has(e.id)) problems.push(`${dir}analysis.json: evidence id ${e.id} appears twice`);
    ids.add(e.id);
    if (!listed.has(e.source.path)) problems.push(`${dir}analysis.json: evidence ${e.id} cites ${e.source.path}, which the bundle does not list`);
  }
  for (const o of r.omitted) if (ids.has(o.id)) problems.push(`${dir}analysis.json: ${o.id} is listed both as sent and as omitted`);
  if (r.coverage.evidence !== r.evidence.length) problems.push(`${dir}analysis.json: coverage.evidence ${r.coverage.evidence} != ${r.evidence.length} items`);
  if (r.coverage.omitted !== r.omitted.length) problems.push(`${dir}analysis.json: coverage.omitted ${r.coverage.omitted} != ${r.omitted.length} items`);
  const people = new Set(b.participants.map((p) => p.id));
  const tasks = new Set(b.tasks.map((t) => t.id));
  for (const f of r.result?.findings ?? []) {
    for (const id of f.evidence) if (!ids.has(id)) problems.push(`${dir}analysis.json: finding ${f.id} cites evidence ${id}, which was not sent`);
    for (const p of f.participants) if (!people.has(p)) problems.push(`${dir}analysis.json: finding ${f.id} names participant ${p}, who is not in the bundle`);
    for (const t of f.tasks) if (!tasks.has(t)) problems.push(`${dir}analysis.json: finding ${f.id} names task ${t}, which is not in the bundle`);
    if (f.evidence.length === 0) problems.push(`${dir}analysis.json: finding ${f.id} cites no evidence`);
  }
}

/** The attempt's status agrees with its result and its diagnostics. */
function statusConsistent(dir: string, r: AnalysisRecord, d: AnalysisDiagnostics, problems: string[]): void {
  const accepted = r.status === "complete" || r.status === "partial";
  if (accepted !== (r.result !== null)) problems.push(`${dir}analysis.json: status ${r.status} with ${r.result ? "a" : "no"} result`);
  if (accepted !== (r.error === null)) problems.push(`${dir}analysis.json: status ${r.status} with ${r.error ? "an" : "no"} error`);
  if (r.rejectedFindings !== d.rejectedFindings.length)
    problems.push(`${dir}analysis.json: rejectedFindings ${r.rejectedFindings} != ${d.rejectedFindings.length} in diagnostics.json`);
  if (r.status === "complete" && r.rejectedFindings > 0) problems.push(`${dir}analysis.json: complete but ${r.rejectedFindings} finding(s) rejected`);
  if (r.status === "partial" && r.rejectedFindings === 0) problems.push(`${dir}analysis.json: partial but no finding rejected`);
  if (!accepted && d.rejectedOutput === null) problems.push(`${dir}diagnostics.json: status ${r.status} but no rejected output is kept`);
}

/** The cost-labelling rule over the request ledger and the record's usage. */
function costLabelled(dir: string, r: AnalysisRecord, q: AnalysisRequests, problems: string[]): void {
  q.requests.forEach((l, i) => {
    const where = `${dir}requests.json requests[${i}]`;
    if (l.costUsd !== null) {
      if (l.costLabel !== "priced") problems.push(`${where}: a cost of ${l.costUsd} labelled ${l.costLabel}`);
      if (!l.ratesAsOf || !l.source) problems.push(`${where}: a cost without its rates date and source`);
      if (l.reason !== null) problems.push(`${where}: a measured cost with a reason for being unknown`);
    } else {
      if (l.costLabel === "priced") problems.push(`${where}: labelled priced without a cost`);
      if (!l.reason) problems.push(`${where}: an unknown cost without a reason`);
      if (l.ratesAsOf !== null) problems.push(`${where}: an unknown cost with a rates date`);
    }
  });
  const known = q.requests.filter((l) => l.costUsd !== null);
  const total = known.length ? round6(known.reduce((a, l) => a + (l.costUsd ?? 0), 0)) : null;
  if (r.usage.costUsd !== total) problems.push(`${dir}analysis.json: usage.costUsd ${r.usage.costUsd} != the ledger's known total ${total}`);
  if ((r.usage.costUsd !== null) !== (r.usage.costLabel === "priced"))
    problems.push(`${dir}analysis.json: usage.costLabel ${r.usage.costLabel} with costUsd ${r.usage.costUsd}`);
  if (q.requests.length === 0 && r.usage.costLabel !== "not-sent")
    problems.push(`${dir}analysis.json: no request in the ledger but cost labelled ${r.usage.costLabel}`);
}

/**
 * The cap label: a record that says `capExceeded` must agree with its cost and its cap (a label
 * that hides an overspend, or claims one that did not happen, is a problem). A record written
 * before the label existed is read as it is; its overspend, if any, is reported by the caller.
 */
function capLabelled(dir: string, r: AnalysisRecord, problems: string[]): void {
  const over = r.usage.costUsd !== null && r.estimate.maxCostUsd !== null && r.usage.costUsd > r.estimate.maxCostUsd;
  if (r.capExceeded === undefined || r.capExceeded === over) return;
  problems.push(
    over
      ? `${dir}analysis.json: usage.costUsd ${r.usage.costUsd} is over estimate.maxCostUsd ${r.estimate.maxCostUsd} but capExceeded is false`
      : `${dir}analysis.json: capExceeded is true but usage.costUsd ${r.usage.costUsd} is within estimate.maxCostUsd ${r.estimate.maxCostUsd}`,
  );
}

/** Attempts whose measured cost went over their cap, as `NNNN (cost > cap USD)`. */
function overspent(attempts: Map<string, Attempt>): string[] {
  const out: string[] = [];
  for (const [attempt, a] of attempts) {
    const r = a.record;
    if (!r || r.usage.costUsd === null || r.estimate.maxCostUsd === null || !(r.usage.costUsd > r.estimate.maxCostUsd)) continue;
    out.push(
      `${attempt} (${r.usage.costUsd} > ${r.estimate.maxCostUsd} USD${r.capExceeded === undefined ? ", unlabelled: written before capExceeded was recorded" : ""})`,
    );
  }
  return out.sort();
}

function checkAttempt(ctx: VerifyContext, b: RunBundle, attempt: string, a: Attempt, problems: string[]): void {
  const dir = `analysis/${attempt}/`;
  for (const f of ["analysis.json", "diagnostics.json", "requests.json"]) if (!a.listed.has(f)) problems.push(`${dir}${f} is not listed`);
  const parsed = (file: string, schema: typeof AnalysisRecordSchema | typeof AnalysisDiagnosticsSchema | typeof AnalysisRequestsSchema) => {
    const raw = parseFile(ctx, `${dir}${file}`, problems);
    if (raw === undefined) return undefined;
    const r = schema.safeParse(raw);
    if (!r.success) return void problems.push(`${dir}${file}: ${zodIssues(r.error)}`);
    if (r.data.runId !== ctx.run) problems.push(`${dir}${file} names run ${r.data.runId}`);
    if (r.data.attempt !== attempt) problems.push(`${dir}${file} names attempt ${r.data.attempt}`);
    return r.data;
  };
  a.record = parsed("analysis.json", AnalysisRecordSchema) as AnalysisRecord | undefined;
  a.diagnostics = parsed("diagnostics.json", AnalysisDiagnosticsSchema) as AnalysisDiagnostics | undefined;
  a.requests = parsed("requests.json", AnalysisRequestsSchema) as AnalysisRequests | undefined;
  if (!a.record) return;
  referencesResolve(b, dir, a.record, problems);
  capLabelled(dir, a.record, problems);
  if (a.diagnostics) statusConsistent(dir, a.record, a.diagnostics, problems);
  if (a.requests) costLabelled(dir, a.record, a.requests, problems);
}

/** `analysis records` (see the module doc). A bundle with no analysis passes with a note. */
export function analysisRecords(ctx: VerifyContext): CheckOutcome {
  const b = ctx.bundle;
  if (!b) return { problems: ["no valid bundle"], ok: "" };
  const problems: string[] = [];
  const attempts = new Map<string, Attempt>();
  for (const art of b.artifacts) {
    const parts = analysisPathParts(art.path);
    if (art.kind !== "analysis") {
      if (art.path.startsWith("analysis/")) problems.push(`${art.path} is listed as ${art.kind}, not analysis`);
      continue;
    }
    if (!parts) {
      problems.push(`${art.path}: an analysis artifact outside analysis/<NNNN>/{analysis,diagnostics,requests}.json`);
      continue;
    }
    const a = attempts.get(parts.attempt) ?? { listed: new Set<string>() };
    a.listed.add(parts.file);
    attempts.set(parts.attempt, a);
  }
  if (attempts.size > 0 && b.mode !== "live") problems.push("a dry-run bundle carries analysis attempts; only a live run is analysed");
  for (const [attempt, a] of [...attempts].sort(([x], [y]) => (x < y ? -1 : 1))) checkAttempt(ctx, b, attempt, a, problems);
  const findings = [...attempts.values()].reduce((n, a) => n + (a.record?.result?.findings.length ?? 0), 0);
  // An overspend is recorded honestly, so the bundle still verifies; the line says it plainly.
  const over = overspent(attempts);
  const capNote = over.length ? `; CAP EXCEEDED by attempt(s) ${over.join(", ")}` : "";
  return {
    problems,
    ok: attempts.size
      ? `${attempts.size} analysis attempt(s), ${findings} finding(s): schemas, references and cost labels check out${capNote}`
      : "no analysis attempt",
  };
}

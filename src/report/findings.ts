/**
 * The report's Findings section: the latest `humanish analyze` attempt the bundle lists, read
 * through the contained reader, and rendered with a link from each cited evidence id to what it
 * points at — a screenshot's figure in the strips, the transcript — or, for text the report does
 * not show elsewhere (a check result, a trace item, a transcript excerpt of another seat), the
 * excerpt the model was sent. Everything is escaped; nothing acts on the page.
 */
import { AnalysisRecordSchema, analysisPathParts, type RunBundle } from "../bundle/index.ts";
import { readContainedFile } from "./files.ts";

/** Largest analysis.json read (bytes). */
const MAX_ANALYSIS_BYTES = 8 * 1024 * 1024;

/** One cited evidence item: its id, kind, the artifact it comes from, and the excerpt sent (text items). */
export interface ReportEvidenceRef {
  id: string;
  kind: string;
  basis: string;
  path: string;
  preview?: string;
}

/** One accepted finding. */
export interface ReportFinding {
  id: string;
  title: string;
  severity: string;
  kind: string;
  participants: string[];
  tasks: string[];
  recommendation: string;
  evidence: ReportEvidenceRef[];
}

/** The latest analysis attempt as the report shows it. */
export interface ReportFindings {
  attempt: string;
  status: string;
  provider: string;
  model: string | null;
  summary: string | null;
  limitations: string[];
  findings: ReportFinding[];
  rejectedFindings: number;
  omitted: number;
  costUsd: number | null;
  costLabel: string;
  error: string | null;
}

/** The latest attempt of the run at `runDir`, or null when the bundle lists none (or it does not parse: verify says why). */
export function loadFindings(runDir: string, b: RunBundle): ReportFindings | null {
  const attempts = b.artifacts
    .filter((a) => a.kind === "analysis" && analysisPathParts(a.path)?.file === "analysis.json")
    .map((a) => a.path)
    .sort();
  const path = attempts.at(-1);
  if (!path) return null;
  const read = readContainedFile(runDir, path, MAX_ANALYSIS_BYTES);
  if (!read.ok) return null;
  let parsed: ReturnType<typeof AnalysisRecordSchema.safeParse>;
  try {
    parsed = AnalysisRecordSchema.safeParse(JSON.parse(new TextDecoder().decode(read.bytes)));
  } catch {
    return null;
  }
  if (!parsed.success) return null;
  const r = parsed.data;
  const refs = new Map(r.evidence.map((x) => [x.id, x]));
  return {
    attempt: r.attempt,
    status: r.status,
    provider: r.provider,
    model: r.model,
    summary: r.result?.summary ?? null,
    limitations: r.result?.limitations ?? [],
    findings: (r.result?.findings ?? []).map((f) => ({
      id: f.id,
      title: f.title,
      severity: f.severity,
      kind: f.kind,
      participants: f.participants,
      tasks: f.tasks,
      recommendation: f.recommendation,
      evidence: f.evidence.map((id) => {
        const x = refs.get(id);
        return { id, kind: x?.kind ?? "unknown", basis: x?.basis ?? "unknown", path: x?.source.path ?? "", ...(x?.preview ? { preview: x.preview } : {}) };
      }),
    })),
    rejectedFindings: r.rejectedFindings,
    omitted: r.omitted.length,
    costUsd: r.usage.costUsd,
    costLabel: r.usage.costLabel,
    error: r.error ? `${r.error.code}: ${r.error.message}` : null,
  };
}

/** What the anchors are computed from: the report's seats and screenshots, in the report's order. */
export interface ReportShots {
  participants: readonly { id: string }[];
  screenshots: readonly { path: string; participantId?: string }[];
}

/**
 * Screenshot path → the id of its figure in the strips (`shot-N`), numbered the way the strips
 * number them: seat by seat in participant order, then the frames no seat claims.
 */
export function screenshotAnchors(m: ReportShots): Map<string, string> {
  const out = new Map<string, string>();
  const seatIds = new Set(m.participants.map((p) => p.id));
  const ordered = [
    ...m.participants.flatMap((p) => m.screenshots.filter((s) => s.participantId === p.id)),
    ...m.screenshots.filter((s) => s.participantId === undefined || !seatIds.has(s.participantId)),
  ];
  ordered.forEach((s, i) => {
    if (!out.has(s.path)) out.set(s.path, `shot-${i + 1}`);
  });
  return out;
}

/** HTML escaping, handed in by the renderer (html.ts owns it; importing it here would make a cycle). */
type Escape = (text: string) => string;

function evidenceHtml(e: Escape, x: ReportEvidenceRef, anchors: Map<string, string>, transcriptPath: string | null): string {
  const anchor = x.kind === "screenshot" ? anchors.get(x.path) : x.kind === "transcript" && x.path === transcriptPath ? "transcript" : undefined;
  const label = `<code>${e(x.id)}</code> <span class="meta">${e(x.kind)} · ${e(x.basis)}</span>`;
  const link = anchor ? `<a href="#${anchor}">${label}</a>` : label;
  return x.preview ? `<li><details><summary>${link}</summary><pre class="excerpt">${e(x.preview)}</pre></details></li>` : `<li>${link}</li>`;
}

/**
 * The section body for `f`; `shots` are the report's seats and screenshots (for the links) and
 * `transcriptPath` the transcript the report shows as `#transcript`.
 */
export function renderFindings(f: ReportFindings, shots: ReportShots, transcriptPath: string | null, e: Escape): string {
  const anchors = screenshotAnchors(shots);
  const head = `<p class="meta">analysis ${e(f.attempt)} · ${e(f.status)} · ${e(f.provider)}${f.model ? ` ${e(f.model)}` : ""} · cost ${f.costUsd === null ? "unknown" : `$${f.costUsd.toFixed(6)}`} (${e(f.costLabel)})${f.rejectedFindings ? ` · ${f.rejectedFindings} finding(s) rejected (see diagnostics.json)` : ""}${f.omitted ? ` · ${f.omitted} evidence item(s) not sent` : ""}</p>`;
  if (f.error) return `${head}<p class="empty">No findings: ${e(f.error)}</p>`;
  const items = f.findings
    .map(
      (x) =>
        `<li class="finding" id="finding-${e(x.id)}"><h3><span class="badge ${e(x.severity)}">${e(x.severity)}</span> ${e(x.title)}</h3>` +
        `<p class="meta">${e(x.kind.replace(/_/g, " "))}${x.participants.length ? ` · participants ${e(x.participants.join(", "))}` : ""}${x.tasks.length ? ` · tasks ${e(x.tasks.join(", "))}` : ""}</p>` +
        `<p>${e(x.recommendation)}</p><ul class="plain evidence">${x.evidence.map((r) => evidenceHtml(e, r, anchors, transcriptPath)).join("")}</ul></li>`,
    )
    .join("");
  const limits = f.limitations.length ? `<p class="meta">Limitations:</p><ul class="plain">${f.limitations.map((l) => `<li>${e(l)}</li>`).join("")}</ul>` : "";
  return `${head}${f.summary ? `<p>${e(f.summary)}</p>` : ""}${items ? `<ol class="plain findings">${items}</ol>` : `<p class="empty">The analysis reported no findings.</p>`}${limits}`;
}

/** Most finding titles the first screen names (the rest are in the Findings section). */
const SUMMARY_TITLES = 3;

/**
 * The first screen's line beside the denominator: how many findings the latest analysis made,
 * by severity, its first titles, and a link to the full section; or why it has none.
 */
export function renderFindingsSummary(f: ReportFindings, e: Escape): string {
  const by = new Map<string, number>();
  for (const x of f.findings) by.set(x.severity, (by.get(x.severity) ?? 0) + 1);
  const counts = [...by].map(([s, n]) => `${n} ${e(s)}`).join(" · ");
  const head = f.error
    ? `No findings: ${e(f.error)}`
    : `${f.findings.length} finding${f.findings.length === 1 ? "" : "s"}${counts ? ` (${counts})` : ""} — analysis ${e(f.attempt)} by ${e(f.provider)}`;
  const titles = f.findings
    .slice(0, SUMMARY_TITLES)
    .map((x) => `<li><span class="badge ${e(x.severity)}">${e(x.severity)}</span> <a href="#finding-${e(x.id)}">${e(x.title)}</a></li>`)
    .join("");
  const more = f.findings.length > SUMMARY_TITLES ? `<li class="meta"><a href="#findings">${f.findings.length - SUMMARY_TITLES} more</a></li>` : "";
  return `<div id="verdict-findings"><p class="line"><a href="#findings">Findings</a>: ${head}</p>${titles ? `<ul class="plain">${titles}${more}</ul>` : ""}</div>`;
}

/**
 * Renders the study report: one self-contained HTML document.
 *
 * - No network and no external assets: styles are one inline `<style>` block allowed by its
 *   SHA-256 in a strict Content-Security-Policy meta (`default-src 'none'`, no script source at
 *   all), and screenshots are inlined as `data:image/png;base64,…` URIs — up to the inline budget
 *   (inline.ts); the rest are links to the bundle's own files beside the report.
 * - Every string from the model is untrusted (participant output, lab text) and goes through
 *   {@link escapeHtml}; control characters are made visible rather than passed through. Bars
 *   use `<progress>` elements, so no inline `style` attributes are needed.
 */

import { createHash } from "node:crypto";
import type { RunSummary } from "../bundle/index.ts";
import { outputSegments } from "../bundle/output-codec.ts";
import { renderCombined } from "./combined.ts";
import { renderFindings, renderFindingsSummary } from "./findings.ts";
import { INLINE_BUDGET_BYTES } from "./inline.ts";
import type { ReportCostLine, ReportModel, ReportParticipant, ReportScreenshot, ReportTimelineEntry } from "./model.ts";

/** HTML-escapes text for element content and double- or single-quoted attribute values. */
export function escapeHtml(text: string): string {
  return visibleControls(text).replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;").replace(/'/g, "&#39;");
}

/** ANSI CSI and OSC sequences (colours, cursor moves, titles) in terminal output. */
// eslint-disable-next-line no-control-regex
const ANSI_SEQUENCE = /\u001b\[[0-?]*[ -/]*[@-~]|\u001b\][^\u0007\u001b]*(?:\u0007|\u001b\\)?/g;

/**
 * Drops ANSI colour/cursor sequences, turns CR into a line break, shows a remaining ESC as `^[`
 * and any other control character (except tab/newline) as U+FFFD, so nothing invisible reaches
 * the page.
 */
function visibleControls(text: string): string {
  return (
    text
      .replace(ANSI_SEQUENCE, "")
      .replace(/\r\n?/g, "\n")
      // eslint-disable-next-line no-control-regex
      .replace(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g, (c) => (c === "\u001b" ? "^[" : "\uFFFD"))
  );
}

const STYLE = `
:root{color-scheme:light dark;--fg:#1b1f24;--muted:#5b6570;--bg:#fff;--card:#f5f7f9;--line:#d9dee3;--ok:#1a7f37;--bad:#c62828;--warn:#9a6700}
@media (prefers-color-scheme:dark){:root{--fg:#e6e8ea;--muted:#9aa4ad;--bg:#111417;--card:#1a1f24;--line:#2c333a}}
*{box-sizing:border-box}
body{margin:0;font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--fg);background:var(--bg)}
main{max-width:1100px;margin:0 auto;padding:24px}
h1{font-size:22px;margin:0 0 4px}
h2{font-size:17px;margin:28px 0 10px;border-bottom:1px solid var(--line);padding-bottom:4px}
.meta{color:var(--muted);font-size:13px}
.meta span{margin-right:14px}
.badge{display:inline-block;padding:1px 8px;border-radius:10px;font-size:12px;font-weight:600;border:1px solid var(--line)}
.verdict{background:var(--card);border:1px solid var(--line);border-radius:8px;padding:16px 18px;margin-top:18px}
.verdict .word{font-size:26px;font-weight:700;text-transform:uppercase;letter-spacing:.02em}
.verdict .line{font-size:18px;margin-top:4px}
.pass,.ok{color:var(--ok)}
.fail,.bad,.blocked,.timed_out{color:var(--bad)}
.contract_proof_only,.warn,.local_only{color:var(--warn)}
table{border-collapse:collapse;width:100%;font-size:14px}
th,td{text-align:left;border-bottom:1px solid var(--line);padding:6px 8px;vertical-align:top}
th{color:var(--muted);font-weight:600}
.scroll{overflow-x:auto}
#seats td{overflow-wrap:anywhere}
td.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
progress{width:180px;height:12px;vertical-align:middle}
ol.timeline{padding-left:0;list-style:none;margin:0}
ol.timeline li{border-left:3px solid var(--line);padding:4px 10px;margin:0 0 4px}
ol.timeline li.problem{border-left-color:var(--bad)}
ol.timeline .kind{font-size:12px;color:var(--muted);margin-right:8px}
ol.timeline .at{font-size:12px;color:var(--muted);float:right}
ol.timeline code{white-space:pre-wrap;word-break:break-word}
pre{background:var(--card);border:1px solid var(--line);border-radius:6px;padding:12px;overflow:auto;white-space:pre-wrap;word-break:break-word;font:13px/1.45 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;max-height:70vh}
pre.detail{max-height:220px;margin:4px 0 0;padding:6px 8px}
pre.transcript .byte{color:var(--muted,#777);border:1px dotted currentColor;border-radius:3px;padding:0 1px}
h3{font-size:15px;margin:16px 0 6px}
.thumbs{display:flex;gap:12px;overflow-x:auto;padding-bottom:6px;align-items:flex-start}
figure{margin:0;background:var(--card);border:1px solid var(--line);border-radius:6px;padding:8px}
figure.thumb{flex:0 0 auto;width:min-content;min-width:150px}
figure.thumb img{height:160px;width:auto;max-width:none;display:block;border:1px solid var(--line)}
figure.thumb .close{display:none}
figure.thumb:target{position:fixed;inset:0;width:auto;z-index:10;margin:0;border:0;border-radius:0;padding:20px;background:rgba(0,0,0,.96);overflow:auto;display:flex;flex-direction:column;align-items:center}
figure.thumb:target img{height:auto;max-height:calc(100vh - 90px);max-width:100%}
figure.thumb:target figcaption,figure.thumb:target .meta{color:#ddd}
figure.thumb:target .close{display:inline-block;color:#fff;margin-top:8px}
figure.thumb.linked{min-height:160px;border-style:dashed}
figure.thumb.linked:target{position:static;background:var(--card);padding:8px;outline:2px solid var(--warn)}
figure.thumb.linked:target figcaption,figure.thumb.linked:target .meta{color:inherit}
figcaption{font-size:13px;color:var(--muted);margin-top:6px;overflow-wrap:anywhere}
.empty{color:var(--muted);font-style:italic}
ul.plain{margin:0;padding-left:18px}
footer{margin-top:36px;color:var(--muted);font-size:12px}
`;

const STYLE_HASH = createHash("sha256").update(STYLE, "utf8").digest("base64");

/** The Content-Security-Policy the report carries (meta tag) and the library server sends (header). */
export const REPORT_CSP = `default-src 'none'; img-src data:; style-src 'sha256-${STYLE_HASH}'; base-uri 'none'; form-action 'none'`;

/** `1.234s`, `2m 05s`, … for a duration in ms. */
export function formatDuration(ms: number | undefined): string {
  if (ms === undefined || !Number.isFinite(ms) || ms < 0) return "—";
  if (ms < 1000) return `${Math.round(ms)} ms`;
  const s = Math.round(ms / 1000);
  if (s < 60) return `${(ms / 1000).toFixed(1)} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m ${String(s % 60).padStart(2, "0")}s`;
  return `${Math.floor(m / 60)}h ${String(m % 60).padStart(2, "0")}m`;
}

/** `$0.0123` for a number, `unmeasured` for null. */
export function formatUsd(usd: number | null | undefined): string {
  if (usd === null || usd === undefined || !Number.isFinite(usd)) return "unmeasured";
  return `$${usd.toFixed(usd !== 0 && Math.abs(usd) < 0.01 ? 4 : 2)}`;
}

/** CSS class token for a status word (only `[a-z_]`; anything else maps to none). */
function cls(word: string): string {
  const w = word.toLowerCase();
  if (/^(pass|passed|ok|released|share_ready|goal_satisfied)$/.test(w)) return "ok";
  if (/^(fail|failed|blocked|timed_out|unconfirmed|harness_error)$/.test(w)) return "bad";
  if (/^(contract_proof_only|local_only|retained|not_run|abandoned|incomplete)$/.test(w)) return "warn";
  return "";
}

const e = escapeHtml;

/**
 * The stored transcript (escaped-bytes text) as HTML: the product's text decoded, each control
 * or invalid byte shown as a marked `\xHH`, so a reader sees where raw bytes were printed and
 * nothing acts on the page.
 */
export function transcriptHtml(encoded: string): string {
  return outputSegments(encoded)
    .map((seg) => (seg.escaped ? `<span class="byte">${e(seg.text)}</span>` : e(seg.text)))
    .join("");
}

function section(title: string, body: string, id: string): string {
  return `<section id="${id}"><h2>${e(title)}</h2>${body}</section>`;
}

/** A seat's cost cell: `unmeasured` when no line names the seat or none is measured, never 0. */
function seatCostCell(p: ReportParticipant): string {
  const c = p.cost;
  if (!c || c.usd === null) return `<span class="warn">unmeasured</span>`;
  return c.fullyMeasured ? e(formatUsd(c.usd)) : `${e(formatUsd(c.usd))} <span class="warn">+ unmeasured</span>`;
}

/** The study runner's word on a seat that did not complete: `seat failed in provision`. */
/** The participant's claim beside its status: said only when it claimed something, flagged when the checks contradict it. */
function claimNote(p: ReportParticipant): string {
  if (p.contradicted) return `<br><span class="bad">claimed passed: the participant believed it succeeded; the checks say it did not</span>`;
  if (!p.claimed || p.claimed === "none") return "";
  return `<br><span class="meta">claimed ${e(p.claimed)}</span>`;
}

function seatNote(p: ReportParticipant): string {
  if (!p.seatState || p.seatState === "completed") return "";
  const where = p.seatPhase && p.seatPhase !== "done" && p.seatPhase !== "not_started" ? ` in ${p.seatPhase}` : "";
  return `<br><span class="meta">seat ${e(p.seatState)}${e(where)}</span>`;
}

/** What a seat's ending means for the study, beside its completion reason. */
function categoryNote(p: ReportParticipant): string {
  if (p.seatState === "budget_reached") return ` <span class="meta">(not started: the study budget was spent; not a failure)</span>`;
  if (p.category === "harness") return ` <span class="bad">(harness failure: not a finding)</span>`;
  if (p.category === "finding") return ` <span class="meta">(finding)</span>`;
  return "";
}

function renderParticipants(m: ReportModel): string {
  if (m.participants.length === 0) return `<p class="empty">No participant sessions were recorded.</p>`;
  const rows = m.participants
    .map((p) => {
      const who = [p.persona, p.device].filter((x): x is string => Boolean(x));
      const tasks = p.tasksTotal !== undefined ? `${p.tasksPassed ?? 0}/${p.tasksTotal}` : "—";
      return (
        `<tr><td><code>${e(p.id)}</code></td><td>${who.length ? who.map((x) => e(x)).join("<br>") : "—"}</td>` +
        `<td>${e(p.actorType ?? "—")}${p.model ? ` <span class="meta">(${e(p.model)})</span>` : ""}</td>` +
        `<td class="${cls(p.status)}">${e(p.status)}${seatNote(p)}${claimNote(p)}</td><td>${e(p.completionReason)}${categoryNote(p)}</td>` +
        `<td class="num">${e(tasks)}</td><td class="num">${e(formatDuration(p.durationMs))}</td><td class="num">${seatCostCell(p)}</td>` +
        `<td class="num">${p.screenshotCount ?? 0}</td><td>${e(p.reason ?? "")}${p.seatError && !(p.reason ?? "").includes(p.seatError) ? `<br><span class="meta">${e(p.seatError)}</span>` : ""}</td></tr>`
      );
    })
    .join("");
  return (
    `<div class="scroll"><table id="seats"><thead><tr><th>seat</th><th>persona · device</th><th>actor</th><th>status</th><th>ending</th><th>tasks</th>` +
    `<th>time</th><th>cost</th><th>screenshots</th><th>reason</th></tr></thead><tbody>${rows}</tbody></table></div>`
  );
}

function renderFunnel(m: ReportModel): string {
  if (m.tasks.length === 0) return `<p class="empty">This lab declares no tasks.</p>`;
  const rows = m.tasks
    .map((t) => {
      const max = Math.max(1, t.total);
      const pct = t.total > 0 ? `${Math.round((t.passed / t.total) * 100)}%` : "—";
      return (
        `<tr><td>${e(t.id)}</td><td>${e(t.goal)}</td>` +
        `<td class="num">${t.passed}/${t.total}</td>` +
        `<td><progress max="${max}" value="${Math.min(t.passed, max)}">${t.passed}/${t.total}</progress> <span class="meta">${pct}</span></td>` +
        `<td class="${cls(t.status)}">${e(t.status)}${t.detail ? ` <span class="meta">${e(t.detail)}</span>` : ""}</td></tr>`
      );
    })
    .join("");
  const seats = m.participants.length;
  const note = seats > 1 ? `<p class="meta">In task order: how many of the ${seats} seats passed each task's hidden check.</p>` : "";
  return `${note}<table class="funnel"><thead><tr><th>task</th><th>goal</th><th>seats passed</th><th></th><th>status</th></tr></thead><tbody>${rows}</tbody></table>`;
}

function renderTimelineEntry(t: ReportTimelineEntry): string {
  const exit = t.exitCode === undefined ? "" : ` <span class="meta">exit ${t.exitCode === null ? "—" : e(String(t.exitCode))}</span>`;
  const detail = t.detail ? `<pre class="detail">${e(t.detail)}</pre>` : "";
  return (
    `<li${t.problem ? ` class="problem"` : ""}>${t.at ? `<span class="at">${e(t.at)}</span>` : ""}` +
    `<span class="kind">${e(t.kind)}</span><code>${e(t.title)}</code>${exit}${detail}</li>`
  );
}

function renderTimeline(m: ReportModel): string {
  if (m.timeline.length === 0) return `<p class="empty">No actions or commands were recorded.</p>`;
  return `<ol class="timeline">${m.timeline.map(renderTimelineEntry).join("")}</ol>`;
}

function renderEvidence(m: ReportModel): string {
  const parts: string[] = [];
  if (m.route === "terminal" || m.transcript !== null) {
    parts.push(
      m.transcript === null
        ? `<p class="empty">No terminal transcript was written (a dry run writes none).</p>`
        : m.transcript.length === 0
          ? `<p class="empty">The participant's terminal printed nothing.</p>`
          : `<pre id="transcript" class="transcript">${transcriptHtml(m.transcript)}</pre>`,
    );
  }
  if (m.route === "browser" || m.screenshots.length > 0) {
    parts.push(m.screenshots.length === 0 ? `<p class="empty">No screenshots were captured.</p>` : renderStrips(m));
  }
  return parts.reduce(concat, "");
}

/**
 * Joins by `+`, which links the pieces (a rope) instead of copying them: the inlined screenshots
 * are most of a report's bytes, and a `join` at every level of the page would copy them once
 * per level before the document's own join flattens the whole page once.
 */
function concat(a: string, b: string): string {
  return a + b;
}

/**
 * One strip of thumbnails per seat (seats in participant order, then screenshots no seat
 * claims). A thumbnail is a link to itself: the `:target` rule in the style shows the targeted
 * figure full size over the page and its `close` link returns to the strip, so enlarging needs
 * no script and every image is inlined once.
 */
function renderStrips(m: ReportModel): string {
  const groups: { id: string | undefined; label: string; shots: ReportScreenshot[] }[] = [];
  const seatIds = new Set(m.participants.map((p) => p.id));
  for (const p of m.participants) {
    const shots = m.screenshots.filter((s) => s.participantId === p.id);
    if (shots.length > 0) groups.push({ id: p.id, label: [p.id, p.device ?? p.persona].filter(Boolean).join(" · "), shots });
  }
  const other = m.screenshots.filter((s) => s.participantId === undefined || !seatIds.has(s.participantId));
  if (other.length > 0) groups.push({ id: undefined, label: groups.length ? "other screenshots" : "screenshots", shots: other });
  let n = 0;
  return groups
    .map((g, gi) => {
      const figs = g.shots
        .map((s, i) => {
          n++;
          const caption = `<figcaption>${i + 1}. ${e(s.caption)} <span class="meta">${e(s.path)}</span></figcaption>`;
          // Past the inline budget a frame is a link to the bundle's own file, relative to report/index.html.
          if (!s.png) return `<figure class="thumb linked" id="shot-${n}"><a href="../${e(s.path)}">open screenshot ${i + 1}</a>${caption}</figure>`;
          // A view on the model's bytes, not a copy of them: the encoder reads them once.
          const b64 = wrapBase64(Buffer.from(s.png.buffer, s.png.byteOffset, s.png.byteLength).toString("base64"));
          const size = s.width && s.height ? ` width="${s.width}" height="${s.height}"` : "";
          const alt = `screenshot ${i + 1}${g.id ? ` of ${g.id}` : ""}: ${s.caption}`;
          return (
            `<figure class="thumb" id="shot-${n}"><a href="#shot-${n}"><img src="data:image/png;base64,${b64}" alt="${e(alt)}"${size}></a>` +
            `${caption}<a class="close" href="#strip-${gi + 1}">close</a></figure>`
          );
        })
        .reduce(concat, "");
      const linked = g.shots.filter((s) => !s.png).length;
      const count = `${g.shots.length} screenshot${g.shots.length === 1 ? "" : "s"}${linked ? `, ${g.shots.length - linked} shown here and ${linked} linked (the report inlines at most ${INLINE_BUDGET_BYTES / 2 ** 20} MiB of screenshots)` : ""}`;
      return `<div class="strip" id="strip-${gi + 1}"><h3>${e(g.label)} <span class="meta">${count}</span></h3><div class="thumbs">${figs}</div></div>`;
    })
    .reduce(concat, "");
}

/**
 * Breaks base64 into 16-character lines. The URL parser drops newlines inside a `data:` URI,
 * so the image is unchanged, but a run of random base64 can no longer look like a secret
 * shape (e.g. `AIza` + 20 characters) to the bundle's public-safety scan of text artifacts.
 */
function wrapBase64(b64: string): string {
  // One regex pass builds the result in place; slicing into an array of 16-character strings
  // made a heap object per line (700,000 for a full report) before the join.
  return b64.replace(/.{16}(?!$)/g, "$&\n");
}

function costCell(c: ReportCostLine): string {
  return c.usd === null ? `<span class="warn">unmeasured</span>` : e(formatUsd(c.usd));
}

function renderCost(m: ReportModel): string {
  const rows = m.cost
    .map(
      (c) =>
        `<tr><td>${e(c.label)}</td><td class="num">${costCell(c)}</td><td>${e(c.usd === null ? "—" : (c.ratesAsOf ?? "measured"))}</td>` +
        `<td>${e(c.source ?? "")}</td><td>${e(c.note ?? "")}</td></tr>`,
    )
    .join("");
  if (m.cost.length === 0) {
    return m.mode === "dry-run"
      ? `<p>Dry run: nothing was started, so nothing was spent.</p><p class="empty">No cost lines were recorded.</p>`
      : `<p>Known total: <strong class="warn">unmeasured</strong></p><p class="empty">No cost lines were recorded, so nothing here claims the run was free.</p>`;
  }
  const total = `<p>Known total: <strong>${e(formatUsd(m.costTotal.usd))}</strong>${m.costTotal.fullyMeasured ? "" : ` <span class="warn">(some lines are unmeasured; they are not counted as zero)</span>`}</p>`;
  return `${total}<table><thead><tr><th>line</th><th>USD</th><th>rates as of</th><th>source</th><th>note</th></tr></thead><tbody>${rows}</tbody></table>`;
}

function renderCleanup(m: ReportModel): string {
  if (m.cleanup.length === 0) return `<p class="empty">No resources were allocated.</p>`;
  const rows = m.cleanup
    .map(
      (c) =>
        `<tr><td>${e(c.resource)}</td><td><code>${e(c.id ?? "—")}</code></td><td class="${cls(c.outcome)}">${e(c.outcome)}</td><td>${e(c.reason ?? "")}</td></tr>`,
    )
    .join("");
  return `<table><thead><tr><th>resource</th><th>id</th><th>outcome</th><th>reason</th></tr></thead><tbody>${rows}</tbody></table>`;
}

function renderWarnings(m: ReportModel): string {
  if (m.warnings.length === 0) return `<p class="empty">No warnings.</p>`;
  return `<ul class="plain">${m.warnings.map((w) => `<li>${w.code ? `<code>${e(w.code)}</code> ` : ""}${e(w.message)}</li>`).join("")}</ul>`;
}

function renderVerify(m: ReportModel): string {
  const v = m.verify;
  if (!v) return `<p class="bad">Verify could not run on this run directory.</p>`;
  const reasons = v.shareReasons.length
    ? `<ul class="plain">${v.shareReasons.map((r) => `<li><code>${e(r.code)}</code> ${e(r.message)}</li>`).join("")}</ul>`
    : "";
  const failing = v.checks.filter((c) => !c.ok);
  const rows = v.checks
    .map((c) => `<tr><td>${e(c.name)}</td><td class="${c.ok ? "ok" : "bad"}">${c.ok ? "ok" : "FAILED"}</td><td>${e(c.message)}</td></tr>`)
    .join("");
  return (
    `<p id="verify-result">verify: <strong class="${v.ok ? "ok" : "bad"}">${v.ok ? "passed" : "FAILED"}</strong> ` +
    `(${v.checks.length - failing.length}/${v.checks.length} checks) · share safety: <strong class="${cls(v.shareSafety)}">${e(v.shareSafety)}</strong></p>` +
    reasons +
    `<p class="meta">Verified when this report was rendered, before the report itself joined the bundle; <code>humanish verify</code> gives the current result.</p>` +
    (v.checks.length ? `<table><thead><tr><th>check</th><th>result</th><th>message</th></tr></thead><tbody>${rows}</tbody></table>` : "")
  );
}

/** `5 seats · concurrency 2 (3 waves) · lane local-guest · study cap $0.00`, for the header. */
function studyMeta(st: NonNullable<ReportModel["study"]>): string {
  const parts = [
    `${st.declaredSeats} seat${st.declaredSeats === 1 ? "" : "s"}`,
    `concurrency ${st.concurrency}${st.waves > 1 ? ` (${st.waves} waves)` : ""}`,
    `lane ${st.lane}`,
  ];
  if (st.maxTotalUsd !== null) parts.push(`study cap ${formatUsd(st.maxTotalUsd)}`);
  if (st.heldSlots > 0) parts.push(`${st.heldSlots} release(s) unconfirmed`);
  return parts.join(" · ");
}

/** ` · 1 harness failure: not a finding` beside the seat count, when a seat's harness failed. */
function harnessNote(m: ReportModel): string {
  const h = m.harnessFailed ?? 0;
  return h > 0 ? ` · ${h} harness failure${h === 1 ? "" : "s"}: not a finding` : "";
}

/**
 * Renders the whole report for `model` as one HTML document (UTF-8 string). Pure: no I/O, no
 * clock (the model carries `generatedAt`). Never throws for any model of the declared type.
 */
export function renderReportHtml(model: ReportModel): string {
  const m = model;
  const title = m.labTitle ?? m.labId ?? m.runId;
  const gaps = m.gaps.length ? `<ul class="plain gaps">${m.gaps.map((g) => `<li>${e(g)}</li>`).join("")}</ul>` : "";
  const meta = [
    `run <code>${e(m.runId)}</code>`,
    m.labId ? `lab <code>${e(m.labId)}</code>` : "",
    `route ${e(m.route)}`,
    `<span class="badge ${cls(m.mode === "live" ? "" : "contract_proof_only")}">${e(m.mode)}</span>`,
    m.createdAt ? `started ${e(m.createdAt)}` : "",
    m.durationMs !== undefined ? `took ${e(formatDuration(m.durationMs))}` : "",
    m.study ? e(studyMeta(m.study)) : "",
  ]
    .filter(Boolean)
    .map((s) => `<span>${s}</span>`)
    .join("");
  const evidenceTitle = m.route === "browser" ? "Screenshots" : m.route === "terminal" ? "Terminal transcript" : "Evidence";
  return [
    ...documentHead(`humanish report · ${title}`),
    `<header><h1>${e(title)}</h1><div class="meta">${meta}</div></header>`,
    `<section id="verdict" class="verdict"><div class="word ${cls(m.verdict)}">${e(m.verdict)}</div>`,
    `<div class="line" id="verdict-line">${e(m.verdictLine)}</div>`,
    m.contradictions ? `<p class="bad" id="contradictions">Finding: ${e(m.contradictions)}</p>` : "",
    m.olderGoalRule
      ? `<p class="meta" id="goal-rule">Written under the older claim-counting rule: this headline may count a participant's own claim of success; <code>humanish verify</code> re-derives it from the hidden checks.</p>`
      : "",
    m.summary && m.summary !== m.verdictLine ? `<p>${e(m.summary)}</p>` : "",
    m.findings ? renderFindingsSummary(m.findings, escapeHtml) : "",
    gaps,
    `</section>`,
    ...(m.combined ? [section("Combined result", renderCombined(m.combined, e), "combined")] : []),
    section(`Seats (${m.reached}/${m.total} reached the goal${harnessNote(m)})`, renderParticipants(m), "participants"),
    section("Task funnel", renderFunnel(m), "funnel"),
    ...(m.findings ? [section("Findings", renderFindings(m.findings, m, m.transcriptPath ?? null, escapeHtml), "findings")] : []),
    // A browser study's screenshot strips come before the long timeline: they are what a stakeholder looks at.
    ...(m.route === "browser"
      ? [section(evidenceTitle, renderEvidence(m), "evidence"), section("Timeline", renderTimeline(m), "timeline")]
      : [section("Timeline", renderTimeline(m), "timeline"), section(evidenceTitle, renderEvidence(m), "evidence")]),
    section("Cost", renderCost(m), "cost"),
    section("Cleanup", renderCleanup(m), "cleanup"),
    section("Warnings", renderWarnings(m), "warnings"),
    section("Verify", renderVerify(m), "verify"),
    `<footer>Generated by humanish at ${e(m.generatedAt)}. This file is self-contained: it loads nothing from the network.</footer>`,
    `</main></body></html>`,
    ``,
  ].join("\n");
}

/**
 * The opening lines of every page humanish renders (a report, the library index): doctype, the
 * {@link REPORT_CSP} policy, no referrer, the viewport, `<title>` (escaped `title`), the inline
 * style, and the open `<body><main>`. The caller closes with `</main></body></html>`.
 */
export function documentHead(title: string): string[] {
  return [
    `<!doctype html>`,
    `<html lang="en"><head><meta charset="utf-8">`,
    `<meta http-equiv="Content-Security-Policy" content="${e(REPORT_CSP)}">`,
    `<meta name="referrer" content="no-referrer">`,
    `<meta name="viewport" content="width=device-width, initial-scale=1">`,
    `<title>${e(title)}</title>`,
    `<style>${STYLE}</style></head><body><main>`,
  ];
}

/**
 * Renders the run library index served at `/` by the library server: every run, newest first
 * (the order of `runs`), with its lab, route, mode, liveness, verdict, participants, tasks, cost
 * (or `unmeasured`) and duration, each linking to `/runs/<id>/`. Same CSP and style as a report.
 */
export function renderLibraryIndexHtml(
  runs: readonly RunSummary[],
  generatedAt: string,
  /** Each run's verification (label and stylesheet class), by run id; a run missing here shows "unchecked". */
  verifyStates: ReadonlyMap<string, { label: string; cls: string }> = new Map(),
): string {
  const rows = runs
    .map((r) => {
      const href = `/runs/${encodeURIComponent(r.runId)}/`;
      const participants = r.participants ? `${r.participants.reachedGoal}/${r.participants.total}` : "—";
      const tasks = r.tasks.length ? r.tasks.map((t) => `${t.id} ${t.completed}/${t.sessions}`).join(" · ") : "—";
      return (
        `<tr><td><a href="${e(href)}"><code>${e(r.runId)}</code></a></td><td>${e(r.lab ?? "—")}</td><td>${e(r.route ?? "—")}</td>` +
        `<td>${e(r.mode ?? "—")}</td><td class="${cls(r.liveness === "interrupted" ? "fail" : r.liveness === "running" ? "contract_proof_only" : "")}">${e(r.liveness)}${r.phase ? ` (${e(r.phase)})` : ""}</td>` +
        `<td class="${cls(r.verdict ?? "")}">${e(r.verdict ?? "—")}</td><td class="num">${e(participants)}</td><td>${e(tasks)}</td>` +
        `<td class="num">${r.costUsd === null ? `<span class="warn">unmeasured</span>` : e(formatUsd(r.costUsd))}</td>` +
        `<td class="num">${e(formatDuration(r.durationMs ?? undefined))}</td><td class="meta">${e(r.startedAt)}</td>` +
        `<td class="${cls(verifyStates.get(r.runId)?.cls ?? "warn")}">${e(verifyStates.get(r.runId)?.label ?? "unchecked")}</td></tr>`
      );
    })
    .join("");
  const table = runs.length
    ? `<table id="runs"><thead><tr><th>run</th><th>lab</th><th>route</th><th>mode</th><th>state</th><th>verdict</th><th>reached</th><th>tasks</th><th>cost</th><th>duration</th><th>started</th><th>verify</th></tr></thead><tbody>${rows}</tbody></table>`
    : `<p class="empty">No runs yet. Run a study: <code>humanish lab run &lt;lab&gt;</code></p>`;
  return [
    ...documentHead("humanish run library"),
    `<header><h1>Run library</h1><div class="meta"><span>${runs.length} run${runs.length === 1 ? "" : "s"}, newest first</span><span>read-only</span></div></header>`,
    table,
    `<footer>Served by humanish on 127.0.0.1 at ${e(generatedAt)}.</footer>`,
    `</main></body></html>`,
    ``,
  ].join("\n");
}

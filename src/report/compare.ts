/**
 * Renders a comparison of two runs (src/compare/): the text `humanish runs compare` prints and
 * a self-contained HTML page with the same policy and style as a run report (no script, no
 * network; every string escaped). Pure.
 */
import type { CompareRow, CompareRunFacts, Comparison, RateSide } from "../compare/core.ts";
import { documentHead, escapeHtml as e, formatDuration, formatUsd } from "./html.ts";

/** `5/8` (with `, 2 not run` or `, 1 harness failure left out` when something was left out), or `—`. */
export function sideLabel(s: RateSide | null, excludedWord: "not run" | "harness failure"): string {
  if (!s) return "—";
  if (s.excluded === 0) return `${s.reached}/${s.observed}`;
  const plural = excludedWord === "harness failure" && s.excluded !== 1 ? "harness failures" : excludedWord;
  return `${s.reached}/${s.observed} (${s.excluded} ${plural} left out)`;
}

/** `+37.5 pts`, `−12.5 pts`, `±0 pts`, or `—`. */
export function differenceLabel(points: number | null): string {
  if (points === null) return "—";
  if (points === 0) return "±0 pts";
  return `${points > 0 ? "+" : "−"}${Math.abs(points)} pts`;
}

/** `p = 0.200`, `p < 0.001`, or `—`. */
export function pLabel(p: number | null): string {
  if (p === null) return "—";
  return p < 0.001 ? "p < 0.001" : `p = ${p.toFixed(3)}`;
}

/** What a row's verdict says in words, with the threshold. */
export function verdictWords(row: CompareRow, threshold: number): string {
  switch (row.verdict) {
    case "distinguishable":
      return `distinguishable (p < ${threshold})`;
    case "not_distinguishable":
      return "not distinguishable at these sample sizes";
    case "no_observations": {
      // Say which side: "one side" when neither observed anything reads as if the other had.
      const aNone = row.a?.rate === null;
      const bNone = row.b?.rate === null;
      return aNone && bNone ? "nothing observed in either run: no test" : `nothing observed in run ${aNone ? "A" : "B"}: no test`;
    }
    case "only_in_a":
      return "only in run A";
    case "only_in_b":
      return "only in run B";
  }
}

function costText(f: CompareRunFacts): string {
  const unmeasured = f.cost.unmeasuredLines > 0 ? ` (${f.cost.unmeasuredLines} of ${f.cost.lines} cost lines unmeasured)` : "";
  return `${f.cost.usd === null ? "unmeasured" : formatUsd(f.cost.usd)}${unmeasured}`;
}

/**
 * The human text of a comparison: a header, one line per rate, then cost and time, every line
 * in the same left-aligned columns (a long side such as `1/1 (1 harness failure left out)`
 * widens its column for all lines), then the notes.
 */
export function compareText(c: Comparison): string {
  const rates = [
    { name: "goal", row: c.goal, word: "harness failure" as const },
    ...c.tasks.map((t) => ({ name: `task ${t.id}`, row: t, word: "not run" as const })),
  ].map(({ name, row, word }) => ({
    cells: [name, sideLabel(row.a, word), sideLabel(row.b, word)],
    rest: `${differenceLabel(row.differencePoints).padStart(10)}  ${pLabel(row.pValue).padEnd(11)}  ${verdictWords(row, c.threshold)}`,
  }));
  const grid = [
    { cells: ["rate", "A (before)", "B (after)"], rest: `${"difference".padStart(10)}  ${"p".padEnd(11)}  reading` },
    ...rates,
    { cells: ["cost", costText(c.a), costText(c.b)], rest: "" },
    { cells: ["time", formatDuration(c.a.durationMs), formatDuration(c.b.durationMs)], rest: "" },
  ];
  const w = [0, 1, 2].map((i) => Math.max(...grid.map((g) => g.cells[i]!.length)));
  const line = (g: (typeof grid)[number], arrow: string): string =>
    `  ${g.cells[0]!.padEnd(w[0]!)}  ${g.cells[1]!.padEnd(w[1]!)} ${arrow} ${g.cells[2]!.padEnd(w[2]!)}  ${g.rest}`.trimEnd();
  const lines = [
    `compare ${c.a.lab}: A ${c.a.runId} (${c.a.createdAt}) → B ${c.b.runId} (${c.b.createdAt})`,
    line(grid[0]!, " "),
    ...grid.slice(1).map((g) => line(g, "→")),
    `two-sided Fisher exact test per row; a difference counts as distinguishable only when p < ${c.threshold}`,
    ...c.notes.map((n) => `note: ${n}`),
  ];
  return lines.join("\n");
}

function rowHtml(name: string, row: CompareRow, word: "not run" | "harness failure", threshold: number): string {
  const cls = row.verdict === "distinguishable" ? "ok" : row.verdict === "not_distinguishable" ? "" : "warn";
  return (
    `<tr><td>${e(name)}</td><td class="num">${e(sideLabel(row.a, word))}</td><td class="num">${e(sideLabel(row.b, word))}</td>` +
    `<td class="num">${e(differenceLabel(row.differencePoints))}</td><td class="num">${e(pLabel(row.pValue))}</td>` +
    `<td class="${cls}">${e(verdictWords(row, threshold))}</td></tr>`
  );
}

/** The comparison section (a `<section id="compare">`), for a page of its own or a report. */
export function compareSectionHtml(c: Comparison): string {
  const rows = [rowHtml("goal", c.goal, "harness failure", c.threshold), ...c.tasks.map((t) => rowHtml(`task ${t.id}`, t, "not run", c.threshold))].join("");
  const facts = (label: string, f: CompareRunFacts): string =>
    `<tr><td>${label}</td><td><code>${e(f.runId)}</code></td><td>${e(f.createdAt)}</td><td class="num">${e(costText(f))}</td><td class="num">${e(formatDuration(f.durationMs))}</td></tr>`;
  return [
    `<section id="compare"><h2>Before and after</h2>`,
    `<div class="scroll"><table id="compare-rates"><thead><tr><th>rate</th><th>A (before)</th><th>B (after)</th><th>difference</th><th>p</th><th>reading</th></tr></thead><tbody>${rows}</tbody></table></div>`,
    `<p class="meta">Two-sided Fisher exact test per row; a difference counts as distinguishable only when p &lt; ${e(String(c.threshold))}. Task denominators count sessions whose hidden check ran; the goal denominator leaves out harness failures.</p>`,
    `<h3>Runs</h3><div class="scroll"><table id="compare-runs"><thead><tr><th></th><th>run</th><th>started</th><th>cost</th><th>wall time</th></tr></thead><tbody>${facts("A", c.a)}${facts("B", c.b)}</tbody></table></div>`,
    c.notes.length ? `<h3>Notes</h3><ul class="plain">${c.notes.map((n) => `<li>${e(n)}</li>`).join("")}</ul>` : "",
    `</section>`,
  ].join("");
}

/** A self-contained HTML page of the comparison (`runs compare --html FILE`). */
export function renderCompareHtml(c: Comparison, generatedAt: string): string {
  return [
    ...documentHead(`humanish · compare ${c.a.lab}`),
    `<header><h1>Compare ${e(c.a.lab)}</h1><div class="meta"><span>A <code>${e(c.a.runId)}</code></span><span>B <code>${e(c.b.runId)}</code></span><span>both verified</span></div></header>`,
    compareSectionHtml(c),
    `<footer>Written by humanish at ${e(generatedAt)} from two verified run bundles.</footer>`,
    `</main></body></html>`,
    ``,
  ].join("\n");
}

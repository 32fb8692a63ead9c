/**
 * What the run library server says about a run's verification — pure (HTML strings in and out).
 *
 * A served page is only as good as the bundle under it: a report file can be edited like any
 * other, so the server verifies the bundle on every request and serves
 * - `share_ready`: the stored report as written;
 * - `local_only` (intact, but e.g. signed by a key you do not trust): the report with a banner at
 *   the top of the page saying so and why;
 * - anything that does not verify (`blocked`, a failed check, no sealed bundle): never the
 *   stored report — a page saying it was not served, with every failed check.
 * The index carries the same state per run.
 */
import { RUN_JSON_MISSING, type VerifyResult } from "../bundle/index.ts";
import { documentHead, escapeHtml as e } from "./html.ts";

/** A run's verification as the library shows it. */
export interface ServedState {
  /** `verified` (share_ready), `local_only`, `not_verified` (fails, or blocked), `not_sealed` (no run.json yet). */
  kind: "verified" | "local_only" | "not_verified" | "not_sealed";
  /** One line for the index and the banner. */
  label: string;
  /** The failed checks and share-safety reasons, in words. */
  reasons: string[];
}

/** The library's view of one verify result. */
export function servedState(v: VerifyResult): ServedState {
  // No run.json: the run is still going, or died before sealing (either way there is nothing to verify).
  const unsealed = v.checks.some((c) => c.name === "run.json exists" && !c.ok && c.message === RUN_JSON_MISSING);
  if (v.error?.code === "HUMANISH_RUN_NOT_FOUND" || unsealed || (v.checks.length === 0 && !v.ok)) {
    return { kind: "not_sealed", label: "not sealed: no verifiable bundle yet", reasons: v.error ? [v.error.message] : [] };
  }
  // Any other failure (an unsafe file where run.json should be, say) is a bundle that does not
  // verify, and its page says why instead of passing for a run still in progress.
  const failed = v.checks.filter((c) => !c.ok).map((c) => `${c.name}: ${c.message}`);
  const why = v.shareSafety.reasons.map((r) => `${r.code}: ${r.message}`);
  if (!v.ok || v.shareSafety.status === "blocked") {
    return {
      kind: "not_verified",
      label: `NOT VERIFIED (${failed.length || why.length} problem${(failed.length || why.length) === 1 ? "" : "s"})`,
      reasons: [...failed, ...why],
    };
  }
  if (v.shareSafety.status === "local_only") {
    return { kind: "local_only", label: `local only: ${v.shareSafety.reasons.map((r) => r.code).join(", ") || "not share-ready"}`, reasons: why };
  }
  return { kind: "verified", label: "verified · share ready", reasons: [] };
}

/** CSS class of a state (classes of the report's own stylesheet; the CSP allows no inline style). */
export function stateClass(s: ServedState): string {
  return s.kind === "verified" ? "ok" : s.kind === "local_only" ? "local_only" : "fail";
}

function reasonList(reasons: readonly string[]): string {
  return reasons.length ? `<ul>${reasons.map((r) => `<li>${e(r)}</li>`).join("")}</ul>` : "";
}

/** The banner put at the top of every served page of a `local_only` run. */
export function localOnlyBanner(runId: string, s: ServedState): string {
  return (
    `<section class="verdict" id="humanish-verify-state"><div class="word local_only">Local only — not verified for sharing</div>` +
    `<div class="line">The bundle of run <code>${e(runId)}</code> is intact, but <code>humanish verify</code> does not call it share-ready; ` +
    `treat what follows as unconfirmed.</div>${reasonList(s.reasons)}</section>`
  );
}

/**
 * `html` (a stored or rendered report) with `banner` as the first thing in its body. A page
 * without a `<main>`/`<body>` opening gets the banner in front of everything.
 */
export function withBanner(html: string, banner: string): string {
  const m = /<body[^>]*>(?:\s*<main[^>]*>)?/i.exec(html);
  if (!m) return banner + html;
  const at = m.index + m[0].length;
  return html.slice(0, at) + banner + html.slice(at);
}

/** The page served instead of the report of a run that does not verify. */
export function refusedReportHtml(runId: string, s: ServedState): string {
  return [
    ...documentHead(`run ${runId}: report not served`),
    `<section class="verdict" id="humanish-verify-state"><div class="word fail">Report not served</div>`,
    `<div class="line">Run <code>${e(runId)}</code> does not verify, so its stored report is not shown: what it says cannot be trusted.</div>`,
    reasonList(s.reasons),
    `<p class="meta">Check it yourself: <code>humanish verify --run ${e(runId)}</code>. A bundle that fails verify is a failed run; re-run the lab.</p></section>`,
    `<p><a href="/">back to the run library</a></p>`,
    `</main></body></html>`,
    ``,
  ].join("\n");
}

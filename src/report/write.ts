/**
 * `writeReport(runDir)`: renders the run's report and lists it in the bundle manifest
 * (artifact kind `report`, path `report/index.html`). The run is reopened
 * with the bundle layer's `reopenRunWriter`, the HTML written through it (redacted like every
 * artifact), and the bundle re-finalized so `run.json` lists the report with its size and
 * SHA-256. `latest.json` and `status.json` are left alone.
 */
import { basename, dirname, join } from "node:path";
import { reopenRunWriter, type VerifyResult, verifyRun } from "../bundle/index.ts";
import { collectScratch } from "../bytes/scratch.ts";
import { HumanishError } from "../errors.ts";
import { renderReportHtml } from "./html.ts";
import { loadReportModel } from "./load.ts";

/** Bundle-relative path of the report. */
export const REPORT_PATH = "report/index.html";

/** Result of {@link writeReport}. */
export interface WriteReportResult {
  /** Absolute path of `report/index.html`. */
  path: string;
  /** Verify result of the bundle AFTER the report was added (what `humanish verify` now says). */
  verify: VerifyResult;
}

/** Splits `<cwd>/.humanish/runs/<runId>` into its project directory and run id. */
export function splitRunDir(runDir: string): { cwd: string; runId: string } {
  const runs = dirname(runDir);
  const dotHumanish = dirname(runs);
  if (basename(runs) !== "runs" || basename(dotHumanish) !== ".humanish") {
    throw new HumanishError("HUMANISH_RUN_NOT_FOUND", `${basename(runDir)} is not inside a .humanish/runs directory.`, {
      next: "Pass a run directory from `humanish runs` (e.g. .humanish/runs/<id>).",
    });
  }
  return { cwd: dirname(dotHumanish), runId: basename(runDir) };
}

/**
 * Renders and lists the report of the sealed run at `runDir` (absolute). The report shows the
 * verify result of the evidence as it was before the report was added (`opts.verified` when the
 * caller verified the sealed bundle just now, else computed here).
 * @throws HumanishError HUMANISH_RUN_NOT_FOUND / HUMANISH_INVALID_RUN_BUNDLE (unreadable or
 *   refused run directory), HUMANISH_INVALID_RUN_ID, or the bundle writer's codes.
 */
export async function writeReport(
  runDir: string,
  opts: { now?: () => Date; verified?: VerifyResult; inlineBudgetBytes?: number } = {},
): Promise<WriteReportResult> {
  const { cwd, runId } = splitRunDir(runDir);
  // A caller that just verified the sealed bundle (a route) passes its result instead of a second pass.
  const before = opts.verified ?? (await verifyRun(runDir));
  await writeReportFile(cwd, runId, await renderReport(runDir, before, opts));
  const after = await verifyRun(runDir);
  return { path: join(runDir, REPORT_PATH), verify: after };
}

/**
 * The report's HTML. The model (its inlined screenshots) lives only in this frame, so it is
 * garbage once the HTML exists: the reopen and the seal that follow never hold both.
 */
async function renderReport(runDir: string, verify: VerifyResult, opts: { now?: () => Date; inlineBudgetBytes?: number }): Promise<string> {
  const model = await loadReportModel(runDir, {
    verify,
    ...(opts.now ? { now: opts.now } : {}),
    ...(opts.inlineBudgetBytes !== undefined ? { inlineBudgetBytes: opts.inlineBudgetBytes } : {}),
  });
  const html = renderReportHtml(model);
  collectScratch();
  return html;
}

/** Adds `html` as report/index.html to the sealed run and seals it again; the HTML is garbage once this returns. */
async function writeReportFile(cwd: string, runId: string, html: string): Promise<void> {
  const writer = await reopenRunWriter({ cwd, runId, secrets: [] });
  try {
    await writer.writeArtifact(REPORT_PATH, html, { kind: "report" });
    await writer.finalize();
  } finally {
    writer.close();
  }
}

/**
 * One entry for every study: dispatch to the lab's route, then write the run's HTML report into
 * the bundle.
 * `selectLabBackend` (src/lab) is the single source of routing truth.
 */
import { HumanishError } from "../errors.ts";
import { type LabConfig, selectLabBackend } from "../lab/index.ts";
import type { StudyContext, StudyResult } from "./types.ts";

export type { ProgressEvent, StudyContext, StudyResult, TaskOutcome } from "./types.ts";

/**
 * Runs the study of `ctx.lab` on its route and adds the report. The result's `verify` is the
 * verification of the final bundle (report included). A report that cannot be written is a
 * warning, never a lost bundle.
 */
export async function runStudy(ctx: StudyContext<LabConfig>): Promise<StudyResult> {
  const route = selectLabBackend(ctx.lab);
  const result =
    route === "terminal"
      ? await (await import("./terminal/index.ts")).runTerminalStudy(ctx as never)
      : await (await import("./browser/index.ts")).runBrowserStudy(ctx as never);
  const verified = result.verification;
  delete result.verification;
  try {
    const { writeReport } = await import("../report/index.ts");
    const report = await writeReport(result.runDir, verified ? { verified } : {});
    result.verify = { ok: report.verify.ok, shareSafety: report.verify.shareSafety.status };
    if (!report.verify.ok && result.ok) {
      result.ok = false;
      result.error = {
        code: "HUMANISH_INVALID_RUN_BUNDLE",
        message: "the bundle does not verify after the report was added",
        next: `humanish verify --run ${result.runId}`,
      };
    }
  } catch (e) {
    const message = e instanceof HumanishError ? `${e.code}: ${e.message}` : e instanceof Error ? e.message : String(e);
    result.warnings.push({ code: "HUMANISH_REPORT_FAILED", message: `the HTML report was not written: ${message}` });
  }
  return result;
}

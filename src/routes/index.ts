/**
 * One entry for every study: dispatch to the lab's route, then write the run's HTML report into
 * the bundle.
 * `selectLabBackend` (src/lab) is the single source of routing truth.
 */
import { errorMessage, HumanishError } from "../errors.ts";
import { type LabConfig, selectLabBackend } from "../lab/index.ts";
import { studySecrets } from "../secrets/index.ts";
import { runPostAnalysis } from "../study/post-analysis.ts";
import type { StudyContext, StudyResult } from "./types.ts";

export type { ProgressEvent, StudyContext, StudyResult, TaskOutcome } from "./types.ts";

/**
 * Runs the study of `ctx.lab` on its route, then its post-run analyst (src/study/post-analysis.ts,
 * never a failed study), and adds the report. The result's `verify` is the
 * verification of the final bundle (report included). A report that cannot be written is a
 * warning, never a lost bundle.
 */
export async function runStudy(ctx: StudyContext<LabConfig>): Promise<StudyResult> {
  const route = selectLabBackend(ctx.lab);
  const result =
    route === "terminal"
      ? await (await import("./terminal/index.ts")).runTerminalStudy(ctx as never)
      : await (await import("./browser/index.ts")).runBrowserStudy(ctx as never);
  let verified = result.verification;
  delete result.verification;
  // The post-run analyst reads the sealed bundle and re-seals it with its attempt, so the
  // report below shows the findings and is verified afresh.
  const analysis = await runPostAnalysis({
    analysis: ctx.lab.review?.analysis,
    mode: ctx.mode,
    maxTotalUsd: ctx.lab.scenario.caps?.maxTotalUsd,
    env: ctx.env,
    studyOk: result.ok && !result.interrupted,
    runDir: result.runDir,
    secrets: studySecrets(ctx),
    signal: ctx.signal,
  });
  result.analysis = analysis;
  // Any analyst that ran may have re-sealed the bundle (even one that then failed): verify afresh.
  if (analysis.provider) verified = undefined;
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
    const message = e instanceof HumanishError ? `${e.code}: ${e.message}` : errorMessage(e);
    result.warnings.push({ code: "HUMANISH_REPORT_FAILED", message: `the HTML report was not written: ${message}` });
  }
  return result;
}

/**
 * Resealing: open a sealed run to add artifacts after the fact (the report, an analysis), then
 * `finalize()` again, which re-lists, re-hashes and re-seals. Only an intact bundle this user
 * sealed may be reopened, since the re-seal signs whatever is on disk.
 */
import { join } from "node:path";
import type { z } from "zod";
import { HumanishError } from "../errors.ts";
import { artifactRootFor, assertRunId, RUN_FILE, runDirFor } from "./paths.ts";
import { safeReadFile } from "./safe-read.ts";
import { type ArtifactKind, type RunBundle, type RunBundleInputSchema, RunBundleSchema } from "./schemas.ts";
import { assertResealable } from "./signing/seal.ts";
import { adapterBlocks, evidenceRedactor, makeWriter, type RunWriter } from "./writer.ts";

/**
 * Open a finalized run to add artifacts after the fact (e.g. `report/index.html`), then
 * `finalize()` again. Keeps every listed artifact, re-hashes from disk; never moves latest.json
 * and never touches status.json.
 * @throws HUMANISH_RUN_NOT_FOUND when the run has no run.json; HUMANISH_INVALID_RUN_BUNDLE when it does not parse
 */
export async function reopenRunWriter(opts: {
  cwd: string;
  runId: string;
  secrets: readonly (string | undefined | null)[];
  now?: () => Date;
}): Promise<RunWriter> {
  assertRunId(opts.runId);
  const runDir = runDirFor(opts.cwd, opts.runId);
  // Through the safe reader: a FIFO, device link or huge file in place of run.json is refused, never read.
  const read = safeReadFile(join(runDir, RUN_FILE), 64 * 1024 * 1024);
  if (!read.ok) {
    throw new HumanishError(
      read.reason === "not_found" ? "HUMANISH_RUN_NOT_FOUND" : "HUMANISH_UNSAFE_BUNDLE_FILE",
      read.reason === "not_found"
        ? `run ${opts.runId} has no run.json in .humanish/runs/`
        : `${artifactRootFor(opts.runId)}/run.json is refused (${read.reason})`,
      { next: read.reason === "not_found" ? "list runs with `humanish runs`" : `run \`humanish verify --run ${opts.runId}\` for details` },
    );
  }
  const raw = new TextDecoder().decode(read.bytes);
  let parsed: RunBundle;
  try {
    parsed = RunBundleSchema.parse(JSON.parse(raw));
  } catch (e) {
    throw new HumanishError("HUMANISH_INVALID_RUN_BUNDLE", `run.json of ${opts.runId} is not a valid humanish.run-bundle.v1`, {
      next: `run \`humanish verify --run ${opts.runId}\` for details`,
      cause: e,
    });
  }
  // Reopening ends in a re-seal, which signs whatever is on disk: only an intact bundle this user sealed may be reopened.
  assertResealable(runDir, opts.runId);
  const tracked = new Map<string, ArtifactKind>(parsed.artifacts.map((a) => [a.path, a.kind]));
  const input: z.output<typeof RunBundleInputSchema> = {
    route: parsed.route,
    mode: parsed.mode,
    target: parsed.target,
    createdAt: parsed.createdAt,
    completedAt: parsed.completedAt,
    lab: parsed.lab,
    subject: parsed.subject,
    outcome: parsed.outcome,
    lifecycle: parsed.lifecycle,
    participants: parsed.participants,
    tasks: parsed.tasks,
    review: parsed.review,
    caps: parsed.caps,
    cost: parsed.cost,
    cleanup: parsed.cleanup,
    warnings: parsed.warnings,
    redactionNotes: parsed.redaction.notes,
    ...(parsed.study ? { study: parsed.study } : {}),
    ...adapterBlocks(parsed),
    ...(parsed.continues ? { continues: parsed.continues } : {}),
  };
  return makeWriter({
    cwd: opts.cwd,
    runId: opts.runId,
    runDir,
    redactor: evidenceRedactor(opts.secrets, opts.cwd, tracked),
    tracked,
    input,
    reopened: true,
    status: undefined,
    heartbeatMs: 0,
    now: opts.now ?? (() => new Date()),
  });
}

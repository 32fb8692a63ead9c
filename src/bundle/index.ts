/**
 * Run bundle layer (ARCHITECTURE.md `bundle/`; issue 2 §8–§10): schemas, redaction, the atomic
 * run writer, `verifyRun`, and the run library (`listRuns`, `resolveRunDir`).
 * Routes, the env server, the report and the CLI import from here.
 *
 * What a route writes (`.humanish/runs/<runId>/`):
 * - every run: `run.json` (by `finalize`), `status.json` (derived, unlisted);
 * - live terminal: `actor.json` (lane `terminal`), `terminal-transcript.txt`,
 *   `terminal-events.ndjson`, `terminal-ledgers.json` — ALWAYS, even empty, even on failure —
 *   plus `sandbox-receipts.ndjson` appended (durable) the moment a sandbox exists;
 * - live browser: `actor.json` or `actors/<id>.json` (lane `scripted-browser`/`computer-use`),
 *   `screenshots/NNN.png` (admitted PNGs), `desktopGeometry` on each participant, receipts;
 * - after the fact: `report/index.html` (write + `finalize()` again, or `reopenRunWriter`),
 *   `orphan-release.json` (via `recordOrphanRelease`, unlisted).
 * Cost: build lines with `summarizeCost`, `unmeasuredLine`, `buildTerminalCostLedger`,
 * `buildNoSpendProof` so the numbers match what `verifyRun` recomputes.
 */
export * from "./schemas.ts";
export {
  createRedactor,
  digestText,
  findSensitive,
  MIN_SECRET_LENGTH,
  DEFAULT_TAIL_CHARS,
  redact,
  REDACTED_LOCAL_PATH,
  REDACTED_RUNTIME_PATH,
  REDACTED_SECRET,
  SHAPE_NAMES,
  tail,
  TARGET_CWD,
  type Redactor,
  type RedactorOptions,
  type SensitiveFinding,
} from "./redact.ts";
export {
  artifactRootFor,
  assertRunId,
  isSafeRunSegment,
  isValidRunId,
  newRunId,
  runDirFor,
  runsDir,
  safeRelPath,
  DERIVED_FILES,
  ORPHAN_RELEASE_FILE,
} from "./paths.ts";
export {
  buildNoSpendProof,
  buildTerminalCostLedger,
  deriveReview,
  deriveVerdict,
  round6,
  stakeholderLine,
  summarizeBundle,
  summarizeCost,
  tallyParticipants,
  taskFunnel,
  unmeasuredLine,
  type RunSummaryFacts,
} from "./derive.ts";
export {
  createRunWriter,
  labRefFor,
  recordOrphanRelease,
  reopenRunWriter,
  type RunWriter,
  type RunWriterOptions,
  type StatusUpdate,
  type WriteArtifactOptions,
} from "./writer.ts";
export { verifyRun, VERIFY_LIMITS, DEADLINE_GRACE_MS } from "./verify.ts";
export { listRuns, resolveRunDir, summarizeRunDir, isPidAlive, livenessOf, type RunLiveness, type RunSummary } from "./runs.ts";
export { admitPngBytes, type PngAdmission } from "./png.ts";

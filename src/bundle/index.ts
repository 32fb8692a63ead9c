/**
 * Run bundle layer (ARCHITECTURE.md `bundle/`; issue 2 §8–§10): schemas, redaction, the atomic
 * run writer, `verifyRun`, and the run library (`listRuns`, `resolveRunDir`).
 * Routes, the env server, the report and the CLI import from here only.
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
  reopenRunWriter,
  type RunWriter,
  type RunWriterOptions,
  type StatusUpdate,
  type WriteArtifactOptions,
} from "./writer.ts";
export { verifyRun, VERIFY_LIMITS, DEADLINE_GRACE_MS } from "./verify.ts";
export { listRuns, resolveRunDir, summarizeRunDir, isPidAlive, livenessOf, type RunLiveness, type RunSummary } from "./runs.ts";
export { admitPngBytes, type PngAdmission } from "./png.ts";

/**
 * Run bundle layer: schemas, redaction, the atomic
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
 *   `orphan-release.json` (via `recordOrphanRelease`: a signed appendix once the run is sealed);
 * - at every seal: `signature.json`, the Ed25519 signature over run.json, status.json and every
 *   listed artifact (src/bundle/signing/).
 * Cost: build lines with `summarizeCost`, `unmeasuredLine`, `buildTerminalCostLedger`,
 * `buildNoSpendProof` so the numbers match what `verifyRun` recomputes.
 */

export * from "./analysis-records.ts";
export { loadVerifiedChain, loadVerifiedRun, MAX_CHAIN_RUNS, type VerifiedRun } from "./chain.ts";
export { attemptCategory, type CombinedResult, type CombinedSeat, combineChain, combinedView, type SeatAttempt } from "./combined.ts";
export {
  buildNoSpendProof,
  buildTerminalCostLedger,
  deriveReview,
  deriveVerdict,
  type RunSummaryFacts,
  round6,
  stakeholderLine,
  summarizeBundle,
  summarizeCost,
  tallyParticipants,
  taskFunnel,
  unmeasuredLine,
} from "./derive.ts";
export {
  type Claim,
  CONTRADICTION_FINDING,
  claimContradicted,
  contradictedClaims,
  contradictionLine,
  GOAL_RULE,
  type GoalCheck,
  type GoalVerdict,
  goalCheckOf,
  type SeatEnding,
  type StopWhenObservation,
  seatGoalVerdict,
} from "./goal.ts";
export { recordOrphanRelease } from "./orphan-record.ts";
export {
  artifactRootFor,
  assertRunId,
  DERIVED_FILES,
  isSafeRunSegment,
  isValidRunId,
  newRunId,
  ORPHAN_RELEASE_FILE,
  runDirFor,
  runsDir,
  safeRelPath,
} from "./paths.ts";
export { admitPngBytes, type PngAdmission } from "./png.ts";
export {
  createRedactor,
  DEFAULT_TAIL_CHARS,
  digestText,
  findSensitive,
  MIN_SECRET_LENGTH,
  REDACTED_LOCAL_PATH,
  REDACTED_RUNTIME_PATH,
  REDACTED_SECRET,
  type Redactor,
  type RedactorOptions,
  redact,
  type SensitiveFinding,
  SHAPE_NAMES,
  TARGET_CWD,
  tail,
} from "./redact.ts";
export { reopenRunWriter } from "./reopen.ts";
export { isPidAlive, listRuns, livenessOf, type RunLiveness, type RunSummary, resolveRunDir, summarizeRunDir } from "./runs.ts";
export { describeSafeReadFailure, type SafeRead, type SafeReadFailure, safeReadFile, safeReadOrThrow } from "./safe-read.ts";
export * from "./schemas.ts";
export { canonicalJson } from "./signing/canonical.ts";
export {
  configDir,
  defaultTrust,
  fingerprintOf,
  isTrusted,
  loadSigningKey,
  NO_TRUST,
  parseTrust,
  readTrustFile,
  SIGNING_KEY_FILE,
  type SigningKey,
  type TrustSet,
} from "./signing/keys.ts";
export {
  APPENDIX_SIGNATURE_SUFFIX,
  type BundleManifest,
  buildManifest,
  checkBundleSignature,
  encodeSigned,
  SIGNATURE_FILE,
  signManifest,
} from "./signing/manifest.ts";
export { sealRunDir, writeSignedAppendix } from "./signing/seal.ts";
export { RUN_JSON_MISSING } from "./verify/checks-bundle.ts";
export {
  type BundleFile,
  CHECKS,
  DEADLINE_GRACE_MS,
  VERIFY_LIMITS,
  type VerifyFilesInput,
  type VerifyRunOptions,
  verifyFiles,
  verifyRun,
  verifyRunBytes,
} from "./verify.ts";
export {
  createRunWriter,
  labRefFor,
  type RunWriter,
  type RunWriterOptions,
  type StatusUpdate,
  type WriteArtifactOptions,
} from "./writer.ts";

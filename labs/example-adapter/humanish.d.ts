/**
 * humanish 0.1.0 — the product adapter contract (written by `humanish types`; do not edit).
 *
 * A scorer module exports any of `score`, `deriveFeedback`, `deriveArtifacts` (see ScorerModule).
 * Every type below is printed from the schema humanish checks the same value against.
 */

/** Any JSON value. */
export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };

export type CostLine = {
  kind: "model-tokens" | "sandbox-minutes" | "desktop-minutes" | "product" | "media" | "payment" | "provider";
  participantId?: string;
  modelId?: string;
  usd: number | null;
  count?: number | null;
  basis: "rate-table" | "provider-token-usage" | "provider-charge" | "no-spend-signal" | "operator-cap" | "unpriced-token-usage" | "unmeasured";
  ratesAsOf: string | null;
  source: string | null;
  reason: string | null;
  note?: string;
};

export type RunCostSummary = {
  schema: "humanish.run-cost-summary.v1";
  currency: "usd";
  estimatedTotalUsd: number | null;
  ratesAsOf: string | null;
  lines: CostLine[];
  note: string;
};

export type CleanupProof = {
  id: string;
  provider: "docker" | "e2b" | "host";
  kind?: "sandbox" | "desktop" | "app-server";
  participantId?: string;
  outcome: "released" | "retained" | "unconfirmed";
  reason: string;
  at: string;
};

export type LifecycleEvent = {
  at: string;
  event: string;
  message: string;
};

export type TokenUsage = {
  input?: number;
  output?: number;
  cachedInput?: number;
  reasoningOutput?: number;
  total?: number;
  turns?: number;
  costUsd?: number;
};

export type ActorRuntime = {
  schema: "humanish.actor-runtime.v1";
  package: string;
  requestedVersion: string;
  observedVersion?: string;
  versionStatus: "unobserved" | "verified" | "failed";
  requestedModel?: string;
  modelStatus: "declared" | "runtime_default_unobserved" | "humanish_default";
  requestedReasoningEffort?: string;
  usageGranularity: "runtime_turn";
};

export type TraceItem = {
  id: string;
  kind: "message" | "reasoning" | "tool_call" | "command" | "file_change" | "approval" | "screenshot" | "ui_action" | "plan" | "notice" | "usage";
  lifecycle: "started" | "completed";
  status?: string;
  title: string;
  at?: string;
  tool?: string;
  command?: {
    text?: string;
    cwd?: string;
    envNames?: string[];
    exitCode?: number | null;
    timedOut?: boolean;
    durationMs?: number;
    outputTail?: string;
  };
  action?: {
    type: string;
    [key: string]: unknown;
  };
  coord?: {
    x: number;
    y: number;
  };
  screenshotRef?: {
    path: string;
    redaction: "blurred" | "ocr_scrubbed" | "none";
  };
  usage?: TokenUsage;
  text?: string;
};

export type ActorTrace = {
  schema: "humanish.actor-trace.v1";
  participantId: string;
  actorType: string;
  provider: string;
  providerVersion?: string;
  protocol: "json-rpc" | "json-stream" | "in-process-sdk" | "cua-loop" | "scripted-steps" | "terminal-exec";
  lane: "code" | "app" | "computer-use" | "scripted-browser" | "terminal";
  persona: {
    id: string;
    traitsApplied: string[];
    promptDigest: string;
  };
  redaction: {
    status: "passed";
    screenshots: "n/a" | "raw" | "blurred" | "ocr_scrubbed";
    notes: string;
  };
  startedAt: string;
  completedAt: string;
  durationMs: number;
  status: "passed" | "abandoned" | "incomplete" | "blocked" | "timed_out" | "failed";
  completionReason: "goal_satisfied" | "turn_completed" | "gave_up" | "blocked_approval" | "timed_out" | "budget_reached" | "actor_error" | "step_failed" | "harness_error" | "interrupted";
  reason: string;
  stopCause?: string;
  ids: {
    sessionId?: string;
    threadId?: string;
    turnId?: string;
    model?: string;
  };
  counts: {
    [key: string]: number;
  };
  items: TraceItem[];
  tokenUsage?: TokenUsage;
  estimatedCost?: {
    schema: "humanish.actor-estimated-cost.v1";
    estimatedCostUsd: number | null;
    reason: string | null;
    ratesAsOf: string | null;
    source: string | null;
    modelId: string | null;
  };
  modelSettings?: {
    reasoningEffort: string;
  };
  runtime?: ActorRuntime;
};

export type CommandLogEntry = {
  at: string;
  label: string;
  commandDigest: string;
  envNames: string[];
  exitCode?: number | null;
  timedOut?: boolean;
  durationMs: number;
};

export type TerminalCostLedger = {
  schema: "humanish.terminal-cost-ledger.v1";
  currency: "usd";
  lines: {
    product: CostLine;
    media: CostLine;
    payment: CostLine;
    provider: CostLine;
  };
  knownTotalUsd: number;
  fullyMeasured: boolean;
};

export type NoSpendProof = {
  schema: "humanish.terminal-no-spend-proof.v1";
  maxUsd: number | null;
  satisfied: boolean;
  knownZeroLines: ("product" | "media" | "payment" | "provider")[];
  knownNonZeroLines: ("product" | "media" | "payment" | "provider")[];
  unmeasuredLines: ("product" | "media" | "payment" | "provider")[];
  knownTotalUsd: number;
  statement: string;
};

export type TerminalLedgers = {
  schema: "humanish.terminal-ledgers.v1";
  runtime?: ActorRuntime;
  lifecycle: LifecycleEvent[];
  commandLog: CommandLogEntry[];
  interventions: {
    at: string;
    kind: "stdin";
    inputDigest: string;
  }[];
  cost: TerminalCostLedger;
  noSpendProof: NoSpendProof;
  cleanup: CleanupProof[];
};

export type ArtifactEntry = {
  path: string;
  kind: "actor-trace" | "terminal-transcript" | "terminal-events" | "terminal-ledgers" | "sandbox-receipts" | "model-ledger" | "screenshot" | "report" | "events" | "log" | "data" | "analysis";
  bytes: number;
  sha256: string;
};

export type DesktopGeometry = {
  preset: string;
  screen: {
    requested: {
      width: number;
      height: number;
    };
    verified?: {
      width: number;
      height: number;
    };
    source?: string;
  };
  browserWindow?: {
    width: number;
    height: number;
    source?: string;
  };
  viewport?: {
    width: number;
    height: number;
    source?: string;
  };
  warnings: string[];
};

export type RunParticipant = {
  id: string;
  actorType: string;
  label?: string;
  status: "passed" | "abandoned" | "incomplete" | "blocked" | "timed_out" | "failed" | "contract_proof_only";
  completionReason: "goal_satisfied" | "turn_completed" | "gave_up" | "blocked_approval" | "timed_out" | "budget_reached" | "actor_error" | "step_failed" | "harness_error" | "interrupted" | null;
  reason: string;
  trace: string | null;
  startedAt?: string;
  completedAt?: string;
  durationMs?: number;
  deadlineFired?: string;
  reportedFriction?: boolean;
  desktopGeometry?: DesktopGeometry;
  persona?: string;
  device?: string;
  claimed?: "passed" | "blocked" | "failed" | "none";
  goalCheck?: {
    by: "tasks" | "stop_when" | "none";
    reached: boolean;
    detail: string;
  };
};

export type TaskResult = {
  id: string;
  goal: string;
  participantId?: string;
  status: "passed" | "failed" | "not_run";
  passed: boolean;
  detail?: string;
};

export type Review = {
  schema: "humanish.review.v1";
  verdict: "contract_proof_only" | "pass" | "fail" | "blocked" | "timed_out";
  summary: string;
  gaps: string[];
  participants: {
    total: number;
    reachedGoal: number;
    abandoned: number;
    ranOut: number;
    blocked: number;
    harnessFailed: number;
    reportedFriction: number;
  };
  tasks: {
    sessions: number;
    tasks: {
      id: string;
      completed: number;
      sessions: number;
      observable: boolean;
    }[];
  };
};

export type RunOutcome = {
  state: "completed" | "failed" | "interrupted";
  error?: {
    code: string;
    message: string;
    next?: string;
  };
  interrupted?: "SIGINT" | "SIGTERM";
};

export type StudySeat = {
  id: string;
  index: number;
  state: "completed" | "failed" | "interrupted" | "budget_reached";
  phase: string;
  folder: string | null;
  release: "released" | "retained" | "unconfirmed" | "none";
  containerId?: string;
  reason: string;
  error?: {
    code: string;
    message: string;
    next?: string;
  };
  startedAt?: string;
  durationMs: number;
  usd: number;
  jobs: number;
};

export type Study = {
  schema: "humanish.study.v1";
  lane: string;
  declaredSeats: number;
  concurrency: number;
  waves: number;
  maxTotalUsd: number | null;
  goalRule?: "checks-only";
  seats: StudySeat[];
  totals: {
    seats: number;
    completed: number;
    failed: number;
    interrupted: number;
    budgetReached: number;
    knownUsd: number;
    knownJobs: number;
    heldSlots: number;
  };
};

export type RunAdapterScore = {
  schema: "humanish.adapter-score.v1";
  namespace: string;
  status: "pass" | "partial" | "fail";
  score: number;
  summary: string;
  data?: {
    [key: string]: JsonValue;
  };
};

export type RunFeedbackCandidate = {
  schema: "humanish.feedback-candidate.v1";
  id: string;
  run_id: string;
  participant_id?: string;
  adapter_id: string;
  lab_id: string;
  failure_owner: "harness" | "target-app" | "actor" | "environment" | "unknown";
  summary: string;
  expected: string;
  actual: string;
  evidence: {
    path: string;
    kind: "review" | "state" | "log" | "trace" | "screenshot" | "filesystem";
    note: string;
  }[];
  redaction: {
    status: "passed";
    notes: string;
  };
  idempotency_key: string;
  proposed_next_state: "watch" | "adapter-hardening" | "target-app-setup" | "actor-auth" | "setup-quality-review" | "study-quality-review";
  acceptance_proof: string[];
  adapter?: {
    namespace: string;
    data: {
      [key: string]: JsonValue;
    };
  };
};

export type RunAdapterArtifact = {
  schema: "humanish.adapter-artifact.v1";
  namespace: string;
  label: string;
  path: string;
  kind: "state" | "review" | "log" | "trace" | "screenshot" | "filesystem" | "summary";
  note: string;
};

export type ScorerProvenance = {
  schema: "humanish.scorer-provenance.v1";
  ref: string;
  digest: string;
  source: "manifest" | "cli-flag";
  exports: ("score" | "deriveFeedback" | "deriveArtifacts")[];
  hooks: "ran" | "loaded-only";
  confinement?: {
    mode: "container" | "unconfined";
    image?: string;
    containers?: {
      id: string;
      outcome: "released" | "retained" | "unconfirmed";
      reason: string;
      at: string;
    }[];
    reason?: string;
    optIn?: "HUMANISH_ALLOW_UNCONFINED_SCORER=1";
  };
};

export type RunBundle = {
  schema: "humanish.run-bundle.v1";
  runId: string;
  route: "terminal" | "browser";
  mode: "dry-run" | "live";
  target: "docker" | "e2b-terminal" | "local" | "e2b-desktop";
  createdAt: string;
  completedAt: string;
  durationMs: number;
  cwd: "[target-cwd]";
  artifactRoot: string;
  lab: {
    id: string;
    title?: string;
    source: {
      ref: string;
      sha256: string;
    };
  };
  subject: {
    source: "terminal-product" | "app-url";
    name?: string;
    publicSurfaces?: string[];
    appUrl?: string;
    provenance: "seeded" | "unpinned" | "declared-not-run" | "undeclared" | "external-public";
  };
  outcome: RunOutcome;
  lifecycle: LifecycleEvent[];
  participants: RunParticipant[];
  tasks: TaskResult[];
  review: Review;
  caps: {
    maxUsd: number | null;
    maxJobs: number | null;
    maxMinutes: number | null;
  };
  cost: RunCostSummary;
  cleanup: CleanupProof[];
  warnings: {
    code: string;
    message: string;
    path?: string;
  }[];
  redaction: {
    status: "passed";
    notes: string;
  };
  artifacts: ArtifactEntry[];
  study?: Study;
  scorerProvenance?: ScorerProvenance;
  adapterScore?: RunAdapterScore;
  feedbackCandidates?: RunFeedbackCandidate[];
  adapterArtifacts?: RunAdapterArtifact[];
  continues?: {
    runId: string;
    runJsonSha256: string;
    which: "harness" | "not-reached";
    seats: string[];
  };
};

export type ScoringModelLedger = {
  schema: "humanish.model-ledger.v1";
  participantId: string;
  endpointHost: string;
  caps: {
    maxUsd: number | null;
    maxTotalUsd: number | null;
    [key: string]: unknown;
  };
  requests: number;
  refused: number;
  usd: number | null;
  observedModels: string[];
  lines: {
    ordinal: number;
    at: string;
    model: string | null;
    input: number | null;
    output: number | null;
    usd: number | null;
    status: number;
    outcome: string;
    [key: string]: unknown;
  }[];
  [key: string]: unknown;
};

export type ScoringDesktopLedger = {
  cleanup: CleanupProof[];
  geometry: {
    preset: string;
    width: number;
    height: number;
    startMs: number | null;
  } | null;
};

export type ScoringParticipant = {
  id: string;
  actorType: string;
  status: string;
  completionReason: string | null;
  folder: string | null;
  trace: ActorTrace | null;
  ledgers: TerminalLedgers | null;
  modelLedger: ScoringModelLedger | null;
  desktop: ScoringDesktopLedger | null;
  transcript: string | null;
  screenshots: string[];
  tasks: TaskResult[];
};

export type ScoringContext = {
  schema: "humanish.scoring-context.v1";
  runId: string;
  labId: string;
  route: "terminal" | "browser";
  mode: "dry-run" | "live";
  product: {
    source: "terminal-product" | "app-url";
    name?: string;
    publicSurfaces?: string[];
    appUrl?: string;
  };
  bundle: RunBundle;
  participants: ScoringParticipant[];
  trace: ActorTrace | null;
  ledgers: TerminalLedgers | null;
  transcript: string | null;
};

export type ScoreResult = {
  schema?: "humanish.adapter-score.v1";
  namespace: string;
  status: "pass" | "partial" | "fail";
  score: number;
  summary: string;
  data?: {
    [key: string]: JsonValue;
  };
};

export type FeedbackResult = {
  id: string;
  participant_id?: string;
  adapter_id?: string;
  failure_owner: "harness" | "target-app" | "actor" | "environment" | "unknown";
  summary: string;
  expected: string;
  actual: string;
  evidence: {
    path: string;
    kind: "review" | "state" | "log" | "trace" | "screenshot" | "filesystem";
    note: string;
  }[];
  idempotency_key: string;
  proposed_next_state: "watch" | "adapter-hardening" | "target-app-setup" | "actor-auth" | "setup-quality-review" | "study-quality-review";
  acceptance_proof?: string[];
  adapter?: {
    namespace: string;
    data: {
      [key: string]: JsonValue;
    };
  };
};

export type ArtifactResult = {
  namespace: string;
  label: string;
  path: string;
  kind: "state" | "review" | "log" | "trace" | "screenshot" | "filesystem" | "summary";
  note?: string;
  content: string | {
    [key: string]: JsonValue;
  } | JsonValue[];
};

/** A value or a promise of it. */
export type Awaitable<T> = T | Promise<T>;

/** `T` with every property, at every depth, read-only: the context is deep-frozen at run time. */
export type DeepReadonly<T> = T extends (infer E)[] ? readonly DeepReadonly<E>[] : T extends object ? { readonly [K in keyof T]: DeepReadonly<T[K]> } : T;

/** `score(ctx)`: the adapter's judgement of the run. `status: "fail"` fails the run result. */
export type ScoreHook = (ctx: DeepReadonly<ScoringContext>) => Awaitable<ScoreResult>;
/** `deriveFeedback(ctx)`: candidates the product team may act on; a malformed one is dropped with a warning. */
export type DeriveFeedbackHook = (ctx: DeepReadonly<ScoringContext>) => Awaitable<FeedbackResult[]>;
/** `deriveArtifacts(ctx)`: files to add under `adapter/<namespace>/`; a malformed one is dropped with a warning. */
export type DeriveArtifactsHook = (ctx: DeepReadonly<ScoringContext>) => Awaitable<ArtifactResult[]>;

/** What a scorer module (`review.scorer.ref` or `--scorer`) exports: at least one hook. */
export interface ScorerModule {
  score?: ScoreHook;
  deriveFeedback?: DeriveFeedbackHook;
  deriveArtifacts?: DeriveArtifactsHook;
}

/**
 * Zod schemas and types of everything a run bundle holds (the upstream bundle contract,
 * reshaped where our design differs). Objects are strict: an unknown key is a shape
 * failure, so `verifyRun` stays fail-closed and writers learn about typos at write time.
 *
 * Units: times are ISO-8601 strings, durations in ms, sizes in bytes, money in USD.
 */
import { z } from "zod";
import { RunAdapterArtifactSchema, RunAdapterScoreSchema, RunFeedbackCandidateSchema, ScorerProvenanceSchema } from "./schemas-adapter.ts";

/** Run ids the builder emits: `^[a-z0-9][a-z0-9-]{0,127}$`, no `--`. */
export const RUN_ID_PATTERN = /^[a-z0-9][a-z0-9-]{0,127}$/;

/** A run id as written by humanish (see {@link RUN_ID_PATTERN}). */
export const RunIdSchema = z
  .string()
  .regex(RUN_ID_PATTERN, "run id must match ^[a-z0-9][a-z0-9-]{0,127}$")
  .refine((s) => !s.includes("--"), "run id must not contain --");

/** ISO-8601 timestamp (`Date.prototype.toISOString()` output, offsets accepted). */
export const IsoTime = z.iso.datetime({ offset: true });
/** A rates date `YYYY-MM-DD`. */
export const RatesDate = z.iso.date();
/** Lower-case hex SHA-256 (64 chars). */
export const Sha256Hex = z.string().regex(/^[0-9a-f]{64}$/, "expected 64 lower-case hex chars");
/** Truncated SHA-256 digest (`digestText`, 12 or 16 hex chars). */
export const ShortDigest = z.string().regex(/^[0-9a-f]{12}$|^[0-9a-f]{16}$/, "expected 12 or 16 lower-case hex chars");
/** An environment variable NAME (never a value). */
export const EnvName = z.string().regex(/^[A-Za-z_][A-Za-z0-9_]{0,127}$/, "expected an environment variable name");

const NonNegInt = z.number().int().nonnegative();
const NonNegNum = z.number().finite().nonnegative();

/** Route of a study. */
export const RouteSchema = z.enum(["terminal", "browser"]);
export type Route = z.infer<typeof RouteSchema>;
/** `dry-run` (contract only, no spend) or `live`. */
export const ModeSchema = z.enum(["dry-run", "live"]);
export type Mode = z.infer<typeof ModeSchema>;

/* ------------------------------------------------------------------------------------------ */
/* Cost (our labelling rule)                                                                   */
/* ------------------------------------------------------------------------------------------ */

/** How a cost line's number was obtained. */
export const CostBasisSchema = z.enum([
  "rate-table",
  "provider-token-usage",
  "provider-charge",
  "no-spend-signal",
  "operator-cap",
  "unpriced-token-usage",
  "unmeasured",
]);

/**
 * One cost line. Labelling rule (checked by `verifyRun` "cost labeling"):
 * a number `usd` carries `ratesAsOf` (YYYY-MM-DD) and a non-empty rate `source`;
 * `usd: null` means unmeasured and carries a non-empty `reason` with `ratesAsOf: null`.
 * `0` is a measured zero, never "unknown".
 */
export const CostLineSchema = z.strictObject({
  /** What is being priced. */
  kind: z.enum(["model-tokens", "sandbox-minutes", "desktop-minutes", "product", "media", "payment", "provider"]),
  participantId: z.string().min(1).optional(),
  modelId: z.string().min(1).optional(),
  /** USD, or null when unmeasured. */
  usd: NonNegNum.nullable(),
  /** Known count of billable units (jobs, requests), or null when unknown. */
  count: NonNegNum.nullable().optional(),
  basis: CostBasisSchema,
  /** Date of the rate table entry used; null iff `usd` is null. */
  ratesAsOf: RatesDate.nullable(),
  /** Public source of the rate (URL or table name); required when `usd` is a number. */
  source: z.string().min(1).nullable(),
  /** Why the line is unmeasured (e.g. `no_rate_for_model`, `no_token_usage`); required when `usd` is null. */
  reason: z.string().min(1).nullable(),
  note: z.string().optional(),
});
export type CostLine = z.infer<typeof CostLineSchema>;

/** Run cost summary `humanish.run-cost-summary.v1`: total is the rounded sum of the lines, null when any line is unmeasured (or there are none). */
export const RunCostSummarySchema = z.strictObject({
  schema: z.literal("humanish.run-cost-summary.v1"),
  currency: z.literal("usd"),
  estimatedTotalUsd: NonNegNum.nullable(),
  /** Oldest contributing rates date, or null when nothing is priced. */
  ratesAsOf: RatesDate.nullable(),
  lines: z.array(CostLineSchema),
  note: z.string(),
});
export type RunCostSummary = z.infer<typeof RunCostSummarySchema>;

/* ------------------------------------------------------------------------------------------ */
/* Cleanup proof (ARCHITECTURE invariant 7; same shape as src/sandbox/types.ts ReleaseProof)     */
/* ------------------------------------------------------------------------------------------ */

/** Proof of one resource's release, by exact id. Only `released` counts as cleanup proven. */
export const CleanupProofSchema = z.strictObject({
  id: z.string().min(1),
  /** `host`: a process started on the host (a browser lab's serve.command), released by pid + start time. */
  provider: z.enum(["docker", "e2b", "host"]),
  /** `sandbox` (terminal), `desktop` (browser guest) or `app-server` (host process). Defaults to `sandbox`. */
  kind: z.enum(["sandbox", "desktop", "app-server"]).optional(),
  participantId: z.string().min(1).optional(),
  outcome: z.enum(["released", "retained", "unconfirmed"]),
  reason: z.string().min(1),
  at: IsoTime,
});
export type CleanupProof = z.infer<typeof CleanupProofSchema>;

/* ------------------------------------------------------------------------------------------ */
/* Actor runtime and actor trace                                                               */
/* ------------------------------------------------------------------------------------------ */

/** `humanish.actor-runtime.v1`: what runtime was requested, what was observed, what was declared. */
export const ActorRuntimeSchema = z.strictObject({
  schema: z.literal("humanish.actor-runtime.v1"),
  package: z.string().min(1),
  /** Exact version or `latest`. */
  requestedVersion: z.string().min(1),
  observedVersion: z.string().min(1).optional(),
  versionStatus: z.enum(["unobserved", "verified", "failed"]),
  requestedModel: z.string().min(1).optional(),
  modelStatus: z.enum(["declared", "runtime_default_unobserved", "humanish_default"]),
  requestedReasoningEffort: z.string().min(1).optional(),
  usageGranularity: z.literal("runtime_turn"),
});
export type ActorRuntime = z.infer<typeof ActorRuntimeSchema>;

/** Participant status (abandoned/incomplete are findings about the product, not harness faults). */
export const ActorStatusSchema = z.enum(["passed", "abandoned", "incomplete", "blocked", "timed_out", "failed"]);
export type ActorStatus = z.infer<typeof ActorStatusSchema>;
export const CompletionReasonSchema = z.enum([
  "goal_satisfied",
  "turn_completed",
  "gave_up",
  "blocked_approval",
  "timed_out",
  "budget_reached",
  "actor_error",
  "step_failed",
  "harness_error",
  "interrupted",
]);
export type CompletionReason = z.infer<typeof CompletionReasonSchema>;

/** Token usage, in tokens; `costUsd` is reserved for a real provider charge. */
export const TokenUsageSchema = z.strictObject({
  input: NonNegInt.optional(),
  output: NonNegInt.optional(),
  cachedInput: NonNegInt.optional(),
  reasoningOutput: NonNegInt.optional(),
  total: NonNegInt.optional(),
  turns: NonNegInt.optional(),
  costUsd: NonNegNum.optional(),
});
export type TokenUsage = z.infer<typeof TokenUsageSchema>;

/** One item of an actor trace. `id` is `<kind>-<NNN>`. */
export const TraceItemSchema = z.strictObject({
  id: z.string().min(1),
  kind: z.enum(["message", "reasoning", "tool_call", "command", "file_change", "approval", "screenshot", "ui_action", "plan", "notice", "usage"]),
  lifecycle: z.enum(["started", "completed"]),
  status: z.string().min(1).optional(),
  title: z.string(),
  at: IsoTime.optional(),
  tool: z.string().optional(),
  /** kind `command`: the command (redacted), env NAMES only, exit code and output tail. */
  command: z
    .strictObject({
      text: z.string().optional(),
      cwd: z.string().optional(),
      envNames: z.array(EnvName).optional(),
      exitCode: z.number().int().nullable().optional(),
      timedOut: z.boolean().optional(),
      durationMs: NonNegNum.optional(),
      outputTail: z.string().optional(),
    })
    .optional(),
  /** kind `ui_action`: the action as dispatched (type plus its parameters). */
  action: z.looseObject({ type: z.string().min(1) }).optional(),
  /** Pointer coordinates in frame pixels. */
  coord: z.strictObject({ x: z.number(), y: z.number() }).optional(),
  /** kind `screenshot` (or an action's after-frame): a listed `screenshots/…png` artifact. */
  screenshotRef: z.strictObject({ path: z.string().min(1), redaction: z.enum(["blurred", "ocr_scrubbed", "none"]) }).optional(),
  /** kind `usage`: tokens of one turn. */
  usage: TokenUsageSchema.optional(),
  text: z.string().optional(),
});
export type TraceItem = z.infer<typeof TraceItemSchema>;

/** Estimated cost of one actor (`humanish.actor-estimated-cost.v1`). */
export const ActorEstimatedCostSchema = z.strictObject({
  schema: z.literal("humanish.actor-estimated-cost.v1"),
  estimatedCostUsd: NonNegNum.nullable(),
  reason: z.string().min(1).nullable(),
  ratesAsOf: RatesDate.nullable(),
  source: z.string().min(1).nullable(),
  modelId: z.string().min(1).nullable(),
});

/** `humanish.actor-trace.v1` — one participant's trace (`actor.json` or `actors/<id>.json`). */
export const ActorTraceSchema = z.strictObject({
  schema: z.literal("humanish.actor-trace.v1"),
  participantId: z.string().min(1),
  /** Actor type from the lab, e.g. `scripted-terminal`, `codex-exec`. */
  actorType: z.string().min(1),
  provider: z.string().min(1),
  providerVersion: z.string().min(1).optional(),
  protocol: z.enum(["json-rpc", "json-stream", "in-process-sdk", "cua-loop", "scripted-steps", "terminal-exec"]),
  lane: z.enum(["code", "app", "computer-use", "scripted-browser", "terminal"]),
  persona: z.strictObject({ id: z.string().min(1), traitsApplied: z.array(z.string()), promptDigest: ShortDigest }),
  redaction: z.strictObject({
    status: z.literal("passed"),
    screenshots: z.enum(["n/a", "raw", "blurred", "ocr_scrubbed"]),
    notes: z.string(),
  }),
  startedAt: IsoTime,
  completedAt: IsoTime,
  durationMs: NonNegNum,
  status: ActorStatusSchema,
  completionReason: CompletionReasonSchema,
  reason: z.string(),
  /** Which deadline fired, when one did (e.g. `maxMinutes`, `first-output`). */
  stopCause: z.string().min(1).optional(),
  ids: z.strictObject({
    sessionId: z.string().optional(),
    threadId: z.string().optional(),
    turnId: z.string().optional(),
    model: z.string().optional(),
  }),
  counts: z.record(z.string(), NonNegNum),
  items: z.array(TraceItemSchema),
  tokenUsage: TokenUsageSchema.optional(),
  estimatedCost: ActorEstimatedCostSchema.optional(),
  modelSettings: z.strictObject({ reasoningEffort: z.string().min(1) }).optional(),
  runtime: ActorRuntimeSchema.optional(),
});
export type ActorTrace = z.infer<typeof ActorTraceSchema>;

/* ------------------------------------------------------------------------------------------ */
/* Terminal ledgers                                                                              */
/* ------------------------------------------------------------------------------------------ */

/** A lifecycle record `{at, event, message}` (message redacted). */
export const LifecycleEventSchema = z.strictObject({ at: IsoTime, event: z.string().min(1), message: z.string() });
export type LifecycleEvent = z.infer<typeof LifecycleEventSchema>;

/** One command the harness ran for the participant: digest and env NAMES, never the text or values. */
export const CommandLogEntrySchema = z.strictObject({
  at: IsoTime,
  /** e.g. `codex-exec`, `step-3`, `task-check:add-filter`, `install`. */
  label: z.string().min(1),
  /** `digestText(exact command, 16)`. */
  commandDigest: ShortDigest,
  envNames: z.array(EnvName),
  exitCode: z.number().int().nullable().optional(),
  timedOut: z.boolean().optional(),
  durationMs: NonNegNum,
});
export type CommandLogEntry = z.infer<typeof CommandLogEntrySchema>;

/** An assisted input (always empty: participants run with stdin closed). */
export const InterventionSchema = z.strictObject({ at: IsoTime, kind: z.literal("stdin"), inputDigest: ShortDigest });

/** The four terminal cost categories (each must be present). */
export const TERMINAL_COST_CATEGORIES = ["product", "media", "payment", "provider"] as const;

/** `humanish.terminal-cost-ledger.v1`. */
export const TerminalCostLedgerSchema = z.strictObject({
  schema: z.literal("humanish.terminal-cost-ledger.v1"),
  currency: z.literal("usd"),
  lines: z.strictObject({
    product: CostLineSchema,
    media: CostLineSchema,
    payment: CostLineSchema,
    provider: CostLineSchema,
  }),
  /** Rounded (6 dp) sum of the non-null lines. */
  knownTotalUsd: NonNegNum,
  /** True iff no line is null. */
  fullyMeasured: z.boolean(),
});
export type TerminalCostLedger = z.infer<typeof TerminalCostLedgerSchema>;

/** `humanish.terminal-no-spend-proof.v1` — never lists a null line as zero. */
export const NoSpendProofSchema = z.strictObject({
  schema: z.literal("humanish.terminal-no-spend-proof.v1"),
  maxUsd: NonNegNum.nullable(),
  satisfied: z.boolean(),
  knownZeroLines: z.array(z.enum(TERMINAL_COST_CATEGORIES)),
  knownNonZeroLines: z.array(z.enum(TERMINAL_COST_CATEGORIES)),
  unmeasuredLines: z.array(z.enum(TERMINAL_COST_CATEGORIES)),
  knownTotalUsd: NonNegNum,
  statement: z.string().min(1),
});
export type NoSpendProof = z.infer<typeof NoSpendProofSchema>;

/** `terminal-ledgers.json` (`humanish.terminal-ledgers.v1`). */
export const TerminalLedgersSchema = z.strictObject({
  schema: z.literal("humanish.terminal-ledgers.v1"),
  runtime: ActorRuntimeSchema.optional(),
  lifecycle: z.array(LifecycleEventSchema),
  commandLog: z.array(CommandLogEntrySchema),
  interventions: z.array(InterventionSchema),
  cost: TerminalCostLedgerSchema,
  noSpendProof: NoSpendProofSchema,
  /** One proof per sandbox created; empty when none was created (lifecycle says why). */
  cleanup: z.array(CleanupProofSchema),
});
export type TerminalLedgers = z.infer<typeof TerminalLedgersSchema>;

/** One line of `terminal-events.ndjson`. */
export const TerminalEventSchema = z.strictObject({
  at: IsoTime,
  stream: z.enum(["stdout", "stderr"]),
  /** Optional participant / step label. */
  source: z.string().optional(),
  chunk: z.string(),
});
export type TerminalEvent = z.infer<typeof TerminalEventSchema>;

/** One line of `sandbox-receipts.ndjson`, appended the moment a sandbox/desktop exists. */
export const SandboxReceiptSchema = z.strictObject({
  at: IsoTime,
  participantId: z.string().min(1).optional(),
  provider: z.enum(["docker", "e2b"]),
  id: z.string().min(1),
  kind: z.enum(["sandbox", "desktop"]).optional(),
  timeoutMs: NonNegNum.optional(),
});
export type SandboxReceipt = z.infer<typeof SandboxReceiptSchema>;

/* ------------------------------------------------------------------------------------------ */
/* Browser geometry                                                                              */
/* ------------------------------------------------------------------------------------------ */

const Size = z.strictObject({ width: z.number().int().positive(), height: z.number().int().positive() });

/** Desktop geometry of a browser participant (screen requested/verified, window, viewport). */
export const DesktopGeometrySchema = z.strictObject({
  /** Device preset, e.g. `desktop`, `mobile`. */
  preset: z.string().min(1),
  screen: z.strictObject({ requested: Size, verified: Size.optional(), source: z.string().optional() }),
  browserWindow: Size.extend({ source: z.string().optional() }).optional(),
  viewport: Size.extend({ source: z.string().optional() }).optional(),
  warnings: z.array(z.string()),
});
export type DesktopGeometry = z.infer<typeof DesktopGeometrySchema>;

/* ------------------------------------------------------------------------------------------ */
/* Run bundle (reshaped by our design)                                                           */
/* ------------------------------------------------------------------------------------------ */

/** Closed set of artifact kinds. `screenshot` must be an admitted PNG; `report` is `report/index.html`; `analysis` is an `analysis/<NNNN>/` record. */
export const ArtifactKindSchema = z.enum([
  "actor-trace",
  "terminal-transcript",
  "terminal-events",
  "terminal-ledgers",
  "sandbox-receipts",
  "model-ledger",
  "screenshot",
  "report",
  "events",
  "log",
  "data",
  "analysis",
]);
export type ArtifactKind = z.infer<typeof ArtifactKindSchema>;

/** One listed artifact: local relative path, byte count and SHA-256 of the final bytes on disk. */
export const ArtifactEntrySchema = z.strictObject({
  path: z.string().min(1),
  kind: ArtifactKindSchema,
  bytes: NonNegInt,
  sha256: Sha256Hex,
});
export type ArtifactEntry = z.infer<typeof ArtifactEntrySchema>;

/** Verdict words of a review. */
export const VerdictSchema = z.enum(["contract_proof_only", "pass", "fail", "blocked", "timed_out"]);
export type Verdict = z.infer<typeof VerdictSchema>;

/** A participant of the study, as summarised in `run.json`. */
export const RunParticipantSchema = z.strictObject({
  id: z.string().min(1),
  actorType: z.string().min(1),
  label: z.string().optional(),
  /** `contract_proof_only` on dry runs. */
  status: z.union([ActorStatusSchema, z.literal("contract_proof_only")]),
  completionReason: CompletionReasonSchema.nullable(),
  reason: z.string(),
  /** Relative path of the listed actor trace, or null (dry run, or the actor never started). */
  trace: z.string().min(1).nullable(),
  startedAt: IsoTime.optional(),
  completedAt: IsoTime.optional(),
  durationMs: NonNegNum.optional(),
  /** Which deadline fired, if any (e.g. `maxMinutes`). */
  deadlineFired: z.string().min(1).optional(),
  reportedFriction: z.boolean().optional(),
  desktopGeometry: DesktopGeometrySchema.optional(),
  /** The seat's persona id, when its lane or roster entry set one. */
  persona: z.string().min(1).optional(),
  /** The seat's device preset (browser seats). */
  device: z.string().min(1).optional(),
  /**
   * What the participant said about its own result — a claim, never evidence of completion:
   * `passed` (a verdict marker or final answer of success), `blocked`, `failed` (it said it could
   * not finish) or `none`. Absent in bundles written before the checks-only goal rule.
   */
  claimed: z.enum(["passed", "blocked", "failed", "none"]).optional(),
  /**
   * The hidden check that decided whether this seat reached the goal: its task checks, a
   * `stopWhen` rule observed on the app (labs without tasks), or `none` (no check: not reached).
   * Absent in bundles written before the checks-only goal rule.
   */
  goalCheck: z.strictObject({ by: z.enum(["tasks", "stop_when", "none"]), reached: z.boolean(), detail: z.string() }).optional(),
});
export type RunParticipant = z.infer<typeof RunParticipantSchema>;

/** A task's outcome (hidden check result). */
export const TaskResultSchema = z.strictObject({
  id: z.string().min(1),
  goal: z.string(),
  participantId: z.string().min(1).optional(),
  status: z.enum(["passed", "failed", "not_run"]),
  passed: z.boolean(),
  detail: z.string().optional(),
});
export type TaskResult = z.infer<typeof TaskResultSchema>;

/** ParticipantOutcomes: tallies over participant statuses. */
export const ParticipantOutcomesSchema = z.strictObject({
  total: NonNegInt,
  reachedGoal: NonNegInt,
  abandoned: NonNegInt,
  ranOut: NonNegInt,
  blocked: NonNegInt,
  harnessFailed: NonNegInt,
  reportedFriction: NonNegInt,
});
export type ParticipantOutcomes = z.infer<typeof ParticipantOutcomesSchema>;

/** `humanish.review.v1`. */
export const ReviewSchema = z.strictObject({
  schema: z.literal("humanish.review.v1"),
  verdict: VerdictSchema,
  summary: z.string(),
  gaps: z.array(z.string()),
  participants: ParticipantOutcomesSchema,
  tasks: z.strictObject({
    sessions: NonNegInt,
    tasks: z.array(z.strictObject({ id: z.string().min(1), completed: NonNegInt, sessions: NonNegInt, observable: z.boolean() })),
  }),
});
export type Review = z.infer<typeof ReviewSchema>;

/** Caps declared by the lab (`scenario.caps`); null = not declared. */
export const CapsSchema = z.strictObject({
  maxUsd: NonNegNum.nullable(),
  maxJobs: NonNegInt.nullable(),
  maxMinutes: NonNegNum.nullable(),
});
export type Caps = z.infer<typeof CapsSchema>;

/** What happened to the run as a whole (harness view; participant outcomes live in `participants`). */
export const RunOutcomeSchema = z.strictObject({
  state: z.enum(["completed", "failed", "interrupted"]),
  error: z.strictObject({ code: z.string().regex(/^HUMANISH_[A-Z0-9_]+$/), message: z.string(), next: z.string().optional() }).optional(),
  interrupted: z.enum(["SIGINT", "SIGTERM"]).optional(),
});
export type RunOutcome = z.infer<typeof RunOutcomeSchema>;

/** How one seat ended in the study runner (its participant's own verdict is in `participants`). */
export const SeatStateSchema = z.enum(["completed", "failed", "interrupted", "budget_reached"]);

/** One seat of a study: its id (= its participant id), how it ended, its release and its known spend. */
export const StudySeatSchema = z.strictObject({
  id: z.string().min(1),
  index: NonNegInt,
  state: SeatStateSchema,
  /** The phase the seat ended in (`done`, `not_started`, `provision`, `participate`, …). */
  phase: z.string().min(1),
  /** The seat's folder in the bundle (`seats/<id>/`), or null for a one-seat bundle that keeps the root layout. */
  folder: z.string().min(1).nullable(),
  /** The release proof's outcome, or `none` when nothing was created. */
  release: z.enum(["released", "retained", "unconfirmed", "none"]),
  containerId: z.string().min(1).optional(),
  reason: z.string(),
  error: z.strictObject({ code: z.string().regex(/^HUMANISH_[A-Z0-9_]+$/), message: z.string(), next: z.string().optional() }).optional(),
  startedAt: IsoTime.optional(),
  durationMs: NonNegNum,
  /** Known spend of the seat, USD. */
  usd: NonNegNum,
  /** Known billable jobs of the seat. */
  jobs: NonNegInt,
});
export type StudySeat = z.infer<typeof StudySeatSchema>;

/** `humanish.study.v1`: the seats of a study and their totals, as the study runner ran them. */
export const StudySchema = z.strictObject({
  schema: z.literal("humanish.study.v1"),
  /** The lane every seat ran on (`docker-terminal`, `local-guest`, `dry-run`). */
  lane: z.string().min(1),
  /** Seats the lab declared (count, lanes or roster); `seats` lists exactly this many. */
  declaredSeats: z.number().int().min(1).max(16),
  concurrency: z.number().int().min(1).max(16),
  waves: z.number().int().min(1).max(16),
  /** `scenario.caps.maxTotalUsd`, null when not declared. */
  maxTotalUsd: NonNegNum.nullable(),
  /**
   * The rule the headline was written under: `checks-only` — a seat reached the goal only when
   * its hidden checks say so. Absent: an older bundle whose headline may count a participant's
   * own claim of success (`verify` re-derives it from the checks and says so).
   */
  goalRule: z.literal("checks-only").optional(),
  seats: z.array(StudySeatSchema),
  totals: z.strictObject({
    seats: NonNegInt,
    completed: NonNegInt,
    failed: NonNegInt,
    interrupted: NonNegInt,
    budgetReached: NonNegInt,
    knownUsd: NonNegNum,
    knownJobs: NonNegInt,
    /** Seats whose release was not confirmed (their capacity slot stayed held). */
    heldSlots: NonNegInt,
  }),
});
export type Study = z.infer<typeof StudySchema>;

/** A warning carried into the bundle. */
export const WarningSchema = z.strictObject({ code: z.string().min(1), message: z.string(), path: z.string().optional() });

/**
 * What a continued run (`lab run --rerun-failed-from RUN`) continues: the earlier run's id, the
 * SHA-256 of its `run.json` bytes as they verified when this run started, which seats were
 * chosen to run again and by which rule (`harness`: seats that failed as a harness;
 * `not-reached`: every seat that did not reach the goal). Absent on a run that continues nothing.
 */
export const ContinuesSchema = z.strictObject({
  runId: RunIdSchema,
  runJsonSha256: Sha256Hex,
  which: z.enum(["harness", "not-reached"]),
  seats: z.array(z.string().min(1)).min(1),
});
export type Continues = z.infer<typeof ContinuesSchema>;

/**
 * The optional blocks that close both `run.json` and the writer's input, in this order: a route
 * hands each over as it will be written, so the two schemas share the one declaration.
 */
const RunBundleOptionalBlocks = {
  /** The study runner's seats and totals (absent in bundles written before seats existed). */
  study: StudySchema.optional(),
  /** The lab's scorer module, as loaded (absent when the lab declares none). */
  scorerProvenance: ScorerProvenanceSchema.optional(),
  /** The scorer's `score` result. */
  adapterScore: RunAdapterScoreSchema.optional(),
  /** The scorer's `deriveFeedback` results. */
  feedbackCandidates: z.array(RunFeedbackCandidateSchema).optional(),
  /** The files the scorer's `deriveArtifacts` added under `adapter/`. */
  adapterArtifacts: z.array(RunAdapterArtifactSchema).optional(),
  /** The earlier run this one continues (absent in a run that continues nothing, and in older bundles). */
  continues: ContinuesSchema.optional(),
};

/** `run.json` — `humanish.run-bundle.v1`, the evidence of record. */
export const RunBundleSchema = z.strictObject({
  schema: z.literal("humanish.run-bundle.v1"),
  runId: RunIdSchema,
  route: RouteSchema,
  mode: ModeSchema,
  target: z.enum(["docker", "e2b-terminal", "local", "e2b-desktop"]),
  createdAt: IsoTime,
  completedAt: IsoTime,
  durationMs: NonNegNum,
  /** Always the literal `[target-cwd]`: the absolute cwd is never persisted. */
  cwd: z.literal("[target-cwd]"),
  /** `.humanish/runs/<runId>`. */
  artifactRoot: z.string(),
  lab: z.strictObject({
    id: z.string().min(1),
    title: z.string().optional(),
    /** `embedded:<id>` or a project-relative path (redacted), plus the SHA-256 of the lab text. */
    source: z.strictObject({ ref: z.string().min(1), sha256: Sha256Hex }),
  }),
  subject: z.strictObject({
    source: z.enum(["terminal-product", "app-url"]),
    name: z.string().optional(),
    publicSurfaces: z.array(z.string()).optional(),
    appUrl: z.string().optional(),
    provenance: z.enum(["seeded", "unpinned", "declared-not-run", "undeclared", "external-public"]),
  }),
  outcome: RunOutcomeSchema,
  lifecycle: z.array(LifecycleEventSchema),
  participants: z.array(RunParticipantSchema),
  tasks: z.array(TaskResultSchema),
  review: ReviewSchema,
  caps: CapsSchema,
  cost: RunCostSummarySchema,
  /** One proof per resource created (sandbox or desktop). Empty on dry runs. */
  cleanup: z.array(CleanupProofSchema),
  warnings: z.array(WarningSchema),
  redaction: z.strictObject({ status: z.literal("passed"), notes: z.string() }),
  artifacts: z.array(ArtifactEntrySchema),
  ...RunBundleOptionalBlocks,
});
export type RunBundle = z.infer<typeof RunBundleSchema>;

/**
 * What a route hands to `writer.finalize()`: the bundle minus the fields the writer owns
 * (`schema`, `runId`, `cwd`, `artifactRoot`, `redaction`, `artifacts`). Most blocks default,
 * so a run that failed early can still be finalized from very little.
 */
export const RunBundleInputSchema = z.strictObject({
  route: RouteSchema,
  mode: ModeSchema,
  target: RunBundleSchema.shape.target,
  createdAt: IsoTime,
  /** Defaults to now. */
  completedAt: IsoTime.optional(),
  lab: RunBundleSchema.shape.lab,
  subject: RunBundleSchema.shape.subject,
  outcome: RunOutcomeSchema.default({ state: "completed" }),
  lifecycle: z.array(LifecycleEventSchema).default([]),
  participants: z.array(RunParticipantSchema).default([]),
  tasks: z.array(TaskResultSchema).default([]),
  /** Defaults to a review derived from participants and tasks (see `deriveReview`). */
  review: ReviewSchema.optional(),
  caps: CapsSchema.default({ maxUsd: null, maxJobs: null, maxMinutes: null }),
  /** Defaults to a summary with no lines (`estimatedTotalUsd: null`). */
  cost: RunCostSummarySchema.optional(),
  cleanup: z.array(CleanupProofSchema).default([]),
  warnings: z.array(WarningSchema).default([]),
  redactionNotes: z.string().optional(),
  ...RunBundleOptionalBlocks,
});
export type RunBundleInput = z.input<typeof RunBundleInputSchema>;

/* ------------------------------------------------------------------------------------------ */
/* Status and latest (derived, never evidence)                                                  */
/* ------------------------------------------------------------------------------------------ */

/**
 * `status.json` — `humanish.run-status.v1`. Derived liveness index, touched while the run is
 * going and finalized once; NOT listed in `run.json` (it changes after the bundle is sealed),
 * but still schema-checked and scanned by `verifyRun`.
 */
export const RunStatusSchema = z.strictObject({
  schema: z.literal("humanish.run-status.v1"),
  runId: RunIdSchema,
  state: z.enum(["running", "finished"]),
  /** `preflight`, `allocate`, `provision`, `participate`, `check`, `teardown`, `write`, `verify`, `done`. */
  phase: z.string().min(1),
  detail: z.string().optional(),
  route: RouteSchema.optional(),
  mode: ModeSchema.optional(),
  lab: z.string().optional(),
  pid: z.number().int().positive(),
  startedAt: IsoTime,
  updatedAt: IsoTime,
  completedAt: IsoTime.optional(),
  outcome: z
    .strictObject({
      state: RunOutcomeSchema.shape.state.optional(),
      verdict: VerdictSchema.optional(),
      ok: z.boolean().optional(),
      participants: z.strictObject({ total: NonNegInt, reachedGoal: NonNegInt }).optional(),
      estimatedCostUsd: NonNegNum.nullable().optional(),
      durationMs: NonNegNum.optional(),
    })
    .optional(),
});
export type RunStatus = z.infer<typeof RunStatusSchema>;

/**
 * `orphan-release.json` — `humanish.orphan-release.v1`: releases of a run's resources made by
 * orphan reconciliation after the run's controller died (one proof appended per resource).
 */
export const OrphanReleaseSchema = z.strictObject({
  schema: z.literal("humanish.orphan-release.v1"),
  runId: RunIdSchema,
  releases: z.array(CleanupProofSchema),
});
export type OrphanRelease = z.infer<typeof OrphanReleaseSchema>;

/** `.humanish/runs/latest.json` — `humanish.latest-run.v1`; valid only if runId and path name the same child. */
export const LatestRunSchema = z.strictObject({
  schema: z.literal("humanish.latest-run.v1"),
  runId: RunIdSchema,
  path: z.string(),
  updatedAt: IsoTime,
});
export type LatestRun = z.infer<typeof LatestRunSchema>;

/* ------------------------------------------------------------------------------------------ */
/* Verify result                                                                                  */
/* ------------------------------------------------------------------------------------------ */

/** Share-safety reason codes. */
export const ShareReasonCodeSchema = z.enum(["VERIFY_FAILED", "PUBLIC_SAFETY_FINDINGS", "UNTRUSTED_SIGNER", "RAW_SCREENSHOTS", "UNSCANNED_ARTIFACT"]);

/** `humanish.verify-result.v1`. `ok` = every check ok. */
export const VerifyResultSchema = z.strictObject({
  schema: z.literal("humanish.verify-result.v1"),
  ok: z.boolean(),
  cwd: z.literal("[target-cwd]"),
  run: z.string(),
  bundlePath: z.string().optional(),
  checks: z.array(z.strictObject({ name: z.string(), ok: z.boolean(), message: z.string() })),
  shareSafety: z.strictObject({
    status: z.enum(["share_ready", "local_only", "blocked"]),
    reasons: z.array(z.strictObject({ code: ShareReasonCodeSchema, message: z.string() })),
  }),
  /**
   * Who sealed the bundle, when its signature verified (null: unsigned or bad signature).
   * `publicKey` is the base64 raw Ed25519 key, `fingerprint` `ed25519:<32 hex>`; `trusted` says
   * whether it is the local user's key or one passed with `--trust`.
   */
  signer: z.strictObject({ fingerprint: z.string(), publicKey: z.string(), trusted: z.boolean() }).nullable().optional(),
  warnings: z.array(z.string()),
  error: z.strictObject({ code: z.enum(["HUMANISH_RUN_NOT_FOUND", "HUMANISH_INVALID_RUN_BUNDLE"]), message: z.string() }).optional(),
});
export type VerifyResult = z.infer<typeof VerifyResultSchema>;
export type VerifyCheck = VerifyResult["checks"][number];
export type ShareSafety = VerifyResult["shareSafety"];

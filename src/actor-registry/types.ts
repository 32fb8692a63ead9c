/**
 * Shared participant (actor) types: capability descriptors for the registry and the pieces of
 * the actor trace (`humanish.actor-trace.v1`) every participant
 * produces. Routes turn a participant's outcome into `actor.json`; the bundle layer validates it.
 */

/** The capability lane an actor serves; routes pick actors by lane. */
export type ActorCapability = "terminal" | "scripted-browser" | "computer-use";

/** How an actor talks to its runtime, as recorded in the trace `protocol` field. */
export type ActorProtocol = "scripted-steps" | "terminal-exec" | "json-stream" | "cua-loop";

/**
 * Where an actor's model key lives. `in-sandbox-command-scoped`: only in the env of the one
 * command that runs the participant inside the sandbox. `none`: no key at all.
 */
export type KeyPlacement = "none" | "external" | "in-sandbox-command-scoped";

/** Declared capabilities of an actor (trace `capabilities`). */
export interface ActorCapabilities {
  headless: boolean;
  structuredTrace: boolean;
  lanes: ActorCapability[];
  producesScreenshots: boolean;
  /** True when the lab may choose the model (`actors[0].model`). */
  byoModel: boolean;
  preGrantableApprovals: boolean;
  inProcessTools: boolean;
  license: "open" | "source-available" | "proprietary";
  keyPlacement: KeyPlacement;
}

/**
 * How an actor's model spend is known: `none` (no model), `rate-table` (its requests are priced
 * from humanish's rate table; an unpriced model has an unknown cost), `account-unknown` (billed
 * to an account whose spend is not visible per request).
 */
export type ActorPricing = "none" | "rate-table" | "account-unknown";

/** A `scenario.caps` unit an actor enforces before each model request leaves. */
export type ActorCapUnit = "usd" | "tokens";

/** One registry entry: what an actor type is and what it can do. Pure data. */
export interface ActorDescriptor {
  /** The `actors[0].type` value that selects it. */
  type: string;
  /** The `execution.target` values it runs on (the first is the route's default). */
  targets: readonly string[];
  /**
   * True for a model-driven participant: its own verdict is a claim, so its lab needs a hidden
   * check, and it may spend.
   */
  modelParticipant: boolean;
  pricing: ActorPricing;
  /** True when its lab may set `stopWhen` (a page rule that stops the seat and can be its goal check). */
  stopWhen: boolean;
  /** The `scenario.caps` units it enforces (empty: it spends nothing a cap could bound, or cannot be bounded). */
  capUnits: readonly ActorCapUnit[];
  /** Trace `provider` (e.g. `codex`, `humanish`). */
  provider: string;
  protocol: ActorProtocol;
  capabilities: ActorCapabilities;
  /** Env var NAMES the actor may read its runtime key from, in priority order (empty: no key). */
  runtimeKeyNames: string[];
  /** One sentence for `lab inspect` / docs. */
  summary: string;
}

/** Trace `status`. `abandoned`/`incomplete` are participant outcomes, never harness faults. */
export type ActorStatus = "passed" | "abandoned" | "incomplete" | "blocked" | "timed_out" | "failed";

/** Trace `completionReason`. */
export type CompletionReason =
  | "goal_satisfied"
  | "turn_completed"
  | "gave_up"
  | "blocked_approval"
  | "timed_out"
  | "budget_reached"
  | "actor_error"
  | "step_failed"
  | "harness_error"
  /** The study was interrupted (SIGINT/SIGTERM) while the participant ran. */
  | "interrupted";

/** Which deadline stopped a participant command, if any. */
export type DeadlineKind =
  /** No stdout/stderr byte arrived within the first-output deadline (a silent hang). */
  | "first-output"
  /** The wall-clock cap `scenario.caps.maxMinutes` expired. */
  | "max-minutes"
  /** The study was interrupted (SIGINT/SIGTERM) and the participant was stopped. */
  | "interrupted";

/** One trace item (`items[]`). Text fields are redacted by the route before writing. */
export interface ActorItem {
  id: string;
  kind: "message" | "reasoning" | "tool_call" | "command" | "file_change" | "plan" | "notice";
  lifecycle: "started" | "completed";
  status?: string;
  title: string;
  tool?: string;
  command?: { text?: string; cwd?: string; envNames?: string[]; exitCode?: number | null; timedOut?: boolean; durationMs?: number; outputTail?: string };
  text?: string;
  /** ISO time. */
  at?: string;
}

/** Token usage of one Codex turn (a turn aggregates every model request it made). */
export interface TurnUsage {
  input: number;
  cachedInput: number;
  output: number;
  /** Reasoning output tokens when the runtime reports them (already included in `output`). */
  reasoningOutput?: number;
}

/** Trace `tokenUsage`: sums over turns plus the per-turn list. */
export interface TokenUsage {
  input: number;
  output: number;
  cachedInput: number;
  total: number;
  turns: TurnUsage[];
}

/**
 * `humanish.actor-estimated-cost.v1`: an estimate from a dated rate table, or `null` with a
 * reason. Never 0 for an unknown cost (ARCHITECTURE.md invariant 5).
 */
export interface EstimatedCost {
  schema: "humanish.actor-estimated-cost.v1";
  /** USD, rounded to 6 decimals; null when not measurable. */
  estimatedCostUsd: number | null;
  /** Why the estimate is null (`no_rate_for_model`, `no_token_usage`), else null. */
  reason: string | null;
  /** ISO date (YYYY-MM-DD) the rates were read, or null when no rate was used. */
  ratesAsOf: string | null;
  /** Public page the rates come from, or null when no rate was used. */
  source: string | null;
  modelId: string | null;
}

/** `humanish.actor-runtime.v1`: which runtime package ran, requested vs observed. */
export interface ActorRuntime {
  schema: "humanish.actor-runtime.v1";
  package: string;
  /** Exact semver, or `latest` when the lab did not pin one (the lifecycle records what it resolved to). */
  requestedVersion: string;
  /** What `codex --version` printed, parsed (absent until probed). */
  observedVersion?: string;
  versionStatus: "unobserved" | "verified" | "failed";
  requestedModel?: string;
  /**
   * `declared` by the lab; `runtime_default_unobserved` when the lab named none and the runtime
   * chose its own (no `--model` passed); `humanish_default` only in bundles written before that,
   * when humanish passed a default model of its own.
   */
  modelStatus: "declared" | "runtime_default_unobserved" | "humanish_default";
  requestedReasoningEffort?: string;
  usageGranularity: "runtime_turn";
}

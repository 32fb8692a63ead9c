/**
 * The seam between `humanish analyze` and whoever answers it. Evidence selection, admission,
 * output validation and storage are shared and provider-blind; a provider only turns one
 * bounded prompt into one raw answer. Two providers exist: `openai` (metered, through
 * src/models/) and `codex` (a signed-in Codex account through the restricted app-server,
 * billed to the account, so its cost is unknown by construction).
 */

/** How a provider's spend is known. `metered`: USD from a rate card; `account-unknown`: billed to a subscription humanish cannot see. */
export type AnalysisBilling = "metered" | "account-unknown";

/** One part of the analysis prompt. Images are admitted PNGs already downscaled by the selector. */
export type AnalysisPromptPart = { type: "text"; text: string } | { type: "image"; evidenceId: string; pngBase64: string; width: number; height: number };

/** The bounded prompt the shared selector built. */
export interface AnalysisPrompt {
  /** System/developer instructions (fixed text plus the operator's question). */
  instructions: string;
  /** The evidence packet in order; every evidence id the model may cite appears in it. */
  content: AnalysisPromptPart[];
  /** The structured-output contract: a name, its JSON Schema, and whether it is strict. */
  output: { name: string; jsonSchema: Record<string, unknown> };
}

/** What the shared admission step computed before anything is sent. Token counts are estimates; USD null when unpriced. */
export interface AnalysisEstimate {
  inputTokens: number;
  maxOutputTokens: number | null;
  imageCount: number;
  /** Conservative upper bound in USD (null for `account-unknown` or an unpriced model). */
  usd: number | null;
}

/** Token usage one request reported; null fields are unknown, never zero. */
export interface AnalysisUsage {
  inputTokens: number | null;
  outputTokens: number | null;
}

/**
 * A provider's raw answer. `completed` carries the model's JSON text; everything else is a
 * rejected output the shared code keeps as diagnostics and never treats as success.
 */
export type AnalysisProviderOutcome =
  | { status: "completed"; outputText: string }
  | { status: "incomplete"; reason: string; outputText?: string }
  | { status: "refused"; refusal: string }
  | { status: "failed"; code: string; message: string; httpStatus?: number };

/** One request's ledger facts (usage and cost; unknown is null, never zero). Units: USD, ms. */
export interface AnalysisRequestRecord {
  provider: string;
  model: string;
  /** Provider's response/turn id when it gave one. */
  responseId: string | null;
  usage: AnalysisUsage;
  /** USD when known from a rate card; null when unpriced or account-billed. */
  costUsd: number | null;
  /** Why the cost is what it is: `priced`, `unpriced-token-usage`, `account-unknown`, `not-sent`. */
  costLabel: "priced" | "unpriced-token-usage" | "account-unknown" | "not-sent";
  durationMs: number;
  /** Rates date (YYYY-MM-DD) and public source of a priced cost; absent or null otherwise. */
  ratesAsOf?: string | null;
  rateSource?: string | null;
  /** Why `costUsd` is null (e.g. `no_token_usage`, `no_rate_for_model`); absent or null when priced. */
  costReason?: string | null;
}

/** The result of {@link AnalysisProvider.run}. */
export interface AnalysisProviderResult {
  outcome: AnalysisProviderOutcome;
  request: AnalysisRequestRecord;
}

/** Options the operator gave that a provider must either honour or refuse. Units: USD, ms, tokens. */
export interface AnalysisRunOptions {
  model: string | null;
  maxCostUsd: number | null;
  maxOutputTokens: number | null;
  timeoutMs: number;
  signal: AbortSignal;
}

/**
 * A provider. Its `identity` is persisted and is part of the analysis config digest, so two
 * analyses by different executions never share a digest.
 */
export interface AnalysisProvider {
  readonly name: "openai" | "codex";
  readonly billing: AnalysisBilling;
  /** Stable facts about the execution (model, transport, auth/billing class, CLI version…); no secrets. */
  identity(options: AnalysisRunOptions): Promise<Record<string, string | number | boolean | null>>;
  /**
   * Refuses, before anything is sent, options this provider cannot honour (throws a
   * HumanishError with a `next` step): e.g. `codex` refuses numeric cost or token caps,
   * `openai` requires `maxCostUsd`.
   */
  admit(options: AnalysisRunOptions, estimate: AnalysisEstimate): void;
  /**
   * Optional checks that need the environment (a key present, an executable found) but send
   * nothing; called after admission and never on a dry run. Throws a HumanishError.
   */
  preflight?(options: AnalysisRunOptions): Promise<void>;
  /** Sends the prompt once (no retries: a 429 is a `failed` outcome). Never throws for a model-side failure. */
  run(prompt: AnalysisPrompt, options: AnalysisRunOptions): Promise<AnalysisProviderResult>;
}

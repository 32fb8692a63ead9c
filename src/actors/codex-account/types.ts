/**
 * The contract of the restricted Codex account launcher, shared by its two users: the
 * `local-agent` browser participant (`localAgent: codex`) and the account analyst
 * (`analyze --provider codex`). One launcher runs one ephemeral `codex app-server` thread in a
 * private CODEX_HOME that links only the operator's ChatGPT login; everything a turn may do
 * goes through the dynamic tools the caller declares.
 */

/** Why the seat or analysis runs: the participant and the analyst never share a conversation. */
export type CodexAccountPurpose = "participant" | "analyst";

/** The one qualified execution profile; anything else is refused before a model turn. */
export interface CodexAccountProfile {
  /** Exact `@openai/codex` version this humanish qualified (e.g. `0.171.0`). */
  cliVersion: string;
  platform: "linux-x64";
  /** Login shape: a file-backed ChatGPT login (`auth.json` with ChatGPT tokens). */
  auth: "chatgpt-file";
  model: string;
  effort: "low" | "medium" | "high";
}

/** Persisted identity of one execution (part of an analysis config digest; never a secret). */
export interface CodexExecutionIdentity {
  transport: "codex-app-server-stdio";
  authClass: "chatgpt-file";
  billing: "account-unknown";
  model: string;
  effort: string;
  toolPolicy: string;
  cliVersion: string;
}

/** A dynamic tool the caller declares for the thread (JSON Schema input). */
export interface CodexDynamicTool {
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
}

/** What a dynamic tool call returns to the model: text and image items, bounded by the launcher. */
export interface CodexDynamicToolResult {
  success: boolean;
  contentItems: Array<{ type: "inputText"; text: string } | { type: "inputImage"; imageUrl: string }>;
}

/** One turn's input. Units: ms. */
export interface CodexTurnInput {
  /** Developer instructions of the thread's first turn. */
  instructions: string;
  input: Array<{ type: "text"; text: string } | { type: "image"; url: string }>;
  tools: CodexDynamicTool[];
  /** Answers one dynamic tool call; a throw is recorded and ends the turn as failed. */
  onToolCall?: (call: { tool: string; callId: string; arguments: unknown }) => Promise<CodexDynamicToolResult>;
  /** JSON Schema of the final answer (the turn's structured output). */
  outputSchema?: Record<string, unknown>;
  /** Whole-turn deadline, ms. */
  deadlineMs: number;
  signal: AbortSignal;
}

/** Token usage the app-server reported; null is unknown, never zero. */
export interface CodexTurnUsage {
  inputTokens: number | null;
  cachedInputTokens: number | null;
  outputTokens: number | null;
}

/** How a turn ended. `refused` names the launcher rule that stopped it (e.g. a raw tool call). */
export type CodexTurnResult =
  | { status: "completed"; finalText: string; usage: CodexTurnUsage; turnId: string }
  | { status: "interrupted" | "failed" | "refused"; reason: string; usage: CodexTurnUsage; turnId: string | null };

/** How the launcher gave back its process and private directory. */
export interface CodexAccountRelease {
  outcome: "released" | "unconfirmed";
  reason: string;
  /** Set when the private directory was kept (unconfirmed closure or a replaced auth link). */
  keptDir?: string;
  /** `codex_cleanup_failed` when the auth link had been replaced. */
  warning?: string;
}

/** A running restricted session: at most one turn at a time, closed exactly once. */
export interface CodexAccountSession {
  readonly identity: CodexExecutionIdentity;
  runTurn(turn: CodexTurnInput): Promise<CodexTurnResult>;
  close(): Promise<CodexAccountRelease>;
}

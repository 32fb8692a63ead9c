/**
 * The `codex` analysis provider: one analysis answered by the operator's signed-in Codex
 * account through the restricted app-server (src/actors/codex-account/). Every analysis starts
 * a new ephemeral analyst session — a participant's conversation is never reused — and closes it
 * before the answer is accepted. The account is billed by its subscription, which humanish
 * cannot see: numeric cost and output-token caps are refused (stored null), the cost is null
 * with label `account-unknown`, and token usage is kept only where the app-server reported it.
 * The session's frame limit follows the packet's size (the app-server echoes it back).
 */
import { analystFrameBytes, defaultBounds, stdoutBudgetFor } from "../actors/codex-account/bounds.ts";
import { prelaunch } from "../actors/codex-account/launch.ts";
import { executionIdentity, QUALIFIED_CODEX_PROFILE, refuseNumericCaps } from "../actors/codex-account/profile.ts";
import { startCodexAccountSession } from "../actors/codex-account/session.ts";
import type { CodexAccountSession, CodexTurnInput } from "../actors/codex-account/types.ts";
import { HumanishError } from "../errors.ts";
import type { AnalysisEstimate, AnalysisPrompt, AnalysisProvider, AnalysisProviderOutcome, AnalysisProviderResult, AnalysisRunOptions } from "./provider.ts";

/** Options of {@link createCodexAnalysisProvider}. */
export interface CodexAnalysisProviderOptions {
  /** The operator's environment (default `process.env`); see the launcher for what is read. */
  env?: Record<string, string | undefined>;
  /** The operator's `auth.json` when not at the default place. */
  authPath?: string;
}

/** The longest whole analysis (startup included) the launcher admits, ms. */
export const CODEX_ANALYSIS_MAX_TIMEOUT_MS = 600_000;

/** The provider over `env`. */
export function createCodexAnalysisProvider(opts: CodexAnalysisProviderOptions = {}): AnalysisProvider {
  const env = opts.env ?? process.env;
  const profile = QUALIFIED_CODEX_PROFILE;
  return {
    name: "codex",
    billing: "account-unknown",
    async identity() {
      return { ...executionIdentity(profile, "analyst") };
    },
    admit(options: AnalysisRunOptions, _estimate: AnalysisEstimate) {
      refuseNumericCaps({ "--max-cost": options.maxCostUsd, "--max-output-tokens": options.maxOutputTokens }, "analyze");
      if (options.model !== null && options.model !== profile.model)
        throw new HumanishError(
          "HUMANISH_CODEX_UNSUPPORTED_PROFILE",
          `--model ${options.model}: the Codex account analyst runs only the qualified model ${profile.model}`,
          {
            next: "Drop --model for --provider codex.",
          },
        );
      if (!Number.isInteger(options.timeoutMs) || options.timeoutMs < 1 || options.timeoutMs > CODEX_ANALYSIS_MAX_TIMEOUT_MS)
        throw new HumanishError(
          "HUMANISH_CODEX_BOUNDS_INVALID",
          `the analysis timeout ${options.timeoutMs} ms is outside 1..${CODEX_ANALYSIS_MAX_TIMEOUT_MS} ms`,
          {
            next: "Pass a timeout of at most 600 s.",
          },
        );
    },
    async preflight() {
      prelaunch(env, opts.authPath);
    },
    async run(prompt: AnalysisPrompt, options: AnalysisRunOptions): Promise<AnalysisProviderResult> {
      const started = Date.now();
      // The whole analysis, startup included, fits in the operator's timeout.
      const startupMs = Math.max(1, Math.min(defaultBounds("analyst").startupMs, options.timeoutMs));
      // Frames are sized to this packet: the app-server echoes it back, screenshots included.
      const frameBytes = analystFrameBytes(packetBytes(prompt));
      const session = await startCodexAccountSession({
        purpose: "analyst",
        signal: options.signal,
        env,
        bounds: { startupMs, frameBytes, stdoutBytes: stdoutBudgetFor(frameBytes) },
        ...(opts.authPath ? { authPath: opts.authPath } : {}),
      });
      let outcome: AnalysisProviderOutcome = { status: "failed", code: "HUMANISH_CODEX_TURN_FAILED", message: "the turn did not run" };
      let usage = { inputTokens: null as number | null, outputTokens: null as number | null };
      let responseId: string | null = null;
      try {
        outcome = await runOnce(session, prompt, options, started, (u, id) => {
          usage = u;
          responseId = id;
        });
      } finally {
        const rel = await session.close();
        if (rel.warning || rel.outcome !== "released") {
          // An answer is only accepted once the child and the login link are given back.
          outcome = {
            status: "failed",
            code: rel.warning ? "HUMANISH_CODEX_CLEANUP_FAILED" : "HUMANISH_CODEX_CLEANUP_UNCONFIRMED",
            message: `${rel.reason}${rel.keptDir ? ` (kept ${rel.keptDir})` : ""}`,
          };
        }
      }
      return {
        outcome,
        request: {
          provider: "codex",
          model: profile.model,
          responseId,
          usage,
          costUsd: null,
          costLabel: "account-unknown",
          costReason: "account_billed",
          durationMs: Date.now() - started,
        },
      };
    },
  };
}

/** The turn input of `prompt` as the app-server receives it (images as PNG data URLs). */
function turnInput(prompt: AnalysisPrompt): CodexTurnInput["input"] {
  return prompt.content.map((c) => (c.type === "text" ? { type: "text", text: c.text } : { type: "image", url: `data:image/png;base64,${c.pngBase64}` }));
}

/** The packet's serialized size, bytes: the instructions and the turn input. */
function packetBytes(prompt: AnalysisPrompt): number {
  return Buffer.byteLength(prompt.instructions, "utf8") + Buffer.byteLength(JSON.stringify(turnInput(prompt)), "utf8");
}

async function runOnce(
  session: CodexAccountSession,
  prompt: AnalysisPrompt,
  options: AnalysisRunOptions,
  started: number,
  record: (u: { inputTokens: number | null; outputTokens: number | null }, id: string | null) => void,
): Promise<AnalysisProviderOutcome> {
  const remaining = options.timeoutMs - (Date.now() - started);
  if (remaining < 1) return { status: "incomplete", reason: "timeout" };
  const r = await session.runTurn({
    instructions: prompt.instructions,
    input: turnInput(prompt),
    tools: [],
    outputSchema: prompt.output.jsonSchema,
    deadlineMs: Math.min(remaining, CODEX_ANALYSIS_MAX_TIMEOUT_MS),
    signal: options.signal,
  });
  record({ inputTokens: r.usage.inputTokens, outputTokens: r.usage.outputTokens }, r.turnId);
  if (r.status === "completed") return { status: "completed", outputText: r.finalText };
  if (r.status === "interrupted") return { status: "incomplete", reason: r.reason };
  if (r.status === "refused") return { status: "failed", code: "HUMANISH_CODEX_REFUSED", message: `the restricted launcher ended the turn: ${r.reason}` };
  return { status: "failed", code: "HUMANISH_CODEX_TURN_FAILED", message: r.reason };
}

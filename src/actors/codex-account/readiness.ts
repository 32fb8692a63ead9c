/**
 * Launcher readiness without a model call: the same qualification and launch as a real session
 * (version, login shape, private home, effective config, MCP list), then closure. Used by
 * `humanish doctor --lab` for labs with Codex account seats.
 */
import { isHumanishError } from "../../errors.ts";
import { ANALYST_MIN_FRAME_BYTES, stdoutBudgetFor } from "./bounds.ts";
import { QUALIFIED_CODEX_PROFILE } from "./profile.ts";
import { startCodexAccountSession } from "./session.ts";

/** One readiness verdict: `ok`, a one-line message, and the HUMANISH_ code when it failed. */
export interface CodexLauncherReadiness {
  ok: boolean;
  message: string;
  code?: string;
  next?: string;
}

/** Launches and closes one restricted session (no thread, no turn). Never throws. */
export async function checkCodexAccountLauncher(env: Record<string, string | undefined>, authPath?: string): Promise<CodexLauncherReadiness> {
  const p = QUALIFIED_CODEX_PROFILE;
  try {
    // No turn is sent, so nothing is echoed back: the smallest analyst frame limit is enough.
    const bounds = { frameBytes: ANALYST_MIN_FRAME_BYTES, stdoutBytes: stdoutBudgetFor(ANALYST_MIN_FRAME_BYTES) };
    const s = await startCodexAccountSession({ purpose: "analyst", signal: new AbortController().signal, env, bounds, ...(authPath ? { authPath } : {}) });
    const rel = await s.close();
    if (rel.outcome !== "released" || rel.warning)
      return {
        ok: false,
        code: "HUMANISH_CODEX_CLEANUP_FAILED",
        message: `launched, but closing was ${rel.outcome}${rel.warning ? ` (${rel.warning})` : ""}: ${rel.reason}`,
      };
    return {
      ok: true,
      message: `codex-cli ${p.cliVersion} app-server ready (file-backed ChatGPT login, model ${p.model}/${p.effort}, restricted config verified; no model call)`,
    };
  } catch (e) {
    if (isHumanishError(e)) return { ok: false, code: e.code, message: `${e.code}: ${e.message}`, ...(e.next ? { next: e.next } : {}) };
    return { ok: false, code: "HUMANISH_CODEX_PROCESS_FAILED", message: String((e as Error)?.message ?? e) };
  }
}

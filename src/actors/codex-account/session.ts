/**
 * One restricted Codex account session: launch, at most one turn at a time on one ephemeral
 * thread, and a single closure that gives back the child and the private directory.
 */
import { HumanishError } from "../../errors.ts";
import { type CodexAccountBounds, resolveBounds } from "./bounds.ts";
import { releasePrivateDir } from "./home.ts";
import { type LaunchedAppServer, launchAppServer, prelaunch } from "./launch.ts";
import { closeChild } from "./process.ts";
import { assertQualifiedProfile, executionIdentity, QUALIFIED_CODEX_PROFILE } from "./profile.ts";
import { writeMarker } from "./recovery.ts";
import { runRestrictedTurn, startRestrictedThread, type ThreadState } from "./thread.ts";
import type {
  CodexAccountProfile,
  CodexAccountPurpose,
  CodexAccountRelease,
  CodexAccountSession,
  CodexExecutionIdentity,
  CodexTurnInput,
  CodexTurnResult,
} from "./types.ts";

/** Options of {@link startCodexAccountSession}. */
export interface CodexAccountSessionOptions {
  purpose: CodexAccountPurpose;
  /** Defaults to the one qualified profile; any other is refused. */
  profile?: CodexAccountProfile;
  /** The operator's `auth.json` (default `$CODEX_HOME/auth.json`, else `~/.codex/auth.json`). */
  authPath?: string;
  /** Aborting closes the session (interrupting a running turn). */
  signal: AbortSignal;
  /** Tighter bounds than the defaults (names of {@link CodexAccountBounds}; bytes, counts, ms); never looser. */
  bounds?: Partial<Record<keyof CodexAccountBounds, number>>;
  /** The operator's environment (default `process.env`): only PATH, HOME, CODEX_HOME, XDG_CACHE_HOME, LANG, USER, LOGNAME and the test-only provider variable are read; none of it reaches the child but locale and user names. */
  env?: Record<string, string | undefined>;
}

/**
 * Starts one restricted session: qualification, launch and readiness, no model turn.
 * @throws HumanishError `HUMANISH_CODEX_*` naming the rule (unsupported version/platform/auth,
 *   login required, unsafe configuration, busy, cleanup failed, protocol error, process failed).
 */
export async function startCodexAccountSession(opts: CodexAccountSessionOptions): Promise<CodexAccountSession> {
  const env = opts.env ?? process.env;
  const profile = opts.profile ?? { ...QUALIFIED_CODEX_PROFILE };
  assertQualifiedProfile(profile);
  const bounds = resolveBounds(opts.purpose, opts.bounds);
  if (opts.signal.aborted) throw new HumanishError("HUMANISH_CODEX_CANCELLED", "the Codex session was cancelled before it started");
  const pre = prelaunch(env, opts.authPath);
  let launched: LaunchedAppServer;
  try {
    launched = await launchAppServer(pre, profile, bounds, env);
  } catch (e) {
    const l = (e as { launched?: Partial<LaunchedAppServer> }).launched;
    if (l?.dir) {
      delete (e as { launched?: unknown }).launched;
      const rel = await releaseLaunched(l as LaunchedAppServer, bounds, env);
      if (e instanceof HumanishError && e.details) e.details.release = rel;
    }
    throw e;
  }
  return new RestrictedSession(launched, profile, opts.purpose, bounds, env, opts.signal);
}

/** Closes what a launch produced (child first, then the directory) and reports how. */
async function releaseLaunched(
  l: Partial<LaunchedAppServer> & Pick<LaunchedAppServer, "dir">,
  bounds: CodexAccountBounds,
  env: Record<string, string | undefined>,
): Promise<CodexAccountRelease> {
  if (l.proc) {
    const closure = await closeChild(l.proc, bounds.termWaitMs, bounds.killWaitMs);
    if (!closure.confirmed) {
      writeMarker(env, {
        taskDirectory: l.dir.root,
        taskDirectoryName: l.dir.name,
        reason: "process_cleanup_unconfirmed",
        pid: l.child?.pid,
        pidStartTime: l.child?.startTime,
        authTarget: l.dir.authTarget,
      });
      return { outcome: "unconfirmed", reason: `the app-server (pid ${l.proc.pid}) did not exit after SIGTERM and SIGKILL`, keptDir: l.dir.root };
    }
  }
  const rel = releasePrivateDir(l.dir);
  if (rel.outcome === "auth_replaced") {
    writeMarker(env, { taskDirectory: l.dir.root, taskDirectoryName: l.dir.name, reason: "unexpected_auth_replacement", authTarget: l.dir.authTarget });
    return {
      outcome: "released",
      reason: "the child exited; its auth.json link had been replaced by a file, kept 0600 and not copied back",
      keptDir: l.dir.root,
      warning: "codex_cleanup_failed",
    };
  }
  return { outcome: "released", reason: "the child exited and the private directory was removed" };
}

class RestrictedSession implements CodexAccountSession {
  readonly identity: CodexExecutionIdentity;
  private thread: ThreadState | null = null;
  private running: { interrupt: () => Promise<void> } | null = null;
  private refusedRule: string | null = null;
  private closing: Promise<CodexAccountRelease> | null = null;

  constructor(
    private readonly l: LaunchedAppServer,
    private readonly profile: CodexAccountProfile,
    private readonly purpose: CodexAccountPurpose,
    private readonly bounds: CodexAccountBounds,
    private readonly env: Record<string, string | undefined>,
    signal: AbortSignal,
  ) {
    this.identity = executionIdentity(profile, purpose);
    this.installIdleHandlers();
    if (signal.aborted) void this.close();
    else signal.addEventListener("abort", () => void this.close(), { once: true });
  }

  /** Between turns nothing may ask the host anything, and no item may appear: either refuses the session. */
  private installIdleHandlers(): void {
    this.l.conn.onServerRequest = (req) => {
      this.l.conn.respondError(req.id, -32601, "Host request is disabled");
      this.refusedRule ??= `host_request:${req.method.slice(0, 80)}`;
    };
    this.l.conn.onNotification = (method) => {
      if (method === "item/started" || method === "rawResponseItem/completed" || method === "turn/started")
        this.refusedRule ??= `unexpected_activity:${method}`;
    };
  }

  async runTurn(turn: CodexTurnInput): Promise<CodexTurnResult> {
    const none = { inputTokens: null, cachedInputTokens: null, outputTokens: null };
    if (this.closing) return { status: "failed", reason: "session_closed", usage: none, turnId: null };
    if (this.running)
      throw new HumanishError("HUMANISH_CODEX_BUSY", "a Codex session runs one turn at a time", { next: "Await the running turn before starting another." });
    if (this.refusedRule) return { status: "refused", reason: `session_refused:${this.refusedRule}`, usage: none, turnId: null };
    if (this.l.conn.fatal) return { status: "failed", reason: `codex_process_failed:${this.l.conn.fatal.rule}`, usage: none, turnId: null };
    if (this.purpose === "analyst" && turn.tools.length > 0) return { status: "refused", reason: "analyst_tools_not_allowed", usage: none, turnId: null };
    if (!Number.isInteger(turn.deadlineMs) || turn.deadlineMs < 1 || turn.deadlineMs > this.bounds.turnMs)
      throw new HumanishError("HUMANISH_CODEX_BOUNDS_INVALID", `turn deadlineMs ${turn.deadlineMs} is outside 1..${this.bounds.turnMs} ms`);
    try {
      if (!this.thread) {
        const t = await startRestrictedThread(this.l, this.profile, this.bounds, turn);
        if ("refused" in t) {
          this.refusedRule = t.refused;
          return { status: "refused", reason: t.refused, usage: none, turnId: null };
        }
        this.thread = t;
      }
      const result = await runRestrictedTurn(this.l, this.thread, this.profile, this.bounds, turn, (r) => {
        this.running = r;
      });
      if (result.status === "refused") this.refusedRule = result.reason;
      return result;
    } finally {
      this.running = null;
      this.installIdleHandlers();
    }
  }

  close(): Promise<CodexAccountRelease> {
    this.closing ??= (async () => {
      if (this.running) await this.running.interrupt();
      return releaseLaunched(this.l, this.bounds, this.env);
    })();
    return this.closing;
  }
}

/**
 * One Terminus-style environment instance: an episode in a fresh sandbox, driven through the
 * single `terminal` tool.
 *
 * - `reset` releases the previous sandbox by exact id, creates a fresh one and runs the setup
 *   commands; a failing setup (or a sandbox that cannot be created, e.g. E2B without a key)
 *   ends the reset with `done = true` and the captured results.
 * - `terminal(command)` runs `bash -c <command>` in a fresh process (files persist; `cd` and
 *   exports do not) under a per-command deadline.
 * - `terminal(final_answer)` runs the verify commands and ends the episode. Reward = passed /
 *   total unless a verify command writes an accepted override (see reward.ts — NOT a trust
 *   boundary).
 * - The sandbox lives at most `sandboxTimeoutMs`; an expiry is an infrastructure failure
 *   (`reward = null`), never a score. Nothing uncertain is replayed.
 *
 * Capacity: the instance holds at most one slot (see sessions.ts). It keeps it while it lives and
 * gives it back on close once its sandbox's release is confirmed; a release that is not confirmed
 * hands the slot to the ledger, which keeps it held until a later release confirms that id.
 *
 * Calls on one instance must be serialized by the caller (the session queue does this).
 */
import { randomUUID } from "node:crypto";
import { HumanishError, isHumanishError } from "../errors.ts";
import type { ExecResult, ReleaseProof, Sandbox } from "../sandbox/types.ts";
import { zodIssues } from "../text/zod-issues.ts";
import type { SandboxLedger } from "./ledger.ts";
import {
  computeReward,
  parseRewardProbe,
  REWARD_CLEAR_SCRIPT,
  REWARD_READ_SCRIPT,
  type RewardOutcome,
  type RewardOverrideIgnored,
  type RewardOverrideVerdict,
} from "./reward.ts";
import type { Slot } from "./slot.ts";
import { commandOutputText, commandResultText, finalAnswerText, toolErrorText } from "./text.ts";
import { type ResetRequest, TERMINAL_TOOL_NAME, type ToolErrorType, terminalArgsSchema, terminalToolOpenEnv } from "./wire.ts";

/** The wire response of reset/step: `{observation, reward, done, metadata}`. */
export interface EnvResponse {
  observation: Record<string, unknown> & { done: boolean; reward: number | null; metadata: Record<string, unknown> };
  reward: number | null;
  done: boolean;
  metadata: Record<string, unknown>;
}

/** Creates the sandboxes of one backend (docker or e2b). Throws HumanishError on failure. */
export interface EnvBackend {
  readonly name: "docker" | "e2b";
  create(opts: { runId: string; labels: Record<string, string>; onCreated: (id: string) => void }): Promise<Sandbox>;
}

/** A structured log event. Text fields are redacted by the sink's owner before writing. */
export interface EnvLogEvent {
  session: string;
  episode_id: string | null;
  kind: "reset" | "setup" | "command" | "final_answer" | "verify" | "reward" | "release" | "failure";
  command?: string;
  stdout?: string;
  stderr?: string;
  exit_code?: number;
  timed_out?: boolean;
  detail?: string;
}

/** Per-instance configuration. Units: ms and bytes. */
export interface EnvironmentConfig {
  sessionId: string;
  backend: EnvBackend;
  ledger: SandboxLedger;
  /** Sandbox lifetime from creation (default 300 000). */
  sandboxTimeoutMs: number;
  /** Default per-command deadline (setup, agent commands, verify). */
  commandTimeoutMs: number;
  /** Per-stream cap of output returned in an observation (tail kept). */
  maxOutputBytes: number;
  /** Takes a capacity slot; rejects with `HumanishError("HUMANISH_ENV_CAPACITY")` when none frees in time. */
  acquireSlot: () => Promise<Slot>;
  /** Receives log events; the sink redacts before writing. */
  log: (event: EnvLogEvent) => void;
  /** Replaces "call reset first" in the no-episode error (e.g. where reset cannot continue into a step). */
  noEpisodeHint?: string;
  /** Replaces "call reset to start a new one" once the episode is over (e.g. where there is no reset). */
  episodeOverHint?: string;
}

/**
 * Result of one shell command as reported on the wire. `output`, `error` and `success` are the
 * upstream terminus `CommandResult` fields, so its client parses setup, verify and command lists.
 */
export interface CommandReport {
  command: string;
  /** stdout then stderr as text, or `(no output)`. */
  output: string;
  /** Why the command did not finish normally (a timeout), else null. A non-zero exit is not an error. */
  error: string | null;
  /** Exit code 0 and not timed out. */
  success: boolean;
  exit_code: number;
  stdout: string;
  stderr: string;
  timed_out: boolean;
  duration_ms: number;
  stdout_truncated_bytes?: number;
  stderr_truncated_bytes?: number;
}

/** How many of the latest agent commands `state.commands` keeps (`command_count` counts all). */
export const STATE_COMMANDS_KEPT = 10;

/** The state document of this instance (WebSocket `state`; see wire.ts `stateSchema`). */
export interface EnvState {
  episode_id: string | null;
  step_count: number;
  sandbox_id: string | null;
  backend: "docker" | "e2b";
  /** The reset's seed, recorded only: it has no effect. */
  seed: number | null;
  done: boolean;
  reward: number | null;
  /** The reward of the last final answer (upstream's field; null before one or after an infrastructure failure). */
  last_reward: number | null;
  setup_results: CommandReport[];
  /** The hidden verify commands (the orchestrator's view; the agent never sees them). */
  verify_commands: string[];
  verify_results: CommandReport[];
  /** The latest agent commands (at most {@link STATE_COMMANDS_KEPT}). */
  commands: CommandReport[];
  command_count: number;
  submitted_answer: string | null;
  /** The last framework failure as one line, else null. */
  last_error: string | null;
  reward_override_ignored: RewardOverrideIgnored | null;
  infrastructure_failure: { code: string; message: string } | null;
  reward_source: "override" | "pass_rate" | null;
  verify_passed: number | null;
  verify_total: number | null;
  sandbox_release: ReleaseProof | null;
}

/** Deadline for the reward-file probe, in ms. */
const REWARD_PROBE_TIMEOUT_MS = 10_000;

/** Home and working directory of the sandbox user. */
export const SANDBOX_WORKDIR = "/home/user";

function decodeTail(bytes: Uint8Array, max: number): { text: string; dropped: number } {
  const dropped = Math.max(0, bytes.length - max);
  const view = dropped > 0 ? bytes.subarray(dropped) : bytes;
  return { text: new TextDecoder("utf-8", { fatal: false }).decode(view), dropped };
}

/** A fresh `{observation, reward, done, metadata}` with the shared fields in both places. */
function response(fields: Record<string, unknown>, done: boolean, reward: number | null, metadata: Record<string, unknown>): EnvResponse {
  return { observation: { ...fields, done, reward, metadata }, reward, done, metadata };
}

/** One environment instance (a WebSocket or MCP session, or one stateless request). */
export class TerminalEnvironment {
  private sandbox: Sandbox | null = null;
  private episodeId: string | null = null;
  private stepCount = 0;
  private done = false;
  private reward: number | null = null;
  private seed: number | null = null;
  private verify: string[] = [];
  private setupResults: CommandReport[] = [];
  private verifyResults: CommandReport[] = [];
  private recent: CommandReport[] = [];
  private commandCount = 0;
  private submittedAnswer: string | null = null;
  private lastError: string | null = null;
  private overrideIgnored: RewardOverrideIgnored | null = null;
  private infraFailure: { code: string; message: string } | null = null;
  private rewardOutcome: RewardOutcome | null = null;
  private lastRelease: ReleaseProof | null = null;
  private expiryTimer: ReturnType<typeof setTimeout> | null = null;
  private expired = false;
  private closed = false;
  private creating: Promise<Sandbox> | null = null;

  /** @param slot a slot taken for this instance up front (persistent sessions), else null */
  constructor(
    private readonly cfg: EnvironmentConfig,
    private slot: Slot | null = null,
  ) {}

  /** The live sandbox id, if any. */
  get sandboxId(): string | null {
    return this.sandbox?.id ?? null;
  }

  /** True while this instance holds a capacity slot. */
  get hasSlot(): boolean {
    return this.slot !== null;
  }

  /** True until the first reset (MCP over HTTP starts an episode lazily then). */
  get neverReset(): boolean {
    return this.episodeId === null && !this.closed;
  }

  /** Hands this instance the slot its session took at creation. */
  adoptSlot(slot: Slot): void {
    if (this.slot || this.closed) slot.free();
    else this.slot = slot;
  }

  /** The session is closing: its slot frees once the release in flight settles. */
  markClosing(): void {
    this.slot?.releasing();
  }

  /** The state document (`GET /state`, WebSocket `state`). */
  state(): EnvState {
    return {
      episode_id: this.episodeId,
      step_count: this.stepCount,
      sandbox_id: this.sandbox?.id ?? this.lastRelease?.id ?? null,
      backend: this.cfg.backend.name,
      seed: this.seed,
      done: this.done,
      reward: this.reward,
      last_reward: this.rewardOutcome?.reward ?? null,
      setup_results: this.setupResults,
      verify_commands: this.verify,
      verify_results: this.verifyResults,
      commands: this.recent,
      command_count: this.commandCount,
      submitted_answer: this.submittedAnswer,
      last_error: this.lastError,
      reward_override_ignored: this.overrideIgnored,
      infrastructure_failure: this.infraFailure,
      reward_source: this.rewardOutcome?.source ?? null,
      verify_passed: this.rewardOutcome?.passed ?? null,
      verify_total: this.rewardOutcome?.total ?? null,
      sandbox_release: this.lastRelease,
    };
  }

  /**
   * Starts a new episode. Throws `HumanishError("HUMANISH_ENV_CAPACITY")` when no slot frees in
   * time and nothing else needs reporting (the caller maps it to its capacity error); when the
   * previous sandbox's release was not confirmed the refusal is a `done = true` observation that
   * reports that release. Every other failure is returned as `done = true`.
   */
  async reset(req: ResetRequest): Promise<EnvResponse> {
    if (this.closed) throw new HumanishError("HUMANISH_ENV_SESSION_CLOSED", "this environment session is closed", { next: "open a new session" });
    const previous = await this.releaseSandbox("reset");
    const meta: Record<string, unknown> = { backend: this.cfg.backend.name };
    if (previous) meta.previous_release = previous;
    if (previous && previous.outcome !== "released") {
      meta.previous_release_note = `the previous sandbox ${previous.id} was not confirmed released (${previous.reason}); it is still owned, retried, and keeps its capacity slot held until a release confirms it`;
    }
    if (!this.slot) {
      // Take the slot before touching episode state: a capacity refusal leaves the old state intact.
      try {
        this.slot = await this.cfg.acquireSlot();
      } catch (e) {
        if (!previous || previous.outcome === "released" || !isHumanishError(e, "HUMANISH_ENV_CAPACITY")) throw e;
        meta.error = toFailure(e, "HUMANISH_ENV_CAPACITY");
        this.lastError = `${e.code}: ${e.message}`;
        return response({}, true, null, meta);
      }
      if (this.closed) {
        this.slot.free();
        this.slot = null;
        throw new HumanishError("HUMANISH_ENV_SESSION_CLOSED", "the session was closed while its reset waited for capacity", { next: "open a new session" });
      }
    }
    this.startEpisode(req);
    meta.episode_id = this.episodeId;
    if (this.seed !== null) meta.seed = this.seed;
    const setup = req.setup ?? req.setup_scripts ?? [];

    try {
      this.creating = this.cfg.backend.create({
        runId: `env-${this.episodeId}`,
        labels: { "humanish.env.session": this.cfg.sessionId },
        onCreated: (id) => this.cfg.ledger.noteCreated(id, this.cfg.backend.name),
      });
      const sandbox = await this.creating;
      this.cfg.ledger.attach(sandbox);
      this.sandbox = sandbox;
      if (this.closed) {
        // Closed while the sandbox was being created: release it now, never leave it running.
        await this.releaseSandbox("session closed during reset");
        throw new HumanishError("HUMANISH_ENV_SESSION_CLOSED", "the session was closed while its sandbox was being created", { next: "open a new session" });
      }
    } catch (e) {
      if (isHumanishError(e, "HUMANISH_ENV_SESSION_CLOSED")) throw e;
      return this.failReset(meta, e, "HUMANISH_ENV_SANDBOX_CREATE_FAILED");
    } finally {
      this.creating = null;
    }
    meta.sandbox_id = this.sandbox.id;
    this.armExpiry();

    const results = this.setupResults;
    // `setup` is this server's name; `setup_results` is upstream terminus's.
    meta.setup = results;
    meta.setup_results = results;
    for (const command of setup) {
      let report: CommandReport;
      try {
        report = await this.run(command, this.cfg.commandTimeoutMs, "setup");
      } catch (e) {
        return this.failReset(meta, e, "HUMANISH_ENV_EXEC_FAILED");
      }
      results.push(report);
      if (report.exit_code !== 0 || report.timed_out) {
        this.done = true;
        meta.setup_failed = {
          index: results.length - 1,
          command,
          reason: report.timed_out ? `timed out after ${this.cfg.commandTimeoutMs} ms` : `exited ${report.exit_code}`,
        };
        this.lastError = `setup command ${results.length - 1} failed: ${(meta.setup_failed as { reason: string }).reason}`;
        meta.sandbox_release = await this.releaseSandbox("setup failed");
        return response({}, true, null, meta);
      }
    }
    return response({}, false, null, meta);
  }

  /** Clears the episode state for a new episode (the slot is already held). */
  private startEpisode(req: ResetRequest): void {
    this.episodeId = req.episode_id ?? randomUUID();
    this.seed = req.seed ?? null;
    this.stepCount = 0;
    this.done = false;
    this.reward = null;
    this.overrideIgnored = null;
    this.infraFailure = null;
    this.rewardOutcome = null;
    this.lastRelease = null;
    this.expired = false;
    this.verify = req.verify ?? req.verify_scripts ?? [];
    this.setupResults = [];
    this.verifyResults = [];
    this.recent = [];
    this.commandCount = 0;
    this.submittedAnswer = null;
    this.lastError = null;
    this.cfg.log({
      session: this.cfg.sessionId,
      episode_id: this.episodeId,
      kind: "reset",
      detail: `setup=${(req.setup ?? req.setup_scripts ?? []).length} verify=${this.verify.length}`,
    });
  }

  private async failReset(meta: Record<string, unknown>, e: unknown, fallbackCode: string): Promise<EnvResponse> {
    const err = toFailure(e, fallbackCode);
    this.done = true;
    this.infraFailure = { code: err.code, message: err.message };
    this.lastError = `${err.code}: ${err.message}`;
    meta.error = err;
    this.cfg.log({ session: this.cfg.sessionId, episode_id: this.episodeId, kind: "failure", detail: `${err.code}: ${err.message}` });
    if (this.sandbox) meta.sandbox_release = await this.releaseSandbox("reset failed");
    return response({}, true, null, meta);
  }

  /** `list_tools`: needs no reset; counts as a step, as upstream counts every step. */
  listTools(): EnvResponse {
    this.stepCount += 1;
    return response({ tools: [terminalToolOpenEnv()] }, this.done, this.reward, {});
  }

  /**
   * `call_tool`. `timeoutMs` overrides the per-command deadline for this call (step `timeout_s`).
   * Framework failures come back as `observation.error`; a non-zero exit code is a normal result.
   */
  async callTool(toolName: string, args: Record<string, unknown>, timeoutMs?: number): Promise<EnvResponse> {
    const fail = (type: ToolErrorType, message: string, done = this.done, extra: Record<string, unknown> = {}) => {
      this.lastError = toolErrorText({ error_type: type, message });
      return response({ tool_name: toolName, result: null, error: { error_type: type, message } }, done, done ? this.reward : null, extra);
    };
    if (toolName !== TERMINAL_TOOL_NAME) return fail("tool_not_found", `unknown tool ${JSON.stringify(toolName)}; the only tool is "${TERMINAL_TOOL_NAME}"`);
    const parsed = terminalArgsSchema.safeParse(args);
    if (!parsed.success) return fail("invalid_args", `terminal arguments: ${zodIssues(parsed.error)}`);
    const { command, final_answer } = parsed.data;
    if ((command === "") === (final_answer === "")) {
      return fail("invalid_args", "terminal arguments: pass exactly one of `command` or `final_answer` (non-empty)");
    }
    if (this.infraFailure) {
      return fail("execution_error", `the episode ended with an infrastructure failure (${this.infraFailure.code}): ${this.infraFailure.message}`, true, {
        infrastructure_failure: this.infraFailure,
      });
    }
    if (this.episodeId === null) return fail("execution_error", `no episode: ${this.cfg.noEpisodeHint ?? "call reset first"}`);
    if (this.done || !this.sandbox) return fail("execution_error", `the episode is over; ${this.cfg.episodeOverHint ?? "call reset to start a new one"}`, true);
    this.stepCount += 1;
    if (final_answer !== "") return this.finish(final_answer);

    const deadline = timeoutMs ?? this.cfg.commandTimeoutMs;
    let report: CommandReport;
    try {
      report = await this.run(command, deadline, "command");
    } catch (e) {
      return this.infrastructureFailure(e, toolName);
    }
    if (this.expired) return this.infrastructureFailure(this.expiryError(), toolName);
    this.commandCount += 1;
    this.recent = [...this.recent, report].slice(-STATE_COMMANDS_KEPT);
    // `data` is what OpenEnv's client hands its caller: the text a model reads.
    const obs: Record<string, unknown> = { tool_name: toolName, result: { ...report, data: commandResultText(report, deadline) } };
    if (report.timed_out) {
      obs.error = { error_type: "timeout", message: `the command ran past its ${deadline} ms deadline and was killed` };
      this.lastError = toolErrorText(obs.error as { error_type: string; message: string });
    }
    return response(obs, false, null, {});
  }

  /** Runs the verify commands and scores the episode. */
  private async finish(finalAnswer: string): Promise<EnvResponse> {
    const sandbox = this.sandbox!;
    this.cfg.log({ session: this.cfg.sessionId, episode_id: this.episodeId, kind: "final_answer", detail: finalAnswer });
    this.submittedAnswer = finalAnswer;
    let passed = 0;
    let verdict: RewardOverrideVerdict;
    try {
      const cleared = await this.exec(sandbox, REWARD_CLEAR_SCRIPT, this.cfg.commandTimeoutMs);
      const clearOk = cleared.exitCode === 0 && !cleared.timedOut && new TextDecoder().decode(cleared.stdout).trim() === "deleted";
      for (const command of this.verify) {
        const report = await this.run(command, this.cfg.commandTimeoutMs, "verify");
        this.verifyResults.push(report);
        if (report.success) passed += 1;
      }
      if (!clearOk) {
        verdict = {
          kind: "ignored",
          ignored: { reason: "not_deleted", detail: "the override file could not be deleted before verify, so its content cannot be trusted" },
        };
      } else {
        const probe = await this.exec(sandbox, REWARD_READ_SCRIPT, REWARD_PROBE_TIMEOUT_MS);
        verdict = parseRewardProbe(new TextDecoder().decode(probe.stdout), probe.exitCode, probe.timedOut);
      }
    } catch (e) {
      return this.infrastructureFailure(e, TERMINAL_TOOL_NAME);
    }
    if (this.expired) return this.infrastructureFailure(this.expiryError(), TERMINAL_TOOL_NAME);
    const outcome = computeReward(passed, this.verify.length, verdict);
    this.rewardOutcome = outcome;
    this.reward = outcome.reward;
    this.overrideIgnored = outcome.overrideIgnored;
    this.done = true;
    this.cfg.log({
      session: this.cfg.sessionId,
      episode_id: this.episodeId,
      kind: "reward",
      detail: `reward=${outcome.reward} source=${outcome.source} passed=${passed}/${this.verify.length}${outcome.overrideIgnored ? ` override_ignored=${outcome.overrideIgnored.reason}` : ""}`,
    });
    const release = await this.releaseSandbox("episode done");
    const result = {
      reward: outcome.reward,
      reward_source: outcome.source,
      passed: outcome.passed,
      total: outcome.total,
      reward_override_ignored: outcome.overrideIgnored,
      data: finalAnswerText(finalAnswer, outcome),
    };
    return response({ tool_name: TERMINAL_TOOL_NAME, result }, true, outcome.reward, { sandbox_release: release });
  }

  private async infrastructureFailure(e: unknown, toolName: string): Promise<EnvResponse> {
    const err = this.expired ? this.expiryError() : toFailure(e, "HUMANISH_ENV_EXEC_FAILED");
    this.infraFailure = { code: err.code, message: err.message };
    this.done = true;
    this.reward = null;
    this.lastError = `${err.code}: ${err.message}`;
    this.cfg.log({ session: this.cfg.sessionId, episode_id: this.episodeId, kind: "failure", detail: `${err.code}: ${err.message}` });
    const release = await this.releaseSandbox("infrastructure failure");
    return response(
      { tool_name: toolName, result: null, error: { error_type: "execution_error", message: `infrastructure failure (${err.code}): ${err.message}` } },
      true,
      null,
      { infrastructure_failure: this.infraFailure, ...(release ? { sandbox_release: release } : {}) },
    );
  }

  private expiryError(): HumanishError {
    return new HumanishError(
      "HUMANISH_ENV_SANDBOX_EXPIRED",
      `the sandbox reached its ${this.cfg.sandboxTimeoutMs} ms lifetime and was released; this is an infrastructure failure, not a score`,
      { next: "reset for a new episode, or start the server with a longer sandbox timeout" },
    );
  }

  private armExpiry(): void {
    this.clearExpiry();
    this.expiryTimer = setTimeout(() => {
      this.expiryTimer = null;
      if (!this.sandbox || this.done) return;
      this.expired = true;
      const err = this.expiryError();
      this.infraFailure = { code: err.code, message: err.message };
      this.lastError = `${err.code}: ${err.message}`;
      this.done = true;
      this.reward = null;
      this.cfg.log({ session: this.cfg.sessionId, episode_id: this.episodeId, kind: "failure", detail: `${err.code}: ${err.message}` });
      void this.releaseSandbox("sandbox lifetime reached");
    }, this.cfg.sandboxTimeoutMs);
  }

  private clearExpiry(): void {
    if (this.expiryTimer) clearTimeout(this.expiryTimer);
    this.expiryTimer = null;
  }

  /**
   * Releases the live sandbox by exact id (if any). Never throws. A release that is not confirmed
   * hands this instance's slot to the ledger (held until a later release confirms the id), so the
   * capacity of a sandbox that may still run is never offered again.
   */
  private async releaseSandbox(why: string): Promise<ReleaseProof | null> {
    this.clearExpiry();
    const sandbox = this.sandbox;
    this.sandbox = null;
    if (!sandbox) return null;
    const proof = await this.cfg.ledger.release(sandbox.id);
    this.lastRelease = proof;
    if (proof.outcome !== "released" && this.slot) {
      this.cfg.ledger.holdUntilConfirmed(sandbox.id, this.slot);
      this.slot = null;
    }
    this.cfg.log({
      session: this.cfg.sessionId,
      episode_id: this.episodeId,
      kind: "release",
      detail: `${why}: ${proof.id} ${proof.outcome} (${proof.reason})`,
    });
    return proof;
  }

  /**
   * Ends this instance: releases its sandbox, then gives its slot back (unless an unconfirmed
   * release handed it to the ledger). Later calls are refused.
   */
  async close(): Promise<ReleaseProof | null> {
    this.closed = true;
    if (this.creating) await this.creating.catch(() => undefined);
    const proof = await this.releaseSandbox("session closed");
    this.slot?.free();
    this.slot = null;
    return proof;
  }

  private async exec(sandbox: Sandbox, script: string, timeoutMs: number): Promise<ExecResult> {
    return sandbox.exec({ cmd: ["bash", "-c", script], cwd: SANDBOX_WORKDIR, timeoutMs });
  }

  private async run(command: string, timeoutMs: number, kind: "setup" | "command" | "verify"): Promise<CommandReport> {
    const sandbox = this.sandbox;
    if (!sandbox) throw this.expiryError();
    this.cfg.log({ session: this.cfg.sessionId, episode_id: this.episodeId, kind, command });
    const res = await this.exec(sandbox, command, timeoutMs);
    const out = decodeTail(res.stdout, this.cfg.maxOutputBytes);
    const err = decodeTail(res.stderr, this.cfg.maxOutputBytes);
    const report: CommandReport = {
      command,
      output: commandOutputText({ stdout: out.text, stderr: err.text }),
      error: res.timedOut ? `timed out after ${timeoutMs} ms and was killed` : null,
      success: res.exitCode === 0 && !res.timedOut,
      exit_code: res.exitCode,
      stdout: out.text,
      stderr: err.text,
      timed_out: res.timedOut,
      duration_ms: Math.round(res.durationMs),
    };
    if (out.dropped) report.stdout_truncated_bytes = out.dropped;
    if (err.dropped) report.stderr_truncated_bytes = err.dropped;
    this.cfg.log({
      session: this.cfg.sessionId,
      episode_id: this.episodeId,
      kind,
      command,
      stdout: out.text,
      stderr: err.text,
      exit_code: res.exitCode,
      timed_out: res.timedOut,
    });
    return report;
  }
}

/** Normalizes anything thrown into `{code, message, next?}`. */
export function toFailure(e: unknown, fallbackCode: string): { code: string; message: string; next?: string } {
  if (isHumanishError(e)) return { code: e.code, message: e.message, ...(e.next ? { next: e.next } : {}) };
  return { code: fallbackCode, message: (e as Error)?.message ?? String(e) };
}

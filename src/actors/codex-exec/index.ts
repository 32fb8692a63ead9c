/**
 * `codex-exec`: the OpenAI Codex CLI as a terminal participant.
 *
 * prepare (unkeyed, before any key is used):
 *  1. version: `execution.runtime.version` (exact semver), or — when absent — `latest` resolved
 *     once with `npm view @openai/codex@latest version` inside the sandbox, and recorded;
 *  2. `npm install --global @openai/codex@<exact>` as root, unless the sandbox image already
 *     carries that exact version (`codex --version` as root prints `codex-cli <exact>`), which
 *     is recorded and not installed again;
 *  3. `codex --version` as the participant with no key in its env: stdout must be exactly
 *     `codex-cli <that version>`; any other output fails the lane before the key is touched.
 * run: `codex exec --json …` pointed at the seat's model gateway (a custom Responses provider at
 * `http://127.0.0.1:<port>/v1`, WebSockets and Codex's own retries off), with the per-seat
 * gateway token as `CODEX_API_KEY` — and, in `openai-env` mode only, the real key as
 * `OPENAI_API_KEY` — in that one command's env; stdin closed, the first-output and maxMinutes
 * deadlines; its JSONL stream becomes the actor trace. The model that served it and the cost
 * come from the gateway's ledger; Codex's turn sums are only a cross-check.
 *
 * With the `npx` launcher (hosted sandboxes) there is no global install: `latest` is resolved
 * once per study (a {@link LatestVersion} shared by the seats), then the unkeyed probe
 * `npx -y @openai/codex@<exact> --version` (60 s) must print exactly `codex-cli <exact>`, and
 * the exec runs the same `npx -y @openai/codex@<exact>`. Without a gateway (`modelDirect`),
 * Codex uses its built-in OpenAI provider: the key in the command's `CODEX_API_KEY`
 * (`openai-env`), or a placeholder plus the system CA bundle while the real key lives in the
 * sandbox's egress rule (`openai-egress`).
 */

import { findActor } from "../../actor-registry/registry.ts";
import type { ActorDescriptor, ActorItem, ActorRuntime } from "../../actor-registry/types.ts";
import { HumanishError } from "../../errors.ts";
import { untrustedCertNext } from "../../sandbox/tls-trust.ts";
import type { Sandbox } from "../../sandbox/types.ts";
import { decodeText, runRecordedParticipantCommand, tailText } from "../terminal-participant/exec.ts";
import type { PrepareContext, RunContext, TerminalParticipant, TerminalParticipantOutcome } from "../terminal-participant/participant.ts";
import {
  buildCodexExecCommand,
  CODEX_PACKAGE,
  directBaseURL,
  isExactSemver,
  npmInstallArgv,
  npmResolveLatestArgv,
  npxLauncher,
  parseCodexVersion,
  parseNpmViewVersion,
  versionProbeArgv,
} from "./command.ts";
import { CodexEventStream, codexTokenUsage, findVerdictMarker } from "./events.ts";
import { estimateCodexCost } from "./pricing.ts";

/** What the lab declares for the Codex participant. */
export interface CodexExecSpec {
  /** `execution.runtime.version`: exact semver, or undefined to resolve `latest` once. */
  version?: string;
  /** `actors[0].model`, passed as `--model` (absent: no `--model`, Codex's own default). */
  model?: string;
  /** `actors[0].reasoningEffort`, passed as `-c model_reasoning_effort="<e>"`. */
  reasoningEffort?: string;
  /** `global-install` (default: `npm install -g` as root) or `npx` (run the exact version through npx). */
  launcher?: "global-install" | "npx";
  /** Shared by a study's seats so `latest` is resolved once (default: this participant's own). */
  latest?: LatestVersion;
}

/** `latest` resolved once: the first caller's resolution (in its own sandbox) is every caller's answer. */
export interface LatestVersion {
  resolve(inSandbox: () => Promise<string>): Promise<string>;
}

/** A fresh {@link LatestVersion} (one per study). A failed resolution is not kept: the next caller tries again. */
export function latestOnce(): LatestVersion {
  let pending: Promise<string> | undefined;
  return {
    resolve(inSandbox) {
      if (!pending) {
        pending = inSandbox();
        pending.catch(() => {
          pending = undefined;
        });
      }
      return pending;
    },
  };
}

/**
 * The model a codex-exec participant is told to use: the declared one, or undefined. An
 * undeclared model is never filled in: Codex then picks its own default (recorded as
 * `modelStatus: runtime_default_unobserved`), and what served each request is what the
 * responses name — the gateway's ledger prices that, nothing prices a guess.
 */
export function codexModel(spec: Pick<CodexExecSpec, "model">): string | undefined {
  return spec.model;
}

/** Bounds of the unkeyed setup commands (ms). */
export const CODEX_SETUP_TIMEOUTS = { resolveMs: 60_000, installMs: 600_000, probeMs: 60_000 } as const;

/**
 * Creates the Codex participant.
 * @throws HumanishError `HUMANISH_LAB_INVALID` when `spec.version` is not an exact semver.
 */
export function createCodexExec(spec: CodexExecSpec): TerminalParticipant {
  if (spec.version !== undefined && !isExactSemver(spec.version)) {
    throw new HumanishError("HUMANISH_LAB_INVALID", `execution.runtime.version "${spec.version}" is not an exact semver (e.g. 0.171.0).`, {
      next: "Pin an exact version such as 0.171.0, or remove execution.runtime to resolve latest once.",
    });
  }
  const descriptor = findActor("codex-exec") as ActorDescriptor;
  const latest = spec.latest ?? latestOnce();
  const rt: ActorRuntime = {
    schema: "humanish.actor-runtime.v1",
    package: CODEX_PACKAGE,
    requestedVersion: spec.version ?? "latest",
    versionStatus: "unobserved",
    modelStatus: spec.model ? "declared" : "runtime_default_unobserved",
    usageGranularity: "runtime_turn",
    ...(spec.model ? { requestedModel: spec.model } : {}),
    ...(spec.reasoningEffort ? { requestedReasoningEffort: spec.reasoningEffort } : {}),
  };
  return {
    descriptor,
    runtime: () => ({ ...rt }),
    prepare: (ctx) => prepareCodex(spec, rt, ctx, latest),
    run: (ctx) => runCodex(spec, rt, ctx),
  };
}

async function setupExec(
  sandbox: Sandbox,
  ctx: PrepareContext,
  label: string,
  argv: string[],
  user: string,
  env: Record<string, string>,
  timeoutMs: number,
): Promise<{ exitCode: number; stdout: string; stderr: string; timedOut: boolean }> {
  const cmd = ["bash", "-c", 'exec 0</dev/null; exec "$@"', "humanish-setup", ...argv];
  // Root commands run from `/`: npm run as root switches to the owner of its cwd, which would need
  // capabilities the sandbox does not have.
  const cwd = user === "root" ? "/" : ctx.workdir;
  const r = await sandbox.exec({ cmd, env, user, cwd, timeoutMs, signal: ctx.signal });
  ctx.recorder.command({
    label,
    argv: cmd,
    envNames: Object.keys(env).sort(),
    user,
    exitCode: r.exitCode,
    timedOut: r.timedOut,
    deadline: null,
    durationMs: r.durationMs,
  });
  return { exitCode: r.exitCode, stdout: decodeText(r.stdout), stderr: decodeText(r.stderr), timedOut: r.timedOut };
}

function interruptedCheck(ctx: PrepareContext): void {
  if (ctx.signal.aborted) {
    throw new HumanishError("HUMANISH_TERMINAL_LAB_INTERRUPTED", "The study was interrupted while the Codex runtime was being prepared.", {
      next: "Run the lab again.",
    });
  }
}

async function resolveLatest(ctx: PrepareContext, npmEnv: Record<string, string>): Promise<string> {
  ctx.recorder.progress(`resolving ${CODEX_PACKAGE}@latest`);
  const r = await setupExec(ctx.sandbox, ctx, "codex-resolve-latest", npmResolveLatestArgv(), "root", npmEnv, CODEX_SETUP_TIMEOUTS.resolveMs);
  interruptedCheck(ctx);
  const resolved = r.exitCode === 0 ? parseNpmViewVersion(r.stdout) : undefined;
  if (!resolved) {
    ctx.recorder.lifecycle("terminal-lab.runtime.version.error", `could not resolve ${CODEX_PACKAGE}@latest (exit ${r.exitCode})`);
    throw new HumanishError(
      "HUMANISH_TERMINAL_LAB_RUNTIME_RESOLVE_FAILED",
      `Could not resolve ${CODEX_PACKAGE}@latest to an exact version inside the sandbox (npm view exited ${r.exitCode}${r.timedOut ? ", timed out" : ""}).`,
      {
        next:
          untrustedCertNext(`${r.stderr}\n${r.stdout}`, "NODE_EXTRA_CA_CERTS" in npmEnv) ??
          "Pin execution.runtime.version to an exact version, and make sure the sandbox can reach the npm registry (execution.network: bridge).",
      },
    );
  }
  return resolved;
}

async function prepareCodex(spec: CodexExecSpec, rt: ActorRuntime, ctx: PrepareContext, latest: LatestVersion): Promise<void> {
  const npmEnv = { ...ctx.networkEnv, npm_config_update_notifier: "false", HOME: "/root" };
  let version = spec.version;
  if (version === undefined) {
    let first = false;
    version = await latest.resolve(() => {
      first = true;
      return resolveLatest(ctx, npmEnv);
    });
    ctx.recorder.lifecycle(
      "terminal-lab.runtime.resolved",
      `${CODEX_PACKAGE}@latest resolved once to ${version}${first ? "" : " (by another seat of this study)"}`,
    );
  }
  if (spec.launcher === "npx") return probeNpx(rt, ctx, version);

  if (await imageCarries(ctx, version)) {
    ctx.recorder.lifecycle(
      "terminal-lab.runtime.bootstrapped",
      `${CODEX_PACKAGE}@${version} already in the sandbox image (codex-cli ${version}); not installed again`,
    );
  } else {
    await installCodex(ctx, npmEnv, version);
  }

  ctx.recorder.progress("probing codex --version (no key)");
  const probe = await setupExec(
    ctx.sandbox,
    ctx,
    "codex-version-probe",
    versionProbeArgv(),
    ctx.user,
    { HOME: `/home/${ctx.user}` },
    CODEX_SETUP_TIMEOUTS.probeMs,
  );
  interruptedCheck(ctx);
  const observed = probe.exitCode === 0 ? parseCodexVersion(probe.stdout) : undefined;
  if (observed !== undefined) rt.observedVersion = observed;
  checkObserved(rt, ctx, version, observed, probe);
}

/**
 * True when the sandbox image already has exactly `version` on PATH (`codex --version` as root,
 * unkeyed): an image built with Codex baked in starts its seats without a 165 MB install each.
 * Anything else (no `codex`, another version, odd output) means install.
 */
async function imageCarries(ctx: PrepareContext, version: string): Promise<boolean> {
  const r = await setupExec(ctx.sandbox, ctx, "codex-preinstalled-probe", versionProbeArgv(), "root", { HOME: "/root" }, CODEX_SETUP_TIMEOUTS.probeMs);
  interruptedCheck(ctx);
  return r.exitCode === 0 && parseCodexVersion(r.stdout) === version;
}

/**
 * `npm install --global @openai/codex@<version>` as root.
 * @throws HumanishError `HUMANISH_TERMINAL_LAB_RUNTIME_INSTALL_FAILED` when npm fails.
 */
async function installCodex(ctx: PrepareContext, npmEnv: Record<string, string>, version: string): Promise<void> {
  ctx.recorder.progress(`installing ${CODEX_PACKAGE}@${version}`);
  const inst = await setupExec(ctx.sandbox, ctx, "codex-install", npmInstallArgv(version), "root", npmEnv, CODEX_SETUP_TIMEOUTS.installMs);
  interruptedCheck(ctx);
  if (inst.exitCode !== 0) {
    ctx.recorder.lifecycle("terminal-lab.runtime.install.error", `npm install ${CODEX_PACKAGE}@${version} exited ${inst.exitCode}`);
    throw new HumanishError(
      "HUMANISH_TERMINAL_LAB_RUNTIME_INSTALL_FAILED",
      `npm install ${CODEX_PACKAGE}@${version} failed in the sandbox (exit ${inst.exitCode}${inst.timedOut ? ", timed out" : ""}): ${tailText(inst.stderr.trim() || inst.stdout.trim(), 400)}`,
      {
        next:
          untrustedCertNext(`${inst.stderr}\n${inst.stdout}`, "NODE_EXTRA_CA_CERTS" in npmEnv) ??
          "Check that the version exists (npm view @openai/codex versions) and that the sandbox has network (execution.network: bridge).",
      },
    );
  }
  ctx.recorder.lifecycle("terminal-lab.runtime.bootstrapped", `${CODEX_PACKAGE}@${version} installed`);
}

/** The npx launcher's probe: `npx -y @openai/codex@<version> --version` as the participant, unkeyed. */
async function probeNpx(rt: ActorRuntime, ctx: PrepareContext, version: string): Promise<void> {
  ctx.recorder.progress(`probing ${CODEX_PACKAGE}@${version} --version through npx (no key)`);
  const env = { ...ctx.networkEnv, HOME: `/home/${ctx.user}`, npm_config_update_notifier: "false" };
  const probe = await setupExec(ctx.sandbox, ctx, "codex-version-probe", versionProbeArgv(npxLauncher(version)), ctx.user, env, CODEX_SETUP_TIMEOUTS.probeMs);
  interruptedCheck(ctx);
  const observed = probe.exitCode === 0 ? parseCodexVersion(probe.stdout) : undefined;
  if (observed !== undefined) rt.observedVersion = observed;
  checkObserved(rt, ctx, version, observed, probe);
}

function checkObserved(
  rt: ActorRuntime,
  ctx: PrepareContext,
  version: string,
  observed: string | undefined,
  probe: { exitCode: number; stdout: string; timedOut: boolean },
): void {
  if (observed === undefined || observed !== version) {
    rt.versionStatus = "failed";
    const saw = observed ? `codex-cli ${observed}` : JSON.stringify(tailText(probe.stdout, 120));
    ctx.recorder.lifecycle("terminal-lab.runtime.version.error", `expected codex-cli ${version}, saw ${saw} (exit ${probe.exitCode})`);
    throw new HumanishError(
      "HUMANISH_TERMINAL_LAB_RUNTIME_VERSION_MISMATCH",
      `codex --version must print exactly "codex-cli ${version}"; it printed ${saw} (exit ${probe.exitCode}). The lane stopped before any key was used.`,
      { next: "Pin execution.runtime.version to a published @openai/codex version and run again." },
    );
  }
  rt.versionStatus = "verified";
  ctx.recorder.lifecycle("terminal-lab.runtime.version", `codex-cli ${observed} verified (requested ${rt.requestedVersion})`);
}

/** The lifecycle sentence on where the key is and what the agent could still spend with. */
function runtimeAuthNote(gw: RunContext["modelGateway"], auth: "openai-env" | "openai-egress", source: string | undefined, directURL: string): string {
  if (gw)
    return auth === "openai-egress"
      ? `openai-egress: codex reaches ${gw.baseURL} with a per-seat gateway token (CODEX_API_KEY); the real key stays in the host's gateway`
      : `openai-env: codex reaches ${gw.baseURL} with a per-seat gateway token (CODEX_API_KEY); the real key from ${source} is also in its env as OPENAI_API_KEY (the agent holds a spendable key)`;
  return auth === "openai-egress"
    ? "openai-egress: codex reaches https://api.openai.com/v1 with a placeholder CODEX_API_KEY; the real key lives only in the sandbox's egress rule for api.openai.com (residual capability: any process in the sandbox can spend through that rule until the sandbox is gone; the cap is after-the-fact)"
    : `openai-env: codex reaches ${directURL} directly (its own retries off) with the real key from ${source} as CODEX_API_KEY in that one command's env (residual capability: the agent and its child processes hold a spendable key; the cap is after-the-fact)`;
}

async function runCodex(spec: CodexExecSpec, rt: ActorRuntime, ctx: RunContext): Promise<TerminalParticipantOutcome> {
  if (rt.versionStatus !== "verified") {
    throw new HumanishError("HUMANISH_TERMINAL_LAB_RUNTIME_UNVERIFIED", "codex-exec cannot run before its version probe passed.", {
      next: "This is a harness bug: prepare() must succeed before run().",
    });
  }
  const gw = ctx.modelGateway;
  const direct = gw ? undefined : ctx.modelDirect;
  if (!gw && !direct) {
    throw new HumanishError("HUMANISH_TERMINAL_LAB_RUNTIME_UNVERIFIED", "codex-exec cannot run without its model gateway.", {
      next: "This is a harness bug: the terminal route starts the gateway for a codex-exec seat.",
    });
  }
  const auth = gw?.auth ?? direct?.auth ?? "openai-env";
  if (auth === "openai-env" && !ctx.runtimeKey) {
    throw new HumanishError("HUMANISH_TERMINAL_LAB_RUNTIME_AUTH_MISSING", "codex-exec in openai-env mode needs CODEX_API_KEY or OPENAI_API_KEY.", {
      next: "Set CODEX_API_KEY (or OPENAI_API_KEY) in the environment or an --env-file.",
    });
  }
  const startedAt = new Date();
  const command = buildCodexExecCommand({
    prompt: ctx.brief,
    workdir: ctx.workdir,
    home: `/home/${ctx.user}`,
    model: codexModel(spec),
    reasoningEffort: spec.reasoningEffort,
    ...(gw ? { gateway: { baseURL: gw.baseURL, token: gw.token } } : { direct: { auth, ...(direct?.baseURL ? { baseURL: direct.baseURL } : {}) } }),
    ...(spec.launcher === "npx" && rt.observedVersion ? { launcher: npxLauncher(rt.observedVersion) } : {}),
    ...(auth === "openai-env" && ctx.runtimeKey ? { key: ctx.runtimeKey } : {}),
    extraEnv: ctx.networkEnv,
  });
  ctx.recorder.lifecycle(
    "terminal-lab.runtime-auth",
    runtimeAuthNote(gw, auth, ctx.runtimeKey?.sourceName, directBaseURL({ auth, ...(direct?.baseURL ? { baseURL: direct.baseURL } : {}) })),
  );
  ctx.recorder.lifecycle("terminal-lab.exec.started", `codex exec (stdin disabled), codex-cli ${rt.observedVersion}`);
  ctx.recorder.progress("codex exec started");
  const stream = new CodexEventStream(ctx.redact, (d) => ctx.recorder.progress(d));
  const r = await runRecordedParticipantCommand(ctx, command.argv, command.env, (c) => stream.push(c));
  const terminalEvents = r.terminalEvents;
  if (terminalEvents === 0) {
    // A sandbox that only returned buffered output: fold and record it now.
    if (r.stdout.byteLength > 0) {
      stream.push(r.stdout);
      ctx.recorder.output("stdout", r.stdout);
    }
    if (r.stderr.byteLength > 0) ctx.recorder.output("stderr", r.stderr);
  }
  const state = stream.end();
  if (r.started) {
    ctx.recorder.command({
      label: "codex-exec",
      argv: r.argv,
      envNames: command.envNames,
      user: ctx.user,
      exitCode: r.exitCode,
      timedOut: r.deadline !== null,
      deadline: r.deadline,
      durationMs: r.durationMs,
    });
  }

  const items: ActorItem[] = [...state.items.values()];
  for (const [i, e] of state.errors.entries()) {
    items.push({ id: `runtime-error-${i + 1}`, kind: "notice", lifecycle: "completed", status: "error", title: "runtime error event (not final)", text: e });
  }
  if (state.droppedItems > 0) {
    items.push({
      id: "items-dropped",
      kind: "notice",
      lifecycle: "completed",
      status: "warning",
      title: `${state.droppedItems} later item(s) were not kept (trace limit reached)`,
    });
  }
  if (state.malformedLines + state.oversizedLines > 0) {
    items.push({
      id: "stream-notice",
      kind: "notice",
      lifecycle: "completed",
      status: "warning",
      title: `${state.malformedLines} non-event line(s) and ${state.oversizedLines} oversized line(s) on stdout were not parsed`,
    });
  }
  const stderrText = ctx.redact(decodeText(r.stderr)).trim();
  if (stderrText.length > 0) {
    items.push({ id: "stderr-tail", kind: "notice", lifecycle: "completed", title: "codex stderr (tail)", text: tailText(stderrText) });
  }

  let status: TerminalParticipantOutcome["status"];
  let completionReason: TerminalParticipantOutcome["completionReason"];
  let reason: string;
  let claimed: NonNullable<TerminalParticipantOutcome["claimed"]> = "none";
  const lastError = state.errors.at(-1);
  if (r.deadline === "interrupted") {
    status = "incomplete";
    completionReason = "interrupted";
    reason = "codex exec was stopped because the study was interrupted";
  } else if (r.deadline === "first-output") {
    status = "timed_out";
    completionReason = "timed_out";
    reason = `codex exec printed nothing for ${ctx.deadlines.firstOutputMs} ms (first-output deadline) and was killed`;
  } else if (r.deadline === "max-minutes") {
    status = "timed_out";
    completionReason = "timed_out";
    reason = "codex exec was killed at the maxMinutes wall-clock deadline";
  } else if (state.end === "turn_failed") {
    status = "failed";
    completionReason = "actor_error";
    reason = `turn.failed: ${state.turnFailedMessage ?? "no message"} (codex exited ${r.exitCode})`;
  } else if (state.end === "turn_completed" && r.exitCode === 0) {
    // The marker is the participant's claim: recorded, never success. The hidden checks the
    // route runs after this decide whether the seat reached the goal.
    const marker = findVerdictMarker(state.agentMessages, ctx.nonce);
    if (marker?.verdict === "passed") {
      status = "incomplete";
      completionReason = "turn_completed";
      claimed = "passed";
      reason = "the participant claimed success with this run's verdict marker";
    } else if (marker?.verdict === "blocked") {
      status = "blocked";
      completionReason = "blocked_approval";
      claimed = "blocked";
      reason = "the participant reported it was blocked";
    } else if (marker?.verdict === "failed") {
      status = "abandoned";
      completionReason = "gave_up";
      claimed = "failed";
      reason = "the participant reported it could not finish";
    } else {
      status = "incomplete";
      completionReason = "turn_completed";
      reason = "the turn completed without a verdict marker carrying this run's nonce";
    }
  } else {
    status = "failed";
    completionReason = "actor_error";
    reason =
      state.end === "turn_completed"
        ? `turn.completed was seen but codex exited ${r.exitCode}`
        : `codex exited ${r.exitCode} without turn.completed${lastError ? `; last error event: ${lastError}` : ""}`;
  }
  const tokenUsage = codexTokenUsage(state);
  const estimatedCost = estimateCodexCost(tokenUsage, codexModel(spec)).estimate;
  const completedAt = new Date();
  const fileChanges = items.filter((i) => i.kind === "file_change").length;
  const toolCalls = items.filter((i) => i.kind === "tool_call").length;
  ctx.recorder.lifecycle(
    r.deadline ? "terminal-lab.exec.timed_out" : status === "failed" ? "terminal-lab.exec.error" : "terminal-lab.exec.completed",
    `${status}/${completionReason}: ${reason}`,
  );
  return {
    status,
    completionReason,
    reason: ctx.redact(reason),
    deadline: r.deadline,
    items,
    counts: { commands: state.commands, actions: state.commands + fileChanges + toolCalls, messages: state.agentMessages.length, terminalEvents },
    ids: state.threadId ? { threadId: state.threadId } : {},
    claimed,
    ...(tokenUsage ? { tokenUsage } : {}),
    estimatedCost,
    startedAt: startedAt.toISOString(),
    completedAt: completedAt.toISOString(),
    durationMs: completedAt.getTime() - startedAt.getTime(),
  };
}

/**
 * The codex-exec live path against the real Docker engine and the real npm registry, up to the
 * real Codex CLI version probe. The one gateway-token-bearing command is intercepted at the
 * sandbox seam — its argv and env are asserted (the committed lab runs openai-egress: the canary
 * key never enters the sandbox) — and answered with a recorded-shape `codex exec --json` stream.
 * The full path with the real CLI talking to a fake model is in codex-fake.test.ts.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { verifyRun } from "../../../src/bundle/verify.ts";
import { createDockerClient } from "../../../src/docker/index.ts";
import { runTerminalStudy } from "../../../src/routes/terminal/index.ts";
import { createDockerSandboxProvider } from "../../../src/sandbox/index.ts";
import type { ExecOptions, ExecResult, Sandbox, SandboxProvider } from "../../../src/sandbox/types.ts";
import { npmCacheProvider } from "../../support/npm-cache.ts";
import { dockerSocketPath, requireDocker } from "../../support/prereq.ts";
import { committedLab, containersOfRun, labFromText, listFiles, removeContainers, studyContext, testRunId, tmpProject } from "./support.ts";

const CANARY = "sk-canary-4c1d9e7a2b6f8035-humanish-codex";
/**
 * Machines behind an intercepting HTTPS proxy (like this CI's) expose their CA bundle as
 * NODE_EXTRA_CA_CERTS; hand it to the sandbox through the operator knob. Unset elsewhere.
 */
const HOST_CA = process.env.NODE_EXTRA_CA_CERTS;
const CA_KNOB: Record<string, string> = HOST_CA ? { HUMANISH_SANDBOX_CA_CERTS: HOST_CA } : {};
const CA_CMD_ENV: Record<string, string> = HOST_CA
  ? { NODE_EXTRA_CA_CERTS: "/opt/humanish-ca-bundle.pem", CODEX_CA_CERTIFICATE: "/opt/humanish-ca-bundle.pem" }
  : {};
const enc = new TextEncoder();
const dec = new TextDecoder();

const project = tmpProject();
const runIds: string[] = [];
afterAll(async () => {
  for (const id of runIds) await removeContainers(await containersOfRun(id));
  project.cleanup();
});

interface SeenExec {
  cmd: string[];
  env: Record<string, string>;
  user: string | undefined;
  cwd: string | undefined;
}

/**
 * A Docker sandbox provider whose sandboxes record every exec and hand selected ones to
 * `intercept` (return undefined to run the exec for real).
 */
function recordingProvider(intercept: (o: ExecOptions, real: Sandbox) => Promise<ExecResult | undefined>): SandboxProvider & { seen: SeenExec[] } {
  const docker = createDockerClient({ socketPath: dockerSocketPath() });
  const inner = npmCacheProvider(createDockerSandboxProvider({ docker }));
  const seen: SeenExec[] = [];
  return {
    provider: "docker",
    seen,
    async create(opts) {
      const real = await inner.create(opts);
      const wrapped: Sandbox = {
        id: real.id,
        provider: real.provider,
        exec: async (o) => {
          seen.push({ cmd: [...o.cmd], env: { ...(o.env ?? {}) }, user: o.user, cwd: o.cwd });
          return (await intercept(o, real)) ?? real.exec(o);
        },
        writeFile: (p, d, m) => real.writeFile(p, d, m),
        readFile: (p, m) => real.readFile(p, m),
        ...(real.detachNetwork ? { detachNetwork: () => real.detachNetwork?.() as Promise<void> } : {}),
        release: () => real.release(),
      };
      return wrapped;
    },
  };
}

function fakeStream(o: ExecOptions, events: unknown[]): ExecResult {
  const bytes = enc.encode(`${events.map((e) => JSON.stringify(e)).join("\n")}\n`);
  // Deliver in two chunks split inside a line, like a pipe would.
  o.onStdout?.(bytes.subarray(0, 37));
  o.onStdout?.(bytes.subarray(37));
  return { exitCode: 0, stdout: bytes, stderr: new Uint8Array(), timedOut: false, durationMs: 5 };
}

describe("codex-exec live, up to the real version probe", () => {
  test("installs @openai/codex@0.171.0, probes it without a key, then runs exactly one gateway-token-bearing command", async () => {
    await requireDocker();
    const lab = committedLab("codex-first-contact");
    const runId = testRunId("codex");
    runIds.push(runId);
    const docker = createDockerClient({ socketPath: dockerSocketPath() });
    let keyed: SeenExec | undefined;
    let help = "";
    let inspectText = "";
    let pid1Environ = "";
    const provider = recordingProvider(async (o, real) => {
      if (!o.env?.CODEX_API_KEY) return undefined;
      keyed = { cmd: [...o.cmd], env: { ...o.env }, user: o.user, cwd: o.cwd };
      // While the key-bearing command "runs": the container's config and PID 1 hold no key.
      inspectText = JSON.stringify(await docker.containerInspect(real.id));
      pid1Environ = dec.decode((await real.exec({ cmd: ["cat", "/proc/1/environ"], user: "root" })).stdout);
      // The real CLI accepts every flag we pass (asked without a key).
      help = dec.decode((await real.exec({ cmd: ["codex", "exec", "--help"], user: "user", env: { HOME: "/home/user" } })).stdout);
      const nonce = /HUMANISH_ACTOR_NONCE=([0-9a-f]{12})/.exec(o.cmd.at(-1)!)?.[1];
      return fakeStream(o, [
        { type: "thread.started", thread_id: "0199a213-81c0-7800-8aa1-bbab2a035a53" },
        { type: "turn.started" },
        {
          type: "item.completed",
          item: {
            id: "item_0",
            type: "command_execution",
            command: "bash -lc 'jq --help | head -3'",
            aggregated_output: `Usage: jq [OPTIONS] FILTER\nleaked ${CANARY}\n`,
            exit_code: 0,
            status: "completed",
          },
        },
        { type: "error", message: "stream disconnected - retrying turn (1/5)" },
        {
          type: "item.completed",
          item: { id: "item_1", type: "agent_message", text: `jq's help was clear enough.\nHUMANISH_ACTOR_VERDICT=passed HUMANISH_ACTOR_NONCE=${nonce}` },
        },
        { type: "turn.completed", usage: { input_tokens: 24763, cached_input_tokens: 24448, output_tokens: 122 } },
      ]);
    });
    const ctx = studyContext({
      cwd: project.dir,
      lab: lab.config,
      text: lab.text,
      ref: lab.ref,
      runId,
      mode: "live",
      env: { CODEX_API_KEY: CANARY, PATH: "/usr/bin:/bin", ...CA_KNOB },
    });
    const r = await runTerminalStudy(ctx, { sandboxProvider: provider });

    // The real probe: install and `codex --version` ran for real, without any key.
    const install = provider.seen.find((e) => e.cmd.includes("@openai/codex@0.171.0"));
    expect(install?.user).toBe("root");
    expect(install?.cmd).toContain("install");
    // The image is first asked, as root, whether it already carries the version; the probe that counts is the participant's.
    const probes = provider.seen.filter((e) => e.cmd.at(-2) === "codex" && e.cmd.at(-1) === "--version");
    expect(probes.map((p) => p.user)).toEqual(["root", "user"]);
    const probe = probes[1];
    expect(probe?.user).toBe("user");
    expect(probe?.env).toEqual({ HOME: "/home/user" });
    const trace = JSON.parse(readFileSync(join(r.runDir, "actor.json"), "utf8"));
    expect(trace.runtime).toMatchObject({
      package: "@openai/codex",
      requestedVersion: "0.171.0",
      observedVersion: "0.171.0",
      versionStatus: "verified",
      modelStatus: "runtime_default_unobserved",
      requestedReasoningEffort: "low",
    });
    expect(trace.providerVersion).toBe("0.171.0");
    // The lab declares no model: none is filled in.
    expect(trace.runtime.requestedModel).toBeUndefined();

    // No command carried the key (openai-egress); the codex exec carries only the gateway token.
    const withKey = provider.seen.filter((e) => Object.values(e.env).includes(CANARY));
    expect(withKey).toHaveLength(0);
    expect(keyed).toBeDefined();
    const k = keyed!;
    const prompt = k.cmd.at(-1)!;
    expect(k.cmd.slice(0, 8)).toEqual(["timeout", "-s", "KILL", "603s", "bash", "-c", 'exec 0</dev/null; exec "$@"', "humanish-participant"]);
    expect(k.cmd.slice(8, -1)).toEqual([
      "codex",
      "exec",
      "--json",
      "--skip-git-repo-check",
      "--dangerously-bypass-approvals-and-sandbox",
      "--cd",
      "/home/user/study",
      "-c",
      'model_provider="humanish"',
      "-c",
      'model_providers.humanish.name="humanish model gateway"',
      "-c",
      'model_providers.humanish.base_url="http://127.0.0.1:41400/v1"',
      "-c",
      'model_providers.humanish.env_key="CODEX_API_KEY"',
      "-c",
      'model_providers.humanish.wire_api="responses"',
      "-c",
      "model_providers.humanish.supports_websockets=false",
      "-c",
      "model_providers.humanish.request_max_retries=0",
      "-c",
      "model_providers.humanish.stream_max_retries=0",
      "-c",
      'model_reasoning_effort="low"',
    ]);
    expect(Object.keys(k.env).sort()).toEqual(["CODEX_API_KEY", "HOME", ...Object.keys(CA_CMD_ENV)].sort());
    expect(k.env.CODEX_API_KEY).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(k.env.CODEX_API_KEY).not.toBe(CANARY);
    expect(k.user).toBe("user");
    expect(k.cwd).toBe("/home/user/study");
    // The brief has the goals, never the hidden checks.
    expect(prompt).toContain("Pretty-print orders.json into a new file pretty.json.");
    expect(prompt).toContain("product: jq");
    expect(prompt).not.toContain("jq -e 'length == 4'");
    expect(prompt).not.toContain("tr -d");
    // The real CLI knows every flag.
    for (const flag of ["--json", "--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox", "--cd", "--model", "--config"])
      expect(help).toContain(flag);
    expect(inspectText.length).toBeGreaterThan(100);
    expect(inspectText).not.toContain(CANARY);
    expect(pid1Environ).not.toContain(CANARY);

    // The stream became the trace; its verdict marker with this run's nonce is a claim of success,
    // which the hidden checks (all failed below: the fake did no real work) contradict.
    expect(r.participants).toEqual([{ id: "p1", status: "incomplete", completionReason: "turn_completed", claimed: "passed", contradicted: true }]);
    expect(r.verdict).toStartWith("0/1 reached the goal;");
    expect(trace.ids.threadId).toBe("0199a213-81c0-7800-8aa1-bbab2a035a53");
    expect(trace.counts).toMatchObject({ commands: 1, messages: 1 });
    expect(trace.tokenUsage).toEqual({ input: 24763, output: 122, cachedInput: 24448, total: 24885, turns: 1 });
    expect(trace.items.filter((i: { kind: string }) => i.kind === "usage")).toHaveLength(1);
    // Codex's own default model is unobserved in its turn stream: the estimate is not priced from a guess.
    expect(trace.estimatedCost).toMatchObject({ estimatedCostUsd: null, modelId: null, reason: "runtime_default_unobserved", ratesAsOf: null, source: null });
    const ledgers = JSON.parse(readFileSync(join(r.runDir, "terminal-ledgers.json"), "utf8"));
    // Costs come from the gateway ledger: this stand-in stream never called the model, so the
    // spend is a measured zero and Codex's own turn sums only raise a cross-check warning.
    expect(ledgers.cost.lines.provider).toMatchObject({ usd: 0, basis: "no-spend-signal", count: 1 });
    expect(ledgers.lifecycle.some((l: { event: string }) => l.event === "terminal-lab.cost.cross-check.warning")).toBe(true);
    const codexExec = ledgers.commandLog.find((c: { label: string }) => c.label === "codex-exec");
    expect(codexExec.envNames).toEqual(["CODEX_API_KEY", "HOME", ...Object.keys(CA_CMD_ENV)].sort());
    for (const c of ledgers.commandLog.filter((x: { label: string }) => x.label !== "codex-exec")) expect(c.envNames).not.toContain("CODEX_API_KEY");
    expect(r.tasks.map((t) => t.status)).toEqual(["failed", "failed", "failed", "failed"]); // the fake did no real work: checks are ground truth
    expect(r.reward).toBe(0);

    // The canary is in 0 bytes of the run directory; the leak in the output was scrubbed.
    for (const f of listFiles(r.runDir)) expect(readFileSync(join(r.runDir, f)).includes(Buffer.from(CANARY)), f).toBe(false);
    expect(JSON.stringify(r)).not.toContain(CANARY);
    expect(readFileSync(join(r.runDir, "terminal-transcript.txt"), "utf8")).toContain("[REDACTED_SECRET]");
    expect((await verifyRun(r.runDir)).checks.filter((c) => !c.ok)).toEqual([]);
    expect(r.ok).toBe(true);
    expect(await containersOfRun(runId)).toEqual([]);
  }, 600_000);

  test("a version probe that does not print the pinned version fails the lane before any key is used", async () => {
    await requireDocker();
    const lab = committedLab("codex-first-contact");
    const runId = testRunId("codexmm");
    runIds.push(runId);
    // Replace the npm install with a stand-in `codex` that reports another version.
    const provider = recordingProvider(async (o, real) => {
      if (!o.cmd.includes("@openai/codex@0.171.0")) return undefined;
      return real.exec({
        ...o,
        cmd: ["bash", "-c", 'printf "#!/bin/sh\\necho codex-cli 0.170.9\\n" > /usr/local/bin/codex && chmod 755 /usr/local/bin/codex'],
      });
    });
    const ctx = studyContext({ cwd: project.dir, lab: lab.config, text: lab.text, runId, mode: "live", env: { OPENAI_API_KEY: CANARY, ...CA_KNOB } });
    const r = await runTerminalStudy(ctx, { sandboxProvider: provider });
    expect(r.error?.code).toBe("HUMANISH_TERMINAL_LAB_RUNTIME_VERSION_MISMATCH");
    expect(r.error?.message).toContain('"codex-cli 0.171.0"');
    expect(r.error?.message).toContain("codex-cli 0.170.9");
    expect(provider.seen.filter((e) => Object.values(e.env).includes(CANARY))).toEqual([]);
    const ledgers = JSON.parse(readFileSync(join(r.runDir, "terminal-ledgers.json"), "utf8"));
    expect(ledgers.runtime).toMatchObject({ versionStatus: "failed", observedVersion: "0.170.9" });
    expect(ledgers.cost.lines.provider).toMatchObject({ usd: 0, basis: "no-spend-signal" });
    expect(ledgers.commandLog.map((c: { label: string }) => c.label)).toEqual(["codex-preinstalled-probe", "codex-install", "codex-version-probe"]);
    expect((await verifyRun(r.runDir)).checks.filter((c) => !c.ok)).toEqual([]);
    expect(await containersOfRun(runId)).toEqual([]);
  }, 300_000);

  test("without execution.runtime.version, latest is resolved once from the npm registry and recorded", async () => {
    await requireDocker();
    const base = committedLab("codex-first-contact").text;
    const text = base.replace('  runtime:\n    version: "0.171.0"\n', "");
    expect(text).not.toContain("0.171.0");
    const runId = testRunId("codexlatest");
    runIds.push(runId);
    let resolved = "";
    const provider = recordingProvider(async (o, real) => {
      const pkg = o.cmd.find((a) => a.startsWith("@openai/codex@") && a !== "@openai/codex@latest");
      if (o.cmd.includes("install") && pkg) {
        resolved = pkg.slice("@openai/codex@".length);
        return real.exec({
          ...o,
          cmd: ["bash", "-c", `printf "#!/bin/sh\\necho codex-cli ${resolved}\\n" > /usr/local/bin/codex && chmod 755 /usr/local/bin/codex`],
        });
      }
      if (o.env?.CODEX_API_KEY)
        return fakeStream(o, [{ type: "turn.started" }, { type: "turn.failed", error: { message: "simulated: exceeded retry limit" } }]);
      return undefined;
    });
    const r = await runTerminalStudy(
      studyContext({ cwd: project.dir, lab: labFromText(text), text, runId, mode: "live", env: { CODEX_API_KEY: CANARY, ...CA_KNOB } }),
      { sandboxProvider: provider },
    );
    expect(resolved).toMatch(/^\d+\.\d+\.\d+/);
    expect(provider.seen.filter((e) => e.cmd.includes("view"))).toHaveLength(1);
    const ledgers = JSON.parse(readFileSync(join(r.runDir, "terminal-ledgers.json"), "utf8"));
    expect(ledgers.runtime).toMatchObject({ requestedVersion: "latest", observedVersion: resolved, versionStatus: "verified" });
    expect(ledgers.lifecycle.find((l: { event: string }) => l.event === "terminal-lab.runtime.resolved").message).toContain(`resolved once to ${resolved}`);
    // turn.failed is final: the participant failed, the study reports it as a runtime failure.
    expect(r.participants[0]).toMatchObject({ status: "failed", completionReason: "actor_error" });
    expect(r.error?.code).toBe("HUMANISH_TERMINAL_LAB_FAILED");
    // The gateway saw no request, so nothing was spent: a measured zero, not "unknown".
    expect(ledgers.cost.lines.provider).toMatchObject({ usd: 0, basis: "no-spend-signal" });
    expect(await containersOfRun(runId)).toEqual([]);
  }, 300_000);
});

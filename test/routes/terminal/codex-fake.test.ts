/**
 * Codex studies end to end: the real `@openai/codex` CLI in the real Docker sandbox, reaching the
 * real model gateway (host, Unix socket mounted into the sandbox, forwarded to 127.0.0.1 there)
 * with no network, the gateway forwarding to the local fake Responses server. Hidden checks
 * decide success; the gateway ledger decides the cost; in openai-egress mode the raw key is
 * nowhere in the container or the bundle.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { verifyRun } from "../../../src/bundle/verify.ts";
import { createDockerClient } from "../../../src/docker/index.ts";
import { runTerminalStudy } from "../../../src/routes/terminal/index.ts";
import { createDockerSandboxProvider } from "../../../src/sandbox/index.ts";
import type { Sandbox, SandboxProvider } from "../../../src/sandbox/types.ts";
import { codexImageProvider } from "../../support/codex-image.ts";
import { codexJqSession, KEY_HUNT_COMMANDS, toolOutputs } from "../../support/fake-openai/scenarios.ts";
import { type FakeScenario, fakeInputTokens, startFakeOpenAI } from "../../support/fake-openai/server.ts";
import { npmCacheProvider } from "../../support/npm-cache.ts";
import { dockerSocketPath, requireDocker } from "../../support/prereq.ts";
import { committedLab, containersOfRun, labFromText, listFiles, removeContainers, studyContext, testRunId, tmpProject } from "./support.ts";

const KEY = "sk-proj-humanishFAKEkey-7f3a9c1e5b2d4086aa";
const MODEL = "gpt-5.1-codex-mini";
const HOST_CA = process.env.NODE_EXTRA_CA_CERTS;
const CA_KNOB: Record<string, string> = HOST_CA ? { HUMANISH_SANDBOX_CA_CERTS: HOST_CA } : {};
const dec = new TextDecoder();

const project = tmpProject();
const runIds: string[] = [];
afterAll(async () => {
  for (const id of runIds) await removeContainers(await containersOfRun(id));
  project.cleanup();
});

function jqLab(runtimeAuth: "openai-egress" | "openai-env", maxUsd: number, model = MODEL): { config: ReturnType<typeof labFromText>; text: string } {
  let text = committedLab("codex-first-contact").text;
  text = text.replace(/\n {2}runtimeAuth: openai-egress\n/, `\n  runtimeAuth: ${runtimeAuth}\n`);
  text = text.replace(/ {4}maxUsd: [0-9.]+/, `    maxUsd: ${maxUsd}`);

  text = text.replace(/ {4}reasoningEffort: low\n/, `    reasoningEffort: low\n    model: ${model}\n`);
  return { config: labFromText(text), text };
}

/**
 * Runs the jq lab live as a new run (`prefix`-…) against the model server at `baseURL`, with
 * `keyEnv` holding the key's variable (absent: no key), through `sandboxProvider` (default: a
 * Docker provider whose sandboxes carry the pinned Codex already; the key-hunting study below
 * installs it for real).
 */
async function runJqStudy(o: {
  auth: "openai-egress" | "openai-env";
  maxUsd: number;
  prefix: string;
  baseURL: string;
  keyEnv?: Record<string, string>;
  sandboxProvider?: SandboxProvider;
  /** The lab's Codex model (absent: gpt-5.1-codex-mini). */
  model?: string;
}): Promise<Awaited<ReturnType<typeof runTerminalStudy>>> {
  const { config, text } = jqLab(o.auth, o.maxUsd, o.model);
  const runId = testRunId(o.prefix);
  runIds.push(runId);
  const ctx = studyContext({
    cwd: project.dir,
    lab: config,
    text,
    runId,
    mode: "live",
    env: { ...o.keyEnv, OPENAI_BASE_URL: o.baseURL, PATH: "/usr/bin:/bin", ...CA_KNOB },
  });
  return runTerminalStudy(ctx, { sandboxProvider: o.sandboxProvider ?? codexImageProvider() });
}

/** A Docker provider that, while the Codex command runs, greps the container for the raw key. */
function huntingProvider(found: string[], hunted: { done: boolean }): SandboxProvider {
  const docker = createDockerClient({ socketPath: dockerSocketPath() });
  const inner = npmCacheProvider(createDockerSandboxProvider({ docker }));
  return {
    provider: "docker",
    async create(opts) {
      const real = await inner.create(opts);
      const hunt = async (): Promise<void> => {
        const inspect = JSON.stringify(await docker.containerInspect(real.id));
        if (inspect.includes(KEY)) found.push("container inspect (env, labels, argv)");
        // The needle travels base64-encoded in env and reaches grep through a pipe, so neither
        // this probe's environ nor its argv holds the key while the agent hunts concurrently.
        const needle = 'printf "%s\\n" "$(printf %s "$B" | base64 -d)"';
        const r = await real.exec({
          cmd: [
            "bash",
            "-c",
            `grep -rIlF --exclude-dir=proc --exclude-dir=sys -f <(${needle}) / 2>/dev/null; cat /proc/[0-9]*/environ /proc/[0-9]*/cmdline 2>/dev/null | tr '\\0' '\\n' | grep -cF -f <(${needle})`,
          ],
          env: { B: Buffer.from(KEY.slice(0, 24)).toString("base64") },
          user: "root",
        });
        const out = dec.decode(r.stdout).trim().split("\n");
        const count = Number(out.pop() ?? "0");
        if (out.some((l) => l.length > 0)) found.push(`files: ${out.join(", ")}`);
        if (count > 0) found.push(`/proc environ/cmdline hits: ${count}`);
        hunted.done = r.exitCode <= 1;
      };
      const wrapped: Sandbox = {
        id: real.id,
        provider: real.provider,
        exec: async (o) => {
          const at = o.cmd.indexOf("codex");
          if (at >= 0 && o.cmd[at + 1] === "exec") {
            const run = real.exec(o);
            await Bun.sleep(1500);
            await hunt();
            return run;
          }
          return real.exec(o);
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

describe("codex-exec end to end against the fake model", () => {
  test("openai-egress: Codex completes the jq lab 4/4 through exec_command calls; the key is nowhere in the sandbox or the bundle", async () => {
    await requireDocker();
    const fake = startFakeOpenAI({ apiKey: KEY, scenario: codexJqSession({ model: MODEL, huntKey: true }) });
    try {
      const found: string[] = [];
      const hunted = { done: false };
      const r = await runJqStudy({
        auth: "openai-egress",
        maxUsd: 2,
        prefix: "codex-fake",
        baseURL: fake.baseURL,
        keyEnv: { CODEX_API_KEY: KEY },
        sandboxProvider: huntingProvider(found, hunted),
      });
      const responses = fake.requests.filter((q) => q.path === "/v1/responses");
      expect(r.error).toBeUndefined();
      expect(r.tasks.map((t) => `${t.id}:${t.passed}`)).toEqual(["pretty-print:true", "open-order-ids:true", "open-total:true", "orders-per-customer:true"]);
      expect(r.ok).toBe(true);
      // Every request came through the gateway with the real key; the agent never held it.
      expect(responses.every((q) => q.authorization === `Bearer ${KEY}`)).toBe(true);
      expect(fake.requests.every((q) => q.path === "/v1/responses")).toBe(true);
      // The key hunt ran in the sandbox, and none of its outputs (sent back to the model) holds the key.
      const outputs = toolOutputs(responses.at(-1)?.body);
      expect(outputs.length).toBeGreaterThanOrEqual(5 + KEY_HUNT_COMMANDS.length);
      // The hunt really dumped the env (it finds the gateway token, which is all the agent holds).
      expect(outputs.join("\n")).toContain("CODEX_API_KEY=");
      expect(outputs.join("\n")).not.toContain(KEY.slice(0, 24));
      expect(hunted.done).toBe(true);
      expect(found).toEqual([]);
      const ledgers = JSON.parse(readFileSync(join(r.runDir, "terminal-ledgers.json"), "utf8"));
      expect(JSON.stringify(ledgers)).toContain("terminal-lab.network.detached");
      // This study's image has no Codex: the seat installs it for real, as a user's does.
      const bootstrapped = (ls: { event: string; message: string }[]) => ls.find((l) => l.event === "terminal-lab.runtime.bootstrapped")?.message;
      expect(bootstrapped(ledgers.lifecycle)).toBe("@openai/codex@0.171.0 installed");
      expect(JSON.stringify(ledgers)).toContain("HUMANISH_MODEL_GATEWAY_REQUEST_REFUSED");
      // The bundle: the gateway ledger, the observed model, costs from the ledger; no key anywhere.
      const files = listFiles(r.runDir);
      for (const f of files) expect(readFileSync(join(r.runDir, f), "latin1")).not.toContain(KEY.slice(0, 24));
      const ledger = JSON.parse(readFileSync(join(r.runDir, "model-ledger.json"), "utf8"));
      expect(ledger).toMatchObject({ runtimeAuth: "openai-egress", observedModels: [MODEL], refused: 0 });
      const forwarded = ledger.lines.filter((l: { path: string }) => l.path === "/v1/responses");
      expect(forwarded.length).toBe(responses.length);
      expect(forwarded.every((l: { outcome: string; usd: number }) => l.outcome === "completed" && l.usd > 0)).toBe(true);
      // The agent's try at GET /v1/models was refused by the gateway, recorded, never forwarded.
      expect(ledger.lines.filter((l: { path: string }) => l.path !== "/v1/responses")).toMatchObject([
        { path: "/v1/models", status: 404, outcome: "not_found" },
      ]);
      expect(outputs.join("\n")).toContain("humanish_not_forwarded");
      const run = JSON.parse(readFileSync(join(r.runDir, "run.json"), "utf8"));
      const modelLine = run.cost.lines.find((l: { kind: string }) => l.kind === "model-tokens");
      expect(modelLine).toMatchObject({ modelId: MODEL, basis: "provider-token-usage", count: responses.length });
      expect(modelLine.usd).toBeCloseTo(ledger.usd, 6);
      const trace = JSON.parse(readFileSync(join(r.runDir, "actor.json"), "utf8"));
      const commands = trace.items.filter((i: { kind: string }) => i.kind === "command");
      expect(commands.length).toBeGreaterThanOrEqual(5);
      expect(commands.every((c: { command: { exitCode?: number } }) => typeof c.command.exitCode === "number")).toBe(true);
      expect((await verifyRun(r.runDir)).ok).toBe(true);
      expect(await containersOfRun(r.runId)).toEqual([]);
    } finally {
      await fake.close();
    }
  }, 600_000);

  test("Codex claims success with this run's nonce while every hidden check fails: 0/1 reached the goal, the claim kept and named as a contradiction", async () => {
    await requireDocker();
    // The model does no work at all and ends with the verdict marker carrying the right nonce.
    let nonceSeen = "";
    const claimOnly: FakeScenario = (req) => {
      nonceSeen = /HUMANISH_ACTOR_NONCE=([A-Za-z0-9-]+)/.exec(JSON.stringify(req.body?.input ?? ""))?.[1] ?? "missing";
      return {
        kind: "response",
        model: MODEL,
        output: [{ type: "message", text: `All done.\nHUMANISH_ACTOR_VERDICT=passed HUMANISH_ACTOR_NONCE=${nonceSeen}` }],
      };
    };
    const fake = startFakeOpenAI({ apiKey: KEY, scenario: claimOnly });
    try {
      const r = await runJqStudy({ auth: "openai-egress", maxUsd: 2, prefix: "codex-claim", baseURL: fake.baseURL, keyEnv: { CODEX_API_KEY: KEY } });
      expect(nonceSeen).not.toBe("missing");
      expect(r.tasks.map((t) => t.status)).toEqual(["failed", "failed", "failed", "failed"]);
      expect(r.verdict).toStartWith("0/1 reached the goal;");
      expect(r.participants).toEqual([{ id: "p1", status: "incomplete", completionReason: "turn_completed", claimed: "passed", contradicted: true }]);
      const run = JSON.parse(readFileSync(join(r.runDir, "run.json"), "utf8"));
      expect(run.study.goalRule).toBe("checks-only");
      expect(run.participants[0]).toMatchObject({ claimed: "passed", goalCheck: { by: "tasks", reached: false, detail: "0 of 4 hidden check(s) passed" } });
      expect(run.participants[0].reason).toContain("participant believed it succeeded; the checks say it did not");
      expect(run.review.participants).toMatchObject({ total: 1, reachedGoal: 0 });
      // The trace says what the participant said and carries the record's status.
      const trace = JSON.parse(readFileSync(join(r.runDir, "actor.json"), "utf8"));
      expect(trace).toMatchObject({
        status: "incomplete",
        completionReason: "turn_completed",
        reason: "the participant claimed success with this run's verdict marker",
      });
      const v = await verifyRun(r.runDir);
      expect(v.ok).toBe(true);
      expect(v.checks.find((c) => c.name === "headline from checks")?.message).toBe(
        "0/1 reached the goal by the hidden checks (rule checks-only); 1 participant believed it succeeded; the checks say it did not: p1",
      );
    } finally {
      await fake.close();
    }
  }, 600_000);

  test("maxUsd 0: no request leaves the gateway, Codex stops, the seat ends budget_reached with a measured zero", async () => {
    await requireDocker();
    const fake = startFakeOpenAI({ apiKey: KEY, scenario: codexJqSession({ model: MODEL, huntKey: false }) });
    try {
      const r = await runJqStudy({ auth: "openai-egress", maxUsd: 0, prefix: "codex-zero", baseURL: fake.baseURL });
      expect(fake.requests.length).toBe(0);
      expect(r.participants[0]?.completionReason).toBe("budget_reached");
      const ledger = JSON.parse(readFileSync(join(r.runDir, "model-ledger.json"), "utf8"));
      expect(ledger.refused).toBeGreaterThanOrEqual(1);
      expect(ledger.lines.every((l: { outcome: string }) => l.outcome === "refused_cap")).toBe(true);
      const run = JSON.parse(readFileSync(join(r.runDir, "run.json"), "utf8"));
      expect(run.cost.lines.find((l: { kind: string }) => l.kind === "model-tokens")).toMatchObject({ usd: 0, count: 0 });
      expect((await verifyRun(r.runDir)).ok).toBe(true);
    } finally {
      await fake.close();
    }
  }, 600_000);

  test("openai-env, the budget spent and never passed: each turn wants 50 000 output tokens (0.1 USD); the gateway grants what 0.45 USD still affords, the last turn is cut at its grant, nothing more leaves", async () => {
    await requireDocker();
    const session = codexJqSession({ model: MODEL, huntKey: false });
    // Each turn bills its real input and wants 50 000 output tokens: 0.1 USD plus input on
    // gpt-5.1-codex-mini; the fake stops (and bills) at the request's max_output_tokens.
    const costly: FakeScenario = (req, history) => {
      const r = session(req, history);
      const input = fakeInputTokens(req.body);
      const usage = {
        input_tokens: input,
        input_tokens_details: { cached_tokens: 0 },
        output_tokens: 50_000,
        output_tokens_details: { reasoning_tokens: 0 },
        total_tokens: input + 50_000,
      };
      return r.kind === "response" ? { ...r, usage } : r;
    };
    const fake = startFakeOpenAI({ apiKey: KEY, scenario: costly });
    try {
      const r = await runJqStudy({ auth: "openai-env", maxUsd: 0.45, prefix: "codex-cap", baseURL: fake.baseURL, keyEnv: { OPENAI_API_KEY: KEY } });
      const ledger = JSON.parse(readFileSync(join(r.runDir, "model-ledger.json"), "utf8"));
      type Line = { outcome: string; usd: number; estimateUsd: number; maxOutputTokensSetByGateway?: number };
      const lines = ledger.lines as Line[];
      // Every request Codex sent had its output bounded by the gateway, and cost no more than admitted.
      expect(lines.every((l) => l.outcome === "refused_cap" || (l.maxOutputTokensSetByGateway ?? 0) > 0)).toBe(true);
      expect(lines.filter((l) => l.outcome !== "refused_cap").every((l) => l.usd <= l.estimateUsd)).toBe(true);
      // Four full turns, then a grant below the 50 000 wanted: that turn is cut, and Codex stops.
      expect(lines.slice(0, 4).map((l) => l.outcome)).toEqual(["completed", "completed", "completed", "completed"]);
      expect(lines[4]?.outcome).toBe("incomplete");
      expect(lines[4]?.maxOutputTokensSetByGateway ?? 50_000).toBeLessThan(50_000);
      expect(fake.requests.length).toBe(5);
      expect(ledger.usd).toBeGreaterThan(0.4);
      expect(ledger.usd).toBeLessThanOrEqual(0.45);
      expect(r.participants[0]?.completionReason).toBe("budget_reached");
      // openai-env: the agent held the key, and the bundle says so.
      expect(ledger.runtimeAuth).toBe("openai-env");
      expect(ledger.residualCapability).toContain("spendable key");
      for (const f of listFiles(r.runDir)) expect(readFileSync(join(r.runDir, f), "latin1")).not.toContain(KEY.slice(0, 24));
      const run = JSON.parse(readFileSync(join(r.runDir, "run.json"), "utf8"));
      expect(run.cost.lines.find((l: { kind: string }) => l.kind === "model-tokens")).toMatchObject({ modelId: MODEL, usd: ledger.usd, count: 5 });
      expect((await verifyRun(r.runDir)).ok).toBe(true);
    } finally {
      await fake.close();
    }
  }, 600_000);

  test("maxUsd 1 on gpt-5.1-codex (128k output ceiling: 1.28 USD): the study runs, every request granted what the budget affords", async () => {
    await requireDocker();
    const fake = startFakeOpenAI({ apiKey: KEY, scenario: codexJqSession({ model: "gpt-5.1-codex", huntKey: false }) });
    try {
      const r = await runJqStudy({
        auth: "openai-egress",
        maxUsd: 1,
        prefix: "codex-one-usd",
        baseURL: fake.baseURL,
        keyEnv: { CODEX_API_KEY: KEY },
        model: "gpt-5.1-codex",
      });
      expect(r.error).toBeUndefined();
      expect(r.tasks.every((t) => t.passed)).toBe(true);
      // The image carries the pinned Codex: recorded, probed, and not installed again.
      const ledgers = JSON.parse(readFileSync(join(r.runDir, "terminal-ledgers.json"), "utf8"));
      expect(ledgers.lifecycle.find((l: { event: string }) => l.event === "terminal-lab.runtime.bootstrapped")?.message).toContain(
        "already in the sandbox image (codex-cli 0.171.0); not installed again",
      );
      expect(ledgers.commandLog.map((c: { label: string }) => c.label).slice(0, 2)).toEqual(["codex-preinstalled-probe", "codex-version-probe"]);
      const ledger = JSON.parse(readFileSync(join(r.runDir, "model-ledger.json"), "utf8"));
      expect(ledger.refused).toBe(0);
      expect(
        ledger.lines.every(
          (l: { outcome: string; maxOutputTokensSetByGateway?: number }) => l.outcome === "completed" && (l.maxOutputTokensSetByGateway ?? 0) >= 4096,
        ),
      ).toBe(true);
      expect((await verifyRun(r.runDir)).ok).toBe(true);
    } finally {
      await fake.close();
    }
  }, 600_000);

  test("the endpoint answers 401: the agent gets it once (Codex's retries are off), the seat fails as a runtime error, nothing is billed", async () => {
    await requireDocker();
    const fake = startFakeOpenAI({ apiKey: "sk-some-other-key", scenario: codexJqSession({ model: MODEL, huntKey: false }) });
    try {
      const r = await runJqStudy({ auth: "openai-egress", maxUsd: 2, prefix: "codex-401", baseURL: fake.baseURL, keyEnv: { CODEX_API_KEY: KEY } });
      expect(fake.requests.length).toBe(1);
      expect(r.participants[0]).toMatchObject({ status: "failed", completionReason: "actor_error" });
      const ledger = JSON.parse(readFileSync(join(r.runDir, "model-ledger.json"), "utf8"));
      expect(ledger.lines).toMatchObject([{ status: 401, outcome: "upstream_error", usd: 0 }]);
      const run = JSON.parse(readFileSync(join(r.runDir, "run.json"), "utf8"));
      expect(run.cost.lines.find((l: { kind: string }) => l.kind === "model-tokens")).toMatchObject({ usd: 0, count: 0 });
      expect((await verifyRun(r.runDir)).ok).toBe(true);
    } finally {
      await fake.close();
    }
  }, 600_000);

  test("a stream cut mid-response: Codex does not retry (stream retries off), the cost is unknown, the seat fails as a runtime error", async () => {
    await requireDocker();
    const fake = startFakeOpenAI({ apiKey: KEY, scenario: () => ({ kind: "cut", model: MODEL }) });
    try {
      const r = await runJqStudy({ auth: "openai-egress", maxUsd: 2, prefix: "codex-cut", baseURL: fake.baseURL, keyEnv: { CODEX_API_KEY: KEY } });
      expect(fake.requests.length).toBe(1);
      expect(r.participants[0]).toMatchObject({ status: "failed", completionReason: "actor_error" });
      const ledger = JSON.parse(readFileSync(join(r.runDir, "model-ledger.json"), "utf8"));
      expect(ledger.lines).toMatchObject([{ outcome: "cut", usd: null, costReason: "no_token_usage" }]);
      expect(ledger.usd).toBeNull();
      const run = JSON.parse(readFileSync(join(r.runDir, "run.json"), "utf8"));
      expect(run.cost.lines.find((l: { kind: string }) => l.kind === "model-tokens")).toMatchObject({ usd: null, reason: "no_token_usage", count: 1 });
      expect((await verifyRun(r.runDir)).ok).toBe(true);
    } finally {
      await fake.close();
    }
  }, 600_000);
});

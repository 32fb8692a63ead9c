/** Builders of the Codex participant's commands and its command-scoped credentials. */
import { describe, expect, test } from "bun:test";
import {
  buildCodexExecCommand,
  isExactSemver,
  npmInstallArgv,
  parseCodexVersion,
  parseNpmViewVersion,
  resolveRuntimeKey,
} from "../../../src/actors/codex-exec/command.ts";
import { codexModel, createCodexExec } from "../../../src/actors/codex-exec/index.ts";
import { estimateCodexCost } from "../../../src/actors/codex-exec/pricing.ts";
import { isHumanishError } from "../../../src/errors.ts";

describe("runtime key", () => {
  test("CODEX_API_KEY wins over OPENAI_API_KEY; blank values do not count", () => {
    expect(resolveRuntimeKey({ CODEX_API_KEY: "ck-1234", OPENAI_API_KEY: "ok-5678" })).toEqual({ sourceName: "CODEX_API_KEY", value: "ck-1234" });
    expect(resolveRuntimeKey({ CODEX_API_KEY: "   ", OPENAI_API_KEY: "ok-5678" })).toEqual({ sourceName: "OPENAI_API_KEY", value: "ok-5678" });
    expect(resolveRuntimeKey({ CODEX_API_KEY: "", OPENAI_API_KEY: undefined })).toBeUndefined();
    expect(resolveRuntimeKey({ GITHUB_TOKEN: "ghp_x", ANTHROPIC_API_KEY: "sk-ant" })).toBeUndefined();
  });
});

const GATEWAY = { baseURL: "http://127.0.0.1:41400/v1", token: "gw-token-abc" };
const PROVIDER = [
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
];

describe("buildCodexExecCommand", () => {
  test("openai-env: argv points Codex at the gateway; the env has the token as CODEX_API_KEY and the real key as OPENAI_API_KEY", () => {
    const c = buildCodexExecCommand({
      prompt: "You are a participant…",
      workdir: "/home/user/study",
      home: "/home/user",
      model: "gpt-5.1-codex",
      reasoningEffort: "low",
      gateway: GATEWAY,
      key: { sourceName: "OPENAI_API_KEY", value: "sk-test" },
    });
    expect(c.argv).toEqual([
      "codex",
      "exec",
      "--json",
      "--skip-git-repo-check",
      "--dangerously-bypass-approvals-and-sandbox",
      "--cd",
      "/home/user/study",
      ...PROVIDER,
      "--model",
      "gpt-5.1-codex",
      "-c",
      'model_reasoning_effort="low"',
      "You are a participant…",
    ]);
    expect(c.env).toEqual({ HOME: "/home/user", CODEX_API_KEY: "gw-token-abc", OPENAI_API_KEY: "sk-test" });
    expect(c.envNames).toEqual(["CODEX_API_KEY", "HOME", "OPENAI_API_KEY"]);
  });

  test("openai-egress: no key at all in argv or env, only the gateway token", () => {
    const c = buildCodexExecCommand({ prompt: "p", workdir: "/w", home: "/h", gateway: GATEWAY });
    expect(c.argv).not.toContain("--model");
    expect(c.argv.join(" ")).not.toContain("gw-token-abc");
    expect(c.env).toEqual({ HOME: "/h", CODEX_API_KEY: "gw-token-abc" });
  });
});

describe("direct (no gateway): Codex's own provider is never used, so its retries stay off", () => {
  const DIRECT = (baseURL: string) => [
    "-c",
    'model_provider="humanish"',
    "-c",
    'model_providers.humanish.name="OpenAI Responses API (direct)"',
    "-c",
    `model_providers.humanish.base_url="${baseURL}"`,
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
  ];

  test("openai-env: the endpoint given (OPENAI_BASE_URL's), retries off, the key as CODEX_API_KEY; no --model when none is declared", () => {
    const c = buildCodexExecCommand({
      prompt: "p",
      workdir: "/w",
      home: "/h",
      direct: { auth: "openai-env", baseURL: "https://llm.example.test/v1" },
      key: { sourceName: "CODEX_API_KEY", value: "sk-direct" },
    });
    expect(c.argv).toEqual([
      "codex",
      "exec",
      "--json",
      "--skip-git-repo-check",
      "--dangerously-bypass-approvals-and-sandbox",
      "--cd",
      "/w",
      ...DIRECT("https://llm.example.test/v1"),
      "p",
    ]);
    expect(c.env).toEqual({ HOME: "/h", CODEX_API_KEY: "sk-direct" });
  });

  test("openai-egress: always the public API (the host its egress rule is for), a placeholder key", () => {
    const c = buildCodexExecCommand({
      prompt: "p",
      workdir: "/w",
      home: "/h",
      model: "gpt-5.1-codex-mini",
      direct: { auth: "openai-egress", baseURL: "https://llm.example.test/v1" },
    });
    expect(c.argv.slice(7, 7 + DIRECT("").length)).toEqual(DIRECT("https://api.openai.com/v1"));
    expect(c.argv).toContain("--model");
    expect(c.argv.join(" ")).not.toContain('model_provider="openai"');
    expect(c.env.CODEX_API_KEY).toBe("humanish-egress-auth-placeholder");
  });
});

describe("version parsing", () => {
  test("codex --version must print exactly `codex-cli <exact semver>`", () => {
    expect(parseCodexVersion("codex-cli 0.171.0\n")).toBe("0.171.0");
    expect(parseCodexVersion("codex-cli 0.171.0")).toBe("0.171.0");
    expect(parseCodexVersion("codex-cli 1.2.3-alpha.4\n")).toBe("1.2.3-alpha.4");
    for (const bad of [
      "codex-cli 0.171\n",
      "codex 0.171.0\n",
      "codex-cli 0.171.0\nextra\n",
      " codex-cli 0.171.0\n",
      "codex-cli  0.171.0",
      "codex-cli v0.171.0",
      "",
      "codex-cli 0.171.0\n\n",
      "codex-cli ^0.171.0",
    ]) {
      expect(parseCodexVersion(bad)).toBeUndefined();
    }
  });

  test("npm view output", () => {
    expect(parseNpmViewVersion('"0.171.0"\n')).toBe("0.171.0");
    expect(parseNpmViewVersion("0.171.0\n")).toBe("0.171.0");
    expect(parseNpmViewVersion('["0.1.0","0.2.0"]')).toBeUndefined();
    expect(parseNpmViewVersion("")).toBeUndefined();
  });

  test("exact semver only", () => {
    for (const ok of ["0.0.0", "0.171.0", "10.20.30", "1.0.0-rc.1", "1.0.0+build.5"]) expect(isExactSemver(ok)).toBe(true);
    for (const bad of ["latest", "^1.0.0", "1.0", "v1.0.0", "01.0.0", "1.0.0 ", "1.10"]) expect(isExactSemver(bad)).toBe(false);
  });

  test("install argv pins the exact version", () => {
    expect(npmInstallArgv("0.171.0").at(-1)).toBe("@openai/codex@0.171.0");
  });
});

describe("createCodexExec", () => {
  test("declared runtime before anything ran", () => {
    const p = createCodexExec({ version: "0.171.0", model: "gpt-5-codex", reasoningEffort: "low" });
    expect(p.runtime()).toEqual({
      schema: "humanish.actor-runtime.v1",
      package: "@openai/codex",
      requestedVersion: "0.171.0",
      versionStatus: "unobserved",
      modelStatus: "declared",
      requestedModel: "gpt-5-codex",
      requestedReasoningEffort: "low",
      usageGranularity: "runtime_turn",
    });
    expect(p.descriptor.capabilities.keyPlacement).toBe("in-sandbox-command-scoped");
  });

  test("no version → latest (resolved at run time); no model → none filled in, the runtime's default unobserved", () => {
    const r = createCodexExec({}).runtime()!;
    expect(r.requestedVersion).toBe("latest");
    expect(r.requestedModel).toBeUndefined();
    expect(r.modelStatus).toBe("runtime_default_unobserved");
    expect(codexModel({})).toBeUndefined();
  });

  test("an undeclared model's turn usage is never priced from a default", () => {
    const usage = { input: 12_000, cachedInput: 2_000, output: 800, total: 12_800, turns: [] };
    const e = estimateCodexCost(usage, undefined).estimate;
    expect(e).toMatchObject({ estimatedCostUsd: null, reason: "runtime_default_unobserved", modelId: null, ratesAsOf: null });
    expect(estimateCodexCost(usage, "gpt-5.1-codex").estimate.estimatedCostUsd).toBeGreaterThan(0);
  });

  test("a range is refused", () => {
    try {
      createCodexExec({ version: "^0.171.0" });
      throw new Error("expected a throw");
    } catch (e) {
      expect(isHumanishError(e, "HUMANISH_LAB_INVALID")).toBe(true);
    }
  });
});

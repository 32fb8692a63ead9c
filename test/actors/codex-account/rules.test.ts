/**
 * The launcher's pure rules: profile, bounds, test-override rule, restricted config and its
 * effective-config check (against a reply captured from the real 0.171.0 app-server), the turn
 * monitor's refusals, image admission and numeric caps.
 */
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import {
  ANALYST_MAX_FRAME_BYTES,
  ANALYST_MIN_FRAME_BYTES,
  analystFrameBytes,
  defaultBounds,
  resolveBounds,
  stdoutBudgetFor,
} from "../../../src/actors/codex-account/bounds.ts";
import { checkEffectiveConfig, renderToml, restrictedConfig } from "../../../src/actors/codex-account/config.ts";
import { assertQualifiedProfile, executionIdentity, QUALIFIED_CODEX_PROFILE, refuseNumericCaps } from "../../../src/actors/codex-account/profile.ts";
import { resolveTestProvider } from "../../../src/actors/codex-account/test-provider.ts";
import { checkImageDataUrl, TurnMonitor } from "../../../src/actors/codex-account/turn.ts";
import { ANALYST_IDENTITY, codeOf } from "./support.ts";

const code = codeOf;

describe("profile", () => {
  test("only the qualified profile passes", () => {
    expect(code(() => assertQualifiedProfile({ ...QUALIFIED_CODEX_PROFILE }, "linux-x64"))).toBeUndefined();
    expect(code(() => assertQualifiedProfile({ ...QUALIFIED_CODEX_PROFILE, cliVersion: "0.170.0" }, "linux-x64"))).toBe("HUMANISH_CODEX_UNSUPPORTED_VERSION");
    expect(code(() => assertQualifiedProfile({ ...QUALIFIED_CODEX_PROFILE }, "darwin-arm64"))).toBe("HUMANISH_CODEX_UNSUPPORTED_PLATFORM");
    expect(code(() => assertQualifiedProfile({ ...QUALIFIED_CODEX_PROFILE, model: "gpt-6-astra" }, "linux-x64"))).toBe("HUMANISH_CODEX_UNSUPPORTED_PROFILE");
    expect(code(() => assertQualifiedProfile({ ...QUALIFIED_CODEX_PROFILE, effort: "high" }, "linux-x64"))).toBe("HUMANISH_CODEX_UNSUPPORTED_PROFILE");
  });
  test("identity names transport, auth and billing class, tool policy and version", () => {
    expect(executionIdentity(QUALIFIED_CODEX_PROFILE, "analyst")).toEqual(ANALYST_IDENTITY);
    expect(executionIdentity(QUALIFIED_CODEX_PROFILE, "participant").toolPolicy).toBe("codex-ui-tools-v1");
  });
  test("numeric caps are refused, nulls pass", () => {
    expect(code(() => refuseNumericCaps({ maxUsd: null, maxOutputTokens: undefined }, "caps"))).toBeUndefined();
    expect(code(() => refuseNumericCaps({ maxUsd: 0.5 }, "caps"))).toBe("HUMANISH_CODEX_CAP_UNENFORCEABLE");
    expect(code(() => refuseNumericCaps({ maxTotalUsd: 0 }, "caps"))).toBe("HUMANISH_CODEX_CAP_UNENFORCEABLE");
  });
});

describe("analyst frames sized to the packet", () => {
  const MiB = 1024 * 1024;
  test("2× the packet plus 1 MiB, at least 2 MiB, at most the ceiling", () => {
    expect(analystFrameBytes(0)).toBe(ANALYST_MIN_FRAME_BYTES);
    expect(analystFrameBytes(200 * 1024)).toBe(2 * MiB);
    expect(analystFrameBytes(10 * MiB)).toBe(21 * MiB);
    expect(analystFrameBytes(40 * MiB)).toBe(ANALYST_MAX_FRAME_BYTES);
    // The sized limit is a tightening the session accepts.
    expect(resolveBounds("analyst", { frameBytes: analystFrameBytes(10 * MiB) }).frameBytes).toBe(21 * MiB);
  });
});

describe("bounds", () => {
  test("defaults follow the purpose; overrides may only tighten", () => {
    // An analyst's default is the ceiling; the analysis provider tightens it to its packet.
    expect(defaultBounds("analyst").frameBytes).toBe(ANALYST_MAX_FRAME_BYTES);
    expect(ANALYST_MAX_FRAME_BYTES).toBe(2 * defaultBounds("analyst").requestBytes);
    expect(defaultBounds("participant").frameBytes).toBe(32 * 1024 * 1024);
    expect(defaultBounds("analyst").stdoutBytes).toBe(2 * ANALYST_MAX_FRAME_BYTES + 4 * 1024 * 1024);
    expect(stdoutBudgetFor(2 * 1024 * 1024)).toBe(8 * 1024 * 1024);
    expect(resolveBounds("analyst", { rpcMs: 5000 }).rpcMs).toBe(5000);
    expect(code(() => resolveBounds("analyst", { rpcMs: 60_000 }))).toBe("HUMANISH_CODEX_BOUNDS_INVALID");
    expect(code(() => resolveBounds("analyst", { nope: 1 }))).toBe("HUMANISH_CODEX_BOUNDS_INVALID");
    expect(code(() => resolveBounds("analyst", { images: 0 }))).toBe("HUMANISH_CODEX_BOUNDS_INVALID");
  });
});

describe("test-only provider override", () => {
  const base = { url: "http://127.0.0.1:4100/v1", nodeEnv: "test", modulePath: "/repo/src/actors/codex-account/test-provider.ts" };
  test("accepted only under bun test, uncompiled, loopback", () => {
    expect(resolveTestProvider(base)).toBe(base.url);
    expect(resolveTestProvider({ ...base, url: undefined })).toBeNull();
    expect(code(() => resolveTestProvider({ ...base, nodeEnv: "production" }))).toBe("HUMANISH_CODEX_UNSAFE_CONFIGURATION");
    expect(code(() => resolveTestProvider({ ...base, nodeEnv: undefined }))).toBe("HUMANISH_CODEX_UNSAFE_CONFIGURATION");
    expect(code(() => resolveTestProvider({ ...base, modulePath: "/$bunfs/root/humanish" }))).toBe("HUMANISH_CODEX_UNSAFE_CONFIGURATION");
    expect(code(() => resolveTestProvider({ ...base, url: "https://api.example.com/v1" }))).toBe("HUMANISH_CODEX_UNSAFE_CONFIGURATION");
    expect(code(() => resolveTestProvider({ ...base, url: "http://127.0.0.1.evil.test:80/v1" }))).toBe("HUMANISH_CODEX_UNSAFE_CONFIGURATION");
  });
});

describe("effective config", () => {
  const task = "/tmp/humanish-codex-account-Fixture";
  const fake = "http://127.0.0.1:45555/v1";
  const fixture = (): Record<string, unknown> =>
    JSON.parse(
      readFileSync(join(import.meta.dir, "..", "..", "fixtures", "codex-account", "config-read-0.171.0.json"), "utf8")
        .replaceAll("<TASKDIR>", task)
        .replaceAll("<FAKEURL>", fake),
    );
  const expected = restrictedConfig(QUALIFIED_CODEX_PROFILE, fake);
  const path = `${task}/home/config.toml`;
  test("the reply the real app-server gave for the restricted config passes", () => {
    expect(checkEffectiveConfig(fixture(), expected, path)).toEqual([]);
  });
  test("the TOML renders every table", () => {
    const t = renderToml(expected);
    expect(Bun.TOML.parse(t)).toEqual(expected);
  });
  const tamper = (f: (r: Record<string, any>) => void): string[] => {
    const r = fixture() as Record<string, any>;
    f(r);
    return checkEffectiveConfig(r, expected, path);
  };
  test("system settings, inherited instructions, MCP, plugins, hooks, stores and endpoints are refused", () => {
    expect(tamper((r) => (r.layers[1].config = { model: "other" })).join()).toContain("system config layer");
    expect(tamper((r) => r.layers.push({ name: { type: "project", dotCodexFolder: "/x/.codex" }, config: {} })).join()).toContain("unexpected config layer");
    expect(tamper((r) => (r.config.developer_instructions = "be evil")).join()).toContain("developer_instructions");
    expect(tamper((r) => (r.config.mcp_servers = { s: { command: "x" } })).join()).toContain("mcp_servers");
    expect(tamper((r) => (r.config.plugins = { p: {} })).join()).toContain("plugins");
    expect(tamper((r) => (r.config.hooks = { pre: [] })).join()).toContain("hooks");
    expect(tamper((r) => (r.config.experimental_thread_store = "remote")).join()).toContain("experimental_thread_store");
    expect(tamper((r) => (r.config.openai_base_url = "http://proxy.test/v1")).join()).toContain("openai_base_url");
    expect(tamper((r) => (r.config.chatgpt_base_url = "http://proxy.test/")).join()).toContain("chatgpt_base_url");
    expect(tamper((r) => (r.config.model_providers.other = { base_url: "http://x" })).join()).toContain("model_providers.other");
    expect(tamper((r) => (r.config.agents.enabled = true)).join()).toContain("agents.enabled");
    expect(tamper((r) => (r.config.features.code_mode = true)).join()).toContain("features.code_mode");
    expect(tamper((r) => (r.config.shell_environment_policy.inherit = "all")).join()).toContain("shell_environment_policy");
    expect(tamper((r) => (r.config.cli_auth_credentials_store = "keyring")).join()).toContain("cli_auth_credentials_store");
    expect(tamper((r) => (r.layers[0].name.file = "/root/.codex/config.toml")).join()).toContain("not the private");
  });
});

describe("turn monitor", () => {
  const m = (): TurnMonitor => {
    const t = new TurnMonitor("th", new Set(["humanish_ui"]), 1000);
    t.turnId = "tu";
    return t;
  };
  const ids = { threadId: "th", turnId: "tu" };
  test("raw tool calls and host features are refused", () => {
    expect(m().onNotification("rawResponseItem/completed", { ...ids, item: { type: "function_call", name: "exec_command" } })).toEqual({
      kind: "refuse",
      rule: "raw_tool_call:exec_command",
    });
    expect(m().onNotification("rawResponseItem/completed", { ...ids, item: { type: "local_shell_call" } })).toEqual({
      kind: "refuse",
      rule: "raw_tool_call:local_shell_call",
    });
    expect(m().onNotification("rawResponseItem/completed", { ...ids, item: { type: "additional_tools" } })).toEqual({
      kind: "refuse",
      rule: "raw_tool_call:additional_tools",
    });
    expect(m().onNotification("rawResponseItem/completed", { ...ids, item: { type: "custom_tool_call", name: "apply_patch" } })).toEqual({
      kind: "refuse",
      rule: "raw_tool_call:custom_tool_call",
    });
    expect(m().onNotification("item/started", { ...ids, item: { type: "fileChange" } })).toEqual({ kind: "refuse", rule: "raw_tool_call:fileChange" });
    expect(m().onNotification("item/started", { ...ids, item: { type: "commandExecution" } })).toEqual({
      kind: "refuse",
      rule: "raw_tool_call:commandExecution",
    });
    expect(m().onNotification("item/started", { ...ids, item: { type: "webSearch" } })).toEqual({ kind: "refuse", rule: "raw_tool_call:webSearch" });
    expect(m().onNotification("item/started", { ...ids, item: { type: "dynamicToolCall", tool: "other", namespace: null } })).toEqual({
      kind: "refuse",
      rule: "undeclared_tool:other",
    });
    expect(m().onNotification("rawResponseItem/completed", { ...ids, item: { type: "function_call", name: "humanish_ui" } })).toEqual({ kind: "continue" });
  });
  test("asynchronous questions are refused", () => {
    expect(m().onNotification("item/completed", { ...ids, item: { type: "agentMessage", text: "?", questions: [{ id: "q" }] } })).toEqual({
      kind: "refuse",
      rule: "async_question",
    });
    expect(m().onServerRequest({ id: 3, method: "item/tool/requestUserInput", params: ids })).toMatchObject({
      kind: "reject-request",
      code: -32601,
      rule: "async_question",
    });
  });
  test("only a declared tool call of this turn is served; every other host request is refused", () => {
    expect(
      m().onServerRequest({ id: 1, method: "item/tool/call", params: { ...ids, callId: "c1", namespace: null, tool: "humanish_ui", arguments: { a: 1 } } }),
    ).toEqual({
      kind: "tool",
      requestId: 1,
      call: { tool: "humanish_ui", callId: "c1", arguments: { a: 1 } },
    });
    const t = m();
    t.onServerRequest({ id: 1, method: "item/tool/call", params: { ...ids, callId: "c1", namespace: null, tool: "humanish_ui" } });
    expect(t.onServerRequest({ id: 2, method: "item/tool/call", params: { ...ids, callId: "c1", namespace: null, tool: "humanish_ui" } })).toMatchObject({
      rule: "duplicate_tool_call",
    });
    expect(
      m().onServerRequest({ id: 1, method: "item/tool/call", params: { threadId: "th", turnId: "other", callId: "c", tool: "humanish_ui" } }),
    ).toMatchObject({ rule: "foreign_tool_call" });
    expect(m().onServerRequest({ id: 1, method: "item/commandExecution/requestApproval", params: ids })).toEqual({
      kind: "reject-request",
      requestId: 1,
      code: -32601,
      message: "Host request is disabled",
      rule: "host_request:item/commandExecution/requestApproval",
    });
  });
  test("assistant text beyond its bound is refused", () => {
    const t = m();
    expect(t.onNotification("item/agentMessage/delta", { ...ids, delta: "x".repeat(600) })).toEqual({ kind: "continue" });
    expect(t.onNotification("item/agentMessage/delta", { ...ids, delta: "x".repeat(600) })).toEqual({ kind: "refuse", rule: "assistant_text_too_large" });
  });
  test("usage: known sums kept, a response without usage makes it unknown, never zero", () => {
    const t = m();
    expect(t.usage()).toEqual({ inputTokens: null, cachedInputTokens: null, outputTokens: null });
    t.onNotification("rawResponse/completed", { ...ids, usage: { inputTokens: 10, cachedInputTokens: 2, outputTokens: 3 } });
    t.onNotification("rawResponse/completed", { ...ids, usage: { inputTokens: 5, cachedInputTokens: 0, outputTokens: 1 } });
    expect(t.usage()).toEqual({ inputTokens: 15, cachedInputTokens: 2, outputTokens: 4 });
    t.onNotification("rawResponse/completed", { ...ids, usage: null });
    expect(t.usage()).toEqual({ inputTokens: null, cachedInputTokens: null, outputTokens: null });
  });
  test("the turn ends on its own turn/completed only", () => {
    const t = m();
    expect(t.onNotification("turn/completed", { threadId: "th", turn: { id: "old", status: "completed" } })).toEqual({ kind: "continue" });
    expect(t.onNotification("turn/completed", { threadId: "th", turn: { id: "tu", status: "failed", error: { message: "boom" } } })).toEqual({
      kind: "ended",
      status: "failed",
      errorMessage: "boom",
    });
  });
});

describe("images", () => {
  test("png/jpeg/webp base64 that round-trips only", () => {
    const png = Buffer.from([0x89, 0x50, 0x4e, 0x47, 1, 2, 3]).toString("base64");
    expect(checkImageDataUrl(`data:image/png;base64,${png}`)).toEqual({ ok: true, bytes: 7 });
    expect(checkImageDataUrl("data:image/gif;base64,AAAA").ok).toBe(false);
    expect(checkImageDataUrl("https://example.test/a.png").ok).toBe(false);
    expect(checkImageDataUrl("data:image/png;base64,AAB=").ok).toBe(false);
  });
});

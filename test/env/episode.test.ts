/**
 * Full episodes over WebSocket and MCP sessions on the real Docker engine: setup, commands (files
 * persist, `cd` does not), final answer, reward. Also the wire surface: health, schema,
 * list_tools and validation over the stateless HTTP routes, and WebSocket error codes.
 */
import { afterAll, afterEach, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";

setDefaultTimeout(120_000);

import { waitUntil } from "../support/wait.ts";
import { get, inspectStatus, post, startTestServer, type TestServer, terminal, WsClient } from "./support.ts";

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer({ maxConcurrent: 2, secrets: ["sekret-value-1234"] });
});
const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});
afterAll(async () => {
  await t?.cleanup();
});

const SETUP = ["mkdir -p /home/user/work && echo seeded > /home/user/work/seed.txt"];
const VERIFY = ["grep -q hello /home/user/work/out.txt", "test -f /home/user/work/seed.txt", "test -f /home/user/nope"];

describe("HTTP", () => {
  test("health and schema", async () => {
    expect((await get(t.server.url, "/health")).body).toEqual({ status: "healthy" });
    const schema = (await get(t.server.url, "/schema")).body;
    expect(Object.keys(schema).sort()).toEqual(["action", "observation", "state"]);
    expect(JSON.stringify(schema.action)).toContain("call_tool");
    expect(JSON.stringify(schema.state)).toContain("reward_override_ignored");
  });

  test("list_tools needs no reset and lists only `terminal`", async () => {
    const r = await post(t.server.url, "/step", { action: { type: "list_tools" } });
    expect(r.status).toBe(200);
    const tools = r.body.observation.tools;
    expect(tools.map((x: any) => x.name)).toEqual(["terminal"]);
    expect(tools[0].description).toContain("cd");
    expect(tools[0].input_schema.properties).toHaveProperty("command");
    expect(tools[0].input_schema.properties).toHaveProperty("final_answer");
  });

  test("a full episode on a WebSocket session: setup, file persists, cd does not, final answer, reward", async () => {
    const ws = await WsClient.connect(t.server.url);
    cleanups.push(() => ws.close());
    const reset = { body: await ws.reset({ episode_id: "http-ep-1", setup: SETUP, verify: VERIFY }) };
    expect(reset.body.done).toBe(false);
    expect(reset.body.reward).toBeNull();
    const sandboxId = reset.body.metadata.sandbox_id;
    expect(sandboxId).toMatch(/^[0-9a-f]{64}$/);
    expect(reset.body.metadata.setup).toHaveLength(1);
    expect(await inspectStatus(sandboxId)).toBe(200);

    const s1 = { body: await ws.step(terminal({ command: "cd /home/user/work && echo hello > out.txt && pwd" })) };
    expect(s1.body.observation.result).toMatchObject({ exit_code: 0, stdout: "/home/user/work\n", timed_out: false });
    const s2 = { body: await ws.step(terminal({ command: "pwd; cat work/out.txt work/seed.txt" })) };
    expect(s2.body.observation.result.stdout).toBe("/home/user\nhello\nseeded\n");
    const s3 = { body: await ws.step(terminal({ command: "export FOO=1; echo err >&2; exit 3" })) };
    expect(s3.body.observation.result).toMatchObject({ exit_code: 3, stderr: "err\n" });
    expect(s3.body.observation.error).toBeUndefined();
    const s4 = { body: await ws.step(terminal({ command: 'echo "[$FOO]"; echo sekret-value-1234' })) };
    expect(s4.body.observation.result.stdout).toBe("[]\nsekret-value-1234\n");

    const state1 = await ws.state();
    expect(state1).toMatchObject({ episode_id: "http-ep-1", step_count: 4, sandbox_id: sandboxId, done: false, reward: null, reward_override_ignored: null });

    const fin = { body: await ws.step(terminal({ final_answer: "wrote hello" })) };
    expect(fin.body.done).toBe(true);
    expect(fin.body.reward).toBeCloseTo(2 / 3, 10);
    expect(fin.body.observation.result).toMatchObject({ passed: 2, total: 3, reward_source: "pass_rate" });
    // Verify output is never shown to the agent.
    expect(JSON.stringify(fin.body)).not.toContain("nope");
    expect(fin.body.metadata.sandbox_release).toMatchObject({ id: sandboxId, outcome: "released" });
    expect(await inspectStatus(sandboxId)).toBe(404);

    const state2 = await ws.state();
    expect(state2).toMatchObject({ episode_id: "http-ep-1", step_count: 5, done: true, verify_passed: 2, verify_total: 3 });
    const after = { body: await ws.step(terminal({ command: "ls" })) };
    expect(after.body.observation.error.error_type).toBe("execution_error");

    // Every command and its output went through redaction before logging.
    const logText = t.logs.join("\n");
    expect(logText).toContain("echo hello > out.txt");
    expect(logText).not.toContain("sekret-value-1234");
    expect(logText).toContain("[REDACTED_SECRET]");
  });

  test("setup_scripts / verify_scripts aliases, and reset replaces the previous sandbox by exact id", async () => {
    const ws = await WsClient.connect(t.server.url);
    cleanups.push(() => ws.close());
    const r1 = { body: await ws.reset({ setup_scripts: ["touch /home/user/a"], verify_scripts: ["test -f /home/user/a"] }) };
    const first = r1.body.metadata.sandbox_id;
    const r2 = { body: await ws.reset({ setup_scripts: [], verify_scripts: ["test -f /home/user/a"] }) };
    expect(r2.body.metadata.previous_release).toMatchObject({ id: first, outcome: "released" });
    expect(await inspectStatus(first)).toBe(404);
    expect(r2.body.metadata.sandbox_id).not.toBe(first);
    const fin = { body: await ws.step(terminal({ final_answer: "x" })) };
    expect(fin.body.reward).toBe(0);
  });

  test("validation: unknown action fields, both list spellings, bad args, unknown tool", async () => {
    const base = t.server.url;
    expect((await post(base, "/step", { action: { type: "list_tools", extra: 1 } })).status).toBe(422);
    expect((await post(base, "/step", { action: { type: "nope" } })).status).toBe(422);
    const both = await post(base, "/reset", { setup: [], setup_scripts: [] });
    expect(both.status).toBe(422);
    expect(both.body.detail).toContain("setup_scripts");
    // reset/step requests allow environment-specific extra fields.
    await post(base, "/reset", { verify: ["true"], some_env_field: { x: 1 } });
    const unknownTool = await post(base, "/step", { action: { type: "call_tool", tool_name: "bash", arguments: {} } });
    expect(unknownTool.body.observation.error.error_type).toBe("tool_not_found");
    const neither = await post(base, "/step", terminal({}));
    expect(neither.body.observation.error.error_type).toBe("invalid_args");
    const extraArg = await post(base, "/step", { action: { type: "call_tool", tool_name: "terminal", arguments: { command: "ls", cwd: "/" } } });
    expect(extraArg.body.observation.error.error_type).toBe("invalid_args");
    const badJson = await fetch(`${base}/step`, { method: "POST", body: "{nope" });
    expect(badJson.status).toBe(400);
    await post(base, "/step", terminal({ final_answer: "x" }));
  });
});

describe("WebSocket", () => {
  test("a full episode on its own session, and typed error codes", async () => {
    const ws = await WsClient.connect(t.server.url);
    try {
      expect(await ws.request("not json")).toEqual({ type: "error", data: { code: "INVALID_JSON", message: expect.any(String) } });
      expect((await ws.request({ type: "dance" })).data.code).toBe("UNKNOWN_TYPE");
      expect((await ws.request({ type: "reset", data: { setup: 5 } })).data.code).toBe("VALIDATION_ERROR");
      expect((await ws.request({ type: "reset", data: { seed: 1.5 } })).data.code).toBe("VALIDATION_ERROR");
      expect((await ws.request({ type: "step", data: { type: "call_tool" } })).data.code).toBe("VALIDATION_ERROR");

      const reset = await ws.request({ type: "reset", data: { setup: SETUP, verify: VERIFY } });
      expect(reset.type).toBe("observation");
      expect(reset.data.done).toBe(false);
      const sandboxId = reset.data.metadata.sandbox_id;
      const step = (command: string) => ws.request({ type: "step", data: { type: "call_tool", tool_name: "terminal", arguments: { command } } });
      expect((await step("cd work && echo hello > out.txt && pwd")).data.observation.result.stdout).toBe("/home/user/work\n");
      expect((await step("pwd && cat work/out.txt")).data.observation.result.stdout).toBe("/home/user\nhello\n");
      const state = await ws.request({ type: "state" });
      expect(state).toMatchObject({ type: "state", data: { step_count: 2, sandbox_id: sandboxId, done: false } });
      // The stateless HTTP state is a fresh environment's, never this session's.
      expect((await get(t.server.url, "/state")).body.sandbox_id).toBeNull();
      const fin = await ws.request({ type: "step", data: { type: "call_tool", tool_name: "terminal", arguments: { final_answer: "done" } } });
      expect(fin.data.done).toBe(true);
      expect(fin.data.reward).toBeCloseTo(2 / 3, 10);
      expect(await inspectStatus(sandboxId)).toBe(404);
    } finally {
      ws.close();
    }
  });

  test("close releases the session's sandbox", async () => {
    const ws = await WsClient.connect(t.server.url);
    const reset = await ws.request({ type: "reset", data: {} });
    const id = reset.data.metadata.sandbox_id;
    expect(await inspectStatus(id)).toBe(200);
    ws.ws.send(JSON.stringify({ type: "close" }));
    await waitUntil(() => ws.closed, "the server to close the WebSocket");
    await waitUntil(async () => (await inspectStatus(id)) === 404, "the session's sandbox to be released");
  });
});

describe("MCP", () => {
  async function rpc(method: string, params?: unknown, id: number | null = 1) {
    const body: Record<string, unknown> = { jsonrpc: "2.0", method };
    if (params !== undefined) body.params = params;
    if (id !== null) body.id = id;
    return post(t.server.url, "/mcp", body);
  }

  test("initialize, tools/list, and an episode through tools/call on an MCP session", async () => {
    const init = await rpc("initialize", { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "0" } });
    expect(init.body.result.capabilities.tools).toBeDefined();
    expect((await rpc("notifications/initialized", undefined, null)).status).toBe(202);
    const list = await rpc("tools/list", {}, 2);
    expect(list.body.result.tools.map((x: any) => x.name)).toEqual(["terminal"]);
    expect(list.body.result.tools[0].inputSchema.type).toBe("object");

    const created = await rpc("openenv/session/create", { setup: SETUP, verify: VERIFY }, 3);
    const session_id = created.body.result.session_id;
    const call = (args: Record<string, string>, id: number) => rpc("tools/call", { name: "terminal", arguments: args, session_id }, id);
    const c1 = await call({ command: "cd work && echo hello > out.txt && pwd" }, 3);
    expect(c1.body.result.isError).toBe(false);
    expect(c1.body.result.structuredContent.result.stdout).toBe("/home/user/work\n");
    expect(c1.body.result.content[0].text).toBe("/home/user/work\n[exit code 0]");
    const c2 = await call({ command: "pwd; cat work/out.txt" }, 4);
    expect(c2.body.result.structuredContent.result.stdout).toBe("/home/user\nhello\n");
    const fin = await call({ final_answer: "done" }, 5);
    expect(fin.body.result.structuredContent.done).toBe(true);
    expect(fin.body.result.structuredContent.reward).toBeCloseTo(2 / 3, 10);
    expect(fin.body.result.data).toContain("Verification: 2/3 passed");
    expect((await rpc("openenv/session/close", { session_id }, 6)).body.result).toEqual({ session_id, closed: true });
  });

  test("JSON-RPC errors", async () => {
    expect((await rpc("nope/method", {}, 9)).body.error.code).toBe(-32601);
    expect((await rpc("tools/call", { name: "other", arguments: {} }, 10)).body.error.code).toBe(-32602);
    const bad = await fetch(`${t.server.url}/mcp`, { method: "POST", body: "{" });
    expect(((await bad.json()) as any).error.code).toBe(-32700);
    const ws = await WsClient.connect(t.server.url);
    try {
      const r = await ws.request({ type: "mcp", data: { jsonrpc: "2.0", id: 7, method: "tools/list" } });
      expect(r).toMatchObject({ type: "mcp", data: { jsonrpc: "2.0", id: 7, result: { tools: [{ name: "terminal" }] } } });
    } finally {
      ws.close();
    }
  });
});

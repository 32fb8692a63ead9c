/**
 * OpenEnv clients, unmodified, in every mode — driven by our own client that sends exactly what
 * the Python client sends (openenv-client.ts) — on the real Docker engine: stateless HTTP,
 * WebSocket sessions, MCP sessions over `POST /mcp`; close-then-reset never hitting capacity;
 * and an unconfirmed release keeping its slot held until a later release confirms it.
 */
import { afterEach, describe, expect, setDefaultTimeout, test } from "bun:test";
import { createDockerClient, runExec } from "../../src/docker/index.ts";
import type { EnvBackend } from "../../src/env/environment.ts";
import { waitUntil } from "../support/wait.ts";
import { OpenEnvMcpClient, OpenEnvWsClient, openEnvHttp } from "./openenv-client.ts";
import { inspectStatus, startTestServer, type TestServer } from "./support.ts";

/** Command lines of the processes running in container `id`, one a line. */
async function processesIn(id: string): Promise<string> {
  const r = await runExec(createDockerClient(), id, {
    Cmd: ["sh", "-c", "for d in /proc/[0-9]*; do tr '\\0' ' ' < $d/cmdline 2>/dev/null; echo; done"],
    AttachStdout: true,
    AttachStderr: true,
  });
  return new TextDecoder().decode(r.stdout);
}

setDefaultTimeout(120_000);

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});
async function server(overrides: Parameters<typeof startTestServer>[0] = {}): Promise<TestServer> {
  const t = await startTestServer(overrides);
  cleanups.push(() => t.cleanup());
  return t;
}

describe("HTTP routes are stateless, as in OpenEnv", () => {
  test("/reset runs setup in a temporary sandbox released before the answer; /step and /state see a fresh environment", async () => {
    const t = await server();
    const r = await openEnvHttp.reset(t.server.url, { setup: "echo one-string-setup", seed: -7 });
    expect(r.status).toBe(200);
    expect(r.body.done).toBe(false);
    expect(r.body.metadata.setup_results).toHaveLength(1);
    expect(r.body.metadata.setup_results[0]).toMatchObject({ command: "echo one-string-setup", output: "one-string-setup", success: true, error: null });
    expect(r.body.metadata.seed).toBe(-7);
    expect(r.body.metadata.sandbox_release).toMatchObject({ id: r.body.metadata.sandbox_id, outcome: "released" });
    expect(await inspectStatus(r.body.metadata.sandbox_id)).toBe(404);
    expect(t.server.stats().slotsInUse).toBe(0);

    const step = await openEnvHttp.step(t.server.url, { type: "call_tool", tool_name: "terminal", arguments: { command: "ls" } });
    expect(step.body.observation.error.error_type).toBe("execution_error");
    expect(step.body.observation.error.message).toContain("stateless");
    const tools = await openEnvHttp.step(t.server.url, { type: "list_tools" });
    expect(tools.body.observation.tools.map((x: any) => x.name)).toEqual(["terminal"]);
    expect(await openEnvHttp.state(t.server.url)).toMatchObject({ episode_id: null, step_count: 0, sandbox_id: null, commands: [], command_count: 0 });
    expect(await t.containers()).toEqual([]);
  });

  test("/schema documents the session model and that seed has no effect", async () => {
    const t = await server();
    const schema = (await (await fetch(`${t.server.url}/schema`)).json()) as any;
    expect(schema.state.description).toContain("stateless");
    expect(schema.state.properties.seed.description).toContain("no effect");
    for (const f of [
      "episode_id",
      "step_count",
      "last_reward",
      "setup_results",
      "verify_results",
      "commands",
      "submitted_answer",
      "verify_commands",
      "last_error",
    ]) {
      expect(schema.state.properties).toHaveProperty(f);
    }
  });
});

describe("WebSocket sessions (EnvClient)", () => {
  test("an episode: string setup, listed verify, text results with exit codes, and the full state", async () => {
    const t = await server();
    const env = await OpenEnvWsClient.connect(t.server.url);
    cleanups.push(() => env.close());
    const reset = await env.reset({
      setup: "echo seeded > /home/user/seed.txt",
      verify: ["test -f /home/user/seed.txt", "grep -q hi /home/user/out.txt", "false"],
      seed: 12345678901,
    });
    expect(reset.done).toBe(false);
    expect((await env.listTools()).map((x) => x.name)).toEqual(["terminal"]);
    expect(await env.callTool("terminal", { command: "echo hi > out.txt && cat out.txt" })).toBe("hi\n[exit code 0]");
    expect(await env.callTool("terminal", { command: "echo oops >&2; exit 3" })).toBe("oops\n[exit code 3]");
    expect(await env.callTool("terminal", { command: "true" })).toBe("(no output)\n[exit code 0]");
    await expect(env.callTool("terminal", {})).rejects.toThrow("invalid_args");
    const answer = await env.callTool("terminal", { final_answer: "wrote hi" });
    expect(answer).toBe(`Answer submitted: wrote hi\nVerification: 2/3 passed; reward=${2 / 3}`);

    const state = await env.state();
    expect(state).toMatchObject({
      episode_id: reset.metadata.episode_id,
      step_count: 5,
      seed: 12345678901,
      last_reward: 2 / 3,
      submitted_answer: "wrote hi",
      verify_commands: ["test -f /home/user/seed.txt", "grep -q hi /home/user/out.txt", "false"],
      command_count: 3,
    });
    expect(state.last_error).toContain("invalid_args");
    expect(state.setup_results).toEqual([expect.objectContaining({ command: "echo seeded > /home/user/seed.txt", success: true, output: "(no output)" })]);
    expect(state.verify_results.map((r: any) => r.success)).toEqual([true, true, false]);
    expect(state.commands.map((c: any) => c.exit_code)).toEqual([0, 3, 0]);
    expect(state.commands[1]).toMatchObject({ command: "echo oops >&2; exit 3", output: "oops", success: false, error: null });
  });

  test("state keeps the last few commands and counts them all; None-valued reset fields and action metadata are accepted", async () => {
    const t = await server();
    const env = await OpenEnvWsClient.connect(t.server.url);
    cleanups.push(() => env.close());
    // What a client that serializes every optional field sends.
    const reset = await env.reset({ seed: null, episode_id: null });
    expect(reset.done).toBe(false);
    expect(reset.metadata.episode_id).toMatch(/^[0-9a-f-]{36}$/);
    expect((await env.step({ type: "list_tools", metadata: {} })).observation.tools).toHaveLength(1);
    await env.step({ type: "call_tool", tool_name: "terminal", arguments: { command: "true" }, metadata: { trace: "x" } });
    await env.reset({});
    for (let i = 0; i < 12; i++) await env.step({ type: "call_tool", tool_name: "terminal", arguments: { command: `echo ${i}` } });
    const state = await env.state();
    expect(state.command_count).toBe(12);
    expect(state.commands).toHaveLength(10);
    expect(state.commands.at(-1).output).toBe("11");
    expect(state.commands[0].output).toBe("2");
  });

  test("close releases the sandbox before the slot is offered again: an immediate reset never gets CAPACITY_REACHED", async () => {
    const t = await server({ maxConcurrent: 1 });
    for (let i = 0; i < 3; i++) {
      const env = await OpenEnvWsClient.connect(t.server.url);
      const r = await env.reset({ setup: ["echo round"] });
      expect(r.done).toBe(false);
      await env.close();
      // The very next session, opened at once: it waits for the release in flight rather than being refused.
      const next = await OpenEnvWsClient.connect(t.server.url);
      const r2 = await next.reset({});
      expect(r2.done).toBe(false);
      expect(await inspectStatus(r.metadata.sandbox_id)).toBe(404);
      await next.close();
    }
    // The last close's release runs after the socket closed; the slot frees when it is confirmed.
    await waitUntil(() => t.server.stats().slotsInUse === 0, "the last release to be confirmed and its slot freed");
    expect(await t.containers()).toEqual([]);
  });

  test("a session beyond the limit is refused with CAPACITY_REACHED and the counts; a busy session's episode end does not free its slot", async () => {
    const t = await server({ maxConcurrent: 1 });
    const a = await OpenEnvWsClient.connect(t.server.url);
    cleanups.push(() => a.close());
    await a.reset({});
    await a.callTool("terminal", { final_answer: "x" });
    const b = await OpenEnvWsClient.connect(t.server.url);
    cleanups.push(() => b.close());
    const refused = await b.reset({}).catch((e) => e);
    expect(refused.code).toBe("CAPACITY_REACHED");
    expect(refused.data).toMatchObject({ active_sessions: 1, max_sessions: 1 });
    expect(refused.message).toContain("1 of 1");
  });
});

describe("MCP sessions over POST /mcp (MCPToolClient production mode)", () => {
  test("create → tools on the session's own environment → close; sessions are isolated", async () => {
    const t = await server({ maxConcurrent: 3 });
    const a = new OpenEnvMcpClient(t.server.url);
    const b = new OpenEnvMcpClient(t.server.url);
    cleanups.push(
      () => a.close(),
      () => b.close(),
    );
    expect((await a.listTools()).map((x) => x.name)).toEqual(["terminal"]);
    expect(a.sessionId).toMatch(/^[0-9a-f-]{36}$/);
    expect(await a.callTool("terminal", { command: "echo from-a > note.txt && cat note.txt" })).toBe("from-a\n[exit code 0]");
    expect(await a.callTool("terminal", { command: "cat note.txt" })).toBe("from-a\n[exit code 0]");
    expect(await b.callTool("terminal", { command: "cat note.txt" })).toContain("No such file");
    expect(t.server.stats().mcpSessions).toBe(2);

    const raw = await a.callToolRaw("terminal", { command: "sleep 0; echo out; echo err >&2; exit 4" });
    expect(raw.result.content).toEqual([{ type: "text", text: "out\nerr\n[exit code 4]" }]);
    expect(raw.result.data).toBe("out\nerr\n[exit code 4]");
    expect(raw.result.isError).toBe(false);
    expect(raw.result.structuredContent.result).toMatchObject({ exit_code: 4, stdout: "out\n", stderr: "err\n" });

    const sid = a.sessionId!;
    const closed = await a.request("openenv/session/close", { session_id: sid });
    expect(closed.result).toEqual({ session_id: sid, closed: true });
    a.sessionId = null;
    const gone = await a.request("tools/call", { name: "terminal", arguments: { command: "ls" }, session_id: sid });
    expect(gone.error.code).toBe(-32602);
    expect(gone.error.message).toContain(sid);
    expect(t.server.stats().mcpSessions).toBe(1);
  });

  test("a timeout reads as text a model understands; session/create can carry the task's setup and verify", async () => {
    const t = await server({ commandTimeoutMs: 1000 });
    const c = new OpenEnvMcpClient(t.server.url);
    cleanups.push(() => c.close());
    const created = await c.request("openenv/session/create", { setup: ["echo task > /home/user/task.txt"], verify: "test -f /home/user/done.txt" });
    c.sessionId = created.result.session_id;
    const slow = await c.callToolRaw("terminal", { command: "echo started; sleep 20" });
    expect(slow.result.isError).toBe(true);
    expect(slow.result.content[0].text).toContain("started");
    expect(slow.result.content[0].text).toContain("[timed out: the command ran past its 1000 ms deadline and was killed]");
    expect(await c.callTool("terminal", { command: "cat task.txt && touch done.txt" })).toBe("task\n[exit code 0]");
    expect(await c.callTool("terminal", { final_answer: "done" })).toBe("Answer submitted: done\nVerification: 1/1 passed; reward=1");
    const after = await c.callToolRaw("terminal", { command: "ls" });
    expect(after.result.isError).toBe(true);
    expect(after.result.data).toContain("episode is over; close this session (openenv/session/close) and create a new one");
  });

  test("a call without a session id gets a temporary environment, released after the call", async () => {
    const t = await server();
    const c = new OpenEnvMcpClient(t.server.url);
    const first = await c.request("tools/call", { name: "terminal", arguments: { command: "echo temp > t.txt; cat t.txt" } });
    expect(first.result.data).toBe("temp\n[exit code 0]");
    const second = await c.request("tools/call", { name: "terminal", arguments: { command: "cat t.txt" } });
    expect(second.result.data).toContain("No such file");
    expect(t.server.stats().slotsInUse).toBe(0);
    expect(await t.containers()).toEqual([]);
    expect((await c.request("tools/list")).result.tools.map((x: any) => x.name)).toEqual(["terminal"]);
  });

  test("capacity: create answers a server error with active/max; a close frees the slot for an immediate create", async () => {
    const t = await server({ maxConcurrent: 1 });
    const a = new OpenEnvMcpClient(t.server.url);
    await a.callTool("terminal", { command: "true" });
    const b = new OpenEnvMcpClient(t.server.url);
    const refused = await b.ensureSession().catch((e) => e);
    expect(refused.message).toContain("Failed to create MCP session");
    expect(refused.code).toBe(-32000);
    expect(refused.data).toMatchObject({ active_sessions: 1, max_sessions: 1 });
    await a.close();
    expect(await b.callTool("terminal", { command: "echo in" })).toBe("in\n[exit code 0]");
    await b.close();
    expect(t.server.stats().slotsInUse).toBe(0);
  });

  test("protocol errors: close without an id, params not an object, unknown session on tools/list; a WebSocket's own session", async () => {
    const t = await server();
    const c = new OpenEnvMcpClient(t.server.url);
    expect((await c.request("openenv/session/close", {})).error.code).toBe(-32602);
    const bad = await (
      await fetch(`${t.server.url}/mcp`, { method: "POST", body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list", params: [1] }) })
    ).json();
    expect((bad as any).error.code).toBe(-32602);
    expect((await c.request("tools/list", { session_id: "nope" })).error.code).toBe(-32602);
    expect((await c.request("openenv/session/close", { session_id: "nope" })).error.code).toBe(-32602);
    const ws = await OpenEnvWsClient.connect(t.server.url);
    cleanups.push(() => ws.close());
    const raw = ws as unknown as { sendAndReceive(m: unknown): Promise<any> };
    const created = await raw.sendAndReceive({ type: "mcp", data: { jsonrpc: "2.0", id: 1, method: "openenv/session/create", params: {} } });
    const own = created.data.result.session_id;
    expect(own).toMatch(/^ws-/);
    const close = await raw.sendAndReceive({ type: "mcp", data: { jsonrpc: "2.0", id: 2, method: "openenv/session/close", params: { session_id: own } } });
    expect(close.data.error.code).toBe(-32600);
  });
});

/** Wraps the real backend: each sandbox's first release answers `unconfirmed` without removing it. */
function firstReleaseUnconfirmed(real: EnvBackend): EnvBackend {
  return {
    name: real.name,
    async create(opts) {
      const sandbox = await real.create(opts);
      let tries = 0;
      const release = sandbox.release.bind(sandbox);
      return Object.assign(Object.create(Object.getPrototypeOf(sandbox)), sandbox, {
        release: async () => {
          tries += 1;
          if (tries === 1)
            return {
              id: sandbox.id,
              provider: sandbox.provider,
              outcome: "unconfirmed" as const,
              reason: "injected: the engine did not answer",
              at: new Date().toISOString(),
            };
          return release();
        },
      });
    },
  };
}

describe("an unconfirmed release keeps its slot held", () => {
  test("the reset reports it, the capacity stays held until a later release confirms it, then the slot is offered again", async () => {
    const t = await server({ maxConcurrent: 1, reaperIntervalMs: 60_000, wrapBackend: firstReleaseUnconfirmed });
    const env = await OpenEnvWsClient.connect(t.server.url);
    cleanups.push(() => env.close());
    const first = await env.reset({});
    const firstId = first.metadata.sandbox_id;
    const second = await env.reset({});
    expect(second.done).toBe(true);
    expect(second.metadata.previous_release).toMatchObject({ id: firstId, outcome: "unconfirmed" });
    expect(second.metadata.previous_release_note).toContain("keeps its capacity slot held");
    expect(second.metadata.error.code).toBe("HUMANISH_ENV_CAPACITY");
    expect(await inspectStatus(firstId)).toBe(200);
    expect(t.server.stats()).toMatchObject({ slotsInUse: 1, ownedSandboxIds: [firstId] });
    // Nobody else gets that capacity either.
    const other = new OpenEnvMcpClient(t.server.url);
    expect((await other.ensureSession().catch((e) => e)).code).toBe(-32000);
    // A later release confirms it (what each reaper tick does), and the slot is offered again.
    const retried = await t.server.retryReleases();
    expect(retried).toEqual([expect.objectContaining({ id: firstId, outcome: "released" })]);
    expect(await inspectStatus(firstId)).toBe(404);
    expect(t.server.stats()).toMatchObject({ slotsInUse: 0, ownedSandboxIds: [] });
    const third = await env.reset({});
    expect(third.done).toBe(false);
    expect(t.server.stats().slotsInUse).toBe(1);
  });

  test("with room to spare, the reset goes on in a new sandbox and still reports the unconfirmed one", async () => {
    const t = await server({ maxConcurrent: 2, reaperIntervalMs: 60_000, wrapBackend: firstReleaseUnconfirmed });
    const env = await OpenEnvWsClient.connect(t.server.url);
    cleanups.push(() => env.close());
    const first = await env.reset({});
    const second = await env.reset({});
    expect(second.done).toBe(false);
    expect(second.metadata.previous_release).toMatchObject({ id: first.metadata.sandbox_id, outcome: "unconfirmed" });
    expect(t.server.stats().slotsInUse).toBe(2);
    await t.server.retryReleases();
    expect(t.server.stats().slotsInUse).toBe(1);
  });
});

describe("shutdown", () => {
  test("stop() releases a session's sandbox while a long command is still running, instead of waiting for it", async () => {
    const t = await server();
    const mcp = new OpenEnvMcpClient(t.server.url);
    await mcp.ensureSession();
    await mcp.callTool("terminal", { command: "echo warm" });
    const [id] = await t.containers();
    const call = mcp.callToolRaw("terminal", { command: "sleep 60; echo slept" }).then(
      (r) => r?.result?.structuredContent?.result as { stdout?: string; duration_ms?: number } | undefined,
      () => undefined,
    );
    // The command runs inside the sandbox before the server is told to stop.
    await waitUntil(async () => (await processesIn(id!)).includes("sleep 60"), "the long command to run inside the sandbox");
    const summary = await t.server.stop();
    expect(summary.released).toBeGreaterThanOrEqual(1);
    expect(await inspectStatus(id!)).toBe(404);
    // The command was cut by the release: had stop() waited for it, it would have printed this.
    const cut = await call;
    expect(cut?.stdout ?? "").not.toContain("slept");
    expect(cut?.duration_ms ?? 0).toBeLessThan(60_000);
  });
});

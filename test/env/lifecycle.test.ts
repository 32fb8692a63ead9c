/**
 * Lifecycle on the real Docker engine: setup failure, per-command timeout, capacity, the idle
 * reaper on a half-open WebSocket, sandbox expiry, and shutdown releasing everything.
 */
import { afterEach, describe, expect, setDefaultTimeout, test } from "bun:test";

setDefaultTimeout(120_000);

import { waitUntil } from "../support/wait.ts";
import { HalfOpenWs, inspectStatus, post, startTestServer, type TestServer, terminal, WsClient } from "./support.ts";

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});
async function server(overrides: Parameters<typeof startTestServer>[0] = {}): Promise<TestServer> {
  const t = await startTestServer(overrides);
  cleanups.push(() => t.cleanup());
  return t;
}
/** A WebSocket session answering with HTTP-like `{status, body}` (episodes need a session). */
async function session(url: string) {
  const ws = await WsClient.connect(url);
  cleanups.push(() => ws.close());
  return {
    reset: async (data: Record<string, unknown>) => ({ status: 200, body: await ws.reset(data) }),
    step: async (body: Record<string, unknown>) => ({ status: 200, body: await ws.step(body) }),
    state: async () => ({ status: 200, body: await ws.state() }),
  };
}

describe("episode lifecycle (docker)", () => {
  test("a failing setup ends the reset with done = true, the captured results, and releases the sandbox (stateless HTTP)", async () => {
    const t = await server();
    const r = await post(t.server.url, "/reset", { setup: ["echo one", "echo broken >&2; exit 7", "echo never"], verify: ["true"] });
    expect(r.status).toBe(200);
    expect(r.body.done).toBe(true);
    expect(r.body.reward).toBeNull();
    const setup = r.body.metadata.setup;
    expect(setup).toHaveLength(2);
    expect(setup[0]).toMatchObject({ stdout: "one\n", exit_code: 0 });
    expect(setup[1]).toMatchObject({ stderr: "broken\n", exit_code: 7 });
    expect(r.body.metadata.setup_failed).toMatchObject({ index: 1, reason: "exited 7" });
    expect(r.body.metadata.sandbox_release.outcome).toBe("released");
    expect(await inspectStatus(r.body.metadata.sandbox_id)).toBe(404);
    const step = await post(t.server.url, "/step", terminal({ command: "ls" }));
    expect(step.body.observation.error.error_type).toBe("execution_error");
    expect(t.server.stats().slotsInUse).toBe(0);
  });

  test("per-command timeout kills the command, reports it, and the episode goes on", async () => {
    // Time enough for a loaded machine to start the command and print; the sleep outlasts it, and
    // a kill that failed would show "never" and no timeout.
    const t = await server({ commandTimeoutMs: 5_000 });
    const s = await session(t.server.url);
    await s.reset({ verify: ["test -f /home/user/after"] });
    const slow = await s.step(terminal({ command: "echo started; sleep 30; echo never" }));
    expect(slow.body.done).toBe(false);
    expect(slow.body.observation.error.error_type).toBe("timeout");
    expect(slow.body.observation.result).toMatchObject({ timed_out: true });
    expect(slow.body.observation.result.stdout).toBe("started\n");
    // The step's timeout_s overrides the default deadline.
    const quick = await s.step(terminal({ command: "sleep 5" }, { timeout_s: 0.5 }));
    expect(quick.body.observation.result.timed_out).toBe(true);
    const ok = await s.step(terminal({ command: "touch after && echo fine" }));
    expect(ok.body.observation.result).toMatchObject({ exit_code: 0, stdout: "fine\n" });
    // No sleep survives the kill.
    const ps = await s.step(
      terminal({
        command:
          "ls /proc | grep -E '^[0-9]+$' | while read p; do cat /proc/$p/cmdline 2>/dev/null | tr '\\0' ' '; echo; done | grep -cE '^sleep (30|5) ' || true",
      }),
    );
    expect(ps.body.observation.result.stdout.trim()).toBe("0");
    const fin = await s.step(terminal({ final_answer: "x" }));
    expect(fin.body.reward).toBe(1);
  });

  test("capacity counts sessions: one beyond max-concurrent gets CAPACITY_REACHED; a close lets the next one in", async () => {
    const t = await server({ maxConcurrent: 1 });
    const a = await WsClient.connect(t.server.url);
    const b = await WsClient.connect(t.server.url);
    cleanups.push(() => (a.close(), b.close()));
    const ra = await a.request({ type: "reset", data: {} });
    expect(ra.data.done).toBe(false);
    const rb = await b.request({ type: "reset", data: {} });
    expect(rb).toMatchObject({ type: "error", data: { code: "CAPACITY_REACHED", active_sessions: 1, max_sessions: 1 } });
    expect(rb.data.message).toContain("1 of 1");
    const http = await post(t.server.url, "/reset", {});
    expect(http.status).toBe(503);
    expect(http.body.code).toBe("CAPACITY_REACHED");
    expect(t.server.stats().slotsInUse).toBe(1);
    // Ending A's episode keeps A's session (and its slot); closing A frees it.
    await a.request({ type: "step", data: { type: "call_tool", tool_name: "terminal", arguments: { final_answer: "x" } } });
    expect(t.server.stats().slotsInUse).toBe(1);
    a.ws.send(JSON.stringify({ type: "close" }));
    const c = await WsClient.connect(t.server.url);
    cleanups.push(() => c.close());
    const rc = await c.request({ type: "reset", data: {} });
    expect(rc.type).toBe("observation");
    expect(rc.data.done).toBe(false);
  });

  test("capacity is reserved before creation: simultaneous resets at the limit admit exactly one", async () => {
    const t = await server({ maxConcurrent: 1 });
    const clients = await Promise.all([WsClient.connect(t.server.url), WsClient.connect(t.server.url), WsClient.connect(t.server.url)]);
    cleanups.push(() => clients.forEach((c) => c.close()));
    const replies = await Promise.all(clients.map((c) => c.request({ type: "reset", data: {} })));
    expect(replies.filter((r) => r.type === "observation" && r.data.done === false)).toHaveLength(1);
    expect(replies.filter((r) => r.type === "error" && r.data.code === "CAPACITY_REACHED")).toHaveLength(2);
    expect(await t.containers()).toHaveLength(1);
  });

  test("a sandbox that cannot be created ends the reset with done = true and frees the slot", async () => {
    const { createDockerClient } = await import("../../src/docker/index.ts");
    const { createDockerSandboxProvider } = await import("../../src/sandbox/index.ts");
    const { envBackendFromProvider } = await import("../../src/env/backends.ts");
    const { startEnvServer } = await import("../../src/env/server.ts");
    const missing = await startEnvServer({
      backend: envBackendFromProvider(createDockerSandboxProvider({ docker: createDockerClient() }), { image: "humanish-no-such-image:never" }),
      port: 0,
      maxConcurrent: 1,
      log: () => undefined,
    });
    cleanups.push(async () => void (await missing.stop()));
    const r = await post(missing.url, "/reset", {});
    expect(r.body.done).toBe(true);
    expect(r.body.metadata.error.code).toBe("HUMANISH_SANDBOX_IMAGE_MISSING");
    expect(missing.stats().slotsInUse).toBe(0);
    const s = await session(missing.url);
    expect((await s.reset({})).body.done).toBe(true);
    expect((await s.state()).body.infrastructure_failure.code).toBe("HUMANISH_SANDBOX_IMAGE_MISSING");
  });

  test("the reaper frees a half-open WebSocket session's slot and removes its container", async () => {
    const t = await server({ maxConcurrent: 1, sessionTimeoutMs: 1500, reaperIntervalMs: 250 });
    const raw = await HalfOpenWs.open(t.server.url);
    cleanups.push(() => raw.destroy());
    raw.sendText(JSON.stringify({ type: "reset", data: { setup: ["echo hi"] } }));
    const reset = JSON.parse(await raw.readText());
    expect(reset.type).toBe("observation");
    const id = reset.data.metadata.sandbox_id;
    expect(await inspectStatus(id)).toBe(200);
    expect(t.server.stats().slotsInUse).toBe(1);
    // The client now goes silent: no close frame, no FIN, no pong.
    const deadline = Date.now() + 20_000;
    while (Date.now() < deadline && (t.server.stats().slotsInUse !== 0 || (await inspectStatus(id)) !== 404)) await Bun.sleep(200);
    expect(t.server.stats().slotsInUse).toBe(0);
    expect(await inspectStatus(id)).toBe(404);
    expect(await t.containers()).toEqual([]);
    // The freed slot is usable.
    const c = await WsClient.connect(t.server.url);
    cleanups.push(() => c.close());
    expect((await c.request({ type: "reset", data: {} })).data.done).toBe(false);
    expect(t.logs.some((l) => l.includes("reaper: idle"))).toBe(true);
  });

  test("a sandbox past its lifetime is an infrastructure failure, never a score", async () => {
    const t = await server({ sandboxTimeoutMs: 2000 });
    const s = await session(t.server.url);
    const r = await s.reset({ verify: ["true"] });
    const id = r.body.metadata.sandbox_id;
    await Bun.sleep(2600);
    const fin = await s.step(terminal({ final_answer: "late" }));
    expect(fin.body.done).toBe(true);
    expect(fin.body.reward).toBeNull();
    expect(fin.body.observation.error.error_type).toBe("execution_error");
    const state = (await s.state()).body;
    expect(state.infrastructure_failure.code).toBe("HUMANISH_ENV_SANDBOX_EXPIRED");
    expect(state.reward).toBeNull();
    expect(await inspectStatus(id)).toBe(404);
  });

  test("shutdown releases every owned sandbox by exact id; no container with our label remains", async () => {
    const t = await server({ maxConcurrent: 3 });
    const ws1 = await WsClient.connect(t.server.url);
    const ws2 = await WsClient.connect(t.server.url);
    const mcp = await post(t.server.url, "/mcp", { jsonrpc: "2.0", id: 1, method: "openenv/session/create", params: {} });
    const session_id = mcp.body.result.session_id;
    const call = await post(t.server.url, "/mcp", {
      jsonrpc: "2.0",
      id: 2,
      method: "tools/call",
      params: { name: "terminal", arguments: { command: "true" }, session_id },
    });
    expect(call.body.result.isError).toBe(false);
    const wsIds = [
      (await ws1.request({ type: "reset", data: {} })).data.metadata.sandbox_id,
      (await ws2.request({ type: "reset", data: {} })).data.metadata.sandbox_id,
    ];
    // Two WebSocket sessions and one MCP session, each with its own sandbox.
    const ids = await t.containers();
    expect(ids).toHaveLength(3);
    expect(ids).toEqual(expect.arrayContaining(wsIds));
    const summary = await t.server.stop();
    expect(summary.released).toBe(3);
    expect(summary.unconfirmed).toBe(0);
    expect(summary.proofs.map((p) => p.id).sort()).toEqual([...ids].sort());
    for (const id of ids) expect(await inspectStatus(id)).toBe(404);
    expect(await t.containers()).toEqual([]);
    await waitUntil(() => ws1.closed && ws2.closed, "both WebSocket clients to see the server close");
  });
});

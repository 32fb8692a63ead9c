/**
 * The E2B backend (src/sandbox/e2b.ts) with the REAL `e2b` SDK pointed at the local
 * E2B-compatible server (test/support/e2b-server), where each sandbox is a real Docker container.
 * Covers: create (timeout, metadata), exec (output, exit codes, per-command deadline kill), files,
 * release confirmation rules under injected kill faults, the kill deadline, a full env episode on
 * the e2b backend, and a missing key.
 */
import { afterAll, afterEach, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { randomUUID } from "node:crypto";
import { COMMANDS } from "../../src/cli/spec.ts";
import { envBackendFromProvider } from "../../src/env/backends.ts";
import { startEnvServer } from "../../src/env/server.ts";
import type { HumanishError } from "../../src/errors.ts";
import { createE2BSandboxProvider, releaseE2BSandbox, shellQuote } from "../../src/sandbox/e2b.ts";
import { type E2BServer, startE2BServer } from "../support/e2b-server/index.ts";
import { containersWithRunLabel, TEST_RUN_LABEL, terminal, testImage, WsClient } from "./support.ts";

setDefaultTimeout(120_000);
let e2b: E2BServer;
const runLabel = `e2b-${randomUUID()}`;
beforeAll(async () => {
  e2b = await startE2BServer({ templates: { base: await testImage() }, labels: { [TEST_RUN_LABEL]: runLabel } });
});
afterEach(() => {
  e2b.faults.reset();
});
afterAll(async () => {
  await e2b?.close();
  expect(await containersWithRunLabel(runLabel)).toEqual([]);
});

const provider = (extra: Partial<Parameters<typeof createE2BSandboxProvider>[0]> = {}) =>
  createE2BSandboxProvider({ apiKey: e2b.apiKey, sandboxTimeoutMs: 120_000, connection: { apiUrl: e2b.apiUrl, sandboxUrl: e2b.sandboxUrl }, ...extra });

describe("e2b sandbox provider (real SDK, local E2B-compatible server)", () => {
  test("shellQuote", () => {
    expect(shellQuote("ls")).toBe("ls");
    expect(shellQuote("a b")).toBe("'a b'");
    expect(shellQuote("it's")).toBe("'it'\\''s'");
  });

  test("create, exec, files, release", async () => {
    let reported = "";
    const sb = await provider().create({ runId: "r1", image: "base", labels: { "humanish.x": "1" }, onCreated: (id) => void (reported = id) });
    expect(reported).toBe(sb.id);
    const body = e2b.bodies.filter((b) => b.call === "POST /v2/sandboxes").at(-1)!.body;
    expect(body).toMatchObject({
      templateID: "base",
      timeout: 120,
      metadata: { "humanish.run": "r1", "humanish.owner": "humanish", "humanish.x": "1" },
      allow_internet_access: false,
    });
    const r = await sb.exec({ cmd: ["bash", "-c", "echo out; echo err >&2; exit 4"] });
    expect(r).toMatchObject({ exitCode: 4, timedOut: false });
    expect(new TextDecoder().decode(r.stdout)).toBe("out\n");
    expect(new TextDecoder().decode(r.stderr)).toBe("err\n");
    const ok = await sb.exec({ cmd: ["echo", "it's a b"], cwd: "/tmp" });
    expect(new TextDecoder().decode(ok.stdout)).toBe("it's a b\n");
    // Time enough for a loaded machine to start the command and print; the sleep outlasts it, and a
    // kill that failed would end the command by itself (timedOut false, exit 0).
    const slow = await sb.exec({ cmd: ["bash", "-c", "echo before; sleep 30"], timeoutMs: 3_000 });
    expect(slow).toMatchObject({ timedOut: true, exitCode: 137 });
    expect(new TextDecoder().decode(slow.stdout)).toBe("before\n");
    await sb.writeFile("/tmp/x.txt", "hello file");
    expect(new TextDecoder().decode(await sb.readFile("/tmp/x.txt"))).toBe("hello file");
    await expect(sb.readFile("/tmp/x.txt", 3)).rejects.toMatchObject({ code: "HUMANISH_SANDBOX_READ_TOO_LARGE" });
    const proof = await sb.release();
    expect(proof).toMatchObject({ id: sb.id, provider: "e2b", outcome: "released" });
    expect(e2b.calls).toContain(`DELETE /sandboxes/${sb.id}`);
    expect(e2b.alive()).not.toContain(sb.id);
  });

  test("release is `released` only on real confirmation, even with E2B_DEBUG set", async () => {
    const before = process.env.E2B_DEBUG;
    process.env.E2B_DEBUG = "true";
    try {
      const sb = await provider().create({ runId: "r2", image: "base" });
      // 404 on kill while getInfo still lists it: not confirmed.
      e2b.faults.kill = "404-but-alive";
      expect(await sb.release()).toMatchObject({ outcome: "unconfirmed" });
      // 204 on kill while the sandbox runs on: not confirmed either.
      e2b.faults.kill = "ack-but-alive";
      expect(await sb.release()).toMatchObject({ outcome: "unconfirmed" });
      expect(e2b.alive()).toContain(sb.id);
      // A kill that never settles hits the outer deadline.
      e2b.faults.kill = "hang";
      // The kill never answers: only the deadline can end this await (else the test times out).
      const hung = await releaseE2BSandbox(sb.id, { apiKey: e2b.apiKey, apiUrl: e2b.apiUrl }, 500);
      expect(hung).toMatchObject({ outcome: "unconfirmed" });
      expect(hung.reason).toContain("500 ms");
      // Normal: DELETE reached the server (debug did not short-circuit it) and confirmed.
      e2b.faults.kill = "normal";
      expect(await sb.release()).toMatchObject({ outcome: "released" });
      // Already gone: kill 404 then getInfo 404 → released.
      expect(await sb.release()).toMatchObject({ outcome: "released", reason: expect.stringContaining("already absent") });
      expect(e2b.calls.filter((c) => c === `DELETE /sandboxes/${sb.id}`).length).toBeGreaterThanOrEqual(3);
    } finally {
      if (before === undefined) delete process.env.E2B_DEBUG;
      else process.env.E2B_DEBUG = before;
    }
  });

  test("a missing key is a clear error before any call", async () => {
    const n = e2b.calls.length;
    const missing = await createE2BSandboxProvider({ apiKey: undefined })
      .create({ runId: "r3", image: "base" })
      .then(
        () => undefined,
        (e: HumanishError) => e,
      );
    expect(missing).toMatchObject({ code: "HUMANISH_E2B_KEY_MISSING" });
    // The next step names only commands that exist.
    for (const m of (missing!.next ?? "").matchAll(/humanish ([a-z]+(?: [a-z]+)?)/g)) {
      const words = m[1]!.split(" ");
      expect({
        next: missing!.next,
        known: COMMANDS.some((c) => c.path[0] === words[0] && (c.path.length === 1 || words.length === 1 || c.path[1] === words[1])),
      }).toEqual({ next: missing!.next, known: true });
    }
    expect(missing!.next).toContain("E2B_API_KEY");
    await expect(provider({ apiKey: "e2b_wrong" }).create({ runId: "r3", image: "base" })).rejects.toMatchObject({ code: "HUMANISH_SANDBOX_CREATE_FAILED" });
    expect(e2b.calls.length).toBe(n + 1);
  });
});

describe("env server on the e2b backend", () => {
  test("an episode: setup, commands, reward override, final answer; shutdown releases by exact id", async () => {
    const server = await startEnvServer({ backend: envBackendFromProvider(provider(), { image: "base" }), port: 0, maxConcurrent: 1, log: () => undefined });
    const ws = await WsClient.connect(server.url);
    try {
      const reset = {
        body: await ws.reset({
          setup: ["echo seeded > /home/user/seed.txt"],
          verify: ["test -f /home/user/out.txt", "echo 0.75 > /home/user/logs/verifier/reward.txt"],
        }),
      };
      expect(reset.body.done).toBe(false);
      const id = reset.body.metadata.sandbox_id;
      expect(e2b.alive()).toContain(id);
      const s = { body: await ws.step(terminal({ command: "cd /home/user && cp seed.txt out.txt && cat out.txt" })) };
      expect(s.body.observation.result).toMatchObject({ exit_code: 0, stdout: "seeded\n" });
      const fin = { body: await ws.step(terminal({ final_answer: "ok" })) };
      expect(fin.body).toMatchObject({ done: true, reward: 0.75 });
      expect(await ws.state()).toMatchObject({ backend: "e2b", reward_source: "override", verify_passed: 2, last_reward: 0.75 });
      expect(e2b.alive()).not.toContain(id);
      // A second episode left running is released at shutdown.
      const r2 = { body: await ws.reset({}) };
      const id2 = r2.body.metadata.sandbox_id;
      const summary = await server.stop();
      expect(summary).toMatchObject({ released: 1, unconfirmed: 0 });
      expect(summary.proofs[0]).toMatchObject({ id: id2, provider: "e2b", outcome: "released" });
      expect(e2b.alive()).not.toContain(id2);
    } finally {
      ws.close();
      await server.stop();
    }
  });

  test("a kill that hangs is reported unconfirmed at shutdown and the id stays owned", async () => {
    const server = await startEnvServer({
      backend: envBackendFromProvider(provider({ killDeadlineMs: 500 }), { image: "base" }),
      port: 0,
      maxConcurrent: 1,
      releaseDeadlineMs: 2_000,
      log: () => undefined,
    });
    const ws = await WsClient.connect(server.url);
    const id = (await ws.reset({})).metadata.sandbox_id;
    e2b.faults.kill = "hang";
    const summary = await server.stop();
    expect(summary).toMatchObject({ released: 0, unconfirmed: 1 });
    expect(summary.proofs[0]).toMatchObject({ id, outcome: "unconfirmed" });
    expect(server.stats().ownedSandboxIds).toEqual([id]);
    e2b.faults.kill = "normal";
    expect(await releaseE2BSandbox(id, { apiKey: e2b.apiKey, apiUrl: e2b.apiUrl })).toMatchObject({ outcome: "released" });
  });
});

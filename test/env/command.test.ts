/**
 * `runEnvServeCommand` (what `humanish env serve` calls): SIGTERM/SIGINT release every owned
 * sandbox by exact id and the outcome lists each one; option errors; the e2b backend without
 * E2B_API_KEY answers reset with done = true and a clear error.
 */
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { join } from "node:path";
import { runEnvServeCommand } from "../../src/env/index.ts";
import { dockerSocketPath } from "../support/prereq.ts";
import { inspectStatus, post, testImage, WsClient } from "./support.ts";

setDefaultTimeout(120_000);

async function readUntil(stream: ReadableStream<Uint8Array>, re: RegExp, ms = 60_000): Promise<{ match: RegExpMatchArray; rest: () => Promise<string> }> {
  const reader = stream.getReader();
  const dec = new TextDecoder();
  let text = "";
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    const { value, done } = await reader.read();
    if (done) break;
    text += dec.decode(value, { stream: true });
    const m = text.match(re);
    if (m) {
      return {
        match: m,
        rest: async () => {
          for (;;) {
            const r = await reader.read();
            if (r.done) return text;
            text += dec.decode(r.value, { stream: true });
          }
        },
      };
    }
  }
  throw new Error(`did not see ${re} in: ${text}`);
}

describe("humanish env serve (runEnvServeCommand)", () => {
  for (const sig of ["SIGTERM", "SIGINT"] as const) {
    test(`${sig} releases every owned sandbox by exact id and prints the outcomes`, async () => {
      const image = await testImage();
      const proc = Bun.spawn([process.execPath, join(import.meta.dir, "fixtures/serve.ts"), image, "3"], { stdout: "pipe", stderr: "pipe" });
      let ids: string[] = [];
      try {
        const { match, rest } = await readUntil(proc.stderr, /listening on (http:\/\/127\.0\.0\.1:\d+)/);
        const url = match[1]!;
        const ws = await WsClient.connect(url);
        const a = (await ws.request({ type: "reset", data: { setup: ["echo fixture-secret-value-9876"] } })).data.metadata.sandbox_id;
        const ws2 = await WsClient.connect(url);
        const b = (await ws2.reset({})).metadata.sandbox_id;
        ids = [a, b];
        for (const id of ids) expect(await inspectStatus(id)).toBe(200);
        proc.kill(sig);
        const code = await proc.exited;
        const stderr = await rest();
        const outcome = JSON.parse((await new Response(proc.stdout).text()).trim());
        expect(code).toBe(sig === "SIGINT" ? 130 : 143);
        expect(outcome).toMatchObject({ ok: true, stoppedBy: sig, released: 2, unconfirmed: 0, exitCode: sig === "SIGINT" ? 130 : 143 });
        expect(outcome.releases.map((p: any) => p.id).sort()).toEqual([...ids].sort());
        for (const id of ids) expect(outcome.human).toContain(`${id}: released`);
        for (const id of ids) expect(await inspectStatus(id)).toBe(404);
        expect(stderr).toContain(`${sig} received`);
        // Secret values from the environment never reach the log.
        expect(stderr).not.toContain("fixture-secret-value-9876");
        ws.close();
        ws2.close();
      } finally {
        if (proc.exitCode === null) proc.kill("SIGKILL");
        for (const id of ids) {
          if ((await inspectStatus(id)) !== 404)
            await fetch(`http://localhost/v1.41/containers/${id}?force=1`, { method: "DELETE", unix: dockerSocketPath() } as RequestInit);
        }
      }
    });
  }

  test("bad options fail with a named error and exit code 1", async () => {
    const bad = await runEnvServeCommand({ backend: "podman", port: 0, log: () => undefined });
    expect(bad).toMatchObject({ ok: false, exitCode: 1, error: { code: "HUMANISH_ENV_OPTIONS_INVALID" } });
    expect(bad.error!.message).toContain("--backend");
    for (const value of ["lots", "0", "2.5", "-1", "1e3"]) {
      const env = await runEnvServeCommand({ backend: "e2b", port: 0, env: { MAX_CONCURRENT_ENVS: value }, log: () => undefined });
      expect(env).toMatchObject({ ok: false, exitCode: 1, error: { code: "HUMANISH_ENV_OPTIONS_INVALID" } });
      expect(env.error?.message).toContain("MAX_CONCURRENT_ENVS");
      expect(env.error?.message).toContain(JSON.stringify(value));
    }
    for (const value of [0, 2.5, Number.NaN]) {
      const flag = await runEnvServeCommand({ backend: "e2b", port: 0, maxConcurrent: value, env: {}, log: () => undefined });
      expect(flag).toMatchObject({ ok: false, exitCode: 1, error: { code: "HUMANISH_ENV_OPTIONS_INVALID" } });
      expect(flag.error?.message).toContain("--max-concurrent");
    }
    const net = await runEnvServeCommand({ backend: "e2b", network: "host", port: 0, env: {}, log: () => undefined });
    expect(net.error?.message).toContain("--network");
    const img = await runEnvServeCommand({ backend: "docker", image: "humanish-no-such-image:never", port: 0, env: {}, log: () => undefined });
    expect(img.error?.code).toBe("HUMANISH_SANDBOX_IMAGE_MISSING");
  });

  test("the CLI refuses a --max-concurrent or MAX_CONCURRENT_ENVS that is not a whole number ≥ 1, naming it", async () => {
    const { cli } = await import("../cli/support.ts");
    for (const value of ["lots", "0", "2.5"]) {
      const flag = await cli(["env", "serve", "--backend", "e2b", "--port", "0", "--max-concurrent", value, "--json"], { PATH: process.env.PATH });
      expect(flag.code).toBe(1);
      expect(JSON.parse(flag.stdout)).toMatchObject({
        ok: false,
        error: { code: "HUMANISH_ENV_OPTIONS_INVALID", message: expect.stringContaining("--max-concurrent") },
      });
      const env = await cli(["env", "serve", "--backend", "e2b", "--port", "0", "--json"], { PATH: process.env.PATH, MAX_CONCURRENT_ENVS: value });
      expect(env.code).toBe(1);
      expect(JSON.parse(env.stdout)).toMatchObject({
        ok: false,
        error: { code: "HUMANISH_ENV_OPTIONS_INVALID", message: expect.stringContaining("MAX_CONCURRENT_ENVS") },
      });
    }
  });

  test("a port already in use is a domain failure (exit 2), printed once", async () => {
    const busy = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response("busy") });
    try {
      const out = await runEnvServeCommand({ backend: "e2b", port: busy.port, env: {}, log: () => undefined });
      expect(out).toMatchObject({ ok: false, exitCode: 2, error: { code: "HUMANISH_ENV_LISTEN_FAILED" } });
      const { cli } = await import("../cli/support.ts");
      const r = await cli(["env", "serve", "--backend", "e2b", "--port", String(busy.port)], { PATH: process.env.PATH });
      expect(r.code).toBe(2);
      expect(r.stdout).toBe("");
      expect(r.stderr.match(/failed: cannot listen/g)).toHaveLength(1);
      expect(r.stderr).toContain("code: HUMANISH_ENV_LISTEN_FAILED");
    } finally {
      busy.stop(true);
    }
  });

  test("e2b backend without E2B_API_KEY: reset answers done = true with a clear error", async () => {
    const ac = new AbortController();
    let listening: (url: string) => void = () => {};
    const listeningAt = new Promise<string>((r) => {
      listening = r;
    });
    const run = runEnvServeCommand({
      backend: "e2b",
      port: 0,
      env: { MAX_CONCURRENT_ENVS: "1" },
      signal: ac.signal,
      log: () => undefined,
      onListening: (s) => listening(s.url),
    });
    const url = await Promise.race([
      listeningAt,
      run.then((out) => {
        throw new Error(`env serve ended before listening: ${JSON.stringify(out)}`);
      }),
    ]);
    const r = await post(url, "/reset", { setup: ["echo hi"] });
    expect(r.status).toBe(200);
    expect(r.body.done).toBe(true);
    expect(r.body.reward).toBeNull();
    expect(r.body.metadata.error.code).toBe("HUMANISH_E2B_KEY_MISSING");
    expect(r.body.metadata.error.message).toContain("E2B_API_KEY");
    const ws = await WsClient.connect(url);
    expect((await ws.reset({})).metadata.error.code).toBe("HUMANISH_E2B_KEY_MISSING");
    expect(await ws.state()).toMatchObject({ backend: "e2b", sandbox_id: null, infrastructure_failure: { code: "HUMANISH_E2B_KEY_MISSING" } });
    expect((await ws.state()).last_error).toContain("HUMANISH_E2B_KEY_MISSING");
    ws.close();
    ac.abort();
    const outcome = await run;
    expect(outcome).toMatchObject({ ok: true, backend: "e2b", released: 0, stoppedBy: "abort", exitCode: 0 });
  });
});

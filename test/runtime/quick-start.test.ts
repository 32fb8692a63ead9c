/**
 * The quick start's engine rule (src/runtime/quick-start.ts), below the CLI: which engine is
 * usable, and what the default lab's mode becomes. The usable case is the real engine.
 */
import { describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { decideQuickStartMode, probeEngine } from "../../src/runtime/quick-start.ts";
import { dockerSocketPath, requireDocker } from "../support/prereq.ts";

describe("probeEngine", () => {
  test("the real engine is usable", async () => {
    const socket = await requireDocker();
    const p = await probeEngine(process.env);
    expect(p.ok).toBe(true);
    if (p.ok) expect(p.socket).toBe(socket);
  });

  test("each unusable engine has its own code and names the socket", async () => {
    expect(await probeEngine({ DOCKER_HOST: "unix:///nonexistent/engine.sock" })).toEqual({
      ok: false,
      code: "no-engine",
      socket: "/nonexistent/engine.sock",
      message: "no Docker engine at /nonexistent/engine.sock",
    });
    expect(await probeEngine({ DOCKER_HOST: "ssh://host" })).toMatchObject({ ok: false, code: "engine-unsupported", socket: null });
    const dir = mkdtempSync(join(tmpdir(), "humanish-probe-"));
    try {
      const file = join(dir, "plain-file");
      writeFileSync(file, "");
      const p = await probeEngine({ DOCKER_HOST: `unix://${file}` }, { timeoutMs: 1000 });
      expect(p).toMatchObject({ ok: false, code: "engine-not-answering", socket: file });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("decideQuickStartMode", () => {
  test("real engine and present sandbox image: live, saying the image is present", async () => {
    await requireDocker();
    const lines: string[] = [];
    const d = await decideQuickStartMode({ env: process.env, image: "sandbox", onProgress: (l) => lines.push(l) });
    expect(d.mode).toBe("live");
    expect(d.modeReason.code).toBe("engine-ready");
    expect(d.modeReason.message).toMatch(new RegExp(`^the Docker engine at ${dockerSocketPath()} answered and the sandbox image (is present|was built)$`));
  }, 900_000);

  test("no engine: dry run with the probe's reason", async () => {
    const d = await decideQuickStartMode({ env: { DOCKER_HOST: "unix:///nonexistent/engine.sock" }, image: "guest" });
    expect(d).toEqual({ mode: "dry-run", modeReason: { code: "no-engine", message: "no Docker engine at /nonexistent/engine.sock" } });
  });
});

/**
 * Codex's own retries are off in every mode, proven with the real `@openai/codex` CLI against the
 * fake Responses server: the command humanish builds for a gateway-less (hosted-sandbox) seat
 * and for a gateway seat meets one HTTP 500 and sends exactly one request — a retried POST could
 * bill twice. (Codex's built-in `openai` provider, which the direct mode used to rely on, retries
 * the same 500 several times and cannot be reconfigured: Codex refuses overrides of a built-in
 * provider.)
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildCodexExecCommand, type CodexExecCommandInput } from "../../../src/actors/codex-exec/command.ts";
import { type FakeOpenAI, startFakeOpenAI } from "../../support/fake-openai/server.ts";

setDefaultTimeout(120_000);
const KEY = "sk-test-codex-retries-3f9a2c";
const CODEX = join(import.meta.dir, "../../../node_modules/.bin/codex");
let fake: FakeOpenAI;
const dirs: string[] = [];

beforeAll(() => {
  fake = startFakeOpenAI({
    apiKey: KEY,
    scenario: () => ({
      kind: "error",
      status: 500,
      type: "server_error",
      code: "server_error",
      message: "The server had an error while processing your request.",
    }),
  });
});
afterAll(async () => {
  await fake?.close();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** Runs the real CLI with the command humanish builds; returns its exit code and the POSTs the fake saw. */
async function runOnce(target: Pick<CodexExecCommandInput, "gateway" | "direct" | "key">): Promise<{ exitCode: number; posts: number; stdout: string }> {
  const home = mkdtempSync(join(tmpdir(), "humanish-codex-retries-"));
  dirs.push(home);
  const workdir = join(home, "study");
  mkdirSync(workdir);
  const before = fake.requests.length;
  const c = buildCodexExecCommand({ prompt: "Say hello.", workdir, home, model: "gpt-5.1-codex-mini", launcher: [CODEX], ...target });
  const proc = Bun.spawn(c.argv, { env: { PATH: process.env.PATH ?? "/usr/bin:/bin", ...c.env }, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  const [stdout] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text()]);
  const exitCode = await proc.exited;
  const seen = fake.requests.slice(before);
  // Every request, not only POSTs: a WebSocket upgrade attempt would be another way to send.
  expect(seen.map((r) => `${r.method} ${r.path}`)).toEqual(["POST /v1/responses"]);
  return { exitCode, posts: seen.length, stdout };
}

describe("one 500 → exactly one request", () => {
  test("direct (a hosted sandbox, openai-env at the endpoint OPENAI_BASE_URL names)", async () => {
    const r = await runOnce({ direct: { auth: "openai-env", baseURL: fake.baseURL }, key: { sourceName: "CODEX_API_KEY", value: KEY } });
    expect(r.posts).toBe(1);
    expect(r.exitCode).not.toBe(0);
    expect(r.stdout).toContain('"type":"turn.failed"');
    expect(r.stdout).not.toContain("Reconnecting");
  });

  test("through a gateway (the per-seat token as CODEX_API_KEY)", async () => {
    const r = await runOnce({ gateway: { baseURL: fake.baseURL, token: KEY } });
    expect(r.posts).toBe(1);
    expect(r.exitCode).not.toBe(0);
    expect(r.stdout).not.toContain("Reconnecting");
  });
});

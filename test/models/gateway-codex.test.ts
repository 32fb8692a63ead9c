/**
 * The real `@openai/codex` CLI (the pinned package in node_modules, run on the host with no
 * tool call to make) → a TCP port piped to the gateway's Unix socket, as the in-sandbox forwarder
 * does → the real gateway → the local fake Responses server. It proves that what Codex sends
 * passes the gateway's field allow-list, that a Codex request (which sets no
 * `max_output_tokens`) is granted what a 1 USD budget affords instead of being refused at the
 * model's ceiling, and what Codex does with a response cut at its `max_output_tokens`.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { createConnection, createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildCodexExecCommand } from "../../src/actors/codex-exec/command.ts";
import { FORWARDED_FIELDS } from "../../src/models/gateway/request-policy.ts";
import { type Gateway, MIN_OUTPUT_GRANT_TOKENS, resolveEndpoint, SpendBudget, startGateway } from "../../src/models/index.ts";
import { type FakeOpenAI, type FakeScenario, startFakeOpenAI } from "../support/fake-openai/server.ts";

const KEY = "sk-test-REALKEY-codex-0123456789";
const MODEL = "gpt-5.1-codex";
const CODEX_JS = join(import.meta.dir, "../../node_modules/@openai/codex/bin/codex.js");
const cleanup: (() => Promise<void> | void)[] = [];

afterEach(async () => {
  for (const c of cleanup.splice(0).reverse()) await c();
});

/** A TCP listener on 127.0.0.1 that pipes each connection to `sock`; resolves to its port. */
async function forwarder(sock: string): Promise<number> {
  const server: Server = createServer((inbound) => {
    const outbound = createConnection(sock);
    inbound.pipe(outbound);
    outbound.pipe(inbound);
    const end = (): void => {
      inbound.destroy();
      outbound.destroy();
    };
    inbound.on("error", end);
    outbound.on("error", end);
    inbound.on("close", end);
    outbound.on("close", end);
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  cleanup.push(() => new Promise<void>((r) => server.close(() => r())));
  return (server.address() as { port: number }).port;
}

/** Runs `codex exec` once through a gateway with `maxUsd` to the fake; returns its exit, JSONL events, and the gateway. */
async function runCodex(scenario: FakeScenario, maxUsd: number): Promise<{ exit: number; events: Record<string, unknown>[]; gw: Gateway; fake: FakeOpenAI }> {
  const fake = startFakeOpenAI({ apiKey: KEY, scenario });
  cleanup.push(() => fake.close());
  const gw = startGateway({
    endpoint: resolveEndpoint({ OPENAI_BASE_URL: fake.baseURL }),
    key: { sourceName: "CODEX_API_KEY", value: KEY },
    budgets: [new SpendBudget("scenario.caps.maxUsd", maxUsd)],
  });
  cleanup.push(() => gw.close());
  const port = await forwarder(`${gw.socketDir}/${gw.socketName}`);
  const home = mkdtempSync(join(tmpdir(), "humanish-codex-home-"));
  const workdir = mkdtempSync(join(tmpdir(), "humanish-codex-work-"));
  cleanup.push(() => {
    rmSync(home, { recursive: true, force: true });
    rmSync(workdir, { recursive: true, force: true });
  });
  const cmd = buildCodexExecCommand({
    workdir,
    home,
    prompt: "Say hello.",
    model: MODEL,
    reasoningEffort: "low",
    launcher: [process.execPath, CODEX_JS],
    gateway: { baseURL: `http://127.0.0.1:${port}/v1`, token: gw.token },
  });
  const proc = Bun.spawn(cmd.argv, { env: { ...cmd.env, PATH: process.env.PATH ?? "/usr/bin:/bin" }, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  const stdout = await new Response(proc.stdout).text();
  const exit = await proc.exited;
  const events = stdout
    .split("\n")
    .filter((l) => l.startsWith("{"))
    .map((l) => JSON.parse(l) as Record<string, unknown>);
  return { exit, events, gw, fake };
}

describe("the real Codex CLI through the gateway", () => {
  test("maxUsd 1 on gpt-5.1-codex: every field Codex sends is forwarded, the gateway sets max_output_tokens, the turn completes", async () => {
    const { exit, events, gw, fake } = await runCodex(() => ({ kind: "response", model: MODEL, output: [{ type: "message", text: "hello" }] }), 1);
    expect(exit).toBe(0);
    expect(events.some((e) => e.type === "turn.completed")).toBe(true);
    const responses = fake.requests.filter((r) => r.path === "/v1/responses");
    expect(responses.length).toBe(1);
    const sent = responses[0]?.body ?? {};
    expect(Object.keys(sent).filter((k) => !FORWARDED_FIELDS.has(k))).toEqual([]);
    expect(sent.store).toBe(false);
    const grant = sent.max_output_tokens as number;
    expect(grant).toBeGreaterThanOrEqual(MIN_OUTPUT_GRANT_TOKENS);
    expect(grant).toBeLessThan(100_000);
    const line = gw.lines[0];
    expect(line).toMatchObject({ outcome: "completed", maxOutputTokensSetByGateway: grant });
    expect(line?.estimateUsd ?? 2).toBeLessThanOrEqual(1);
    // Codex 0.171 offers the hosted web search tool; the gateway removes it (it bills beyond tokens).
    expect(line?.toolsRemovedByGateway).toEqual(["web_search"]);
    expect((sent.tools as { type: string }[]).some((t) => t.type === "web_search")).toBe(false);
  }, 120_000);

  test("a response cut at max_output_tokens: Codex shows the partial answer, fails the turn, exits 1, and sends nothing more", async () => {
    const { exit, events, gw, fake } = await runCodex(
      () => ({ kind: "response", model: MODEL, output: [{ type: "message", text: "partial answ" }], incomplete: "max_output_tokens" }),
      1,
    );
    expect(exit).toBe(1);
    expect(events.filter((e) => e.type === "item.completed").map((e) => (e.item as { type: string; text?: string }).text)).toContain("partial answ");
    const failed = events.find((e) => e.type === "turn.failed") as { error: { message: string } } | undefined;
    expect(failed?.error.message).toBe("Incomplete response returned, reason: max_output_tokens");
    expect(events.some((e) => e.type === "turn.completed")).toBe(false);
    // No retry and no continuation: one request, metered as incomplete.
    expect(fake.requests.filter((r) => r.path === "/v1/responses").length).toBe(1);
    expect(gw.lines).toHaveLength(1);
    expect(gw.lines[0]).toMatchObject({ outcome: "incomplete", detail: "incomplete: max_output_tokens" });
  }, 120_000);
});

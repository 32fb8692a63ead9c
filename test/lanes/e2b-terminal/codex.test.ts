/**
 * A Codex seat on e2b-terminal end to end: the real `@openai/codex` CLI (run through npx at the
 * pinned version, from the npm registry) in a container-backed E2B sandbox, reaching
 * `https://api.openai.com/v1` — which the local E2B-compatible server's egress proxy routes to the
 * fake Responses server — in each runtime-auth mode:
 * - `openai-env`: the key is the Codex command's `CODEX_API_KEY`, no egress rule exists;
 * - `openai-egress`: the sandbox holds only a placeholder; the key lives in the create call's
 *   network rule for api.openai.com, injected host-side by the proxy.
 * Hidden checks decide success; the model line is unpriced (no gateway observed the model); no
 * file of the bundle holds the key.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { verifyRun } from "../../../src/bundle/verify.ts";
import { runTerminalStudy } from "../../../src/routes/terminal/index.ts";
import { committedLab, labFromText, listFiles, studyContext, testRunId, tmpProject } from "../../routes/terminal/support.ts";
import { type E2BServer, startE2BServer } from "../../support/e2b-server/index.ts";
import { codexJqSession, JQ_COMMANDS } from "../../support/fake-openai/scenarios.ts";
import { type FakeOpenAI, startFakeOpenAI } from "../../support/fake-openai/server.ts";

setDefaultTimeout(480_000);
const KEY = "sk-proj-e2bCODEXfake-7f3a9c1e5b2d4086aa";
const MODEL = "gpt-5.1-codex-mini";
const HOST_CA = process.env.NODE_EXTRA_CA_CERTS;
const project = tmpProject();
let fake: FakeOpenAI;
let e2b: E2BServer;

beforeAll(async () => {
  fake = startFakeOpenAI({ apiKey: KEY, scenario: codexJqSession({ model: MODEL, huntKey: false }) });
  e2b = await startE2BServer({
    labels: { "humanish.test-run": `e2b-codex-${randomUUID()}` },
    upstreams: { "api.openai.com": `http://127.0.0.1:${fake.port}` },
  });
});
afterAll(async () => {
  await e2b?.close();
  await fake?.close();
  project.cleanup();
});

/** The committed Codex jq lab on e2b-terminal. */
function lab(runtimeAuth: "openai-env" | "openai-egress"): { text: string } {
  let text = committedLab("codex-first-contact").text;
  text = text.replace("  target: docker\n", "  target: e2b-terminal\n");
  text = text.replace(/\n {2}runtimeAuth: openai-egress\n/, `\n  runtimeAuth: ${runtimeAuth}\n`);
  text = text.replace(/\n {2}network: bridge\n/, "\n");
  // The server's containers give root no capabilities: root cannot chmod the participant's own
  // study directory (a real E2B sandbox's root can); the directory is already 0777.
  text = text.replace(/\n {6}- chmod -R a\+rwX \/home\/user\/study\n/, "\n");
  text = text.replace(/ {4}reasoningEffort: low\n/, `    reasoningEffort: low\n    model: ${MODEL}\n`);
  return { text };
}

async function runSeat(runtimeAuth: "openai-env" | "openai-egress") {
  const { text } = lab(runtimeAuth);
  const runId = testRunId(`e2b-codex-${runtimeAuth}`);
  const before = { bodies: e2b.bodies.length, egress: e2b.egress.length, requests: fake.requests.length };
  const ctx = studyContext({
    cwd: project.dir,
    lab: labFromText(text),
    text,
    runId,
    mode: "live",
    env: { PATH: process.env.PATH, CODEX_API_KEY: KEY, ...e2b.env(), ...(HOST_CA ? { HUMANISH_SANDBOX_CA_CERTS: HOST_CA } : {}) },
  });
  const r = (await runTerminalStudy(ctx)) as {
    ok: boolean;
    runDir: string;
    error?: { code: string; message: string };
    tasks: { id: string; passed: boolean }[];
  };
  const create = e2b.bodies.slice(before.bodies).find((b) => b.call === "POST /v2/sandboxes")?.body as Record<string, unknown>;
  return { r, create, egress: e2b.egress.slice(before.egress), responses: fake.requests.slice(before.requests).filter((q) => q.path === "/v1/responses") };
}

function expectNoKey(runDir: string): void {
  for (const f of listFiles(runDir)) expect(readFileSync(join(runDir, f), "latin1")).not.toContain(KEY.slice(0, 24));
}

describe("codex-exec on e2b-terminal against the fake model", () => {
  test("openai-env: the key rides only in the Codex command's CODEX_API_KEY; 4/4 tasks; unpriced usage", async () => {
    const { r, create, responses } = await runSeat("openai-env");
    expect(r.error).toBeUndefined();
    expect(r.tasks.map((t) => `${t.id}:${t.passed}`)).toEqual(["pretty-print:true", "open-order-ids:true", "open-total:true", "orders-per-customer:true"]);
    expect(r.ok).toBe(true);
    expect(create.network).toBeUndefined();
    expect(JSON.stringify(create)).not.toContain(KEY);
    expect(responses.length).toBeGreaterThan(JQ_COMMANDS.length);
    expect(responses.every((q) => q.authorization === `Bearer ${KEY}`)).toBe(true);
    const ledgers = JSON.parse(readFileSync(join(r.runDir, "terminal-ledgers.json"), "utf8"));
    const exec = ledgers.commandLog.filter((c: { label: string }) => c.label === "codex-exec");
    expect(exec).toHaveLength(1);
    expect(exec[0].envNames).toContain("CODEX_API_KEY");
    for (const c of ledgers.commandLog.filter((c: { label: string }) => c.label !== "codex-exec")) expect(c.envNames).not.toContain("CODEX_API_KEY");
    expect(ledgers.runtime).toMatchObject({ requestedVersion: "0.171.0", observedVersion: "0.171.0", versionStatus: "verified" });
    expect(ledgers.cost.lines.provider).toMatchObject({ usd: null, basis: "unpriced-token-usage" });
    expect(ledgers.cleanup[0]).toMatchObject({ outcome: "released" });
    expectNoKey(r.runDir);
    expect((await verifyRun(r.runDir)).ok).toBe(true);
  });

  test("openai-egress: a placeholder in the sandbox, the key only in the egress rule, injected host-side", async () => {
    const { r, create, egress, responses } = await runSeat("openai-egress");
    expect(r.error).toBeUndefined();
    expect(r.tasks.every((t) => t.passed)).toBe(true);
    expect(r.ok).toBe(true);
    const net = create.network as { allowOut?: string[]; rules?: Record<string, { transform: { headers: Record<string, string> } }[]> };
    expect(net.allowOut).toContain("api.openai.com");
    expect(net.rules?.["api.openai.com"]?.[0]?.transform.headers.Authorization).toBe(`Bearer ${KEY}`);
    expect(JSON.stringify(create.envVars ?? {})).not.toContain(KEY);
    expect(responses.every((q) => q.authorization === `Bearer ${KEY}`)).toBe(true);
    const forwarded = egress.filter((e) => e.host === "api.openai.com" && e.outcome === "forwarded");
    expect(forwarded.length).toBe(responses.length);
    expect(forwarded.every((e) => e.injected.map((h) => h.toLowerCase()).includes("authorization"))).toBe(true);
    const ledgers = JSON.parse(readFileSync(join(r.runDir, "terminal-ledgers.json"), "utf8"));
    const exec = ledgers.commandLog.find((c: { label: string }) => c.label === "codex-exec");
    expect(exec.envNames).toEqual(expect.arrayContaining(["CODEX_API_KEY", "CODEX_CA_CERTIFICATE"]));
    const auth = ledgers.lifecycle.find((e: { event: string }) => e.event === "terminal-lab.runtime-auth");
    expect(auth.message).toContain("residual capability");
    expectNoKey(r.runDir);
    expect((await verifyRun(r.runDir)).ok).toBe(true);
  });
});

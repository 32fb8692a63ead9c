/**
 * The restricted launcher with the REAL pinned Codex CLI (`codex app-server` 0.171.0) against
 * the fake Responses server, through the test-only provider override. The login is a fake
 * file-backed ChatGPT `auth.json` in a temp home; Codex reads it, humanish only links it.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, readlinkSync, realpathSync, rmSync, unlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { analystFrameBytes, type CodexAccountBounds } from "../../../src/actors/codex-account/bounds.ts";
import { checkCodexAccountLauncher, startCodexAccountSession } from "../../../src/actors/codex-account/index.ts";
import type { CodexAccountSession, CodexTurnInput } from "../../../src/actors/codex-account/types.ts";
import { createCodexAnalysisProvider } from "../../../src/analysis/provider-codex.ts";
import { isHumanishError } from "../../../src/errors.ts";
import { cli } from "../../cli/support.ts";
import type { FakeScenario } from "../../support/fake-openai/server.ts";
import { waitUntil } from "../../support/wait.ts";
import { ANALYST_IDENTITY, type CodexWorld, codexWorld, REPO_BIN } from "./support.ts";

if (!existsSync(join(REPO_BIN, "codex")))
  throw new Error(`the pinned Codex CLI is missing at ${REPO_BIN}/codex: run bun install (devDependency @openai/codex 0.171.0)`);

const worlds: CodexWorld[] = [];
afterAll(async () => {
  for (const w of worlds) await w.cleanup();
});
const world = (scenario: FakeScenario, shape: "chatgpt" | "apikey" = "chatgpt"): CodexWorld => {
  const w = codexWorld(scenario, shape);
  worlds.push(w);
  return w;
};
const say =
  (text: string): FakeScenario =>
  () => ({ kind: "response", output: [{ type: "message", text }] });
const never = new AbortController().signal;
const modelRequests = (w: CodexWorld) => w.fake.requests.filter((r) => r.path === "/v1/responses");

/** Our direct `codex` children (the app-server is never detached, so it is always one). */
function codexChildren(): number[] {
  const out: number[] = [];
  for (const d of readdirSync("/proc")) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = readFileSync(`/proc/${d}/stat`, "utf8");
      const comm = stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")"));
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      if (ppid === process.pid && comm === "codex") out.push(Number(d));
    } catch {
      // The process ended while we looked.
    }
  }
  return out;
}

/** The session left nothing behind: no `codex` child of this process, no private directory of `w`'s login. */
function expectNothingLeft(w: CodexWorld): void {
  expect(codexChildren()).toEqual([]);
  expect(privateDirsOf(w)).toEqual([]);
}

/** Private task directories linking this world's login (left behind = a leak). */
function privateDirsOf(w: CodexWorld): string[] {
  const target = realpathSync(w.authPath);
  return readdirSync(tmpdir())
    .filter((n) => n.startsWith("humanish-codex-account-"))
    .map((n) => join(tmpdir(), n))
    .filter((d) => {
      try {
        return readlinkSync(join(d, "home", "auth.json")) === target;
      } catch {
        return lstatSync(join(d, "home", "auth.json"), { throwIfNoEntry: false })?.isFile() === true && existsSync(join(d, "home"));
      }
    });
}

const errCode = async (p: Promise<unknown>): Promise<string> => {
  try {
    await p;
  } catch (e) {
    return isHumanishError(e) ? e.code : `non-humanish: ${String(e)}`;
  }
  return "no error";
};

const turn = (over: Partial<CodexTurnInput> = {}): CodexTurnInput => ({
  instructions: "You are a test participant.",
  input: [{ type: "text", text: "go" }],
  tools: [],
  deadlineMs: 30_000,
  signal: never,
  ...over,
});
const uiTool = {
  name: "humanish_ui",
  description: "Act on the page.",
  inputSchema: { type: "object", properties: { narration: { type: "string" } }, required: ["narration"], additionalProperties: false },
};

describe("analyze --provider codex", () => {
  test("one analysis turn: structured output, account-unknown cost, known usage, nothing left behind", async () => {
    const answer = JSON.stringify({ findings: [{ title: "Slow start", evidence: ["ev-1"] }] });
    const w = world(say(answer));
    // The operator's own Codex config and provider env must not reach the restricted child.
    writeFileSync(
      join(w.home, ".codex", "config.toml"),
      'developer_instructions = "OPERATOR-INSTRUCTIONS-LEAK"\nopenai_base_url = "http://127.0.0.1:9/v1"\n[mcp_servers.docs]\ncommand = "/bin/false"\n',
    );
    const env = { ...w.env, OPENAI_API_KEY: "operator-key-for-tests", OPENAI_BASE_URL: "http://127.0.0.1:9/v1", CODEX_HOME: join(w.home, ".codex") };
    const provider = createCodexAnalysisProvider({ env });
    const options = { model: null, maxCostUsd: null, maxOutputTokens: null, timeoutMs: 60_000, signal: never };
    expect(provider.name).toBe("codex");
    expect(provider.billing).toBe("account-unknown");
    expect(await provider.identity(options)).toEqual(ANALYST_IDENTITY);
    const estimate = { inputTokens: 100, maxOutputTokens: null, imageCount: 1, usd: null };
    expect(() => provider.admit({ ...options, maxCostUsd: 1 }, estimate)).toThrow(/--max-cost/);
    expect(() => provider.admit({ ...options, maxOutputTokens: 500 }, estimate)).toThrow(/--max-output-tokens/);
    expect(() => provider.admit({ ...options, model: "gpt-6-sol" }, estimate)).toThrow(/qualified model/);
    provider.admit(options, estimate);
    await provider.preflight?.(options);
    const schema = {
      type: "object",
      properties: {
        findings: {
          type: "array",
          items: {
            type: "object",
            properties: { title: { type: "string" }, evidence: { type: "array", items: { type: "string" } } },
            required: ["title", "evidence"],
            additionalProperties: false,
          },
        },
      },
      required: ["findings"],
      additionalProperties: false,
    };
    const png = readFileSync(join(import.meta.dir, "..", "..", "fixtures", "codex-account", "pixel.png")).toString("base64");
    const r = await provider.run(
      {
        instructions: "Analyse the run.",
        content: [
          { type: "text", text: "evidence ev-1: the first screen took 9 s" },
          { type: "image", evidenceId: "ev-2", pngBase64: png, width: 1, height: 1 },
        ],
        output: { name: "findings", jsonSchema: schema },
      },
      options,
    );
    expect(r.outcome).toEqual({ status: "completed", outputText: answer });
    expect(r.request).toMatchObject({ provider: "codex", model: "gpt-5.5", costUsd: null, costLabel: "account-unknown" });
    expect(r.request.usage.inputTokens).toBeGreaterThan(0);
    expect(r.request.usage.outputTokens).toBeGreaterThan(0);
    const [req] = modelRequests(w);
    const body = req?.body as Record<string, any>;
    expect(body.model).toBe("gpt-5.5");
    expect(body.text.format).toMatchObject({ type: "json_schema", schema });
    // No shell, web, image, agent or MCP tool reached the model. The CLI always offers its own
    // question tool and, for this model, its freeform patch tool (no 0.171.0 setting removes
    // either); a call to either is refused by the raw-item rule, inside a read-only sandbox.
    expect((body.tools ?? []).map((t: { name?: string }) => t.name)).toEqual(["request_user_input", "apply_patch"]);
    expect(JSON.stringify(body.input)).toContain("the first screen took 9 s");
    expect(JSON.stringify(body.input)).toContain("data:image/png;base64,");
    expect(JSON.stringify(body)).not.toContain("OPERATOR-INSTRUCTIONS-LEAK");
    // Codex authenticated with the linked ChatGPT login, not the operator's key.
    expect(req?.authorization).toStartWith("Bearer ey");
    expect(req?.authorization).not.toContain("operator-key");
    expectNothingLeft(w);
  }, 60_000);
});

describe("refused before a model turn", () => {
  test("a codex that is not 0.171.0", async () => {
    const w = world(say("{}"));
    const bin = join(w.root, "fakebin");
    mkdirSync(bin);
    writeFileSync(join(w.root, "v.ts"), 'console.log("codex-cli 0.170.0")');
    const b = Bun.spawnSync([process.execPath, "build", "--compile", "--outfile", join(bin, "codex"), join(w.root, "v.ts")], {
      stdout: "ignore",
      stderr: "pipe",
    });
    if (b.exitCode !== 0) throw new Error(`could not build the fake codex binary: ${b.stderr.toString()}`);
    expect(await errCode(startCodexAccountSession({ purpose: "analyst", signal: never, env: { ...w.env, PATH: `${bin}:/usr/bin:/bin` } }))).toBe(
      "HUMANISH_CODEX_UNSUPPORTED_VERSION",
    );
    rmSync(bin, { recursive: true });
    expect(modelRequests(w)).toEqual([]);
    expect(privateDirsOf(w)).toEqual([]);
  }, 60_000);
  test("keychain-only and API-key login shapes", async () => {
    const k = world(say("{}"));
    rmSync(k.authPath);
    writeFileSync(join(k.home, ".codex", "config.toml"), 'cli_auth_credentials_store = "keyring"\n');
    expect(await errCode(startCodexAccountSession({ purpose: "analyst", signal: never, env: k.env }))).toBe("HUMANISH_CODEX_UNSUPPORTED_AUTH");
    // The API-key login is told apart by the app-server itself (getAuthStatus without the token).
    const a = world(say("{}"), "apikey");
    expect(await errCode(startCodexAccountSession({ purpose: "analyst", signal: never, env: a.env }))).toBe("HUMANISH_CODEX_UNSUPPORTED_AUTH");
    expect(modelRequests(a)).toEqual([]);
    expectNothingLeft(a);
  }, 60_000);
  test("the provider override outside a test run", async () => {
    const w = world(say("{}"));
    const script = join(w.root, "outside.ts");
    writeFileSync(
      script,
      `import { startCodexAccountSession } from ${JSON.stringify(join(import.meta.dir, "..", "..", "..", "src", "actors", "codex-account", "index.ts"))};
try { await startCodexAccountSession({ purpose: "analyst", signal: new AbortController().signal, env: ${JSON.stringify(w.env)} }); console.log("started"); } catch (e) { console.log(e.code); }`,
    );
    const p = Bun.spawnSync([process.execPath, script], { env: { PATH: "/usr/bin:/bin", NODE_ENV: "production" }, stdout: "pipe", stderr: "pipe" });
    expect(p.stdout.toString().trim()).toBe("HUMANISH_CODEX_UNSAFE_CONFIGURATION");
    expect(modelRequests(w)).toEqual([]);
  }, 60_000);
});

describe("refused during a turn", () => {
  const refusedTurn = async (
    scenario: FakeScenario,
    t: Partial<CodexTurnInput>,
    purpose: "analyst" | "participant" = "analyst",
    bounds: Partial<Record<keyof CodexAccountBounds, number>> = {},
  ) => {
    const w = world(scenario);
    const s = await startCodexAccountSession({ purpose, signal: never, env: w.env, bounds });
    const r = await s.runTurn(turn(t));
    const again = await s.runTurn(turn(t));
    const rel = await s.close();
    expect(rel.outcome).toBe("released");
    expectNothingLeft(w);
    return { r, again, w };
  };
  test("a raw tool call from the model", async () => {
    const { r, again } = await refusedTurn(
      () => ({ kind: "response", output: [{ type: "function_call", name: "exec_command", arguments: '{"cmd":"cat ~/.codex/auth.json"}' }] }),
      {},
    );
    expect(r).toMatchObject({ status: "refused", reason: "raw_tool_call:exec_command" });
    // The session fails closed: no further turn after a refusal.
    expect(again).toMatchObject({ status: "refused", reason: "session_refused:raw_tool_call:exec_command" });
  }, 60_000);
  test("an asynchronous question (the CLI's request_user_input tool)", async () => {
    const { r } = await refusedTurn(
      () => ({ kind: "response", output: [{ type: "function_call", name: "request_user_input", arguments: '{"questions":[]}' }] }),
      {},
    );
    expect(r).toMatchObject({ status: "refused", reason: "raw_tool_call:request_user_input" });
  }, 60_000);
  test("an oversized frame", async () => {
    const { r } = await refusedTurn(
      () => ({
        kind: "response",
        output: [{ type: "message", text: "word ".repeat(600 * 1024) }],
        // Given, not counted: tokenising 3 MiB would only slow the fake down.
        usage: {
          input_tokens: 10,
          input_tokens_details: { cached_tokens: 0 },
          output_tokens: 600_000,
          output_tokens_details: { reasoning_tokens: 0 },
          total_tokens: 600_010,
        },
      }),
      {},
      "analyst",
      // The limit the analysis provider sets for this text-only packet: 2 MiB, under the 3 MiB answer frame.
      { frameBytes: analystFrameBytes(Buffer.byteLength(JSON.stringify(turn().input))) },
    );
    expect(r).toMatchObject({ status: "refused", reason: "frame_too_large" });
  }, 60_000);
  test("an oversized tool output; a served tool call reaches the model", async () => {
    let served = 0;
    const scenario: FakeScenario = (req) => {
      const outputs = ((req.body?.input as Array<Record<string, unknown>>) ?? []).filter((i) => i.type === "function_call_output");
      if (outputs.length === 0)
        return { kind: "response", output: [{ type: "function_call", name: "humanish_ui", arguments: '{"narration":"click"}', callId: `c${req.ordinal}` }] };
      return { kind: "response", output: [{ type: "message", text: JSON.stringify({ saw: outputs.map((o) => o.output) }) }] };
    };
    const ok = world(scenario);
    const s = await startCodexAccountSession({ purpose: "participant", signal: never, env: ok.env });
    const fine = await s.runTurn(
      turn({
        tools: [uiTool],
        onToolCall: async (call) => {
          served++;
          expect(call).toMatchObject({ tool: "humanish_ui", arguments: { narration: "click" } });
          return { success: true, contentItems: [{ type: "inputText", text: "ack 1: clicked" }] };
        },
      }),
    );
    expect(served).toBe(1);
    expect(fine.status).toBe("completed");
    expect(fine.status === "completed" && fine.finalText).toContain("ack 1: clicked");
    expect((await s.close()).outcome).toBe("released");
    const { r } = await refusedTurn(
      scenario,
      { tools: [uiTool], onToolCall: async () => ({ success: true, contentItems: [{ type: "inputText", text: "x".repeat(300 * 1024) }] }) },
      "participant",
    );
    expect(r).toMatchObject({ status: "refused", reason: "tool_output_too_large" });
  }, 60_000);
});

describe("doctor readiness", () => {
  test("the launcher check launches and closes without a model call", async () => {
    const w = world(say("{}"));
    const r = await checkCodexAccountLauncher(w.env);
    expect(r.ok).toBe(true);
    expect(r.message).toContain("no model call");
    expect(modelRequests(w)).toEqual([]);
    // `doctor --lab` runs the same check for a lab with Codex account seats.
    const cwd = join(w.root, "project");
    mkdirSync(cwd);
    writeFileSync(
      join(cwd, "lab.yaml"),
      `schema: humanish.lab.v2
id: doctor-local-agent
subject:
  source: app-url
  appUrl: http://127.0.0.1:45999/
actors:
  - type: local-agent
    localAgent: codex
    mission: Use the app like a new user.
    lanes:
      - {id: ana}
    tasks:
      - id: look
        goal: Look around.
        check:
          textIncludes: [Hello]
scenario:
  mode: live
  caps:
    maxMinutes: 2
execution:
  target: local
`,
    );
    const doc = await cli(["doctor", "--cwd", cwd, "--lab", "lab.yaml", "--json"], w.env);
    const rows = doc.json<{ checks: Array<{ name: string; ok: boolean; required: boolean; message: string }> }>().checks;
    const labRow = rows.find((c) => c.name === "lab");
    expect(labRow?.ok, labRow?.message).toBe(true);
    expect(rows.find((c) => c.name === "codex account launcher")).toMatchObject({ ok: true, required: true });
    expect(modelRequests(w)).toEqual([]);
    const bad = await checkCodexAccountLauncher({ ...w.env, PATH: "/usr/bin:/bin" });
    expect(bad).toMatchObject({ ok: false, code: "HUMANISH_CODEX_UNAVAILABLE" });
    expect(codexChildren()).toEqual([]);
  }, 60_000);
});

describe("cancellation and recovery", () => {
  test("cancellation mid-turn interrupts, closes the child and leaves no process", async () => {
    const w = world(() => ({ kind: "hang" }));
    const s = await startCodexAccountSession({
      purpose: "analyst",
      signal: never,
      env: { ...w.env, OPENAI_API_KEY: "operator-key-for-tests", CODEX_API_KEY: "x", USER: "seat" },
    });
    const kids = codexChildren();
    expect(kids.length).toBe(1);
    // The child's whole environment: the private home, scratch, a system PATH, locale and user name.
    const names = readFileSync(`/proc/${kids[0]}/environ`, "utf8")
      .split("\0")
      .filter(Boolean)
      .map((kv) => kv.slice(0, kv.indexOf("=")));
    expect(names.sort()).toEqual(["CODEX_HOME", "HOME", "LANG", "PATH", "TMPDIR", "USER"]);
    const ac = new AbortController();
    const running = s.runTurn(turn({ signal: ac.signal }));
    await waitUntil(() => modelRequests(w).length > 0, "the turn's request to reach the model");
    expect(modelRequests(w).length).toBe(1);
    ac.abort();
    const r = await running;
    expect(r).toMatchObject({ status: "interrupted", reason: "cancelled" });
    // A request was dispatched and never answered: its usage is unknown, not zero.
    expect(r.usage).toEqual({ inputTokens: null, cachedInputTokens: null, outputTokens: null });
    expect(await s.close()).toEqual({ outcome: "released", reason: "the child exited and the private directory was removed" });
    expectNothingLeft(w);
  }, 60_000);
  test("aborting the session's own signal mid-turn interrupts the turn and closes the session", async () => {
    const w = world(() => ({ kind: "hang" }));
    const ac = new AbortController();
    const s = await startCodexAccountSession({ purpose: "analyst", signal: ac.signal, env: w.env });
    const running = s.runTurn(turn());
    await waitUntil(() => modelRequests(w).length > 0, "the turn's request to reach the model");
    ac.abort();
    expect(await running).toMatchObject({ status: "interrupted", reason: "session_closed" });
    expect((await s.close()).outcome).toBe("released");
    expect(await s.runTurn(turn())).toMatchObject({ status: "failed", reason: "session_closed" });
    expectNothingLeft(w);
  }, 60_000);
  test("a replaced auth.json link is kept 0600, reported, never copied back, and blocks the next session", async () => {
    const w = world(say("{}"));
    const before = readFileSync(w.authPath, "utf8");
    const s: CodexAccountSession = await startCodexAccountSession({ purpose: "analyst", signal: never, env: w.env });
    const [dir] = privateDirsOf(w);
    expect(dir).toBeDefined();
    const link = join(dir as string, "home", "auth.json");
    // What Codex does when it rewrites its login (e.g. after a token refresh): an atomic replace of the file.
    unlinkSync(link);
    writeFileSync(link, '{"rewritten":"by codex"}', { mode: 0o644 });
    const rel = await s.close();
    expect(rel).toMatchObject({ outcome: "released", warning: "codex_cleanup_failed", keptDir: dir });
    expect(lstatSync(link).mode & 0o777).toBe(0o600);
    expect(readdirSync(dir as string)).toEqual(["home"]);
    expect(readdirSync(join(dir as string, "home"))).toEqual(["auth.json"]);
    expect(readFileSync(w.authPath, "utf8")).toBe(before);
    const marker = join(w.cache, "humanish", "codex-analysis-recovery", `${(dir as string).split("/").pop()}.json`);
    expect(JSON.parse(readFileSync(marker, "utf8"))).toMatchObject({
      schema: "humanish.codex-auth-recovery.v1",
      reason: "unexpected_auth_replacement",
      homeDirectoryName: "home",
      authFileName: "auth.json",
    });
    expect(await errCode(startCodexAccountSession({ purpose: "analyst", signal: never, env: w.env }))).toBe("HUMANISH_CODEX_CLEANUP_FAILED");
    // The operator decides (here: keeps their own login) and removes the kept copy; sessions start again.
    rmSync(dir as string, { recursive: true });
    const next = await startCodexAccountSession({ purpose: "analyst", signal: never, env: w.env });
    expect((await next.close()).outcome).toBe("released");
    expect(existsSync(marker)).toBe(false);
  }, 60_000);
});

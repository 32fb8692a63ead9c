/**
 * Export of a real Codex run: the real `@openai/codex` CLI in the real Docker sandbox reaches the
 * local fake Responses server through the humanish model gateway (the committed
 * codex-first-contact lab), then `humanish export --format atif`. The trajectory has Codex's
 * observed version, the model the ledger observed, one shell call per jq command with its
 * output, the key nowhere, and the turn's token totals in final_metrics.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { AtifTrajectory } from "../../src/export/atif/schema.ts";
import { validateAtif } from "../../src/export/atif/validate.ts";
import { cli } from "../cli/support.ts";
import { committedLab, containersOfRun, removeContainers, testRunId, tmpProject } from "../routes/terminal/support.ts";
import { codexImageProvider } from "../support/codex-image.ts";
import { codexJqSession, JQ_COMMANDS } from "../support/fake-openai/scenarios.ts";
import { type FakeOpenAI, startFakeOpenAI } from "../support/fake-openai/server.ts";
import { requireDocker } from "../support/prereq.ts";
import { verifiedTerminalStudy } from "../support/terminal-study.ts";

const KEY = "sk-proj-fakeEXPORTkey-4c8e2a6b1d3f5079";
const MODEL = "gpt-5.1-codex-mini";
const HOST_CA = process.env.NODE_EXTRA_CA_CERTS;
const project = tmpProject();
const runId = testRunId("export-codex");
let fake: FakeOpenAI;

beforeAll(async () => {
  await requireDocker();
  fake = startFakeOpenAI({ apiKey: KEY, scenario: codexJqSession({ model: MODEL, huntKey: false }) });
  let text = committedLab("codex-first-contact").text;
  text = text.replace(/ {4}reasoningEffort: low\n/, `    reasoningEffort: low\n    model: ${MODEL}\n`);
  await verifiedTerminalStudy({
    dir: project.dir,
    text,
    runId,
    env: { CODEX_API_KEY: KEY, OPENAI_BASE_URL: fake.baseURL, PATH: "/usr/bin:/bin", ...(HOST_CA ? { HUMANISH_SANDBOX_CA_CERTS: HOST_CA } : {}) },
    // The export is under test, not the install: the sandbox image carries the pinned Codex.
    sandboxProvider: codexImageProvider(),
  });
}, 600_000);

afterAll(async () => {
  await fake?.close();
  await removeContainers(await containersOfRun(runId));
  project.cleanup();
});

describe("export of a real Codex run", () => {
  test("observed version and model, one shell call per command with its output, no key, turn totals in final_metrics", async () => {
    const r = await cli(["export", "--run", runId, "--format", "atif", "--cwd", project.dir, "--json"], { ...process.env, CODEX_API_KEY: KEY });
    expect(r.code).toBe(0);
    const out = r.json<{ exported: { path: string }[] }>();
    const text = readFileSync(join(project.dir, out.exported[0]!.path), "utf8");
    expect(text).not.toContain(KEY);
    const t = JSON.parse(text) as AtifTrajectory;
    expect(validateAtif(t).errors).toEqual([]);
    expect(t.agent.name).toBe("codex");
    expect(t.agent.version).toMatch(/^\d+\.\d+\.\d+/);
    expect(t.agent.model_name).toBe(MODEL);
    const calls = t.steps.flatMap((s) => s.tool_calls ?? []);
    expect(calls.map((c) => c.function_name)).toEqual(JQ_COMMANDS.map(() => "shell"));
    expect(calls.map((c) => String(c.arguments.command))).toEqual(JQ_COMMANDS.map((c) => expect.stringContaining(c.slice(0, 12))));
    for (const s of t.steps.filter((x) => x.tool_calls)) {
      expect(s.observation?.results.map((x) => x.source_call_id)).toEqual(s.tool_calls!.map((c) => c.tool_call_id));
    }
    expect(
      t.steps.find((s) => s.tool_calls?.[0]?.arguments.command === JQ_COMMANDS[2] || String(s.tool_calls?.[0]?.arguments.command).includes("open-ids"))
        ?.observation?.results[0]?.content,
    ).toContain("A-1001");
    const run = JSON.parse(readFileSync(join(project.dir, ".humanish", "runs", runId, "actor.json"), "utf8"));
    expect(t.final_metrics).toMatchObject({
      total_prompt_tokens: run.tokenUsage.input,
      total_completion_tokens: run.tokenUsage.output,
      total_steps: t.steps.length,
    });
    expect(t.steps.at(-1)?.message).toMatch(/hidden checks: pretty-print passed, open-order-ids passed, open-total passed, orders-per-customer passed$/);
  });
});

/**
 * `humanish analyze` and `humanish analyze show` through the CLI: the `--json` envelopes
 * (schema, ok, error {code, message}), exit codes, and one run of the real entry point
 * (src/cli/main.ts) as a child process against the fake model server.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { cli } from "../cli/support.ts";
import { tempProject, writeStudyRun } from "../report/fixtures.ts";
import { startFakeOpenAI } from "../support/fake-openai/server.ts";
import { FAKE_KEY, fakeEnv, goodAnswer, message } from "./support.ts";

const fake = startFakeOpenAI({ apiKey: FAKE_KEY, scenario: (req) => message(goodAnswer(req)) });
const proj = tempProject("humanish-analysis-cli-");
afterAll(async () => {
  await fake.close();
  proj.cleanup();
});

/** The env of a CLI child: this test process's signing config, no model key unless given. */
function env(extra: Record<string, string> = {}): Record<string, string | undefined> {
  const { OPENAI_API_KEY: _a, CODEX_API_KEY: _b, OPENAI_BASE_URL: _c, ...rest } = process.env;
  return { ...rest, ...extra };
}

describe("humanish analyze --json", () => {
  test("dry run, the real analysis, show, and the refusals, each with its envelope", async () => {
    await writeStudyRun(proj.cwd);
    const dry = await cli(["analyze", "--dry-run", "--max-cost", "1", "--json", "--cwd", proj.cwd], env());
    expect(dry.code).toBe(0);
    const d = dry.json<Record<string, unknown>>();
    expect(d).toMatchObject({
      schema: "humanish.analyze-result.v1",
      ok: true,
      run: "study-5",
      dryRun: true,
      status: "dry_run",
      attempt: null,
      provider: "openai",
      model: "gpt-5.1",
    });
    expect(d.admission).toMatchObject({ maxCostUsd: 1, admitted: true, maxOutputTokens: 32768 });
    expect((d.selection as { participants: number }).participants).toBe(5);
    expect(fake.requests.length).toBe(0);

    const noCap = await cli(["analyze", "--json", "--cwd", proj.cwd], env());
    expect(noCap.code).toBe(2);
    expect(noCap.json()).toMatchObject({ schema: "humanish.analyze-result.v1", ok: false, error: { code: "HUMANISH_ANALYSIS_MAX_COST_REQUIRED" } });
    const over = await cli(["analyze", "--max-cost", "0.001", "--json", "--cwd", proj.cwd], env(fakeEnv(fake.baseURL)));
    expect(over.json()).toMatchObject({ ok: false, error: { code: "HUMANISH_ANALYSIS_BUDGET_EXCEEDED" } });
    const badProvider = await cli(["analyze", "--provider", "claude", "--max-cost", "1", "--json", "--cwd", proj.cwd], env());
    expect(badProvider.json()).toMatchObject({ ok: false, error: { code: "HUMANISH_ANALYSIS_CONFIG_INVALID" } });
    expect(fake.requests.length).toBe(0);
    // The Codex account analyst is billed to the account: a numeric cap is refused, its dry run has no USD figure.
    const codexCap = await cli(["analyze", "--provider", "codex", "--max-cost", "1", "--dry-run", "--json", "--cwd", proj.cwd], env());
    expect(codexCap.json()).toMatchObject({ ok: false, error: { code: "HUMANISH_CODEX_CAP_UNENFORCEABLE" } });
    const codexDry = await cli(["analyze", "--provider", "codex", "--dry-run", "--json", "--cwd", proj.cwd], env());
    expect(codexDry.code).toBe(0);
    expect(codexDry.json()).toMatchObject({ ok: true, dryRun: true, provider: "codex", admission: { estimatedUsd: null, maxCostUsd: null } });

    const none = await cli(["analyze", "show", "--json", "--cwd", proj.cwd], env());
    expect(none.code).toBe(2);
    expect(none.json()).toMatchObject({ schema: "humanish.analysis-show-result.v1", ok: false, error: { code: "HUMANISH_ANALYSIS_NOT_FOUND" } });

    // The compiled entry point, as a child process, against the fake.
    const child = Bun.spawn(
      ["bun", join(import.meta.dir, "../../src/cli/main.ts"), "analyze", "--max-cost", "1", "--question", "What blocked p3?", "--json", "--cwd", proj.cwd],
      {
        env: env(fakeEnv(fake.baseURL)),
        stdout: "pipe",
        stderr: "pipe",
      },
    );
    const [out, code] = await Promise.all([new Response(child.stdout).text(), child.exited]);
    expect(code).toBe(0);
    const r = JSON.parse(out) as Record<string, unknown>;
    expect(r).toMatchObject({
      schema: "humanish.analyze-result.v1",
      ok: true,
      dryRun: false,
      reused: false,
      status: "complete",
      attempt: "0001",
      findings: 2,
      rejectedFindings: 0,
    });
    expect(r.artifactPath).toBe(".humanish/runs/study-5/analysis/0001/analysis.json");
    expect(r.usage).toMatchObject({ costLabel: "priced" });
    expect(out).not.toContain(FAKE_KEY);
    expect(fake.requests.length).toBe(1);

    const shown = await cli(["analyze", "show", "--json", "--cwd", proj.cwd], env());
    expect(shown.code).toBe(0);
    const s = shown.json<{ ok: boolean; attempt: string; attempts: string[]; analysis: { result: { findings: unknown[] } } }>();
    expect(s).toMatchObject({ schema: "humanish.analysis-show-result.v1", ok: true, attempt: "0001", attempts: ["0001"] });
    expect(s.analysis.result.findings).toHaveLength(2);
    const human = await cli(["analyze", "show", "--cwd", proj.cwd], env());
    expect(human.stdout).toContain("analysis 0001 of study-5 (.humanish/runs/study-5): complete");
    expect(human.stdout).toContain("[blocker] f1");
  }, 60_000);
});

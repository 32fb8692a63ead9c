/**
 * The post-run analyst of a study: the default plan (pure), then real scripted terminal studies
 * on the Docker engine whose analyst is the real `openai` SDK or the real Codex app-server, both
 * talking to the fake Responses server; and a study without the key, which still succeeds.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { verifyRun } from "../../src/bundle/verify.ts";
import { escapeHtml } from "../../src/report/html.ts";
import { runStudy } from "../../src/routes/index.ts";
import { planAnalyst } from "../../src/study/post-analysis.ts";
import { codexWorld } from "../actors/codex-account/support.ts";
import { FAKE_KEY, fakeEnv, goodAnswer, message } from "../analysis/support.ts";
import { cli } from "../cli/support.ts";
import { labFromText, studyContext } from "../routes/terminal/support.ts";
import { startFakeOpenAI } from "../support/fake-openai/server.ts";
import { scriptedTerminalLab } from "../support/terminal-study.ts";

const dirs: string[] = [];
const cleanups: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const c of cleanups) await c();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
const project = () => {
  const d = mkdtempSync(join(tmpdir(), "humanish-post-analysis-"));
  dirs.push(d);
  return d;
};

/** A one-seat scripted study whose seat creates done.txt; `review` is appended as YAML. */
function lab(id: string, review: string, maxTotalUsd?: number): string {
  const text = scriptedTerminalLab({ id, steps: ["touch done.txt"] });
  const caps = maxTotalUsd === undefined ? text : text.replace("caps: {maxUsd: 0,", `caps: {maxUsd: 0, maxTotalUsd: ${maxTotalUsd},`);
  return review ? `${caps}review:\n${review}\n` : caps;
}

async function study(dir: string, text: string, runId: string, env: Record<string, string | undefined>) {
  return runStudy(studyContext({ cwd: dir, lab: labFromText(text), text, runId, mode: "live", env }));
}

describe("planAnalyst (the default)", () => {
  const base = { mode: "live" as const, maxTotalUsd: undefined, env: { OPENAI_API_KEY: "k" }, studyOk: true };
  test("absent key: openai, only live, with the key, under a derivable cap", () => {
    expect(planAnalyst({ ...base, analysis: undefined })).toMatchObject({ run: false, reason: expect.stringContaining("no USD cap") });
    expect(planAnalyst({ ...base, analysis: undefined, maxTotalUsd: 2 })).toEqual({
      run: true,
      provider: "openai",
      model: null,
      question: null,
      maxCostUsd: 2,
    });
    expect(planAnalyst({ ...base, analysis: undefined, maxTotalUsd: 2, env: {} })).toMatchObject({
      run: false,
      reason: expect.stringContaining("OPENAI_API_KEY"),
    });
    expect(planAnalyst({ ...base, analysis: undefined, maxTotalUsd: 2, mode: "dry-run" })).toMatchObject({
      run: false,
      reason: expect.stringContaining("dry run"),
    });
    expect(planAnalyst({ ...base, analysis: undefined, maxTotalUsd: 2, studyOk: false })).toMatchObject({ run: false });
  });
  test("false skips; an explicit analyst keeps its own cap, model and question", () => {
    expect(planAnalyst({ ...base, analysis: false })).toEqual({ run: false, reason: "review.analysis is false" });
    expect(planAnalyst({ ...base, analysis: { provider: "openai", maxCost: 0.5, model: "gpt-5.5", question: "Why?" } })).toEqual({
      run: true,
      provider: "openai",
      model: "gpt-5.5",
      question: "Why?",
      maxCostUsd: 0.5,
    });
    expect(planAnalyst({ ...base, env: {}, analysis: { provider: "codex" } })).toMatchObject({ run: true, provider: "codex", maxCostUsd: null });
  });
  test("codex with maxCost is refused at parse, naming the field", () => {
    const r = (() => {
      try {
        labFromText(lab("codex-cap", "  analysis: {provider: codex, maxCost: 1}"));
        return "parsed";
      } catch (e) {
        return (e as Error).message;
      }
    })();
    expect(r).toContain("HUMANISH_LAB_INVALID");
    expect(r).toContain("review.analysis.maxCost");
  });
});

describe("a study ends with findings (Docker, fake model)", () => {
  test("the default openai analyst runs after the seal: findings in the bundle and on the report's first screen, verify ok", async () => {
    const fake = startFakeOpenAI({ apiKey: FAKE_KEY, scenario: (req) => message(goodAnswer(req)) });
    cleanups.push(() => fake.close());
    const dir = project();
    const r = await study(dir, lab("findings-default", "", 1), "findings-default-1", { PATH: process.env.PATH, ...fakeEnv(fake.baseURL) });
    expect(r.ok).toBe(true);
    expect(r.analysis).toMatchObject({ outcome: "complete", id: "0001", provider: "openai" });
    expect(fake.requests.filter((q) => q.path === "/v1/responses").length).toBe(1);
    const run = join(dir, ".humanish", "runs", "findings-default-1");
    const record = JSON.parse(readFileSync(join(run, "analysis", "0001", "analysis.json"), "utf8"));
    expect(record).toMatchObject({ runId: "findings-default-1", provider: "openai", status: "complete" });
    expect((await verifyRun(run)).ok).toBe(true);
    const html = readFileSync(join(run, "report", "index.html"), "utf8");
    const first = html.slice(html.indexOf('id="verdict"'), html.indexOf('id="participants"'));
    expect(first).toContain('id="verdict-findings"');
    expect(record.result.findings.length).toBeGreaterThan(0);
    expect(r.analysis?.findings).toBe(record.result.findings.length);
    expect(first).toContain(`${record.result.findings.length} finding`);
    expect(first).toContain(escapeHtml(record.result.findings[0].title));
  }, 240_000);

  test("without OPENAI_API_KEY the study still succeeds and says findings skipped", async () => {
    const dir = project();
    const r = await study(dir, lab("findings-nokey", "  analysis: {provider: openai, maxCost: 1}"), "findings-nokey-1", { PATH: process.env.PATH });
    expect(r.ok).toBe(true);
    expect(r.verify.ok).toBe(true);
    expect(r.analysis).toEqual({ outcome: "skipped", skipped: "OPENAI_API_KEY is not set" });
  }, 240_000);

  test("review.analysis {provider: codex}: the real Codex app-server analyses the bundle", async () => {
    const answer = JSON.stringify({ summary: "Nothing stood out.", findings: [], limitations: ["One seat only."] });
    const w = codexWorld(() => message(answer));
    cleanups.push(() => w.cleanup());
    const dir = project();
    const r = await study(dir, lab("findings-codex", "  analysis: {provider: codex}"), "findings-codex-1", {
      ...w.env,
      PATH: `${w.env.PATH}:${process.env.PATH}`,
    });
    expect(r.ok).toBe(true);
    expect(r.analysis).toMatchObject({ provider: "codex", id: "0001", costUsd: null });
    expect(["complete", "partial"]).toContain(r.analysis!.outcome);
    expect(w.fake.requests.some((q) => q.path === "/v1/responses")).toBe(true);
    expect((await verifyRun(join(dir, ".humanish", "runs", "findings-codex-1"))).ok).toBe(true);
  }, 240_000);
});

describe("lab run says why a study has no findings", () => {
  test("human mode: one stderr line; --json: the analysis outcome, stderr empty; the study succeeds", async () => {
    const dir = project();
    mkdirSync(join(dir, "humanish", "labs"), { recursive: true });
    writeFileSync(join(dir, "humanish", "labs", "nokey.yaml"), lab("nokey", "", 1));
    const env = { PATH: process.env.PATH };
    const human = await cli(["lab", "run", "nokey", "--cwd", dir, "--run-id", "nokey-human"], env);
    expect(human.code).toBe(0);
    expect(human.stderr).toContain("humanish: findings skipped: OPENAI_API_KEY is not set");
    const json = await cli(["lab", "run", "nokey", "--cwd", dir, "--run-id", "nokey-json", "--json"], env);
    expect(json.code).toBe(0);
    expect(json.json()).toMatchObject({ ok: true, analysis: { outcome: "skipped", skipped: expect.stringContaining("OPENAI_API_KEY") } });
    expect(json.stderr).toBe("");
  }, 240_000);
});

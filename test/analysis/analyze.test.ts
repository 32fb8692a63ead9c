/**
 * `analyzeRun` end to end: real bundles written by the bundle writer, the real `openai` SDK,
 * the fake Responses server at the wire. Each test reads what the fake received, so "nothing was
 * sent" and "exactly one request" are observed, not assumed.
 */
import { afterAll, afterEach, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createOpenAIAnalysisProvider } from "../../src/analysis/provider-openai.ts";
import { type AnalyzeOptions, analyzeRun, latestAnalysis } from "../../src/analysis/run.ts";
import { AnalysisDiagnosticsSchema, AnalysisRecordSchema, AnalysisRequestsSchema, verifyRun } from "../../src/bundle/index.ts";
import { HumanishError } from "../../src/errors.ts";
import { writeReport } from "../../src/report/write.ts";
import { tempProject, writeDryRun, writeStudyRun, writeTerminalRun } from "../report/fixtures.ts";
import { type FakeReply, type FakeRequest, startFakeOpenAI } from "../support/fake-openai/server.ts";
import { analyzeOptions, FAKE_KEY, goodAnswer, headersOf, message } from "./support.ts";

let reply: (req: FakeRequest) => FakeReply = (req) => message(goodAnswer(req));
const fake = startFakeOpenAI({ apiKey: FAKE_KEY, scenario: (req) => reply(req) });
const cleanups: (() => void)[] = [];
afterEach(() => {
  reply = (req) => message(goodAnswer(req));
  fake.requests.length = 0;
  for (const c of cleanups.splice(0)) c();
});
afterAll(() => fake.close());

function project(): string {
  const p = tempProject("humanish-analysis-");
  cleanups.push(p.cleanup);
  return p.cwd;
}

const opts = (runDir: string, over: Partial<AnalyzeOptions> = {}): AnalyzeOptions => analyzeOptions(runDir, fake.baseURL, over);

const posts = () => fake.requests.filter((r) => r.method === "POST" && r.path === "/v1/responses").length;

function readJson(runDir: string, rel: string): unknown {
  return JSON.parse(readFileSync(join(runDir, rel), "utf8"));
}

async function expectCode(p: Promise<unknown>, code: string): Promise<HumanishError> {
  try {
    await p;
  } catch (e) {
    expect(e).toBeInstanceOf(HumanishError);
    expect((e as HumanishError).code).toBe(code);
    return e as HumanishError;
  }
  throw new Error(`expected ${code}, nothing was thrown`);
}

describe("a good analysis", () => {
  test("is stored in the bundle, verified, shown in the report with links to its evidence, and reused until --rerun", async () => {
    const runDir = await writeStudyRun(project());
    await writeReport(runDir);
    const o = await analyzeRun(opts(runDir, { question: "Why did p3 give up?" }));
    expect(o.status).toBe("complete");
    expect(o.attempt).toBe("0001");
    expect(posts()).toBe(1);
    // The request carried the question, every seat's status and the screenshots as images.
    const body = fake.requests[0]!.body!;
    expect(String(body.instructions)).toContain("Why did p3 give up?");
    const ids = headersOf(fake.requests[0]!).map((h) => h.id);
    for (const p of ["p1", "p2", "p3", "p4", "p5"]) expect(ids).toContain(`${p}/status`);
    expect(ids).toContain("p3/task/clear-completed");
    const parts = (body.input as { content: { type: string }[] }[])[0]!.content;
    expect(parts.filter((c) => c.type === "input_image").length).toBe(o.selection.images);
    expect((body.text as { format: { type: string; strict: boolean } }).format).toMatchObject({ type: "json_schema", strict: true });

    const record = AnalysisRecordSchema.parse(readJson(runDir, "analysis/0001/analysis.json"));
    const requests = AnalysisRequestsSchema.parse(readJson(runDir, "analysis/0001/requests.json"));
    AnalysisDiagnosticsSchema.parse(readJson(runDir, "analysis/0001/diagnostics.json"));
    expect(record.result?.findings.map((f) => f.id)).toEqual(["f1", "f2"]);
    // The estimate is never below what the service billed.
    expect(record.estimate.inputTokens).toBeGreaterThanOrEqual(record.usage.inputTokens!);
    expect(record.estimate.usd!).toBeGreaterThanOrEqual(record.usage.costUsd!);
    expect(requests.requests).toHaveLength(1);
    expect(requests.requests[0]).toMatchObject({ outcome: "completed", costLabel: "priced", ratesAsOf: "2025-11-20", reason: null });

    const run = JSON.parse(readFileSync(join(runDir, "run.json"), "utf8")) as { artifacts: { path: string; kind: string }[] };
    expect(run.artifacts.filter((a) => a.kind === "analysis").map((a) => a.path)).toEqual([
      "analysis/0001/analysis.json",
      "analysis/0001/diagnostics.json",
      "analysis/0001/requests.json",
    ]);
    const v = await verifyRun(runDir);
    expect(v.checks.filter((c) => !c.ok)).toEqual([]);
    expect(v.checks.find((c) => c.name === "analysis records")?.message).toContain("1 analysis attempt(s), 2 finding(s)");

    const html = readFileSync(join(runDir, "report/index.html"), "utf8");
    expect(html).toContain('<section id="findings">');
    const f1 = record.result!.findings[0]!;
    const shot = f1.evidence.find((id) => id.includes("/screenshot/"))!;
    const shotPath = record.evidence.find((x) => x.id === shot)!.source.path;
    const anchor = new RegExp(`<a href="#(shot-\\d+)"><code>${shot.replace(/\//g, "\\/")}</code>`).exec(html)?.[1];
    expect(anchor).toBeDefined();
    // The link lands on the figure of that very screenshot.
    const figure = html.slice(html.indexOf(`<figure class="thumb" id="${anchor}">`));
    expect(figure.slice(0, figure.indexOf("</figure>"))).toContain(shotPath);

    const shown = await latestAnalysis(runDir);
    expect(shown.attempt).toBe("0001");
    expect(shown.record.result?.findings).toHaveLength(2);

    const again = await analyzeRun(opts(runDir, { question: "Why did p3 give up?" }));
    expect(again).toMatchObject({ reused: true, attempt: "0001", status: "complete" });
    expect(posts()).toBe(1);
    const rerun = await analyzeRun(opts(runDir, { question: "Why did p3 give up?", rerun: true }));
    expect(rerun).toMatchObject({ reused: false, attempt: "0002" });
    expect(posts()).toBe(2);
    expect((await verifyRun(runDir)).ok).toBe(true);
  }, 60_000);

  test("a terminal run's transcript is sent as excerpts with line-range ids", async () => {
    const runDir = await writeTerminalRun(project());
    const o = await analyzeRun(opts(runDir));
    expect(o.status).toBe("complete");
    const ids = headersOf(fake.requests[0]!).map((h) => h.id);
    expect(ids).toContain("p1/transcript#L1-L5");
    expect(ids).toContain("p1/trace/command-002");
    expect(ids).toContain("p1/task/count-tags");
  });
});

describe("rejected output is kept as diagnostics, never a success", () => {
  test("a finding citing an evidence id that was not sent is rejected; the others stand", async () => {
    const runDir = await writeStudyRun(project());
    reply = (req) =>
      message(
        goodAnswer(req, [
          {
            id: "f3",
            title: "made up",
            severity: "major",
            kind: "observed",
            participants: ["p1"],
            tasks: ["add-todo"],
            evidence: ["p1/screenshot/0999"],
            recommendation: "n/a",
          },
          {
            id: "f4",
            title: "nobody",
            severity: "minor",
            kind: "observed",
            participants: ["p42"],
            tasks: ["no-such-task"],
            evidence: ["p1/status"],
            recommendation: "n/a",
          },
        ]),
      );
    const o = await analyzeRun(opts(runDir));
    expect(o).toMatchObject({ status: "partial", findings: 2, rejectedFindings: 2 });
    const d = AnalysisDiagnosticsSchema.parse(readJson(runDir, "analysis/0001/diagnostics.json"));
    expect(d.rejectedFindings.map((r) => r.findingId)).toEqual(["f3", "f4"]);
    expect(d.rejectedFindings[0]!.problems).toEqual(["cites evidence p1/screenshot/0999, which was not in the packet"]);
    expect(d.rejectedFindings[1]!.problems).toEqual(["names participant p42, who is not in the bundle", "names task no-such-task, which is not in the bundle"]);
    expect((await verifyRun(runDir)).ok).toBe(true);
  });

  const cases: [string, FakeReply, string, string][] = [
    ["a refusal", { kind: "response", output: [{ type: "refusal", refusal: "I can't help with that." }] }, "refusal", "refusal"],
    [
      "an incomplete answer",
      { kind: "response", output: [{ type: "message", text: '{"summary":"cut' }], incomplete: "max_output_tokens" },
      "incomplete",
      "output_incomplete",
    ],
    ["invalid JSON", { kind: "response", output: [{ type: "message", text: "here are my findings: none" }] }, "invalid_json", "invalid_json"],
  ];
  for (const [name, r, reason, code] of cases) {
    test(`${name} is a rejected output`, async () => {
      const runDir = await writeStudyRun(project());
      reply = () => r;
      const o = await analyzeRun(opts(runDir));
      expect(o).toMatchObject({ status: "rejected", findings: 0, error: { code } });
      expect(posts()).toBe(1);
      const d = AnalysisDiagnosticsSchema.parse(readJson(runDir, "analysis/0001/diagnostics.json"));
      expect(d.rejectedOutput?.reason).toBe(reason as never);
      const record = AnalysisRecordSchema.parse(readJson(runDir, "analysis/0001/analysis.json"));
      expect(record.result).toBeNull();
      // Billed all the same: the ledger keeps the usage.
      expect(record.usage.costLabel).toBe("priced");
      expect((await verifyRun(runDir)).ok).toBe(true);
      expect((await latestAnalysis(runDir)).record.status).toBe("rejected");
    });
  }

  test("an answer whose every finding is rejected is a rejected output (never partial), each finding kept in diagnostics", async () => {
    const runDir = await writeStudyRun(project());
    reply = (req) => {
      const good = JSON.parse(goodAnswer(req)) as { findings: { evidence: string[] }[] };
      for (const f of good.findings) f.evidence = ["p1/screenshot/0999"];
      return message(JSON.stringify(good));
    };
    const o = await analyzeRun(opts(runDir));
    expect(o).toMatchObject({ status: "rejected", findings: 0, error: { code: "all_findings_rejected" } });
    expect(o.rejectedFindings).toBeGreaterThan(0);
    const d = AnalysisDiagnosticsSchema.parse(readJson(runDir, "analysis/0001/diagnostics.json"));
    expect(d.rejectedOutput?.reason).toBe("all_findings_rejected");
    expect(d.rejectedFindings).toHaveLength(o.rejectedFindings);
    expect(d.rejectedFindings[0]!.problems).toEqual(["cites evidence p1/screenshot/0999, which was not in the packet"]);
    const record = AnalysisRecordSchema.parse(readJson(runDir, "analysis/0001/analysis.json"));
    expect([record.status, record.result]).toEqual(["rejected", null]);
    expect((await verifyRun(runDir)).ok).toBe(true);
    // Not reusable: the next analyze makes a new attempt rather than returning this one.
    expect((await analyzeRun(opts(runDir))).attempt).toBe("0002");
  });

  test("an enum word outside the schema is a schema violation naming the finding", async () => {
    const runDir = await writeStudyRun(project());
    reply = (req) => {
      const good = JSON.parse(goodAnswer(req)) as { findings: { kind: string }[] };
      good.findings[0]!.kind = "speculation";
      return message(JSON.stringify(good));
    };
    const o = await analyzeRun(opts(runDir));
    expect(o.status).toBe("rejected");
    const d = AnalysisDiagnosticsSchema.parse(readJson(runDir, "analysis/0001/diagnostics.json"));
    expect(d.rejectedOutput?.reason).toBe("schema_violation");
    expect(d.rejectedOutput?.detail).toContain("findings.0.kind");
    expect(d.rejectedOutput?.text).toContain("speculation");
  });

  test("a 429 is a failed request after exactly one attempt (no retry)", async () => {
    const runDir = await writeStudyRun(project());
    reply = () => ({ kind: "error", status: 429, type: "rate_limit_error", code: "rate_limit_exceeded", message: "Rate limit reached" });
    const o = await analyzeRun(opts(runDir));
    expect(o).toMatchObject({ status: "failed", error: { code: "rate_limit_exceeded" } });
    expect(posts()).toBe(1);
    const q = AnalysisRequestsSchema.parse(readJson(runDir, "analysis/0001/requests.json"));
    expect(q.requests[0]).toMatchObject({ outcome: "failed", httpStatus: 429, costUsd: null, reason: "no_token_usage", ratesAsOf: null });
    expect((await verifyRun(runDir)).ok).toBe(true);
  });
});

describe("refused before anything is sent", () => {
  test("an estimate over --max-cost", async () => {
    const runDir = await writeStudyRun(project());
    const e = await expectCode(analyzeRun(opts(runDir, { maxCostUsd: 0.01 })), "HUMANISH_ANALYSIS_BUDGET_EXCEEDED");
    expect(e.next).toContain("--max-cost 1");
    expect(posts()).toBe(0);
    expect(existsSync(join(runDir, "analysis"))).toBe(false);
  });

  test("no --max-cost for openai", async () => {
    const runDir = await writeStudyRun(project());
    await expectCode(analyzeRun(opts(runDir, { maxCostUsd: null })), "HUMANISH_ANALYSIS_MAX_COST_REQUIRED");
    expect(posts()).toBe(0);
  });

  test("a tampered bundle", async () => {
    const runDir = await writeStudyRun(project());
    const path = join(runDir, "seats/p3/actor.json");
    writeFileSync(path, readFileSync(path, "utf8").replace("gave_up", "goal_satisfied"));
    const e = await expectCode(analyzeRun(opts(runDir)), "HUMANISH_ANALYSIS_BUNDLE_UNVERIFIED");
    expect(e.message).toContain("artifacts intact");
    expect(posts()).toBe(0);
  });

  test("another live analysis of the same run holds its lock; a dead owner's lock is taken over", async () => {
    const cwd = project();
    const runDir = await writeStudyRun(cwd);
    const lock = join(cwd, ".humanish", "analysis-locks", "study-5");
    mkdirSync(lock, { recursive: true });
    writeFileSync(join(lock, "owner.json"), JSON.stringify({ pid: process.pid, at: new Date().toISOString() }));
    await expectCode(analyzeRun(opts(runDir)), "HUMANISH_ANALYSIS_BUSY");
    expect(posts()).toBe(0);
    // A pid that cannot be alive (above the kernel's pid_max ceiling).
    writeFileSync(join(lock, "owner.json"), JSON.stringify({ pid: 4_194_305, at: new Date().toISOString() }));
    expect((await analyzeRun(opts(runDir))).status).toBe("complete");
    expect(existsSync(lock)).toBe(false);
  });

  test("a dry-run bundle: nothing ran, nothing to analyse", async () => {
    const runDir = await writeDryRun(project());
    await expectCode(analyzeRun(opts(runDir)), "HUMANISH_ANALYSIS_DRY_RUN_BUNDLE");
    expect(posts()).toBe(0);
  });

  test("--dry-run prints the estimate with no key, sends and writes nothing", async () => {
    const runDir = await writeStudyRun(project());
    const before = readFileSync(join(runDir, "run.json"), "utf8");
    const o = await analyzeRun(opts(runDir, { dryRun: true, provider: createOpenAIAnalysisProvider({}) }));
    expect(o).toMatchObject({ dryRun: true, status: "dry_run", attempt: null, artifactPath: null, usage: null });
    expect(o.estimate.usd).toBeGreaterThan(0);
    expect(o.estimate.maxOutputTokens).toBe(32_768);
    expect(posts()).toBe(0);
    expect(readFileSync(join(runDir, "run.json"), "utf8")).toBe(before);
    // Without the dry run, the missing key is refused before sending.
    await expectCode(analyzeRun(opts(runDir, { provider: createOpenAIAnalysisProvider({}) })), "HUMANISH_ANALYSIS_KEY_MISSING");
    expect(posts()).toBe(0);
  });
});

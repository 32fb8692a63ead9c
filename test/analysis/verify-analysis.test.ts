/**
 * `verify`'s "analysis records" check over a bundle with a real analysis attempt: the attempt as
 * stored passes; edited in memory (so only this check's rules are in play besides the seal),
 * each broken rule fails the check with a message naming it.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { analyzeRun } from "../../src/analysis/run.ts";
import { type BundleFile, defaultTrust, verifyFiles } from "../../src/bundle/index.ts";
import { loadFiles } from "../bundle/memory.ts";
import { tempProject, writeStudyRun } from "../report/fixtures.ts";
import { startFakeOpenAI } from "../support/fake-openai/server.ts";
import { analyzeOptions, FAKE_KEY, goodAnswer, message } from "./support.ts";

const proj = tempProject("humanish-analysis-verify-");
const fake = startFakeOpenAI({ apiKey: FAKE_KEY, scenario: (req) => message(goodAnswer(req)) });
let files: BundleFile[] = [];
beforeAll(async () => {
  const runDir = await writeStudyRun(proj.cwd);
  await analyzeRun(analyzeOptions(runDir, fake.baseURL));
  files = await loadFiles(runDir);
});
afterAll(async () => {
  await fake.close();
  proj.cleanup();
});

async function check(edit?: { path: string; change: (doc: Record<string, any>) => void }) {
  const out = files.map((f) => {
    if (!edit || f.path !== edit.path) return f;
    const doc = JSON.parse(new TextDecoder().decode(f.bytes));
    edit.change(doc);
    return { path: f.path, bytes: new TextEncoder().encode(JSON.stringify(doc)) };
  });
  const v = await verifyFiles({ run: "study-5", files: out, trust: defaultTrust() });
  return v.checks.find((c) => c.name === "analysis records")!;
}

describe("analysis records", () => {
  test("the stored attempt passes", async () => {
    expect(await check()).toMatchObject({ ok: true, message: "1 analysis attempt(s), 2 finding(s): schemas, references and cost labels check out" });
  });

  const broken: [string, string, (d: Record<string, any>) => void, string][] = [
    [
      "a finding citing evidence that was not sent",
      "analysis/0001/analysis.json",
      (d) => d.result.findings[0].evidence.push("p1/screenshot/0999"),
      "finding f1 cites evidence p1/screenshot/0999, which was not sent",
    ],
    [
      "a finding naming a participant the bundle lacks",
      "analysis/0001/analysis.json",
      (d) => (d.result.findings[1].participants = ["p9"]),
      "finding f2 names participant p9, who is not in the bundle",
    ],
    [
      "an evidence source the bundle does not list",
      "analysis/0001/analysis.json",
      (d) => (d.evidence[0].source.path = "secret/notes.txt"),
      "cites secret/notes.txt, which the bundle does not list",
    ],
    ["a coverage count that does not match", "analysis/0001/analysis.json", (d) => (d.coverage.evidence += 1), "coverage.evidence"],
    ["a status that contradicts the result", "analysis/0001/analysis.json", (d) => (d.status = "rejected"), "status rejected with a result"],
    ["another run's record", "analysis/0001/diagnostics.json", (d) => (d.runId = "other-run"), "diagnostics.json names run other-run"],
    ["a cost with no rates date", "analysis/0001/requests.json", (d) => (d.requests[0].ratesAsOf = null), "a cost without its rates date and source"],
    ["an unknown cost without a reason", "analysis/0001/requests.json", (d) => (d.requests[0].costUsd = null), "labelled priced without a cost"],
    ["a usage total that is not the ledger's", "analysis/0001/analysis.json", (d) => (d.usage.costUsd += 1), "usage.costUsd"],
    [
      "a record that breaks its schema",
      "analysis/0001/analysis.json",
      (d) => (d.result.findings[0].kind = "speculation"),
      "analysis.json: result.findings.0.kind",
    ],
  ];
  for (const [name, path, change, message] of broken) {
    test(name, async () => {
      const c = await check({ path, change });
      expect(c.ok).toBe(false);
      expect(c.message).toContain(message);
    });
  }
});

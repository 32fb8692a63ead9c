/**
 * What an analysis may cost and read, through the real `openai` SDK against the fake Responses
 * server:
 * - a response that names no model has an unknown cost (`no_model_reported`), never the price of
 *   the model that was asked for;
 * - an answer billed above `--max-cost` is a labelled failure of the cap: `ok: false`, exit 3,
 *   `HUMANISH_ANALYSIS_CAP_EXCEEDED`, the stored record marked `capExceeded`, and `verify`'s
 *   analysis-records line naming the overspend (a label that contradicts the cost is refused);
 * - a response body far past its bound is not read whole: the request fails with
 *   `HUMANISH_MODEL_RESPONSE_TOO_LARGE` after about the bound's worth of bytes.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createOpenAIAnalysisProvider } from "../../src/analysis/provider-openai.ts";
import { analyzeRun } from "../../src/analysis/run.ts";
import { type BundleFile, defaultTrust, verifyFiles } from "../../src/bundle/index.ts";
import { readBundleDir } from "../../src/bundle/verify/disk.ts";
import { STRUCTURED_RESPONSE_MAX_BYTES } from "../../src/models/structured.ts";
import { cli } from "../cli/support.ts";
import { tempProject, writeStudyRun } from "../report/fixtures.ts";
import { type FakeOpenAI, type FakeReply, type FakeRequest, startFakeOpenAI } from "../support/fake-openai/server.ts";
import { analyzeOptions, FAKE_KEY, fakeEnv, goodAnswer } from "./support.ts";

let reply: (req: FakeRequest) => FakeReply = (req) => ({ kind: "response", output: [{ type: "message", text: goodAnswer(req) }] });
let fake: FakeOpenAI;
beforeAll(() => {
  fake = startFakeOpenAI({ apiKey: FAKE_KEY, scenario: (req) => reply(req) });
});
afterAll(async () => {
  await fake?.close();
});

/** A fresh project with the 5-seat study run; returns its dir and the run dir. */
async function freshRun(prefix: string) {
  const proj = tempProject(prefix);
  const runDir = await writeStudyRun(proj.cwd);
  return { proj, runDir };
}

async function analysisCheck(runDir: string, edit?: (record: Record<string, unknown>) => void) {
  const files: BundleFile[] = (await readBundleDir(runDir)).files.map((f) => {
    if (!edit || f.path !== "analysis/0001/analysis.json") return f;
    const doc = JSON.parse(new TextDecoder().decode(f.bytes)) as Record<string, unknown>;
    edit(doc);
    return { path: f.path, bytes: new TextEncoder().encode(JSON.stringify(doc)) };
  });
  const v = await verifyFiles({ run: "study-5", files, trust: defaultTrust() });
  return v.checks.find((c) => c.name === "analysis records")!;
}

/** The CLI env of a child talking to the fake (this process's signing config, no other model key). */
function env(): Record<string, string | undefined> {
  const { OPENAI_API_KEY: _a, CODEX_API_KEY: _b, OPENAI_BASE_URL: _c, ...rest } = process.env;
  return { ...rest, ...fakeEnv(fake.baseURL) };
}

describe("analysis costs and bounds", () => {
  test("a response naming no model: cost null with no_model_reported, never priced as the requested model", async () => {
    const { proj, runDir } = await freshRun("humanish-analysis-nomodel-");
    try {
      reply = (req) => ({ kind: "response", model: null, output: [{ type: "message", text: goodAnswer(req) }] });
      const o = await analyzeRun(analyzeOptions(runDir, fake.baseURL));
      expect(o.status).toBe("complete");
      expect(o.usage).toMatchObject({ costUsd: null, costLabel: "unpriced-token-usage" });
      const requests = (await Bun.file(`${runDir}/analysis/0001/requests.json`).json()) as { requests: Record<string, unknown>[] };
      expect(requests.requests[0]).toMatchObject({ model: "gpt-5.1", costUsd: null, reason: "no_model_reported", ratesAsOf: null });
      expect((requests.requests[0]?.inputTokens as number) > 0).toBe(true);
      expect(await analysisCheck(runDir)).toMatchObject({ ok: true });
    } finally {
      proj.cleanup();
    }
  });

  test("billed 562.5 USD under --max-cost 1: exit 3, capExceeded in the outcome, the record and verify's line", async () => {
    const { proj, runDir } = await freshRun("humanish-analysis-overspend-");
    try {
      // 450M input tokens at 1.25 USD/M on gpt-5.1: 562.5 USD. The overspend is all input: the
      // fake, like the service, never bills output past max_output_tokens.
      const usage = {
        input_tokens: 450_000_000,
        input_tokens_details: { cached_tokens: 0 },
        output_tokens: 0,
        output_tokens_details: { reasoning_tokens: 0 },
        total_tokens: 450_000_000,
      };
      reply = (req) => ({ kind: "response", output: [{ type: "message", text: goodAnswer(req) }], usage });
      const r = await cli(["analyze", "--max-cost", "1", "--json", "--cwd", proj.cwd], env());
      expect(r.code).toBe(3);
      const j = r.json<Record<string, unknown>>();
      expect(j).toMatchObject({
        ok: false,
        status: "complete",
        capExceeded: true,
        usage: { costUsd: 562.5 },
        error: { code: "HUMANISH_ANALYSIS_CAP_EXCEEDED" },
      });
      expect(j.warnings).toEqual(expect.arrayContaining([expect.stringContaining("cap exceeded: the request was billed 562.5 USD, over --max-cost 1 USD")]));
      const human = await cli(["analyze", "--max-cost", "1", "--cwd", proj.cwd], env());
      expect(human.code).toBe(3);
      expect(human.stdout).toContain("CAP EXCEEDED");
      const record = (await Bun.file(`${runDir}/analysis/0001/analysis.json`).json()) as Record<string, unknown>;
      expect(record).toMatchObject({ status: "complete", capExceeded: true, usage: { costUsd: 562.5 }, estimate: { maxCostUsd: 1 } });
      const check = await analysisCheck(runDir);
      expect(check.ok).toBe(true);
      expect(check.message).toContain("CAP EXCEEDED by attempt(s) 0001 (562.5 > 1 USD)");
      // A label that hides the overspend, or claims one, is refused; a record from before the label is read and named.
      const hidden = await analysisCheck(runDir, (d) => void (d.capExceeded = false));
      expect(hidden.ok).toBe(false);
      expect(hidden.message).toContain("capExceeded is false");
      const old = await analysisCheck(runDir, (d) => void delete d.capExceeded);
      expect(old.ok).toBe(true);
      expect(old.message).toContain("unlabelled: written before capExceeded was recorded");
    } finally {
      proj.cleanup();
    }
  }, 60_000);

  test("a response body far past the bound: HUMANISH_MODEL_RESPONSE_TOO_LARGE after about the bound's bytes", async () => {
    const { proj, runDir } = await freshRun("humanish-analysis-bigbody-");
    try {
      const bytes = 256 * 1024 * 1024;
      reply = () => ({ kind: "big-json", bytes });
      const before = fake.jsonBytesSent;
      const o = await analyzeRun({ ...analyzeOptions(runDir, fake.baseURL), provider: createOpenAIAnalysisProvider(fakeEnv(fake.baseURL)) });
      expect(o.status).toBe("failed");
      expect(o.error?.code).toBe("HUMANISH_MODEL_RESPONSE_TOO_LARGE");
      expect(o.error?.message).toContain(`passed ${STRUCTURED_RESPONSE_MAX_BYTES} bytes`);
      expect(o.usage).toMatchObject({ costUsd: null });
      // The client stopped reading: what left the fake is the bound plus what sat in buffers, not 256 MiB.
      const sent = fake.jsonBytesSent - before;
      expect(sent).toBeGreaterThan(STRUCTURED_RESPONSE_MAX_BYTES);
      expect(sent).toBeLessThan(bytes / 2);
      expect(await analysisCheck(runDir)).toMatchObject({ ok: true });
    } finally {
      proj.cleanup();
    }
  }, 60_000);
});

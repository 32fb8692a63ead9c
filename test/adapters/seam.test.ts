/**
 * The scorer seam against a real bundle written by the real writer: the frozen context, scrubbed
 * and shape-checked payloads (malformed ones dropped with a warning), the adapter's files, and
 * the run's consequences for a throwing, slow, malformed or `fail` scorer — each sealed bundle
 * still verifies. The hooks run in the scorer's own process, so the tests write real modules.
 */
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { LoadedScorer } from "../../src/adapters/load.ts";
import { applyScore, type ScoreOutcome, scoreStudy } from "../../src/adapters/seam.ts";
import { deriveReview } from "../../src/bundle/derive.ts";
import type { RunBundleInput, RunWriter } from "../../src/bundle/index.ts";
import { verifyRun } from "../../src/bundle/verify.ts";
import { CANARY, projectPerTest, writeLiveTerminal } from "../bundle/helpers.ts";
import { scorerFrom } from "./support.ts";

// Each scorer runs in a container of its own (one to load it, one to run its hooks).
setDefaultTimeout(60_000);

const project = projectPerTest();

/** A live terminal bundle (participant passed, one task of two failed), ready to be scored. */
async function liveRun(): Promise<{ w: RunWriter; input: RunBundleInput }> {
  const { w, input } = await writeLiveTerminal(project());
  const p = input.participants ?? [];
  const tasks = input.tasks ?? [];
  return { w, input: { ...input, review: deriveReview({ mode: "live", outcome: { state: "completed" }, participants: p, tasks }) } };
}

/** Score, fold in, seal and verify. */
async function scoreAndSeal(s: LoadedScorer, deadlineMs?: number) {
  const { w, input } = await liveRun();
  const scored: ScoreOutcome = await scoreStudy({ scorer: s, writer: w, input, ...(deadlineMs ? { deadlineMs } : {}) });
  const bundle = await w.finalize(applyScore(input, scored));
  const verify = await verifyRun(w.runDir);
  return { w, scored, bundle, verify };
}

const goodScore = { namespace: "acme.cli", status: "pass" as const, score: 87, summary: "ok", data: { flags: ["--filter"] } };
const GOOD = `const goodScore = ${JSON.stringify(goodScore)};\n`;

describe("scoreStudy", () => {
  test("a good scorer: context, scrubbed score, candidates and files in the sealed bundle, which verifies", async () => {
    const { scored, bundle, verify, w } = await scoreAndSeal(
      await scorerFrom(`${GOOD}
        export function score(ctx) {
          const seen = {
            schema: ctx.schema,
            runId: ctx.runId,
            product: ctx.product,
            traceOf: ctx.trace?.participantId ?? null,
            ledgers: ctx.ledgers?.schema ?? null,
            usage: ctx.transcript.includes("usage: jq"),
            canary: ctx.transcript.includes(${JSON.stringify(CANARY)}),
            participants: ctx.participants.map((p) => [p.id, p.folder, p.tasks.length]),
            frozen: Object.isFrozen(ctx) && Object.isFrozen(ctx.bundle.participants[0]) && Object.isFrozen(ctx.trace?.items),
          };
          return { ...goodScore, summary: "found ${CANARY} in the output", data: { ...goodScore.data, seen } };
        }
        export const deriveFeedback = () => [
          {
            id: "filter-flag",
            participant_id: "p1",
            failure_owner: "target-app",
            summary: "looked for --filter",
            expected: "a --filter flag",
            actual: "none",
            evidence: [
              { path: "terminal-transcript.txt", kind: "log", note: "the help output" },
              { path: "adapter/acme.cli/summary.json", kind: "review", note: "the adapter's summary" },
            ],
            idempotency_key: "acme:filter",
            proposed_next_state: "watch",
            adapter: { namespace: "acme.cli", data: { flag: "--filter" } },
          },
          { id: "bad one", summary: "malformed id" },
          {
            id: "cites-nothing",
            failure_owner: "unknown",
            summary: "s",
            expected: "e",
            actual: "a",
            evidence: [{ path: "no/such/file.txt", kind: "log", note: "" }],
            idempotency_key: "k",
            proposed_next_state: "watch",
          },
        ];
        export const deriveArtifacts = () => [
          { namespace: "acme.cli", label: "summary", path: "summary.json", kind: "summary", content: { secret: "${CANARY}", n: 1 } },
          { namespace: "acme.cli", label: "notes", path: "notes/run.txt", kind: "log", content: "plain notes\\n" },
          { namespace: "acme.cli", label: "escape", path: "../../run.json", kind: "log", content: "x" },
        ];
      `),
    );
    // The context: the bundle about to be sealed, the trace, ledgers and transcript, all redacted, all frozen.
    expect(bundle.adapterScore?.data?.seen).toEqual({
      schema: "humanish.scoring-context.v1",
      runId: bundle.runId,
      product: { source: "terminal-product", name: "jq", publicSurfaces: ["jq --help"] },
      traceOf: "p1",
      ledgers: "humanish.terminal-ledgers.v1",
      usage: true,
      canary: false,
      participants: [["p1", null, 2]],
      frozen: true,
    });

    expect(scored.failure).toBeUndefined();
    expect(bundle.adapterScore).toMatchObject({ schema: "humanish.adapter-score.v1", namespace: "acme.cli", status: "pass", score: 87 });
    expect(bundle.adapterScore?.summary).not.toContain(CANARY);
    expect(bundle.feedbackCandidates?.map((c) => c.id)).toEqual(["filter-flag"]);
    expect(bundle.feedbackCandidates?.[0]).toMatchObject({ run_id: bundle.runId, lab_id: "jq-first-contact", adapter_id: "acme.cli", acceptance_proof: [] });
    expect(bundle.adapterArtifacts?.map((a) => a.path)).toEqual(["adapter/acme.cli/summary.json", "adapter/acme.cli/notes/run.txt"]);
    expect(readFileSync(join(w.runDir, "adapter/acme.cli/summary.json"), "utf8")).not.toContain(CANARY);
    const dropped = scored.warnings.filter((x) => x.code === "HUMANISH_ADAPTER_PAYLOAD_DROPPED").map((x) => x.message);
    expect(dropped).toEqual([
      expect.stringContaining("adapter artifact [2] dropped: path"),
      expect.stringContaining("feedback candidate [1] dropped"),
      expect.stringContaining('feedback candidate [2] dropped: evidence path "no/such/file.txt"'),
    ]);
    expect(bundle.warnings.map((x) => x.code)).toContain("HUMANISH_ADAPTER_PAYLOAD_DROPPED");
    expect(bundle.scorerProvenance?.hooks).toBe("ran");
    expect(verify.checks.filter((c) => !c.ok)).toEqual([]);
    expect(verify.checks.find((c) => c.name === "adapter output")?.message).toContain("score pass 87/100, 1 feedback candidate(s), 2 adapter file(s)");
  });

  test("a score of fail: a finding — outcome completed, verdict pass turns fail, a gap names it", async () => {
    const { scored, bundle, verify } = await scoreAndSeal(
      await scorerFrom(`${GOOD} export const score = () => ({ ...goodScore, status: "fail", score: 12, summary: "no filter" });`),
    );
    expect(scored.failure).toMatchObject({ code: "HUMANISH_ADAPTER_SCORE_FAIL", kind: "finding" });
    expect(bundle.outcome.state).toBe("completed");
    expect(bundle.review.verdict).toBe("fail");
    expect(bundle.review.gaps).toContainEqual(expect.stringContaining("HUMANISH_ADAPTER_SCORE_FAIL"));
    expect(verify.ok).toBe(true);
  });

  test("a throwing hook fails the run as a harness failure and says why", async () => {
    const { scored, bundle, verify } = await scoreAndSeal(
      await scorerFrom(`${GOOD}
        export const score = () => goodScore;
        export const deriveFeedback = () => { throw new RangeError("feedback broke"); };`),
    );
    expect(scored.failure).toMatchObject({
      code: "HUMANISH_ADAPTER_HOOK_FAILED",
      kind: "harness",
      message: expect.stringContaining("RangeError: feedback broke"),
    });
    expect(bundle.outcome).toMatchObject({ state: "failed", error: { code: "HUMANISH_ADAPTER_HOOK_FAILED" } });
    expect(bundle.review.verdict).toBe("fail");
    expect(bundle.adapterScore?.status).toBe("pass");
    expect(verify.ok).toBe(true);
  });

  test("a hook that writes to the frozen context throws, and fails the run", async () => {
    const { scored } = await scoreAndSeal(await scorerFrom(`${GOOD} export const score = (ctx) => { ctx.participants.push({}); return goodScore; };`));
    expect(scored.failure).toMatchObject({ code: "HUMANISH_ADAPTER_HOOK_FAILED", message: expect.stringContaining("TypeError") });
  });

  test("a malformed score fails the run; a slow hook misses its deadline", async () => {
    const malformed = await scoreAndSeal(
      await scorerFrom(`export const score = () => ({ namespace: "Bad Namespace", status: "great", score: 140, summary: "" });`),
    );
    expect(malformed.scored.failure).toMatchObject({ code: "HUMANISH_ADAPTER_SCORE_MALFORMED", message: expect.stringContaining("namespace") });
    expect(malformed.bundle.adapterScore).toBeUndefined();
    expect(malformed.bundle.outcome.state).toBe("failed");
    expect(malformed.verify.ok).toBe(true);

    const slow = await scoreAndSeal(await scorerFrom(`${GOOD} export const score = () => new Promise((r) => setTimeout(() => r(goodScore), 5_000));`), 300);
    expect(slow.scored.failure).toMatchObject({ code: "HUMANISH_ADAPTER_HOOK_TIMEOUT", message: expect.stringContaining("300 ms") });
    expect(slow.verify.ok).toBe(true);
  });

  test("a synchronous loop is stopped on the deadline; process.exit and patched globals stay in the scorer's process", async () => {
    const loop = await scoreAndSeal(await scorerFrom(`export const score = () => { for (;;) {} };`), 300);
    expect(loop.scored.failure).toMatchObject({ code: "HUMANISH_ADAPTER_HOOK_TIMEOUT", kind: "harness" });
    expect(loop.bundle.outcome.state).toBe("failed");
    expect(loop.verify.ok).toBe(true);

    const exit = await scoreAndSeal(await scorerFrom(`export const score = () => { process.exit(0); };`));
    expect(exit.scored.failure).toMatchObject({ code: "HUMANISH_ADAPTER_HOOK_FAILED", message: expect.stringContaining("exited (code 0") });
    expect(exit.bundle.outcome.state).toBe("failed");

    const patched = await scoreAndSeal(await scorerFrom(`${GOOD} JSON.stringify = () => "{}"; console.log("noise"); export const score = () => goodScore;`));
    expect(JSON.stringify({ a: 1 })).toBe('{"a":1}');
    expect(patched.scored.failure).toBeUndefined();
    expect(patched.bundle.adapterScore?.score).toBe(87);
  });

  test("the scorer's process sees no provider key or other secret of the environment", async () => {
    const saved = process.env.OPENAI_API_KEY;
    process.env.OPENAI_API_KEY = "sk-test-not-for-the-scorer";
    try {
      const { bundle } = await scoreAndSeal(
        await scorerFrom(`${GOOD} export const score = () => ({ ...goodScore, data: { env: Object.keys(process.env).sort() } });`),
      );
      const env = bundle.adapterScore?.data?.env as string[];
      expect(env).not.toContain("OPENAI_API_KEY");
      expect(env.every((k) => ["PATH", "HOME", "TMPDIR", "LANG", "HOSTNAME", "DEBIAN_FRONTEND"].includes(k) || k.startsWith("BUN_"))).toBe(true);
    } finally {
      if (saved === undefined) delete process.env.OPENAI_API_KEY;
      else process.env.OPENAI_API_KEY = saved;
    }
  });

  test("a cyclic or throwing payload: a malformed score or a dropped item, and a sealed bundle", async () => {
    const cyclic = await scoreAndSeal(await scorerFrom(`${GOOD} export const score = () => { const o = { ...goodScore }; o.data = { self: o }; return o; };`));
    expect(cyclic.scored.failure).toMatchObject({ code: "HUMANISH_ADAPTER_SCORE_MALFORMED", message: expect.stringContaining("not JSON") });
    expect(cyclic.bundle.outcome.state).toBe("failed");
    expect(cyclic.verify.ok).toBe(true);

    const getter = await scoreAndSeal(
      await scorerFrom(`${GOOD} export const score = () => ({ ...goodScore, get data() { throw new Error("getter boom"); } });`),
    );
    expect(getter.scored.failure).toMatchObject({ code: "HUMANISH_ADAPTER_SCORE_MALFORMED", message: expect.stringContaining("getter boom") });

    const items = await scoreAndSeal(
      await scorerFrom(`${GOOD}
        export const score = () => goodScore;
        export const deriveArtifacts = () => {
          const c = {}; c.c = c;
          return [{ namespace: "acme.cli", label: "l", path: "cyc.json", kind: "summary", content: c },
                  { namespace: "acme.cli", label: "l", path: "ok.json", kind: "summary", content: { ok: true } }];
        };`),
    );
    expect(items.scored.failure).toBeUndefined();
    expect(items.bundle.adapterArtifacts?.map((a) => a.path)).toEqual(["adapter/acme.cli/ok.json"]);
    expect(items.scored.warnings.map((x) => x.message)).toContainEqual(expect.stringContaining("adapter artifact [0] dropped: it is not JSON"));
    expect(items.verify.ok).toBe(true);
  });

  test("a candidate naming someone who is not a participant is dropped with a warning, so the run still verifies", async () => {
    const { scored, bundle, verify } = await scoreAndSeal(
      await scorerFrom(`${GOOD}
        export const score = () => goodScore;
        export const deriveFeedback = () => [{ id: "c1", participant_id: "nobody", failure_owner: "unknown", summary: "s", expected: "e",
          actual: "a", evidence: [], idempotency_key: "k", proposed_next_state: "watch" }];`),
    );
    expect(bundle.feedbackCandidates).toBeUndefined();
    expect(scored.warnings.map((x) => x.message)).toContainEqual(expect.stringContaining('participant_id "nobody" is not a participant'));
    expect(verify.ok).toBe(true);
  });

  test("a scorer that changes a listed evidence file fails the run with a stable code (unconfined); confined it cannot reach the file", async () => {
    const { w, input } = await liveRun();
    const source = `${GOOD}
      import { appendFileSync } from "node:fs";
      export const score = () => { appendFileSync(${JSON.stringify(join(w.runDir, "terminal-transcript.txt"))}, "\\n$ rm -rf / # FORGED\\n"); return goodScore; };`;
    const s = await scorerFrom(source, "./scorer.mjs", { unconfined: true });
    const scored = await scoreStudy({ scorer: s, writer: w, input });
    const bundle = await w.finalize(applyScore(input, scored));
    expect(scored.failure?.message).toContain("terminal-transcript.txt");
    expect(scored.failure).toMatchObject({ code: "HUMANISH_ADAPTER_EVIDENCE_CHANGED", kind: "harness" });
    expect(bundle.outcome).toMatchObject({ state: "failed", error: { code: "HUMANISH_ADAPTER_EVIDENCE_CHANGED" } });

    const again = await liveRun();
    const confined = await scoreStudy({ scorer: await scorerFrom(source), writer: again.w, input: again.input });
    expect(confined.failure).toMatchObject({ code: "HUMANISH_ADAPTER_HOOK_FAILED", message: expect.stringContaining("ENOENT") });
  });

  test("a scorer changed on disk after it was loaded runs no hook and fails the run", async () => {
    const s = await scorerFrom(`${GOOD} export const score = () => goodScore;`);
    writeFileSync(s.path, `${GOOD} export const score = () => ({ ...goodScore, score: 1 });`);
    const { scored, bundle } = await scoreAndSeal(s);
    expect(scored.failure?.message).toContain("changed on disk after it was loaded");
    expect(bundle.adapterScore).toBeUndefined();
    expect(bundle.outcome.state).toBe("failed");
  });

  test("score data over its byte cap is a malformed score", async () => {
    const { scored, bundle } = await scoreAndSeal(
      await scorerFrom(`${GOOD} export const score = () => ({ ...goodScore, data: { big: "y".repeat(300 * 1024) } });`),
    );
    expect(scored.failure).toMatchObject({ code: "HUMANISH_ADAPTER_SCORE_MALFORMED", message: expect.stringContaining("262144 bytes") });
    expect(bundle.adapterScore).toBeUndefined();
  });

  test("a dry run or an interrupted run: the scorer is recorded as loaded only and no hook runs", async () => {
    const { w, input } = await liveRun();
    const marker = join(w.runDir, "..", "called.txt");
    const s = await scorerFrom(`${GOOD}
      import { writeFileSync } from "node:fs";
      export const score = () => { writeFileSync(${JSON.stringify(marker)}, "x"); return goodScore; };`);
    const scored = await scoreStudy({ scorer: s, writer: w, input: { ...input, mode: "dry-run" } });
    expect(() => readFileSync(marker)).toThrow();
    expect(scored.provenance.hooks).toBe("loaded-only");
    expect(scored.warnings.map((x) => x.code)).toEqual(["HUMANISH_ADAPTER_NOT_RUN"]);
    const stopped = await scoreStudy({ scorer: s, writer: w, input: { ...input, outcome: { state: "interrupted", interrupted: "SIGINT" } } });
    expect(stopped.provenance.hooks).toBe("loaded-only");
    expect(stopped.warnings[0]?.message).toContain("interrupted");
    const bundle = await w.finalize(applyScore({ ...input, outcome: { state: "interrupted", interrupted: "SIGINT" } }, stopped));
    expect(bundle.scorerProvenance?.hooks).toBe("loaded-only");
    expect((await verifyRun(w.runDir)).checks.find((c) => c.name === "adapter output")?.ok).toBe(true);
  });
});

/**
 * The scorer seam against a real bundle written by the real writer: the frozen context, scrubbed
 * and shape-checked payloads (malformed ones dropped with a warning), the adapter's files, and
 * the run's consequences for a throwing, slow, malformed or `fail` scorer — each sealed bundle
 * still verifies.
 */
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { LoadedScorer } from "../../src/adapters/load.ts";
import { applyScore, type ScoreOutcome, scoreStudy } from "../../src/adapters/seam.ts";
import type { ScoringContext } from "../../src/adapters/shapes.ts";
import { deriveReview } from "../../src/bundle/derive.ts";
import type { RunBundleInput, RunWriter } from "../../src/bundle/index.ts";
import { verifyRun } from "../../src/bundle/verify.ts";
import { CANARY, projectPerTest, writeLiveTerminal } from "../bundle/helpers.ts";

const project = projectPerTest();

function scorer(hooks: LoadedScorer["hooks"]): LoadedScorer {
  const exports = (["score", "deriveFeedback", "deriveArtifacts"] as const).filter((h) => hooks[h]);
  return {
    hooks,
    provenance: { schema: "humanish.scorer-provenance.v1", ref: "./scorer.ts", digest: "d".repeat(64), source: "manifest", exports: [...exports] },
  };
}

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

describe("scoreStudy", () => {
  test("a good scorer: context, scrubbed score, candidates and files in the sealed bundle, which verifies", async () => {
    let seen: ScoringContext | undefined;
    const { scored, bundle, verify, w } = await scoreAndSeal(
      scorer({
        score: (ctx) => {
          seen = ctx as ScoringContext;
          return { ...goodScore, summary: `found ${CANARY} in the output` };
        },
        deriveFeedback: () => [
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
        ],
        deriveArtifacts: () => [
          { namespace: "acme.cli", label: "summary", path: "summary.json", kind: "summary", content: { secret: CANARY, n: 1 } },
          { namespace: "acme.cli", label: "notes", path: "notes/run.txt", kind: "log", content: "plain notes\n" },
          { namespace: "acme.cli", label: "escape", path: "../../run.json", kind: "log", content: "x" },
        ],
      }),
    );
    // The context: the bundle about to be sealed, the trace, ledgers and transcript, all redacted, all frozen.
    expect(seen?.schema).toBe("humanish.scoring-context.v1");
    expect(seen?.runId).toBe(bundle.runId);
    expect(seen?.product).toEqual({ source: "terminal-product", name: "jq", publicSurfaces: ["jq --help"] });
    expect(seen?.trace?.participantId).toBe("p1");
    expect(seen?.ledgers?.schema).toBe("humanish.terminal-ledgers.v1");
    expect(seen?.transcript).toContain("usage: jq");
    expect(seen?.transcript).not.toContain(CANARY);
    expect(seen?.participants.map((p) => [p.id, p.folder, p.tasks.length])).toEqual([["p1", null, 2]]);
    expect(Object.isFrozen(seen) && Object.isFrozen(seen?.bundle.participants[0]) && Object.isFrozen(seen?.trace?.items)).toBe(true);

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
    const { scored, bundle, verify } = await scoreAndSeal(scorer({ score: () => ({ ...goodScore, status: "fail", score: 12, summary: "no filter" }) }));
    expect(scored.failure).toMatchObject({ code: "HUMANISH_ADAPTER_SCORE_FAIL", kind: "finding" });
    expect(bundle.outcome.state).toBe("completed");
    expect(bundle.review.verdict).toBe("fail");
    expect(bundle.review.gaps).toContainEqual(expect.stringContaining("HUMANISH_ADAPTER_SCORE_FAIL"));
    expect(verify.ok).toBe(true);
  });

  test("a throwing hook fails the run as a harness failure and says why", async () => {
    const { scored, bundle, verify } = await scoreAndSeal(
      scorer({
        score: () => goodScore,
        deriveFeedback: () => {
          throw new RangeError("feedback broke");
        },
      }),
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
    const { scored } = await scoreAndSeal(
      scorer({
        score: (ctx) => {
          (ctx as { participants: unknown[] }).participants.push({});
          return goodScore;
        },
      }),
    );
    expect(scored.failure).toMatchObject({ code: "HUMANISH_ADAPTER_HOOK_FAILED", message: expect.stringContaining("TypeError") });
  });

  test("a malformed score fails the run; a slow hook misses its deadline", async () => {
    const malformed = await scoreAndSeal(scorer({ score: () => ({ namespace: "Bad Namespace", status: "great", score: 140, summary: "" }) }));
    expect(malformed.scored.failure).toMatchObject({ code: "HUMANISH_ADAPTER_SCORE_MALFORMED", message: expect.stringContaining("namespace") });
    expect(malformed.bundle.adapterScore).toBeUndefined();
    expect(malformed.bundle.outcome.state).toBe("failed");
    expect(malformed.verify.ok).toBe(true);

    const slow = await scoreAndSeal(scorer({ score: () => new Promise((r) => setTimeout(() => r(goodScore), 5_000)) }), 50);
    expect(slow.scored.failure).toMatchObject({ code: "HUMANISH_ADAPTER_HOOK_TIMEOUT", message: expect.stringContaining("50 ms") });
    expect(slow.verify.ok).toBe(true);
  });

  test("a dry run or an interrupted run: the scorer is recorded as loaded only and no hook runs", async () => {
    const { w, input } = await liveRun();
    let called = false;
    const scored = await scoreStudy({
      scorer: scorer({
        score: () => {
          called = true;
          return goodScore;
        },
      }),
      writer: w,
      input: { ...input, mode: "dry-run" },
    });
    expect(called).toBe(false);
    expect(scored.provenance.hooks).toBe("loaded-only");
    expect(scored.warnings.map((x) => x.code)).toEqual(["HUMANISH_ADAPTER_NOT_RUN"]);
    const stopped = await scoreStudy({
      scorer: scorer({ score: () => goodScore }),
      writer: w,
      input: { ...input, outcome: { state: "interrupted", interrupted: "SIGINT" } },
    });
    expect(stopped.provenance.hooks).toBe("loaded-only");
    expect(stopped.warnings[0]?.message).toContain("interrupted");
    const bundle = await w.finalize(applyScore({ ...input, outcome: { state: "interrupted", interrupted: "SIGINT" } }, stopped));
    expect(bundle.scorerProvenance?.hooks).toBe("loaded-only");
    expect((await verifyRun(w.runDir)).checks.find((c) => c.name === "adapter output")?.ok).toBe(true);
  });
});

/**
 * `adapter output` (the verify check of the scorer's blocks): a scored bundle passes; each way
 * of getting the blocks wrong fails with the block named; the check is in the verify table, so a
 * hand-edited `run.json` fails it on disk too.
 */
import { describe, expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { applyScore, scoreStudy } from "../../src/adapters/seam.ts";
import { deriveReview } from "../../src/bundle/derive.ts";
import type { RunBundle } from "../../src/bundle/index.ts";
import { adapterOutput } from "../../src/bundle/verify/checks-adapter.ts";
import type { VerifyContext } from "../../src/bundle/verify/context.ts";
import { verifyRun } from "../../src/bundle/verify.ts";
import { projectPerTest, writeLiveTerminal } from "../bundle/helpers.ts";
import { scorerFrom } from "./support.ts";

const project = projectPerTest();

/** A sealed, scored live bundle: a score, one candidate, one adapter file. */
async function scored(): Promise<{ bundle: RunBundle; runDir: string }> {
  const { w, input } = await writeLiveTerminal(project());
  const withReview = {
    ...input,
    review: deriveReview({ mode: "live", outcome: { state: "completed" }, participants: input.participants ?? [], tasks: input.tasks ?? [] }),
  };
  const s = await scoreStudy({
    scorer: await scorerFrom(`
      export const score = () => ({ namespace: "acme", status: "partial", score: 50, summary: "half" });
      export const deriveFeedback = () => [
        {
          id: "c1",
          participant_id: "p1",
          failure_owner: "target-app",
          summary: "s",
          expected: "e",
          actual: "a",
          evidence: [{ path: "actor.json", kind: "trace", note: "" }],
          idempotency_key: "k",
          proposed_next_state: "watch",
        },
      ];
      export const deriveArtifacts = () => [{ namespace: "acme", label: "l", path: "a.json", kind: "summary", content: { ok: true } }];
    `),
    writer: w,
    input: withReview,
  });
  return { bundle: await w.finalize(applyScore(withReview, s)), runDir: w.runDir };
}

function check(b: RunBundle) {
  return adapterOutput({ bundle: b, rawBundle: structuredClone(b) } as unknown as VerifyContext);
}

describe("adapter output", () => {
  test("a scored bundle passes; a bundle with no scorer passes", async () => {
    const { bundle } = await scored();
    expect(check(bundle)).toMatchObject({ problems: [], ok: expect.stringContaining("score partial 50/100, 1 feedback candidate(s), 1 adapter file(s)") });
    const { scorerProvenance, adapterScore, feedbackCandidates, adapterArtifacts, ...plain } = bundle;
    expect(check({ ...plain, artifacts: plain.artifacts.filter((a) => !a.path.startsWith("adapter/")) })).toMatchObject({
      problems: [],
      ok: "no scorer declared",
    });
    expect([scorerProvenance, adapterScore, feedbackCandidates, adapterArtifacts].every((x) => x !== undefined)).toBe(true);
  });

  test("each inconsistency is named", async () => {
    const { bundle: b } = await scored();
    const problems = (edit: (x: RunBundle) => void): string[] => {
      const x = structuredClone(b);
      edit(x);
      return check(x).problems;
    };
    expect(problems((x) => delete x.scorerProvenance)).toContain("adapter output without scorerProvenance (no scorer is recorded as having run)");
    expect(problems((x) => (x.scorerProvenance!.hooks = "loaded-only"))).toContain("adapter output although scorerProvenance says no hook ran");
    expect(problems((x) => delete x.adapterScore)).toContain(
      "the scorer's score hook ran on a completed run but left no adapterScore (a missing score must fail the run)",
    );
    expect(
      problems((x) => {
        x.adapterScore!.status = "fail";
        x.review.verdict = "pass";
      }),
    ).toContain("adapterScore acme is fail but the verdict is pass");
    expect(problems((x) => (x.feedbackCandidates![0]!.run_id = "other-run"))).toContainEqual(expect.stringContaining("run_id other-run is not this run"));
    expect(problems((x) => (x.feedbackCandidates![0]!.evidence[0]!.path = "gone.txt"))).toContain(
      "feedbackCandidates[0] evidence gone.txt is not a listed file",
    );
    expect(problems((x) => (x.feedbackCandidates![0]!.participant_id = "p9"))).toContain("feedbackCandidates[0] participant_id p9 is not a participant");
    expect(problems((x) => x.feedbackCandidates!.push(structuredClone(x.feedbackCandidates![0]!)))).toContain("feedbackCandidates[1] id c1 repeats");
    expect(problems((x) => (x.adapterArtifacts![0]!.namespace = "other"))).toContain(
      "adapterArtifacts[0] path adapter/acme/a.json is not under adapter/other/",
    );
    expect(problems((x) => (x.adapterArtifacts = []))).toContain("adapter/acme/a.json is under adapter/ but no adapter artifact declares it");
    expect(problems((x) => (x.adapterScore!.score = 140))).toContainEqual(expect.stringContaining("adapterScore score:"));
  });

  test("where the scorer ran is reported; unconfined without the opt-in, or a container not proven removed on a run that did not fail, is a problem", async () => {
    const { bundle: b } = await scored();
    expect(check(b).ok).toContain("confined in 2 container(s) of humanish-sandbox:");
    expect(check(b).ok).toContain("2 proven removed");
    const edited = (edit: (x: RunBundle) => void) => {
      const x = structuredClone(b);
      edit(x);
      return check(x);
    };
    const unconfined = { mode: "unconfined" as const, reason: "no Docker engine is usable (test)" };
    expect(edited((x) => (x.scorerProvenance!.confinement = { ...unconfined, optIn: "HUMANISH_ALLOW_UNCONFINED_SCORER=1" }))).toMatchObject({
      problems: [],
      ok: expect.stringContaining("ran UNCONFINED as a host process, opted in with HUMANISH_ALLOW_UNCONFINED_SCORER=1"),
    });
    expect(edited((x) => (x.scorerProvenance!.confinement = unconfined)).problems).toContain(
      "the scorer ran unconfined without the operator's opt-in (HUMANISH_ALLOW_UNCONFINED_SCORER=1)",
    );
    expect(edited((x) => (x.scorerProvenance!.confinement!.containers![1]!.outcome = "unconfirmed")).problems).toContainEqual(
      expect.stringContaining("is not proven removed, yet the run did not fail"),
    );
    // A bundle from before scorers were confined still passes, and says so.
    expect(edited((x) => delete x.scorerProvenance!.confinement)).toMatchObject({ problems: [], ok: expect.stringContaining("confinement not recorded") });
  });

  test("registered in verify: a hand-edited score fails `adapter output` on disk", async () => {
    const { runDir } = await scored();
    const path = join(runDir, "run.json");
    const doc = JSON.parse(readFileSync(path, "utf8"));
    doc.adapterScore.summary = "";
    writeFileSync(path, JSON.stringify(doc, null, 2));
    const v = await verifyRun(runDir);
    const c = v.checks.find((x) => x.name === "adapter output");
    expect(c).toMatchObject({ ok: false, message: expect.stringContaining("adapterScore summary:") });
    expect(v.ok).toBe(false);
  });
});

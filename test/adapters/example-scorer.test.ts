/**
 * The example adapter's score hook on its own: a completed run is judged from its tasks; a run
 * that did not complete (a harness failure) is left unjudged, so it adds no product `fail`.
 */
import { expect, test } from "bun:test";
import { score } from "../../labs/example-adapter/scorer.ts";
import type { ScoringContext } from "../../src/adapters/shapes.ts";

function ctx(state: "completed" | "failed", passed: boolean): ScoringContext {
  const task = { id: "t", goal: "g", participantId: "p1", status: passed ? "passed" : "failed", passed };
  return {
    bundle: { outcome: state === "completed" ? { state } : { state, error: { code: "HUMANISH_X", message: "m" } }, artifacts: [] },
    participants: [{ id: "p1", folder: null, trace: null, tasks: [task] }],
    product: { source: "terminal-product", name: "wc" },
  } as unknown as ScoringContext;
}

test("a harness-failed run is not scored as a product fail; a completed one is judged", async () => {
  expect(await score(ctx("failed", false))).toMatchObject({ status: "partial", score: 0, data: { judged: false } });
  expect(await score(ctx("completed", false))).toMatchObject({ status: "fail", score: 0 });
  expect(await score(ctx("completed", true))).toMatchObject({ status: "pass", score: 100 });
});

/**
 * A scripted browser seat's trajectory: no model line, yet a known zero spend (a scripted
 * participant calls no model), and no placeholder prompt digest (it was given no prompt).
 */
import { describe, expect, test } from "bun:test";
import { summarizeCost } from "../../src/bundle/derive.ts";
import { buildTrajectory, type SeatEvidence, seatCost } from "../../src/export/atif/build.ts";
import { validateAtif } from "../../src/export/atif/validate.ts";
import { browserTrace } from "../bundle/helpers.ts";
import { browserParticipant } from "../support/bundles.ts";

function evidence(promptDigest: string, actorType = "scripted-browser"): SeatEvidence {
  const trace = browserTrace(["shots/001.png"]);
  return {
    bundle: {
      runId: "r1",
      route: "browser",
      target: "local",
      lab: { id: "todo", title: "todo", source: { ref: "labs/todo/lab.yaml", sha256: "0".repeat(64) } },
      cost: summarizeCost([]),
    } as SeatEvidence["bundle"],
    participant: { ...browserParticipant(60_000), actorType },
    tracePath: "actor.json",
    trace: { ...trace, persona: { ...trace.persona, promptDigest } },
    tasks: [],
    humanishVersion: "0.0.0-test",
  };
}

describe("scripted browser seat", () => {
  test("no model line: a known zero spend, with its basis", () => {
    const t = buildTrajectory(evidence("000000000000"));
    expect(validateAtif(t).ok).toBe(true);
    expect(t.final_metrics?.total_cost_usd).toBe(0);
    expect(t.final_metrics?.extra).toMatchObject({ cost_basis: "a scripted participant calls no model (known zero)" });
    // A model-backed actor with no line stays unknown.
    expect(seatCost(evidence("abcdef012345", "codex-exec"))).toEqual({ unknown: "no model cost line recorded for this participant" });
  });

  test("the all-zero placeholder digest is not exported as a prompt digest; a real one is", () => {
    const first = (d: string) => buildTrajectory(evidence(d)).steps[0]?.extra ?? {};
    expect(first("000000000000")).not.toHaveProperty("prompt_digest");
    expect(first("000000000000").note).toContain("given no prompt");
    expect(first("abcdef012345").prompt_digest).toBe("abcdef012345");
  });
});

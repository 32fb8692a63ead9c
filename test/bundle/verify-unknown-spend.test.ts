/**
 * `caps respected` with spend of unknown cost: bounded by the model ledger's admitted worst
 * cases, a problem when that bound passes maxUsd, and never a plain "respected" when the
 * unknown spend has no bound.
 */
import { describe, expect, test } from "bun:test";
import type { RunBundle } from "../../src/bundle/schemas.ts";
import { capsRespected } from "../../src/bundle/verify/checks-judgement.ts";
import type { VerifyContext } from "../../src/bundle/verify/context.ts";
import { unknownSpendBounds } from "../../src/bundle/verify/unknown-spend.ts";

const enc = new TextEncoder();

function line(usd: number | null, estimateUsd: number | null) {
  return {
    ordinal: 1,
    at: "2026-12-01T00:00:00Z",
    model: null,
    input: null,
    output: null,
    usd,
    estimateUsd,
    status: 499,
    outcome: usd === null ? "sandbox_aborted" : "completed",
  };
}

/** A one-seat live terminal run with maxUsd `cap`, whose model cost line is unknown, and its ledger lines. */
function ctxWith(cap: number, ledgerLines: ReturnType<typeof line>[] | null): VerifyContext {
  const bundle = {
    mode: "live",
    route: "terminal",
    outcome: { state: "completed" },
    caps: { maxUsd: cap, maxJobs: null, maxMinutes: 5 },
    participants: [{ id: "p1", actorType: "codex-exec", trace: "actor.json", completionReason: "goal_satisfied" }],
    cost: {
      lines: [{ kind: "model-tokens", participantId: "p1", usd: null, basis: "unmeasured", ratesAsOf: null, source: null, reason: "no_token_usage", count: 1 }],
    },
  } as unknown as RunBundle;
  const files = new Map<string, Uint8Array>();
  if (ledgerLines) files.set("model-ledger.json", enc.encode(JSON.stringify({ schema: "humanish.model-ledger.v1", participantId: "p1", lines: ledgerLines })));
  return { bundle, files, warnings: [], ledgers: null, seatLedgers: new Map(), traces: new Map() } as unknown as VerifyContext;
}

describe("caps respected with unknown spend", () => {
  test("twenty aborted requests each admitted at 0.04 under maxUsd 0.05: the worst case passes the cap, so the caps are not respected", () => {
    const ctx = ctxWith(
      0.05,
      Array.from({ length: 20 }, () => line(null, 0.04)),
    );
    const r = capsRespected(ctx);
    expect(r.problems).toEqual(["seat p1: 20 request(s) of unknown cost; at their admitted worst case the spend could reach 0.8 USD, over maxUsd 0.05"]);
  });

  test("one unknown request within the cap at its worst case: respected, and the message says it is a worst-case bound", () => {
    const ctx = ctxWith(0.05, [line(0.001, 0.004), line(null, 0.04)]);
    const r = capsRespected(ctx);
    expect(r.problems).toEqual([]);
    expect(r.ok).toContain("unknown costs counted at their admitted worst case (p1 at most 0.041 USD)");
    expect(ctx.warnings).toEqual([]);
  });

  test("an unknown cost with no bound: a warning, and the message says the caps hold for the known spend only", () => {
    for (const ctx of [ctxWith(0.05, [line(null, null)]), ctxWith(0.05, null)]) {
      const r = capsRespected(ctx);
      expect(r.problems).toEqual([]);
      expect(r.ok).toContain("(known spend only: 1 cost line(s) unknown)");
      expect(ctx.warnings[0]).toContain("the caps are shown for the known spend only");
    }
  });

  test("the bounds read every model ledger of the bundle, per participant", () => {
    const files = new Map<string, Uint8Array>([
      ["seats/p1/model-ledger.json", enc.encode(JSON.stringify({ participantId: "p1", lines: [line(null, 0.5), line(0.25, 1)] }))],
      ["model-ledger-p2.json", enc.encode(JSON.stringify({ participantId: "p2", lines: [line(0.1, 1)] }))],
      ["seats/p3/model-ledger.json", enc.encode("not json")],
    ]);
    expect(unknownSpendBounds(files)).toEqual([{ participantId: "p1", unknown: 1, worstCaseUsd: 0.75 }]);
  });
});

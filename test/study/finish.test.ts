/** The study result's per-seat spend: an unmeasured cost line makes the seat's spend unmeasured (null), never 0. */
import { describe, expect, test } from "bun:test";
import type { CostLine } from "../../src/bundle/schemas.ts";
import { seatUsd } from "../../src/study/finish.ts";

const line = (usd: number | null, participantId?: string): CostLine => ({
  kind: usd === null ? "sandbox-minutes" : "model-tokens",
  usd,
  basis: usd === null ? "unmeasured" : "no-spend-signal",
  ratesAsOf: usd === null ? null : "2026-11-01",
  source: usd === null ? null : "no model",
  reason: usd === null ? "kill_unconfirmed" : null,
  ...(participantId ? { participantId } : {}),
});

describe("seatUsd", () => {
  test("a seat with a known zero and an unmeasured sandbox-minutes line is unmeasured, not $0", () => {
    expect(seatUsd([line(0, "p1"), line(null, "p1")], "p1", 0, 2)).toBeNull();
  });
  test("another seat's unmeasured line does not touch this seat; all measured keeps the known spend", () => {
    expect(seatUsd([line(0.25, "p1"), line(null, "p2")], "p1", 0.25, 2)).toBe(0.25);
  });
  test("in a one-seat study a line naming no participant is the seat's", () => {
    expect(seatUsd([line(0), line(null)], "p1", 0, 1)).toBeNull();
    expect(seatUsd([line(0), line(null)], "p1", 0, 2)).toBe(0);
  });
});

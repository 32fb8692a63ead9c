/** The E2B time line both E2B lanes price their sandbox (or desktop) time with: pure. */
import { describe, expect, test } from "bun:test";
import { E2B_RATES, e2bTimeLine } from "../../src/sandbox/e2b-rates.ts";

describe("e2bTimeLine", () => {
  const at = { participantId: "p1", acquiredAt: 0, releasedAt: 90_000, resources: { cpuCount: 2, memoryMB: 2048 }, released: true };
  test("an estimate over create → confirmed release at the dated rates, minutes as its count", () => {
    const l = e2bTimeLine({ noun: "desktop", ...at });
    expect(l).toMatchObject({ kind: "desktop-minutes", basis: "rate-table", ratesAsOf: E2B_RATES.asOf, source: E2B_RATES.source, count: 1.5, reason: null });
    expect(l.usd).toBeCloseTo(90 * (2 * 0.000014 + 2 * 0.0000045), 6);
    expect(l.note).toContain("90.0 s");
    expect(e2bTimeLine({ noun: "sandbox", ...at }).kind).toBe("sandbox-minutes");
  });
  test("unknown resources or an unconfirmed release are unmeasured, never zero; nothing created is a known zero", () => {
    expect(e2bTimeLine({ noun: "desktop", ...at, resources: undefined })).toMatchObject({
      usd: null,
      basis: "unmeasured",
      reason: "desktop_resources_unknown",
    });
    expect(e2bTimeLine({ noun: "sandbox", ...at, released: false })).toMatchObject({
      usd: null,
      count: null,
      reason: expect.stringMatching(/^sandbox_release_unconfirmed: /),
    });
    expect(e2bTimeLine({ noun: "sandbox", ...at, releasedAt: undefined }).usd).toBeNull();
    expect(e2bTimeLine({ noun: "desktop", ...at, acquiredAt: undefined })).toMatchObject({
      usd: 0,
      basis: "no-spend-signal",
      source: "humanish: no E2B desktop was created",
    });
  });
});

/** The E2B release rule, pure: only a kill that settled followed by a not-found lookup is `released`. */
import { describe, expect, test } from "bun:test";
import { classifyRelease } from "../../src/sandbox/e2b.ts";

describe("classifyRelease", () => {
  const gone = { kind: "not-found" } as const;
  test("kill true + not-found → released", () => {
    expect(classifyRelease({ kind: "value", value: true }, gone)).toMatchObject({ outcome: "released", reason: expect.stringContaining("not-found") });
  });
  test("kill false (404) + not-found → released with the already-absent warning", () => {
    expect(classifyRelease({ kind: "value", value: false }, gone)).toMatchObject({
      outcome: "released",
      reason: expect.stringContaining("already absent, end time unknown"),
    });
  });
  test("everything else is unconfirmed", () => {
    const cases = [
      classifyRelease({ kind: "value", value: true }, { kind: "value", value: true }),
      classifyRelease({ kind: "value", value: false }, { kind: "value", value: true }),
      classifyRelease({ kind: "value", value: true }, { kind: "error", message: "500" }),
      classifyRelease({ kind: "value", value: true }, { kind: "deadline", ms: 10 }),
      classifyRelease({ kind: "value", value: true }, undefined),
      classifyRelease({ kind: "deadline", ms: 10 }, undefined),
      classifyRelease({ kind: "error", message: "401" }, undefined),
    ];
    for (const c of cases) expect(c.outcome).toBe("unconfirmed");
    expect(cases[0]?.reason).toContain("still finds");
  });
});

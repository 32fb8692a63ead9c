/** The E2B release rule, pure: only a kill that settled followed by a not-found lookup is `released`. */
import { describe, expect, test } from "bun:test";
import { E2B_ALREADY_ABSENT_WARNING, e2bReleaseStep, e2bReleaseVerdict } from "../../src/sandbox/e2b-release.ts";

describe("e2bReleaseVerdict", () => {
  const gone = { kind: "not-found" } as const;
  test("kill true + not-found → released, no warning", () => {
    expect(e2bReleaseVerdict({ kind: "value", value: true }, gone)).toEqual({ outcome: "released", reason: "kill answered true; getInfo answered not found" });
  });
  test("kill false (404) + not-found → released with the already-absent warning", () => {
    expect(e2bReleaseVerdict({ kind: "value", value: false }, gone)).toEqual({
      outcome: "released",
      reason: expect.stringContaining("already absent, end time unknown"),
      warning: E2B_ALREADY_ABSENT_WARNING,
    });
  });
  test("everything else is unconfirmed, and the reason names both steps", () => {
    const cases = [
      e2bReleaseVerdict({ kind: "value", value: true }, { kind: "value", value: { state: "running" } }),
      e2bReleaseVerdict({ kind: "value", value: false }, { kind: "value", value: {} }),
      e2bReleaseVerdict({ kind: "value", value: true }, { kind: "error", message: "500" }),
      e2bReleaseVerdict({ kind: "value", value: false }, { kind: "error", message: "500" }),
      e2bReleaseVerdict({ kind: "value", value: true }, { kind: "deadline", ms: 10 }),
      e2bReleaseVerdict({ kind: "value", value: true }, undefined),
      e2bReleaseVerdict({ kind: "deadline", ms: 10 }, undefined),
      e2bReleaseVerdict({ kind: "deadline", ms: 10 }, gone),
      e2bReleaseVerdict({ kind: "error", message: "401" }, gone),
      e2bReleaseVerdict({ kind: "not-found" }, gone),
    ];
    for (const c of cases) expect(c).toMatchObject({ outcome: "unconfirmed" });
    for (const c of cases) expect(c.warning).toBeUndefined();
    expect(cases[0]?.reason).toBe("kill answered true; getInfo still finds the sandbox (running)");
    expect(cases[1]?.reason).toContain("still finds");
    expect(cases[3]?.reason).toBe("kill answered 404; getInfo failed (500)");
    expect(cases[4]?.reason).toContain("getInfo did not settle within 10 ms");
    expect(cases[5]?.reason).toContain("not looked up");
    expect(cases[6]?.reason).toContain("kill did not settle within 10 ms");
    expect(cases[8]?.reason).toContain("kill failed (401)");
  });
});

describe("e2bReleaseStep", () => {
  class GoneError extends Error {}
  const isGone = (e: unknown) => e instanceof GoneError;
  test("a value, the SDK's not-found, another error (cut to 200 characters) and the deadline", async () => {
    expect(await e2bReleaseStep(Promise.resolve(true), 1_000, isGone)).toEqual({ kind: "value", value: true });
    expect(await e2bReleaseStep(Promise.reject(new GoneError("404")), 1_000, isGone)).toEqual({ kind: "not-found" });
    const other = await e2bReleaseStep(Promise.reject(new TypeError("x".repeat(500))), 1_000, isGone);
    expect(other).toMatchObject({ kind: "error" });
    expect(other.kind === "error" && other.message.startsWith("TypeError: x") && other.message.length === 200).toBe(true);
    expect(await e2bReleaseStep(new Promise<boolean>(() => undefined), 20, isGone)).toEqual({ kind: "deadline", ms: 20 });
  });
});

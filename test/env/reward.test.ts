import { describe, expect, test } from "bun:test";
import { computeReward, parseRewardOverride, parseRewardProbe, REWARD_MAX_BYTES } from "../../src/env/reward.ts";

const enc = (s: string) => new TextEncoder().encode(s);
const verdict = (s: string) => parseRewardOverride(enc(s));

describe("parseRewardOverride", () => {
  const accepted: [string, number][] = [
    ["0.5", 0.5],
    ["0.5\n", 0.5],
    ["0.5\r\n", 0.5],
    [" 1 \n", 1],
    ["-1", -1],
    ["2.5", 2.5],
    ["+0.25", 0.25],
    ["1e-3", 0.001],
    ["3E2", 300],
    ["0", 0],
    ["1e308", 1e308],
  ];
  for (const [text, value] of accepted) {
    test(`accepts ${JSON.stringify(text)} as ${value}`, () => {
      expect(verdict(text)).toEqual({ kind: "accepted", value });
    });
  }
  const ignoredCases: [string, string][] = [
    ["", "empty"],
    ["\n", "empty"],
    ["   ", "empty"],
    ["nan", "not_decimal"],
    ["NaN", "not_decimal"],
    ["inf", "not_decimal"],
    ["-inf", "not_decimal"],
    ["Infinity", "not_decimal"],
    ["abc", "not_decimal"],
    ["0x10", "not_decimal"],
    ["1_000", "not_decimal"],
    [".5", "not_decimal"],
    ["1.", "not_decimal"],
    ["1e", "not_decimal"],
    ["--1", "not_decimal"],
    ["1,5", "not_decimal"],
    ["0.5 0.7", "not_decimal"],
    ["0.5\n0.7", "multiple_lines"],
    ["0.5\n0.7\n", "multiple_lines"],
    ["0.5\n\n", "multiple_lines"],
    ["1e309", "not_finite"],
    ["-1e309", "not_finite"],
  ];
  for (const [text, reason] of ignoredCases) {
    test(`ignores ${JSON.stringify(text)} (${reason})`, () => {
      const v = verdict(text);
      expect(v.kind).toBe("ignored");
      if (v.kind === "ignored") {
        expect(v.ignored.reason).toBe(reason as never);
        expect(v.ignored.detail.length).toBeGreaterThan(0);
      }
    });
  }
  test("a file over the size bound is ignored from its size, whatever was read", () => {
    const v = parseRewardOverride(enc("0.5"), 1024 * 1024);
    expect(v).toMatchObject({ kind: "ignored", ignored: { reason: "too_large" } });
    const big = parseRewardOverride(new Uint8Array(REWARD_MAX_BYTES + 1).fill(0x31));
    expect(big).toMatchObject({ kind: "ignored", ignored: { reason: "too_large" } });
  });
  test("invalid UTF-8 is not a number", () => {
    expect(parseRewardOverride(new Uint8Array([0x31, 0xff]))).toMatchObject({ kind: "ignored", ignored: { reason: "not_decimal" } });
  });
  test("the detail quotes at most 40 characters of the content", () => {
    const v = verdict("x".repeat(100));
    expect(v.kind === "ignored" && v.ignored.detail.length < 80).toBe(true);
  });
});

describe("parseRewardProbe", () => {
  const b64 = (s: string) => Buffer.from(s).toString("base64");
  test("absent file", () => expect(parseRewardProbe("absent\n", 0, false)).toEqual({ kind: "absent" }));
  test("fifo and other special files are never read", () => {
    expect(parseRewardProbe("type fifo\n", 0, false)).toMatchObject({ kind: "ignored", ignored: { reason: "not_regular_file" } });
    expect(parseRewardProbe("type symlink\n", 0, false)).toMatchObject({ kind: "ignored", ignored: { reason: "not_regular_file" } });
  });
  test("regular file content is judged", () => {
    expect(parseRewardProbe(`size 4\ndata ${b64("0.5\n")}\n`, 0, false)).toEqual({ kind: "accepted", value: 0.5 });
    expect(parseRewardProbe(`size 0\ndata \n`, 0, false)).toMatchObject({ kind: "ignored", ignored: { reason: "empty" } });
  });
  test("a timed-out or failed probe is unreadable", () => {
    expect(parseRewardProbe("", 137, true)).toMatchObject({ kind: "ignored", ignored: { reason: "unreadable" } });
    expect(parseRewardProbe("size 3\n", 1, false)).toMatchObject({ kind: "ignored", ignored: { reason: "unreadable" } });
    expect(parseRewardProbe("garbage", 0, false)).toMatchObject({ kind: "ignored", ignored: { reason: "unreadable" } });
  });
});

describe("computeReward", () => {
  test("pass rate without an override", () => {
    expect(computeReward(1, 2, { kind: "absent" })).toMatchObject({ reward: 0.5, source: "pass_rate", overrideIgnored: null });
  });
  test("zero verify commands score 0", () => {
    expect(computeReward(0, 0, { kind: "absent" }).reward).toBe(0);
  });
  test("an accepted override wins, including values outside [0, 1]", () => {
    expect(computeReward(0, 2, { kind: "accepted", value: -1 })).toMatchObject({ reward: -1, source: "override", passRate: 0 });
    expect(computeReward(2, 2, { kind: "accepted", value: 2.5 })).toMatchObject({ reward: 2.5, source: "override" });
  });
  test("an ignored override falls back to the pass rate and keeps the reason", () => {
    const r = computeReward(1, 4, { kind: "ignored", ignored: { reason: "not_finite", detail: "x" } });
    expect(r).toMatchObject({ reward: 0.25, source: "pass_rate", overrideIgnored: { reason: "not_finite" } });
  });
});

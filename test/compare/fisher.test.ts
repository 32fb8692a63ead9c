/**
 * The Fisher exact test core against values computed by hand from the hypergeometric
 * distribution (and the textbook tables whose two-sided p-values R's fisher.test reports),
 * plus the symmetries every two-sided p-value must have.
 */
import { describe, expect, test } from "bun:test";
import { fisherExactTwoSided, logFactorial } from "../../src/compare/fisher.ts";
import { rng as seeded } from "../support/rng.ts";

describe("logFactorial", () => {
  test("matches ln(n!) computed directly", () => {
    expect(logFactorial(0)).toBe(0);
    expect(logFactorial(1)).toBe(0);
    expect(logFactorial(10)).toBeCloseTo(Math.log(3628800), 12);
    expect(logFactorial(20)).toBeCloseTo(Math.log(2432902008176640000), 10);
  });
  test("refuses a negative or fractional n", () => {
    expect(() => logFactorial(-1)).toThrow(RangeError);
    expect(() => logFactorial(2.5)).toThrow(RangeError);
  });
});

describe("fisherExactTwoSided", () => {
  test("5/8 reached vs 8/8: p = 0.2 (tables 5 and 8 are the two 0.1-probability tails)", () => {
    expect(fisherExactTwoSided(5, 3, 8, 0)).toBeCloseTo(0.2, 12);
  });
  test("0/10 vs 10/10: p = 2 / C(20,10)", () => {
    expect(fisherExactTwoSided(0, 10, 10, 0)).toBeCloseTo(2 / 184756, 15);
  });
  test("equal rates give p = 1", () => {
    expect(fisherExactTwoSided(4, 4, 4, 4)).toBeCloseTo(1, 12);
    expect(fisherExactTwoSided(3, 0, 5, 0)).toBe(1);
    expect(fisherExactTwoSided(0, 0, 0, 0)).toBe(1);
  });
  test("textbook tables: the tea-tasting 3/4 vs 1/4 (p = 34/70) and 1/10 vs 11/14 (p ≈ 0.002759)", () => {
    expect(fisherExactTwoSided(3, 1, 1, 3)).toBeCloseTo(34 / 70, 12);
    expect(fisherExactTwoSided(1, 9, 11, 3)).toBeCloseTo(0.002759, 6);
  });
  test("0/2 vs 2/2 (the end-to-end study's table): p = 1/3", () => {
    expect(fisherExactTwoSided(0, 2, 2, 0)).toBeCloseTo(1 / 3, 12);
  });
  test("symmetric under swapping rows, swapping columns and transposing; always in [0, 1]", () => {
    const rng = seeded(20261201);
    for (let i = 0; i < 300; i++) {
      const [a, b, c, d] = [0, 0, 0, 0].map(() => Math.floor(rng() * 17));
      const p = fisherExactTwoSided(a!, b!, c!, d!);
      expect(p).toBeGreaterThanOrEqual(0);
      expect(p).toBeLessThanOrEqual(1);
      expect(fisherExactTwoSided(c!, d!, a!, b!)).toBeCloseTo(p, 10);
      expect(fisherExactTwoSided(b!, a!, d!, c!)).toBeCloseTo(p, 10);
      expect(fisherExactTwoSided(a!, c!, b!, d!)).toBeCloseTo(p, 10);
    }
  });
  test("large tables stay finite (log-factorials, no overflow)", () => {
    const p = fisherExactTwoSided(400, 600, 600, 400);
    expect(Number.isFinite(p)).toBe(true);
    expect(p).toBeLessThan(1e-15);
  });
  test("refuses a negative or fractional count", () => {
    expect(() => fisherExactTwoSided(-1, 2, 3, 4)).toThrow(RangeError);
    expect(() => fisherExactTwoSided(1, 2.5, 3, 4)).toThrow(RangeError);
  });
});

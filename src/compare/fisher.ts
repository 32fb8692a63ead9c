/**
 * Fisher's exact test on a 2×2 table, two-sided, computed from log-factorials so tables of any
 * size a study can produce stay exact in floating point. Pure.
 *
 * The table is `[[a, b], [c, d]]`: row 1 is run A (`a` reached, `b` did not), row 2 is run B.
 * With the margins fixed, the count in the top-left cell follows the hypergeometric
 * distribution; the two-sided p-value sums the probability of every table at most as likely as
 * the observed one (the usual definition, as in R's `fisher.test`).
 */

/** Cached `ln(n!)` for n = 0 … the largest n asked so far. */
const LOG_FACTORIALS: number[] = [0];

/** `ln(n!)` for a whole number n ≥ 0. @throws RangeError for a negative or fractional n. */
export function logFactorial(n: number): number {
  if (!Number.isInteger(n) || n < 0) throw new RangeError(`logFactorial needs a whole number ≥ 0, got ${n}`);
  for (let i = LOG_FACTORIALS.length; i <= n; i++) LOG_FACTORIALS.push(LOG_FACTORIALS[i - 1]! + Math.log(i));
  return LOG_FACTORIALS[n]!;
}

/** `ln C(n, k)`. */
function logChoose(n: number, k: number): number {
  return logFactorial(n) - logFactorial(k) - logFactorial(n - k);
}

/**
 * Tables whose probability is within this relative distance of the observed one count as
 * "as likely": without it, rounding in the logs could drop a table that ties exactly (e.g. the
 * mirror image of a symmetric table) and halve the p-value.
 */
const TIE_TOLERANCE = 1e-7;

/**
 * Two-sided p-value of Fisher's exact test for the table `[[a, b], [c, d]]` (counts, whole
 * numbers ≥ 0). An empty table (all zero) has p = 1. The result is clamped to [0, 1].
 * @throws RangeError when a count is negative or not a whole number
 */
export function fisherExactTwoSided(a: number, b: number, c: number, d: number): number {
  for (const [name, v] of [
    ["a", a],
    ["b", b],
    ["c", c],
    ["d", d],
  ] as const) {
    if (!Number.isInteger(v) || v < 0) throw new RangeError(`fisherExactTwoSided: ${name} must be a whole number ≥ 0, got ${v}`);
  }
  const row1 = a + b;
  const row2 = c + d;
  const col1 = a + c;
  const n = row1 + row2;
  if (n === 0) return 1;
  const logDenominator = logChoose(n, col1);
  const logP = (x: number): number => logChoose(row1, x) + logChoose(row2, col1 - x) - logDenominator;
  const observed = logP(a);
  const threshold = observed + Math.log1p(TIE_TOLERANCE);
  let p = 0;
  for (let x = Math.max(0, col1 - row2); x <= Math.min(row1, col1); x++) {
    const lp = logP(x);
    if (lp <= threshold) p += Math.exp(lp);
  }
  return Math.min(1, Math.max(0, p));
}

/**
 * "Did you mean …" suggestions: the candidate closest to `input` by Levenshtein distance,
 * or undefined when nothing is close enough (distance > max(2, ⌈len/3⌉)).
 * Used for unknown CLI commands/flags and unknown lab keys. Time is
 * O(Σ |input|·|candidate|) over candidates whose length is within the limit of the input's.
 */
export function nearest(input: string, candidates: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = Infinity;
  const limit = Math.max(2, Math.ceil(input.length / 3));
  const lower = input.toLowerCase();
  for (const c of candidates) {
    // The distance is at least the difference in length, so a candidate that could neither win
    // nor fall within the limit is skipped: a hostile megabyte-long key costs nothing here.
    const lc = c.toLowerCase();
    if (Math.abs(lower.length - lc.length) > Math.min(limit, bestDistance - 1)) continue;
    const d = levenshtein(lower, lc);
    if (d < bestDistance) {
      bestDistance = d;
      best = c;
    }
  }
  return bestDistance <= limit ? best : undefined;
}

/** Edit distance (insert, delete, substitute each cost 1). */
export function levenshtein(a: string, b: string): number {
  if (a === b) return 0;
  let prev = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      cur[j] = Math.min(prev[j]! + 1, cur[j - 1]! + 1, prev[j - 1]! + cost);
    }
    prev = cur;
  }
  return prev[b.length]!;
}

/**
 * Which screenshots the report inlines — pure.
 *
 * The report is one HTML file a reader can mail or open offline, so it inlines screenshots; but a
 * 16-seat, 100-turn study has 1,600 of them (~250 MiB), which no reader wants in one page and no
 * renderer should hold in memory. So the report inlines at most {@link INLINE_BUDGET_BYTES} of PNG
 * bytes and links the rest as the bundle's own files. The budget is shared fairly: seats take
 * turns, and each seat spends its turns on its first frame, its last, then the midpoints between
 * frames already chosen (so every seat's strip shows how it started, how it ended and an even
 * spread between), never on more than fits.
 */

/** Most PNG bytes the report inlines, summed over every screenshot (8 MiB ≈ 11 MiB of base64). */
export const INLINE_BUDGET_BYTES = 8 * 1024 * 1024;

/** A screenshot as the manifest lists it. */
export interface ShotSize {
  path: string;
  /** Bytes on disk, as `run.json` lists them. */
  bytes: number;
  participantId?: string;
}

/** Indices 0..n-1 in the order a strip should keep them: first, last, then breadth-first midpoints. */
export function spreadOrder(n: number): number[] {
  if (n <= 0) return [];
  if (n === 1) return [0];
  const out = [0, n - 1];
  let spans: [number, number][] = [[0, n - 1]];
  while (spans.length > 0) {
    const next: [number, number][] = [];
    for (const [lo, hi] of spans) {
      if (hi - lo < 2) continue;
      const mid = Math.floor((lo + hi) / 2);
      out.push(mid);
      next.push([lo, mid], [mid, hi]);
    }
    spans = next;
  }
  return out;
}

/**
 * The paths to inline: all of them when they fit `budget` (bytes), else a fair spread per seat
 * (screenshots without a seat form one group of their own).
 */
export function chooseInlined(shots: readonly ShotSize[], budget = INLINE_BUDGET_BYTES): Set<string> {
  const total = shots.reduce((sum, s) => sum + s.bytes, 0);
  if (total <= budget) return new Set(shots.map((s) => s.path));
  const groups = new Map<string, ShotSize[]>();
  for (const s of shots) {
    const key = s.participantId ?? "";
    const g = groups.get(key);
    if (g) g.push(s);
    else groups.set(key, [s]);
  }
  const queues = [...groups.values()].map((g) => spreadOrder(g.length).map((i) => g[i]!));
  const chosen = new Set<string>();
  let left = budget;
  for (let round = 0; queues.some((q) => round < q.length); round++) {
    for (const q of queues) {
      const s = q[round];
      if (s && s.bytes <= left) {
        chosen.add(s.path);
        left -= s.bytes;
      }
    }
  }
  return chosen;
}

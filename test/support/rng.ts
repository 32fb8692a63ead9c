/**
 * The one seeded PRNG of the test suite, so a failing fuzz or property case reproduces from its
 * seed alone. Used by the browser-control, PNG, bundle and lab fuzz tests.
 */

/**
 * Mulberry32: a small deterministic PRNG. `seed` is taken as an unsigned 32-bit integer; the
 * returned function yields floats in [0, 1), the same sequence for the same seed on every run.
 */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * Deep freezing, on its own so the scorer's child (./child.ts) imports nothing else of humanish:
 * in a sandbox container the child runs from this file and ./child.ts alone.
 */

/** Freeze `v` and everything reachable from it (in place); returns `v`. */
export function deepFreeze<T>(v: T): Readonly<T> {
  if (v !== null && typeof v === "object" && !Object.isFrozen(v)) {
    Object.freeze(v);
    for (const k of Object.keys(v)) deepFreeze((v as Record<string, unknown>)[k]);
  }
  return v;
}

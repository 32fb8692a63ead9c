/**
 * Scratch windows: bounded piles of short-lived buffers.
 *
 * A pass over a bundle (verify's walk, the seal's hashing, the writer's manifest) reads hundreds
 * of MiB one file at a time, and its decoders leave buffers behind. Those bytes live outside the
 * JavaScript heap, so the collector's heuristics see little pressure and let hundreds of MiB pile
 * up before freeing them; that pile, not what the pass keeps, would set its peak memory. A window
 * counts the scratch and asks for one full collection each time `windowBytes` have piled up,
 * which keeps the peak flat in the bundle's size for a few milliseconds per window.
 */

/** Scratch bytes a whole-bundle pass lets pile up before it collects: a few frames' worth. */
export const SCRATCH_WINDOW_BYTES = 64 * 1024 * 1024;

/**
 * Scratch bytes a pass that reads files one at a time only to hash them lets pile up: a hash keeps
 * nothing of a file, so a small window costs a few more collections and no re-reads.
 */
export const HASH_WINDOW_BYTES = 16 * 1024 * 1024;

/**
 * Collects now (one full, synchronous collection): what a full window does, and what a step calls
 * that has just let go of a large pile in one piece (a rendered report's model, its inlined
 * screenshots and their base64; a multi-MiB text file after its scan).
 */
export function collectScratch(): void {
  Bun.gc(true);
}

/** A counter of scratch bytes (see the module note); `add(bytes)` collects once the window is full. */
export function scratchWindow(windowBytes = SCRATCH_WINDOW_BYTES): { add: (bytes: number) => void } {
  let pending = 0;
  return {
    add(bytes) {
      pending += bytes;
      if (pending < windowBytes) return;
      pending = 0;
      collectScratch();
    },
  };
}

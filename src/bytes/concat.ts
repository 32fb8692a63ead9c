/**
 * Byte-array helpers shared by the Docker client (demux, tar), the sandboxes and the terminal
 * participant runner.
 */

/** Concatenates byte chunks, in order, into one new `Uint8Array` (the inputs are not kept or changed). */
export function concatBytes(chunks: readonly Uint8Array[]): Uint8Array {
  let n = 0;
  for (const c of chunks) n += c.byteLength;
  const out = new Uint8Array(n);
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.byteLength;
  }
  return out;
}

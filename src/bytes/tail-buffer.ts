/**
 * The last `max` bytes of a byte stream, and how many came before them: a participant printing
 * gigabytes costs at most `max` bytes of memory while every byte still passes through callbacks.
 */
import { concatBytes } from "./concat.ts";

/** The default bound of a kept stream tail: 16 MiB (the Docker exec buffers and the participant's command results). */
export const DEFAULT_STREAM_TAIL_BYTES = 16 * 1024 * 1024;

/** A bounded tail of a stream (bytes). */
export class TailBuffer {
  private chunks: Uint8Array[] = [];
  private kept = 0;
  /** Bytes dropped from the front so far. */
  dropped = 0;
  constructor(private readonly max: number) {}

  /** Bytes currently kept (≤ `max`). */
  get size(): number {
    return this.kept;
  }

  push(chunk: Uint8Array): void {
    this.chunks.push(chunk);
    this.kept += chunk.length;
    while (this.kept > this.max && this.chunks.length > 0) {
      const first = this.chunks[0]!;
      const excess = this.kept - this.max;
      if (first.length <= excess) {
        this.chunks.shift();
        this.kept -= first.length;
        this.dropped += first.length;
      } else {
        this.chunks[0] = first.subarray(excess);
        this.kept -= excess;
        this.dropped += excess;
      }
    }
  }

  /** The kept tail as one new array. */
  bytes(): Uint8Array {
    return concatBytes(this.chunks);
  }
}

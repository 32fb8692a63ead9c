/**
 * Demultiplexer for Docker's 8-byte framed stdout/stderr stream
 * (`application/vnd.docker.multiplexed-stream`, and exec/attach/logs bodies of containers without a TTY).
 *
 * Each frame is a header `[stream, 0, 0, 0, size(uint32 big-endian)]` followed by `size` payload bytes;
 * stream 0 = stdin echo (delivered as stdout), 1 = stdout, 2 = stderr, 3 = engine system error (delivered
 * as stderr and remembered). HTTP chunk boundaries bear no relation to frame boundaries, so the decoder
 * keeps a partial header and the remaining payload length across `push` calls. Payload bytes are
 * forwarded as raw bytes as they arrive — never decoded per frame, since a UTF-8 sequence can be split
 * across frames (the handed case `cases/docker/logs-multiplexed-body.bin`).
 */
import { concatBytes } from "../bytes/concat.ts";
import { DEFAULT_STREAM_TAIL_BYTES, TailBuffer } from "../bytes/tail-buffer.ts";
import { dockerStreamInvalid } from "./errors.ts";

/** Which output a demultiplexed chunk belongs to. */
export type OutputStream = "stdout" | "stderr";

/** Receives demultiplexed payload bytes. The chunk may be a view into the pushed buffer. */
export type ChunkSink = (stream: OutputStream, chunk: Uint8Array) => void;

/** Incremental decoder; `push` any chunking of the body, then `end()`. */
export class MultiplexedStreamDecoder {
  private readonly header = new Uint8Array(8);
  private headerFill = 0;
  private remaining = 0;
  private current: OutputStream = "stdout";
  private systemError = false;
  private ended = false;
  /** Bytes the engine sent on stream 3 (system error), if any. */
  readonly systemErrors: Uint8Array[] = [];

  constructor(private readonly sink: ChunkSink) {}

  /** Feeds the next body chunk (any size, including 0 or 1 byte). Throws `HUMANISH_DOCKER_STREAM_INVALID` on a bad header. */
  push(chunk: Uint8Array): void {
    if (this.ended) throw dockerStreamInvalid("data pushed after end of multiplexed stream");
    let at = 0;
    while (at < chunk.length) {
      if (this.remaining > 0) {
        const take = Math.min(this.remaining, chunk.length - at);
        const part = chunk.subarray(at, at + take);
        if (this.systemError) this.systemErrors.push(part.slice());
        this.sink(this.current, part);
        this.remaining -= take;
        at += take;
        continue;
      }
      const take = Math.min(8 - this.headerFill, chunk.length - at);
      this.header.set(chunk.subarray(at, at + take), this.headerFill);
      this.headerFill += take;
      at += take;
      if (this.headerFill === 8) {
        this.headerFill = 0;
        this.startFrame();
      }
    }
  }

  private startFrame(): void {
    const h = this.header;
    const kind = h[0]!;
    if (kind > 3 || h[1] !== 0 || h[2] !== 0 || h[3] !== 0) {
      throw dockerStreamInvalid(`bad multiplexed frame header ${Array.from(h, (b) => b.toString(16).padStart(2, "0")).join(" ")}`);
    }
    this.current = kind === 2 || kind === 3 ? "stderr" : "stdout";
    this.systemError = kind === 3;
    this.remaining = ((h[4]! << 24) >>> 0) + (h[5]! << 16) + (h[6]! << 8) + h[7]!;
  }

  /** Marks the end of the body. Throws `HUMANISH_DOCKER_STREAM_INVALID` when a frame was cut short. */
  end(): void {
    this.ended = true;
    if (this.headerFill !== 0) throw dockerStreamInvalid(`multiplexed stream ended inside a frame header (${this.headerFill} of 8 bytes)`);
    if (this.remaining !== 0) throw dockerStreamInvalid(`multiplexed stream ended ${this.remaining} bytes short of a frame`);
  }
}

/** Concatenates byte chunks into one array (the shared {@link concatBytes} of src/bytes, re-exported for the Docker API). */
export { concatBytes };

/** Collected output of a demultiplexed body. */
export interface DemuxedOutput {
  stdout: Uint8Array;
  stderr: Uint8Array;
  /** Bytes dropped from the FRONT of each buffered stream to respect `maxBufferedBytes` (callbacks saw them). */
  stdoutDroppedBytes?: number;
  stderrDroppedBytes?: number;
}

/** Callbacks that receive output as it arrives. */
export interface DemuxCallbacks {
  onStdout?: (chunk: Uint8Array) => void;
  onStderr?: (chunk: Uint8Array) => void;
  /**
   * Keep at most this many bytes of each stream in the returned buffers: the TAIL is kept and
   * the dropped count reported, so a participant printing gigabytes cannot exhaust memory.
   * Default {@link DEFAULT_MAX_BUFFERED_BYTES}. Callbacks always see every byte.
   */
  maxBufferedBytes?: number;
}

/** Default bound of a buffered exec stream: 16 MiB each for stdout and stderr. */
export const DEFAULT_MAX_BUFFERED_BYTES = DEFAULT_STREAM_TAIL_BYTES;

/**
 * Reads a multiplexed body to its end, forwarding chunks to the callbacks and returning everything
 * collected. Resolves only once the stream has drained. Throws `HUMANISH_DOCKER_STREAM_INVALID` on a
 * malformed frame (after cancelling the body).
 */
export async function demuxBody(body: ReadableStream<Uint8Array>, cb: DemuxCallbacks = {}): Promise<DemuxedOutput> {
  const out = new TailBuffer(cb.maxBufferedBytes ?? DEFAULT_MAX_BUFFERED_BYTES);
  const err = new TailBuffer(cb.maxBufferedBytes ?? DEFAULT_MAX_BUFFERED_BYTES);
  const decoder = new MultiplexedStreamDecoder((stream, chunk) => {
    // Copy: the callback may keep the chunk and the reader may hand us views of one buffer.
    const own = chunk.slice();
    if (stream === "stdout") {
      out.push(own);
      cb.onStdout?.(own);
    } else {
      err.push(own);
      cb.onStderr?.(own);
    }
  });
  const reader = body.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      decoder.push(value);
    }
    decoder.end();
  } catch (e) {
    await reader.cancel().catch(() => {});
    throw e;
  } finally {
    reader.releaseLock();
  }
  return { stdout: out.bytes(), stderr: err.bytes(), stdoutDroppedBytes: out.dropped, stderrDroppedBytes: err.dropped };
}

/** Reads a raw (TTY, not multiplexed) body to its end, forwarding it as stdout. */
export async function rawBody(body: ReadableStream<Uint8Array>, cb: DemuxCallbacks = {}): Promise<DemuxedOutput> {
  const out = new TailBuffer(cb.maxBufferedBytes ?? DEFAULT_MAX_BUFFERED_BYTES);
  for await (const chunk of body) {
    const own = chunk.slice();
    out.push(own);
    cb.onStdout?.(own);
  }
  return { stdout: out.bytes(), stderr: new Uint8Array(0), stdoutDroppedBytes: out.dropped, stderrDroppedBytes: 0 };
}

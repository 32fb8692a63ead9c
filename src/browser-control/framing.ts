/**
 * Length-prefixed JSON framing.
 *
 * A frame is a 4-byte unsigned big-endian payload length (1 … 12 MiB) followed by that many
 * bytes of strict UTF-8 JSON: no byte-order mark, no overlong forms, surrogates, truncated
 * sequences, lone continuation bytes or code points above U+10FFFF (TextDecoder `fatal`), then
 * `JSON.parse` (which rejects trailing bytes after the value).
 *
 * The decoder is pure and synchronous: feed it chunks as they arrive. A frame that spans chunks
 * is assembled in a payload buffer allocated only after its length is validated and filled in
 * place (one copy per byte, however fragmented the input). A frame wholly inside one chunk is not
 * copied at all: it is validated and decoded where it lies. Consecutive whole frames of a chunk
 * (coalesced input) are UTF-8-validated together with one native `isUtf8` call (simdutf; see
 * {@link FrameDecoder.pushSpans} for how the frame boundaries are kept exact).
 */
import { isAscii, isUtf8 } from "node:buffer";
import { browserControlError } from "./errors.ts";
import { MAX_FRAME_BYTES } from "./schemas.ts";

/** Why a byte stream stopped being decodable. */
export type FrameFaultKind = "bad_length" | "bad_utf8" | "bom" | "bad_json";

/** A framing fault: the channel must close with `invalid_response` (or `invalid_request` on the guest). */
export interface FrameFault {
  kind: FrameFaultKind;
  /** Local, fixed detail text (never contains payload bytes). */
  detail: string;
}

/** Result of feeding one chunk: the messages completed by it, then a fault if one was hit. */
export interface FrameDecodeResult {
  /** Parsed JSON values (or raw payload bytes in `raw` mode), in arrival order. */
  messages: readonly unknown[];
  /** Set when the stream became invalid; later pushes keep returning it and decode nothing. */
  fault: FrameFault | null;
}

const copyBytes = Buffer.prototype.copy as (this: Uint8Array, target: Uint8Array, targetStart: number) => number;
/**
 * Decode `[start, end)` of `bytes` (already validated as strict UTF-8, so a non-fatal decode is
 * exact) to a string without creating a view object per frame.
 */
const latin1Slice = Buffer.prototype.latin1Slice as (this: Uint8Array, start: number, end: number) => string;
const utf8Slice = Buffer.prototype.utf8Slice as (this: Uint8Array, start: number, end: number) => string;
const NOTHING: FrameDecodeResult = Object.freeze({ messages: Object.freeze([]), fault: null });
const BAD_UTF8: FrameFault = Object.freeze({ kind: "bad_utf8", detail: "frame payload is not strict UTF-8" });
const BOM: FrameFault = Object.freeze({ kind: "bom", detail: "frame payload starts with a UTF-8 byte-order mark" });
const BAD_JSON: FrameFault = Object.freeze({ kind: "bad_json", detail: "frame payload is not a single JSON value" });
/** Four ASCII spaces, written over a length prefix during a batched UTF-8 check (then restored). */
const BLANK = 0x20202020;

/**
 * Frames completed by one {@link FrameDecoder.pushSpans} call, as byte ranges (no object per
 * frame). The object and its arrays belong to the decoder and are reused: read them before the
 * next push. Every frame listed is already checked: length in bounds, no BOM, strict UTF-8
 * (JSON is not parsed at this level). Frame `i` is bytes `starts[i]` … `ends[i] - 1` of
 * `assembled` when `i === 0 && assembled !== null`, else of `chunk`.
 */
export interface FrameSpans {
  /** Number of frames completed by this push. */
  count: number;
  /**
   * A frame whose bytes arrived over several chunks and that this push completed; it is always
   * frame 0. The buffer was allocated for this one frame (after its length was checked) and is
   * never written again by the decoder.
   */
  assembled: Uint8Array | null;
  /** The chunk passed to this push; frames lying wholly inside it are not copied. */
  chunk: Uint8Array;
  /** Payload start offsets in bytes, indexed by frame (capacity may exceed `count`). */
  starts: Uint32Array;
  /** Payload end offsets in bytes, exclusive, indexed by frame. */
  ends: Uint32Array;
  /** 1 when payload `i` is pure ASCII (latin1 decoding is then exact). Filled in JSON mode only. */
  ascii: Uint8Array;
  /** Set when the stream became invalid after the `count` frames; the decoder stays faulted. */
  fault: FrameFault | null;
}

function u32(b: Uint8Array, o: number): number {
  return ((b[o]! << 24) >>> 0) + (b[o + 1]! << 16) + (b[o + 2]! << 8) + b[o + 3]!;
}

function hasBom(b: Uint8Array, start: number, end: number): boolean {
  return end - start >= 3 && b[start] === 0xef && b[start + 1] === 0xbb && b[start + 2] === 0xbf;
}

/**
 * Whether the decoder may briefly write into `chunk` (to blank length prefixes for one
 * batched `isUtf8` call, restored before returning): never for memory other threads can see
 * (SharedArrayBuffer) or for read-only/immutable or detached buffers.
 */
function mayBlank(chunk: Uint8Array): boolean {
  const buf = chunk.buffer as ArrayBuffer & { immutable?: boolean; detached?: boolean };
  if (typeof SharedArrayBuffer !== "undefined" && buf instanceof SharedArrayBuffer) return false;
  return buf.immutable !== true && buf.detached !== true;
}

/**
 * Encode one message as a frame: 4-byte BE length + UTF-8 JSON.
 *
 * Throws `BrowserControlError("invalid_request", "not_dispatched")` when the message cannot be
 * serialised (cycles, BigInt, `undefined` at top level) or the payload exceeds 12 MiB.
 */
export function encodeFrame(message: unknown): Uint8Array {
  let json: string | undefined;
  try {
    json = JSON.stringify(message);
  } catch (e) {
    throw browserControlError("invalid_request", "not_dispatched", "browser-control frame: message is not serialisable as JSON", e);
  }
  if (json === undefined) throw browserControlError("invalid_request", "not_dispatched", "browser-control frame: message serialises to nothing");
  // Worst case 3 bytes per UTF-16 unit; check the cheap bound before allocating.
  if (json.length > MAX_FRAME_BYTES)
    throw browserControlError("invalid_request", "not_dispatched", `browser-control frame: payload exceeds ${MAX_FRAME_BYTES} bytes`);
  const out = new Uint8Array(4 + json.length * 3);
  const { written } = new TextEncoder().encodeInto(json, out.subarray(4));
  if (written === 0 || written > MAX_FRAME_BYTES)
    throw browserControlError("invalid_request", "not_dispatched", `browser-control frame: payload of ${written} bytes is outside 1…${MAX_FRAME_BYTES}`);
  new DataView(out.buffer).setUint32(0, written, false);
  return out.subarray(0, 4 + written);
}

/** Options of {@link FrameDecoder}. */
export interface FrameDecoderOptions {
  /** Largest accepted payload in bytes (default and maximum 12 MiB). */
  maxPayloadBytes?: number;
  /**
   * Yield validated UTF-8 payload bytes instead of parsed JSON (benchmarks/tests). A yielded
   * payload is a view into the pushed chunk when the frame lay wholly inside it (see the
   * aliasing note on {@link FrameDecoder}), else a buffer owned by that frame alone.
   */
  raw?: boolean;
}

/**
 * Incremental frame decoder for a byte stream.
 *
 * `push(chunk)` returns the messages completed by that chunk and, once the stream is malformed,
 * a {@link FrameFault} (the decoder then stays faulted). `pushSpans(chunk)` is the same decoder
 * without an object per frame. `midFrame` tells whether a partial header or payload is buffered
 * (the transport uses it for the 35 s assembly deadline and to classify end-of-stream).
 *
 * Aliasing (no copy for frames wholly inside a chunk): the decoder keeps a reference to the last
 * chunk only in its reused {@link FrameSpans} (until the next push). Raw views and spans of
 * frames wholly inside a chunk read the caller's memory, so a caller that reuses a chunk buffer
 * for later reads must copy them (e.g. `view.slice()`) before reusing it. The JSON mode turns
 * every payload into a string before returning, and socket `data` events carry a new buffer
 * each (Bun's `node:net` checked: distinct ArrayBuffers, contents intact after later reads), so
 * the transport is unaffected. Frames assembled across chunks live in buffers allocated for that
 * frame alone, which no later push writes.
 */
export class FrameDecoder {
  private readonly max: number;
  private readonly raw: boolean;
  private readonly header = new Uint8Array(4);
  private headerFill = 0;
  private payload: Uint8Array | null = null;
  private payloadFill = 0;
  private faulted: FrameFault | null = null;
  /** A length or BOM fault met by the frame walk, applied once the frames before it are validated. */
  private stopped: FrameFault | null = null;
  private readonly spans: FrameSpans = {
    count: 0,
    assembled: null,
    chunk: new Uint8Array(0),
    starts: new Uint32Array(64),
    ends: new Uint32Array(64),
    ascii: new Uint8Array(64),
    fault: null,
  };

  constructor(opts: FrameDecoderOptions = {}) {
    const max = opts.maxPayloadBytes ?? MAX_FRAME_BYTES;
    if (!Number.isInteger(max) || max < 1 || max > MAX_FRAME_BYTES)
      throw browserControlError("invalid_request", "not_dispatched", `FrameDecoder: maxPayloadBytes must be an integer in 1…${MAX_FRAME_BYTES}`);
    this.max = max;
    this.raw = opts.raw === true;
  }

  /** True while a partial header or payload is buffered. */
  get midFrame(): boolean {
    return this.headerFill > 0 || this.payload !== null;
  }

  /** The fault that stopped this decoder, if any. */
  get fault(): FrameFault | null {
    return this.faulted;
  }

  /**
   * Feed one chunk; see {@link FrameDecodeResult}. Messages are parsed JSON values, or in `raw`
   * mode `Uint8Array` payloads (see the class note on aliasing). When the chunk completes no
   * frame, a shared frozen empty result is returned.
   */
  push(chunk: Uint8Array): FrameDecodeResult {
    const p0 = this.payload;
    if (p0 !== null && this.faulted === null && p0.byteLength - this.payloadFill > chunk.byteLength) {
      // Fast path (same as in pushSpans): the chunk only extends a payload without completing it.
      this.payloadFill += copyBytes.call(chunk, p0, this.payloadFill);
      return NOTHING;
    }
    const s = this.pushSpans(chunk);
    const count = s.count;
    if (count === 0) return s.fault === null ? NOTHING : { messages: [], fault: s.fault };
    const messages: unknown[] = new Array(count);
    const { assembled, starts, ends, ascii } = s;
    if (this.raw) {
      for (let i = 0; i < count; i++) messages[i] = (i === 0 && assembled !== null ? assembled : chunk).subarray(starts[i]!, ends[i]!);
      return { messages, fault: s.fault };
    }
    for (let i = 0; i < count; i++) {
      const src = i === 0 && assembled !== null ? assembled : chunk;
      const text = ascii[i] === 1 ? latin1Slice.call(src, starts[i]!, ends[i]!) : utf8Slice.call(src, starts[i]!, ends[i]!);
      try {
        messages[i] = JSON.parse(text);
      } catch {
        this.faulted = BAD_JSON;
        this.payload = null;
        this.headerFill = 0;
        messages.length = i;
        return { messages, fault: BAD_JSON };
      }
    }
    return { messages, fault: s.fault };
  }

  /**
   * Feed one chunk and get the frames it completes as byte ranges ({@link FrameSpans}, reused
   * by the next push). Same checks and order as {@link push} except JSON parsing: length
   * 1…max from the header alone (before any allocation), no BOM, strict UTF-8 (the acceptance
   * of `TextDecoder("utf-8", {fatal: true})`: overlong forms, surrogates, truncated sequences,
   * lone continuation bytes and code points above U+10FFFF are faults).
   *
   * Batched validation of coalesced frames: when a chunk holds several whole frames, their
   * payloads and the length prefixes between them form one region. The length prefixes are
   * overwritten with four ASCII spaces, the region is checked with one `isUtf8` call, and the
   * prefixes are restored (in a `finally`) before this method returns, so the caller's bytes are
   * unchanged when it regains control. This is exact: an ASCII byte is never part of a
   * multi-byte sequence, so the region is valid UTF-8 exactly when every payload is. If the region is invalid, the payloads are re-checked one by one to find the
   * first bad frame. Chunks backed by a SharedArrayBuffer (visible to other threads) or by an
   * immutable or detached buffer are never written: their frames are checked one by one.
   */
  pushSpans(chunk: Uint8Array): FrameSpans {
    const out = this.spans;
    out.count = 0;
    out.assembled = null;
    out.chunk = chunk;
    out.fault = this.faulted;
    if (this.faulted !== null) return out;
    const n = chunk.byteLength;
    const p0 = this.payload;
    if (p0 !== null && p0.byteLength - this.payloadFill > n) {
      // Fast path: the chunk only extends a payload without completing it.
      this.payloadFill += copyBytes.call(chunk, p0, this.payloadFill);
      return out;
    }
    let off = 0;
    while (off < n) {
      const p = this.payload;
      if (p !== null) {
        // Payload phase: fill the preallocated buffer in place. Only the first frame of a push
        // can complete here (a frame started by this push and not fitting never completes in it).
        const take = Math.min(p.byteLength - this.payloadFill, n - off);
        p.set(take === n && off === 0 ? chunk : chunk.subarray(off, off + take), this.payloadFill);
        this.payloadFill += take;
        off += take;
        if (this.payloadFill < p.byteLength) break;
        this.payload = null;
        this.payloadFill = 0;
        if (!this.acceptAssembled(p, out)) return out;
        continue;
      }
      if (this.headerFill > 0 || n - off < 4) {
        // A header split across chunks.
        while (this.headerFill < 4 && off < n) this.header[this.headerFill++] = chunk[off++]!;
        if (this.headerFill < 4) break;
        this.headerFill = 0;
        const len = u32(this.header, 0);
        if (!this.checkLength(len, out)) return out;
        this.allocate(len);
        continue;
      }
      off = this.scanWhole(chunk, off, out);
      if (off < 0) return out;
      if (n - off >= 4) {
        // scanWhole stopped at a header whose (accepted) frame does not fit in this chunk.
        this.allocate(u32(chunk, off));
        off += 4;
      }
    }
    return out;
  }

  /**
   * Collect the whole frames lying in `chunk` from `off` on, validate them, and return the
   * offset of the first byte not consumed (a partial frame's header, or the chunk's end); -1
   * after a fault (frames before the fault stay in `out`).
   */
  private scanWhole(chunk: Uint8Array, off: number, out: FrameSpans): number {
    const first = out.count;
    const view = mayBlank(chunk) ? new DataView(chunk.buffer, chunk.byteOffset, chunk.byteLength) : null;
    let o: number;
    let ok = false;
    let allAscii = false;
    if (view !== null) {
      try {
        o = this.scanFrames(chunk, view, off, out);
        const count = out.count;
        if (count - first >= 2) {
          const region = chunk.subarray(out.starts[first]!, out.ends[count - 1]!);
          ok = isUtf8(region);
          allAscii = ok && !this.raw && isAscii(region);
        }
      } finally {
        // Restore every length prefix blanked by scanFrames (frames first … count-1).
        const { starts, ends } = out;
        for (let i = first, count = out.count; i < count; i++) view.setUint32(starts[i]! - 4, ends[i]! - starts[i]!, false);
      }
    } else o = this.scanFrames(chunk, null, off, out);
    const count = out.count;
    if (ok) {
      if (!this.raw) out.ascii.fill(allAscii ? 1 : 0, first, count);
    } else {
      // One by one: a single frame, a chunk that may not be written, or finding the first bad frame.
      const { starts, ends } = out;
      for (let i = first; i < count; i++) {
        const body = chunk.subarray(starts[i]!, ends[i]!);
        if (!isUtf8(body)) {
          out.count = i;
          this.stopped = null;
          this.faulted = BAD_UTF8;
          out.fault = BAD_UTF8;
          return -1;
        }
        if (!this.raw) out.ascii[i] = isAscii(body) ? 1 : 0;
      }
    }
    const stop = this.stopped;
    if (stop !== null) {
      this.stopped = null;
      this.faulted = stop;
      out.fault = stop;
      return -1;
    }
    return o;
  }

  /**
   * The frame walk of {@link scanWhole}: records whole frames from `off` in `out` (advancing
   * `out.count`); a length or BOM fault is left in `stopped`. Given `view` (the chunk may be
   * written), it also blanks each recorded frame's length prefix as it goes (the first one lies
   * outside the checked region; blanking it too keeps the loop simple). Returns the offset where
   * the walk stopped.
   */
  private scanFrames(chunk: Uint8Array, view: DataView | null, off: number, out: FrameSpans): number {
    const n = chunk.byteLength;
    const max = this.max;
    let starts = out.starts;
    let ends = out.ends;
    let count = out.count;
    let o = off;
    try {
      while (n - o >= 4) {
        const len = view !== null ? view.getUint32(o, false) : u32(chunk, o);
        if (len === 0 || len > max) {
          this.stopped = this.lengthFault(len);
          break;
        }
        const start = o + 4;
        if (n - start < len) break;
        if (len >= 3 && chunk[start] === 0xef && chunk[start + 1] === 0xbb && chunk[start + 2] === 0xbf) {
          this.stopped = BOM;
          break;
        }
        if (count === starts.length) {
          this.grow(count + 1);
          starts = out.starts;
          ends = out.ends;
        }
        if (view !== null) view.setUint32(o, BLANK, false);
        o = start + len;
        starts[count] = start;
        ends[count++] = o;
      }
    } finally {
      out.count = count;
    }
    return o;
  }

  /** Check payload `body`, assembled across chunks, and make it frame 0 of `out`; false after a fault. */
  private acceptAssembled(body: Uint8Array, out: FrameSpans): boolean {
    const len = body.byteLength;
    const fault = hasBom(body, 0, len) ? BOM : isUtf8(body) ? null : BAD_UTF8;
    if (fault !== null) {
      this.faulted = fault;
      out.fault = fault;
      return false;
    }
    out.assembled = body;
    out.starts[0] = 0;
    out.ends[0] = len;
    if (!this.raw) out.ascii[0] = isAscii(body) ? 1 : 0;
    out.count = 1;
    return true;
  }

  /** Grow the span arrays to hold at least `need` frames (doubling). */
  private grow(need: number): void {
    const out = this.spans;
    const cap = Math.max(need, out.starts.length * 2);
    const starts = new Uint32Array(cap);
    const ends = new Uint32Array(cap);
    const ascii = new Uint8Array(cap);
    starts.set(out.starts);
    ends.set(out.ends);
    ascii.set(out.ascii);
    out.starts = starts;
    out.ends = ends;
    out.ascii = ascii;
  }

  private lengthFault(len: number): FrameFault {
    return { kind: "bad_length", detail: `frame length ${len} is outside 1…${this.max} bytes` };
  }

  private checkLength(len: number, out: FrameSpans): boolean {
    if (len === 0 || len > this.max) {
      this.faulted = this.lengthFault(len);
      out.fault = this.faulted;
      return false;
    }
    return true;
  }

  /** The only payload allocation; called after the length was accepted. */
  private allocate(len: number): void {
    this.payload = Buffer.allocUnsafeSlow(len);
    this.payloadFill = 0;
  }
}

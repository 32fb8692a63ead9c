/**
 * Length-prefixed JSON framing (reference subsystems.md §1.2).
 *
 * A frame is a 4-byte unsigned big-endian payload length (1 … 12 MiB) followed by that many
 * bytes of strict UTF-8 JSON: no byte-order mark, no overlong forms, surrogates, truncated
 * sequences, lone continuation bytes or code points above U+10FFFF (TextDecoder `fatal`), then
 * `JSON.parse` (which rejects trailing bytes after the value).
 *
 * The decoder is pure and synchronous: feed it chunks as they arrive; it allocates a payload
 * buffer only after the length is validated and fills it in place, so fragmented (1-byte) and
 * coalesced (many frames per chunk) input cost one copy per byte.
 */
import { isAscii, isUtf8 } from "node:buffer";
import { MAX_FRAME_BYTES } from "./schemas.ts";
import { cuaError } from "./errors.ts";

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

const fatalDecoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
/** Below this size the fatal TextDecoder is fastest; above it simdutf validation + a plain slice. */
const LARGE_PAYLOAD = 4096;
const copyBytes = Buffer.prototype.copy as (this: Uint8Array, target: Uint8Array, targetStart: number) => number;
const NOTHING: FrameDecodeResult = Object.freeze({ messages: Object.freeze([]), fault: null });

/**
 * Strict UTF-8 decode (same acceptance as `TextDecoder("utf-8", {fatal: true})`): overlong
 * forms, surrogates, truncated sequences, lone continuation bytes and code points above
 * U+10FFFF are refused (null). Large payloads are validated with `isUtf8` and then sliced.
 */
function decodeStrictUtf8(body: Uint8Array): string | null {
  if (body.byteLength < LARGE_PAYLOAD) {
    try {
      return fatalDecoder.decode(body);
    } catch {
      return null;
    }
  }
  if (!isUtf8(body)) return null;
  const buf = Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  return isAscii(body) ? buf.toString("latin1") : buf.toString("utf8");
}

/**
 * Encode one message as a frame: 4-byte BE length + UTF-8 JSON.
 *
 * Throws `CuaExecutorError("invalid_request", "not_dispatched")` when the message cannot be
 * serialised (cycles, BigInt, `undefined` at top level) or the payload exceeds 12 MiB.
 */
export function encodeFrame(message: unknown): Uint8Array {
  let json: string | undefined;
  try {
    json = JSON.stringify(message);
  } catch (e) {
    throw cuaError("invalid_request", "not_dispatched", "browser-control frame: message is not serialisable as JSON", e);
  }
  if (json === undefined) throw cuaError("invalid_request", "not_dispatched", "browser-control frame: message serialises to nothing");
  // Worst case 3 bytes per UTF-16 unit; check the cheap bound before allocating.
  if (json.length > MAX_FRAME_BYTES) throw cuaError("invalid_request", "not_dispatched", `browser-control frame: payload exceeds ${MAX_FRAME_BYTES} bytes`);
  const out = new Uint8Array(4 + json.length * 3);
  const { written } = new TextEncoder().encodeInto(json, out.subarray(4));
  if (written === 0 || written > MAX_FRAME_BYTES)
    throw cuaError("invalid_request", "not_dispatched", `browser-control frame: payload of ${written} bytes is outside 1…${MAX_FRAME_BYTES}`);
  new DataView(out.buffer).setUint32(0, written, false);
  return out.subarray(0, 4 + written);
}

/** Options of {@link FrameDecoder}. */
export interface FrameDecoderOptions {
  /** Largest accepted payload in bytes (default and maximum 12 MiB). */
  maxPayloadBytes?: number;
  /**
   * Yield validated UTF-8 payload bytes instead of parsed JSON (benchmarks/tests). A yielded
   * payload may be a view into the pushed chunk.
   */
  raw?: boolean;
}

/**
 * Incremental frame decoder for a byte stream.
 *
 * `push(chunk)` returns the messages completed by that chunk and, once the stream is malformed,
 * a {@link FrameFault} (the decoder then stays faulted). `midFrame` tells whether a partial
 * header or payload is buffered (the transport uses it for the 35 s assembly deadline and to
 * classify end-of-stream).
 */
export class FrameDecoder {
  private readonly max: number;
  private readonly raw: boolean;
  private readonly header = new Uint8Array(4);
  private headerFill = 0;
  private payload: Uint8Array | null = null;
  private payloadFill = 0;
  private faulted: FrameFault | null = null;

  constructor(opts: FrameDecoderOptions = {}) {
    const max = opts.maxPayloadBytes ?? MAX_FRAME_BYTES;
    if (!Number.isInteger(max) || max < 1 || max > MAX_FRAME_BYTES)
      throw cuaError("invalid_request", "not_dispatched", `FrameDecoder: maxPayloadBytes must be an integer in 1…${MAX_FRAME_BYTES}`);
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
   * Feed one chunk; see {@link FrameDecodeResult}. When the chunk completes no frame, a shared
   * frozen empty result is returned.
   */
  push(chunk: Uint8Array): FrameDecodeResult {
    if (this.faulted) return { messages: [], fault: this.faulted };
    // Fast path: the chunk only extends a payload without completing it.
    const p0 = this.payload;
    if (p0 !== null && p0.byteLength - this.payloadFill > chunk.byteLength) {
      this.payloadFill += copyBytes.call(chunk, p0, this.payloadFill);
      return NOTHING;
    }
    const messages: unknown[] = [];
    let off = 0;
    const n = chunk.byteLength;
    while (off < n) {
      if (this.payload === null) {
        // Header phase.
        if (this.headerFill === 0 && n - off >= 4) {
          const len = ((chunk[off]! << 24) >>> 0) + (chunk[off + 1]! << 16) + (chunk[off + 2]! << 8) + chunk[off + 3]!;
          off += 4;
          if (!this.checkLength(len)) return { messages, fault: this.faulted };
          // Whole payload inside this chunk: decode straight from it, no copy.
          if (n - off >= len) {
            const body = chunk.subarray(off, off + len);
            off += len;
            if (!this.finish(body, messages)) return { messages, fault: this.faulted };
            continue;
          }
          this.allocate(len);
          continue;
        }
        while (this.headerFill < 4 && off < n) this.header[this.headerFill++] = chunk[off++]!;
        if (this.headerFill < 4) break;
        const h = this.header;
        const len = ((h[0]! << 24) >>> 0) + (h[1]! << 16) + (h[2]! << 8) + h[3]!;
        this.headerFill = 0;
        if (!this.checkLength(len)) return { messages, fault: this.faulted };
        this.allocate(len);
        continue;
      }
      // Payload phase: fill the preallocated buffer in place.
      const p = this.payload;
      const take = Math.min(p.byteLength - this.payloadFill, n - off);
      p.set(take === n - off && off === 0 ? chunk : chunk.subarray(off, off + take), this.payloadFill);
      this.payloadFill += take;
      off += take;
      if (this.payloadFill === p.byteLength) {
        this.payload = null;
        this.payloadFill = 0;
        if (!this.finish(p, messages)) return { messages, fault: this.faulted };
      }
    }
    return messages.length === 0 ? NOTHING : { messages, fault: null };
  }

  private checkLength(len: number): boolean {
    if (len === 0 || len > this.max) {
      this.faulted = { kind: "bad_length", detail: `frame length ${len} is outside 1…${this.max} bytes` };
      return false;
    }
    return true;
  }

  /** The only payload allocation; called after {@link checkLength} accepted `len`. */
  private allocate(len: number): void {
    this.payload = Buffer.allocUnsafeSlow(len);
    this.payloadFill = 0;
  }

  private finish(body: Uint8Array, out: unknown[]): boolean {
    if (body.byteLength >= 3 && body[0] === 0xef && body[1] === 0xbb && body[2] === 0xbf) {
      this.faulted = { kind: "bom", detail: "frame payload starts with a UTF-8 byte-order mark" };
      return false;
    }
    if (this.raw) {
      if (!isUtf8(body)) {
        this.faulted = { kind: "bad_utf8", detail: "frame payload is not strict UTF-8" };
        return false;
      }
      out.push(body);
      return true;
    }
    const text = decodeStrictUtf8(body);
    if (text === null) {
      this.faulted = { kind: "bad_utf8", detail: "frame payload is not strict UTF-8" };
      return false;
    }
    try {
      out.push(JSON.parse(text));
    } catch {
      this.faulted = { kind: "bad_json", detail: "frame payload is not a single JSON value" };
      return false;
    }
    return true;
  }
}

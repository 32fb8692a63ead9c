/**
 * The escaped-bytes text encoding of participant output: any byte sequence a product prints is
 * stored as UTF-8 text that survives the bundle's text rule (strict UTF-8, no control bytes) and
 * decodes back to the exact bytes.
 *
 * Encoding, byte by byte:
 *   - `\` (0x5C) becomes `\\`;
 *   - tab and newline stay as they are;
 *   - every other C0 control (0x00–0x1F: NUL, BEL, backspace, CR, ESC, …) and DEL (0x7F) becomes
 *     `\xHH` (two lowercase hex digits);
 *   - printable ASCII stays;
 *   - a well-formed UTF-8 sequence stays, except C1 controls (U+0080–U+009F), bidirectional
 *     overrides and isolates (U+202A–U+202E, U+2066–U+2069) and the line/paragraph separators
 *     (U+2028, U+2029), whose bytes each become `\xHH` — they can move or reorder what a reader sees;
 *   - every byte that is not part of a well-formed UTF-8 sequence becomes `\xHH`.
 * The result holds no control character at all, so it is also inert on a terminal and in HTML.
 * Decoding reads `\\` as `\`, `\xHH` as the byte HH and anything else as its UTF-8 bytes; a lone
 * `\` not followed by `\` or `x` and two hex digits (never produced by the encoder, but possible
 * after redaction replaced text next to it) is kept as a literal backslash.
 */

/** True for a code point that is shown escaped although it is valid UTF-8. */
function escapedCodePoint(cp: number): boolean {
  return (cp >= 0x80 && cp <= 0x9f) || (cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069) || cp === 0x2028 || cp === 0x2029;
}

const HEX = "0123456789abcdef";
function hexEscape(b: number): string {
  return `\\x${HEX[b >> 4]}${HEX[b & 15]}`;
}

/**
 * Length (1–4) of the well-formed UTF-8 sequence at `i`, 0 when the bytes there are not one, or
 * -1 when the bytes up to the end of `u8` are a valid but incomplete start of one.
 */
function utf8SequenceLength(u8: Uint8Array, i: number): number {
  const b0 = u8[i]!;
  let n: number;
  let lo = 0x80;
  let hi = 0xbf;
  if (b0 >= 0xc2 && b0 <= 0xdf) n = 2;
  else if (b0 >= 0xe0 && b0 <= 0xef) {
    n = 3;
    if (b0 === 0xe0) lo = 0xa0; // no overlong forms
    if (b0 === 0xed) hi = 0x9f; // no UTF-16 surrogates
  } else if (b0 >= 0xf0 && b0 <= 0xf4) {
    n = 4;
    if (b0 === 0xf0) lo = 0x90;
    if (b0 === 0xf4) hi = 0x8f; // nothing above U+10FFFF
  } else return 0;
  for (let k = 1; k < n; k++) {
    if (i + k >= u8.length) return -1;
    const b = u8[i + k]!;
    if (k === 1 ? b < lo || b > hi : b < 0x80 || b > 0xbf) return 0;
  }
  return n;
}

function codePointAt(u8: Uint8Array, i: number, n: number): number {
  if (n === 2) return ((u8[i]! & 0x1f) << 6) | (u8[i + 1]! & 0x3f);
  if (n === 3) return ((u8[i]! & 0x0f) << 12) | ((u8[i + 1]! & 0x3f) << 6) | (u8[i + 2]! & 0x3f);
  return ((u8[i]! & 0x07) << 18) | ((u8[i + 1]! & 0x3f) << 12) | ((u8[i + 2]! & 0x3f) << 6) | (u8[i + 3]! & 0x3f);
}

const utf8 = new TextDecoder("utf-8");
const strictUtf8 = new TextDecoder("utf-8", { fatal: true });
/** The characters of well-formed text that the encoding escapes (see module doc). */
const ESCAPED_CHARS = /[\\\u0000-\u0008\u000b-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;
const encodeUtf8 = new TextEncoder();

/** The escape of one character of {@link ESCAPED_CHARS}: `\\`, or `\xHH` for each of its UTF-8 bytes. */
function escapeChar(c: string): string {
  if (c === "\\") return "\\\\";
  let out = "";
  for (const b of encodeUtf8.encode(c)) out += hexEscape(b);
  return out;
}

/**
 * Encode `u8[0..end)`; when `streaming`, a valid but incomplete UTF-8 sequence at the very end is
 * not encoded and its start offset is returned as `rest` (the caller prepends it to the next chunk).
 */
function encodeRange(u8: Uint8Array, streaming: boolean): { text: string; rest: number } {
  // Fast path: well-formed UTF-8 (the usual case) is decoded natively and only the characters
  // that need it are escaped. An incomplete sequence at the end fails the strict decode too.
  let whole: string | null = null;
  try {
    whole = strictUtf8.decode(u8);
  } catch {
    whole = null;
  }
  if (whole !== null) return { text: whole.replace(ESCAPED_CHARS, escapeChar), rest: u8.length };
  const parts: string[] = [];
  let runStart = 0;
  let i = 0;
  const flushRun = (to: number): void => {
    if (to > runStart) parts.push(utf8.decode(u8.subarray(runStart, to)));
  };
  while (i < u8.length) {
    const b = u8[i]!;
    if ((b >= 0x20 && b <= 0x7e && b !== 0x5c) || b === 0x09 || b === 0x0a) {
      i++;
      continue;
    }
    if (b >= 0x80) {
      const n = utf8SequenceLength(u8, i);
      if (n === -1 && streaming) {
        flushRun(i);
        return { text: parts.join(""), rest: i };
      }
      if (n > 0 && !escapedCodePoint(codePointAt(u8, i, n))) {
        i += n;
        continue;
      }
      flushRun(i);
      if (n > 0) for (let k = 0; k < n; k++) parts.push(hexEscape(u8[i + k]!));
      else parts.push(hexEscape(b));
      i += n > 0 ? n : 1;
      runStart = i;
      continue;
    }
    flushRun(i);
    parts.push(b === 0x5c ? "\\\\" : hexEscape(b));
    i++;
    runStart = i;
  }
  flushRun(u8.length);
  return { text: parts.join(""), rest: u8.length };
}

/** Encode a whole byte sequence (see module doc). Pure. */
export function encodeOutputBytes(u8: Uint8Array): string {
  return encodeRange(u8, false).text;
}

/** Encode a JS string's UTF-8 bytes (e.g. a secret value, to match it inside encoded output). */
export function encodeOutputString(s: string): string {
  return encodeOutputBytes(new TextEncoder().encode(s));
}

/** A streaming encoder: a UTF-8 sequence split across two chunks is encoded whole. */
export interface OutputEncoder {
  /** Encode one chunk; up to 3 trailing bytes of an incomplete sequence are held for the next. */
  write(chunk: Uint8Array): string;
  /** Encode whatever is held (an incomplete sequence at the end is escaped byte by byte). */
  end(): string;
}

/** Creates a streaming {@link OutputEncoder}. */
export function createOutputEncoder(): OutputEncoder {
  let held = new Uint8Array(0);
  return {
    write(chunk) {
      let buf = chunk;
      if (held.length > 0) {
        buf = new Uint8Array(held.length + chunk.length);
        buf.set(held, 0);
        buf.set(chunk, held.length);
      }
      const { text, rest } = encodeRange(buf, true);
      held = buf.slice(rest);
      return text;
    },
    end() {
      const text = encodeRange(held, false).text;
      held = new Uint8Array(0);
      return text;
    },
  };
}

const ESCAPE = /\\(?:\\|x([0-9a-fA-F]{2}))/g;

/** Decode escaped-bytes text back to the bytes (see module doc for the lenient cases). Pure. */
export function decodeOutputText(s: string): Uint8Array {
  const enc = new TextEncoder();
  const parts: Uint8Array[] = [];
  let last = 0;
  let total = 0;
  const push = (p: Uint8Array): void => {
    parts.push(p);
    total += p.length;
  };
  for (const m of s.matchAll(ESCAPE)) {
    const at = m.index ?? 0;
    if (at > last) push(enc.encode(s.slice(last, at)));
    push(Uint8Array.of(m[1] === undefined ? 0x5c : parseInt(m[1], 16)));
    last = at + m[0].length;
  }
  if (last < s.length) push(enc.encode(s.slice(last)));
  const out = new Uint8Array(total);
  let o = 0;
  for (const p of parts) {
    out.set(p, o);
    o += p.length;
  }
  return out;
}

/** One piece of encoded output prepared for display: plain text, or one escaped byte shown as `\xHH`. */
export interface OutputSegment {
  text: string;
  /** True when `text` is the `\xHH` marker of a control or invalid byte (render it distinguished). */
  escaped: boolean;
}

/**
 * Split encoded output for display: `\\` shows as `\`, each `\xHH` stays visible as a marker
 * segment, so a reader sees the product's text and exactly where it printed raw bytes — without
 * the bytes acting on the terminal or page.
 */
export function outputSegments(s: string): OutputSegment[] {
  const out: OutputSegment[] = [];
  let plain = "";
  let last = 0;
  for (const m of s.matchAll(ESCAPE)) {
    const at = m.index ?? 0;
    plain += s.slice(last, at);
    if (m[1] === undefined) plain += "\\";
    else {
      if (plain) out.push({ text: plain, escaped: false });
      plain = "";
      out.push({ text: m[0].toLowerCase(), escaped: true });
    }
    last = at + m[0].length;
  }
  plain += s.slice(last);
  if (plain) out.push({ text: plain, escaped: false });
  return out;
}

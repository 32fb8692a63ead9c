/**
 * Content helpers of the verify core — pure. Text decoding, the secret/local-path scan of one
 * file, the joined-chunk scan of terminal event streams, NDJSON parsing.
 *
 * Memoised by byte-array identity: the core treats every `Uint8Array` it is given as immutable,
 * so a digest, a decode or a scan of the same array is computed once even across verify calls
 * (a fuzz harness re-verifying 10,000 bundles that share most of their files pays for the
 * mutated file only). A caller must not modify an array in place after handing it over.
 */
import type { z } from "zod";
import { collectScratch, scratchWindow } from "../../bytes/scratch.ts";
import { sha256Hex } from "../../bytes/sha256.ts";
import { zodIssues } from "../../text/zod-issues.ts";
import { decodeBase64Payload, findSensitive, percentDecodeRuns, pngNonImageChunks, splitPngDataUris } from "../redact.ts";

const digests = new WeakMap<Uint8Array, string>();
/** Hex SHA-256 of `bytes` (memoised). */
export function digestOf(bytes: Uint8Array): string {
  let d = digests.get(bytes);
  if (d === undefined) {
    d = sha256Hex(bytes);
    digests.set(bytes, d);
  }
  return d;
}

/**
 * Scratch (bytes) a base64 payload of `chars` characters costs to decode: its two-byte-per-char
 * copy (the text of a report with any non-Latin-1 character is UTF-16) and the decoded bytes.
 */
export function base64Scratch(chars: number): number {
  return chars * 3;
}

/** Scratch bytes let pile up while one file's embedded payloads are decoded. */
export const PAYLOAD_WINDOW_BYTES = 8 * 1024 * 1024;

/** A text file at least this large (bytes) has its scan scratch collected as soon as it is scanned. */
const LARGE_TEXT_BYTES = 4 * 1024 * 1024;

/**
 * Collect what the scan of a large text file left behind (a 12 MiB report decodes to a 25 MiB
 * UTF-16 string, split into parts): one collection per such file, of which a bundle has one or two.
 */
export function releaseLargeTextScratch(bytes: Uint8Array): void {
  if (bytes.byteLength >= LARGE_TEXT_BYTES) collectScratch();
}

const utf8 = new TextDecoder("utf-8", { fatal: true });
const texts = new WeakMap<Uint8Array, string | null>();
/**
 * The bytes as text, or null when they are not text: strict UTF-8 without control bytes other
 * than tab, newline, CR and ESC (ANSI transcripts). Memoised.
 */
export function decodeText(bytes: Uint8Array): string | null {
  if (texts.has(bytes)) return texts.get(bytes)!;
  let t: string | null;
  try {
    const s = utf8.decode(bytes);
    t = /[\u0000-\u0008\u000b\u000c\u000e-\u001a\u001c-\u001f\u007f]/.test(s) ? null : s;
  } catch {
    t = null;
  }
  texts.set(bytes, t);
  return t;
}

/**
 * Drops the memoised texts of the large files among `files`, at the end of a verify pass: the
 * memo is for the checks of one pass, and a report's 25 MiB string would otherwise stay alive
 * as long as its bytes, under whatever the caller does next with the bundle (render, analyse).
 */
export function forgetLargeTexts(files: Iterable<Uint8Array>): void {
  for (const bytes of files) if (bytes.byteLength >= LARGE_TEXT_BYTES) texts.delete(bytes);
}

/**
 * Every string (keys included) inside a JSON value. Iterative, so a hostile nesting depth
 * (JSON.parse accepts far deeper input than the call stack allows) cannot crash verify.
 */
function jsonStrings(root: unknown, out: string[]): void {
  const stack: unknown[] = [root];
  while (stack.length) {
    const v = stack.pop();
    if (typeof v === "string") out.push(v);
    else if (Array.isArray(v)) for (let i = v.length - 1; i >= 0; i--) stack.push(v[i]);
    else if (v && typeof v === "object") {
      const entries = Object.entries(v);
      for (let i = entries.length - 1; i >= 0; i--) {
        stack.push(entries[i]![1]);
        stack.push(entries[i]![0]);
      }
    }
  }
}

/** Latin1 view of bytes (every byte one char), for pattern scans of binary content. */
function latin1(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("latin1");
}

/** Decode numeric and the common named HTML character references. */
function decodeHtmlRefs(s: string): string {
  const named: Record<string, string> = { amp: "&", lt: "<", gt: ">", quot: '"', apos: "'", sol: "/" };
  return s.replace(/&(#\d+|#x[0-9a-f]+|amp|lt|gt|quot|apos|sol);/gi, (_, ref: string) => {
    if (ref[0] === "#") {
      const code = ref[1] === "x" || ref[1] === "X" ? parseInt(ref.slice(2), 16) : parseInt(ref.slice(1), 10);
      return code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : "";
    }
    return named[ref.toLowerCase()] ?? "";
  });
}

/** Parsed JSON documents of a `.json` (one) or `.ndjson` (one per line) text; unparsable parts are skipped. */
function jsonDocs(rel: string, text: string): unknown[] {
  const lower = rel.toLowerCase();
  const docs: unknown[] = [];
  if (lower.endsWith(".json")) {
    try {
      docs.push(JSON.parse(text));
    } catch {
      /* shape checks report malformed JSON */
    }
  } else if (lower.endsWith(".ndjson")) {
    for (const line of text.split("\n")) {
      if (!line.trim()) continue;
      try {
        docs.push(JSON.parse(line));
      } catch {
        /* reported by artifact schemas */
      }
    }
  }
  return docs;
}

/**
 * Joined text of each stream of a terminal-events NDJSON: the `chunk` fields of every line, in
 * order, concatenated per `stream` (stdout, stderr). A secret split across two events is
 * whole again here, while each chunk alone is clean. Lines that are not objects are skipped.
 */
export function joinedStreams(text: string): Map<string, string> {
  const parts = new Map<string, string[]>();
  for (const line of text.split("\n")) {
    if (!line.trim()) continue;
    let v: unknown;
    try {
      v = JSON.parse(line);
    } catch {
      continue;
    }
    if (!v || typeof v !== "object") continue;
    const { stream, chunk } = v as { stream?: unknown; chunk?: unknown };
    if (typeof chunk !== "string") continue;
    const key = typeof stream === "string" ? stream : "(none)";
    const list = parts.get(key);
    if (list) list.push(chunk);
    else parts.set(key, [chunk]);
  }
  return new Map([...parts].map(([k, v]) => [k, v.join("")]));
}

function scanContentUncached(rel: string, bytes: Uint8Array): string[] {
  const found = new Set<string>();
  const scan = (s: string) => {
    for (const f of findSensitive(s, 10)) found.add(f.shape);
  };
  const scanBinary = (b: Uint8Array) => {
    const chunks = pngNonImageChunks(b);
    if (chunks) for (const c of chunks) scan(latin1(c));
    else scan(latin1(b));
  };
  const text = decodeText(bytes);
  if (text === null) {
    scanBinary(bytes);
    return [...found];
  }
  const { outside, payloads } = splitPngDataUris(text);
  const bare = outside.join("\n");
  scan(bare);
  const scratch = scratchWindow(PAYLOAD_WINDOW_BYTES);
  for (const p of payloads) {
    scanBinary(decodeBase64Payload(p));
    scratch.add(base64Scratch(p.length));
  }
  const strings: string[] = [];
  for (const d of jsonDocs(rel, text)) jsonStrings(d, strings);
  for (const s of strings) scan(splitPngDataUris(s).outside.join("\n"));
  const lower = rel.toLowerCase();
  // HTML character references (a report escapes what it shows) are decoded once more.
  if ((lower.endsWith(".html") || lower.endsWith(".htm")) && /&(?:#\d+|#x[0-9a-f]+|amp|lt|gt|quot|apos|sol);/i.test(bare)) scan(decodeHtmlRefs(bare));
  // Percent-encoded content (URLs in transcripts) is decoded once more.
  if (/%[0-9A-Fa-f]{2}/.test(bare)) scan(percentDecodeRuns(bare));
  releaseLargeTextScratch(bytes);
  return [...found];
}

const scans = new WeakMap<Uint8Array, Map<string, string[]>>();
/**
 * Shape names found in one file's content. Text is scanned raw and, for JSON/NDJSON, decoded
 * string by string; embedded PNG data-URI payloads and binary PNGs are scanned through their
 * non-image chunks; other binary through a latin1 view. Memoised per (bytes, path).
 */
export function scanContent(rel: string, bytes: Uint8Array): string[] {
  let byPath = scans.get(bytes);
  if (!byPath) {
    byPath = new Map();
    scans.set(bytes, byPath);
  }
  let r = byPath.get(rel);
  if (!r) {
    r = scanContentUncached(rel, bytes);
    byPath.set(rel, r);
  }
  return r;
}

const streamScans = new WeakMap<Uint8Array, string[]>();
/** Shape names found in the joined chunk streams of a terminal-events file (memoised), as `stream: shape`. */
export function scanJoinedStreams(bytes: Uint8Array): string[] {
  let r = streamScans.get(bytes);
  if (!r) {
    r = [];
    const text = decodeText(bytes);
    if (text !== null)
      for (const [stream, joined] of joinedStreams(text)) {
        const seen = new Set<string>();
        for (const f of findSensitive(joined, 10)) seen.add(f.shape);
        for (const s of seen) r.push(`${stream}: ${s}`);
      }
    streamScans.set(bytes, r);
  }
  return r;
}

/** Parse NDJSON lines against `schema`; the first bad line is the error. */
export function parseNdjson<T>(text: string, schema: z.ZodType<T>): { records: T[]; error: string | null } {
  const records: T[] = [];
  const lines = text.split("\n");
  if (lines.length && lines[lines.length - 1] === "") lines.pop();
  for (let i = 0; i < lines.length; i++) {
    let v: unknown;
    try {
      v = JSON.parse(lines[i]!);
    } catch {
      return { records, error: `line ${i + 1} is not JSON` };
    }
    const r = schema.safeParse(v);
    if (!r.success) return { records, error: `line ${i + 1}: ${zodIssues(r.error)}` };
    records.push(r.data);
  }
  return { records, error: null };
}

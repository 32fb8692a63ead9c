/**
 * Redaction (ARCHITECTURE invariant 1; reference contracts.md §3.6). Applied to every byte
 * humanish writes or prints, in this order:
 *   1. literal scrub of every provided secret VALUE of ≥ 4 chars (longest first) → `[REDACTED_SECRET]`;
 *   2. the target cwd (when given) → `[target-cwd]`;
 *   3. secret-shape patterns → `[REDACTED_SECRET]`, local-path shapes → `[REDACTED_LOCAL_PATH]` /
 *      `[REDACTED_RUNTIME_PATH]`;
 *   4. only then, optionally, truncation to a tail — never truncate first.
 * The same pattern table is the detector `findSensitive` that `verifyRun` scans with.
 */
import { createHash } from "node:crypto";

/** Replacement for secret values and secret shapes. */
export const REDACTED_SECRET = "[REDACTED_SECRET]";
/** Replacement for host-local paths (`/tmp/…`, `/Users/<name>/…`, `/var/folders/…`). */
export const REDACTED_LOCAL_PATH = "[REDACTED_LOCAL_PATH]";
/** Replacement for home directories (`/home/<name>/…`). */
export const REDACTED_RUNTIME_PATH = "[REDACTED_RUNTIME_PATH]";
/** Label of the target project directory. */
export const TARGET_CWD = "[target-cwd]";

/** Secret values shorter than this are not scrubbed literally (they would shred ordinary text). */
export const MIN_SECRET_LENGTH = 4;
/** Default tail length for output tails (chars). */
export const DEFAULT_TAIL_CHARS = 2000;

/** Characters that may continue a path: stops at whitespace, quotes, brackets and separators. */
const PATH_CHARS = "[^\\s\"'`<>|;,(){}\\[\\]\\\\]";
/** A shape must not be glued to a preceding word character (e.g. `task-…` is not `sk-…`). */
const WB = "(?<![A-Za-z0-9])";
/**
 * A path must start a token: not preceded by a word or path character, so `http://h:80/tmp/x`,
 * `./tmp/x` and `a/home/b` are left alone while `PATH=/home/a/bin` and `"/tmp/x"` are not.
 */
const PB = "(?<![A-Za-z0-9._~/-])";

interface Shape {
  name: string;
  re: RegExp;
  replacement: string;
}

/** The shape table (contracts §3.6). Every regex is global; order matters (longest/most specific first). */
const SHAPES: readonly Shape[] = [
  {
    name: "pem-private-key",
    re: /-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----(?:[\s\S]*?-----END [A-Z0-9 ]*PRIVATE KEY-----)?/g,
    replacement: REDACTED_SECRET,
  },
  { name: "pem-key-header", re: /BEGIN (?:RSA|OPENSSH|PRIVATE) KEY/gi, replacement: REDACTED_SECRET },
  { name: "anthropic-key", re: new RegExp(`${WB}sk-ant-[A-Za-z0-9_-]{20,}`, "g"), replacement: REDACTED_SECRET },
  {
    name: "openai-key",
    re: new RegExp(`${WB}sk-(?:proj-|svcacct-)?[A-Za-z0-9_-]{20,}`, "g"),
    replacement: REDACTED_SECRET,
  },
  { name: "stripe-key", re: new RegExp(`${WB}(?:sk|rk)_live_[A-Za-z0-9]{16,}`, "g"), replacement: REDACTED_SECRET },
  { name: "e2b-key", re: new RegExp(`${WB}e2b_[A-Za-z0-9]{16,}`, "g"), replacement: REDACTED_SECRET },
  { name: "github-pat", re: new RegExp(`${WB}github_pat_[A-Za-z0-9_]{20,}`, "g"), replacement: REDACTED_SECRET },
  { name: "github-token", re: new RegExp(`${WB}gh[pousr]_[A-Za-z0-9]{20,}`, "g"), replacement: REDACTED_SECRET },
  { name: "aws-access-key", re: new RegExp(`${WB}AKIA[A-Z0-9]{16}(?![A-Z0-9])`, "g"), replacement: REDACTED_SECRET },
  { name: "google-api-key", re: new RegExp(`${WB}AIza[A-Za-z0-9_-]{20,}`, "g"), replacement: REDACTED_SECRET },
  { name: "huggingface-token", re: new RegExp(`${WB}hf_[A-Za-z0-9]{30,}`, "g"), replacement: REDACTED_SECRET },
  { name: "slack-token", re: new RegExp(`${WB}xox[baprs]-[A-Za-z0-9-]{20,}`, "g"), replacement: REDACTED_SECRET },
  {
    name: "jwt",
    re: new RegExp(`${WB}eyJ[A-Za-z0-9_-]{17,}\\.[A-Za-z0-9_-]{20,}\\.[A-Za-z0-9_-]{10,}`, "g"),
    replacement: REDACTED_SECRET,
  },
  {
    name: "db-url-credentials",
    re: /(?:postgres(?:ql)?|mysql|mongodb(?:\+srv)?|redis):\/\/[^\s:@/"'`]+:[^\s@/"'`]+@[^\s"'`<>]*/gi,
    replacement: REDACTED_SECRET,
  },
  { name: "npm-token", re: /_authToken=[^\s"'`]{20,}/g, replacement: REDACTED_SECRET },
  { name: "bearer-token", re: /Bearer [A-Za-z0-9._~+/=-]{24,}/g, replacement: REDACTED_SECRET },
  {
    name: "hosted-substrate-url",
    re: /https?:\/\/[^\s/"'`<>]*e2b[^\s/"'`<>]*[^\s"'`<>]*/gi,
    replacement: REDACTED_SECRET,
  },
  {
    name: "macos-temp-path",
    re: new RegExp(`${PB}(?:/private)?/var/folders/${PATH_CHARS}*`, "g"),
    replacement: REDACTED_LOCAL_PATH,
  },
  {
    name: "tmp-path",
    re: new RegExp(`${PB}(?:/private)?/tmp/${PATH_CHARS}*`, "g"),
    replacement: REDACTED_LOCAL_PATH,
  },
  {
    name: "users-path",
    re: new RegExp(`${PB}/Users/[^\\s/"'\`<>|;,(){}\\[\\]\\\\]+${PATH_CHARS}*`, "g"),
    replacement: REDACTED_LOCAL_PATH,
  },
  {
    name: "home-path",
    re: new RegExp(`${PB}/home/[^\\s/"'\`<>|;,(){}\\[\\]\\\\]+${PATH_CHARS}*`, "g"),
    replacement: REDACTED_RUNTIME_PATH,
  },
];

/**
 * A whitespace/quote-delimited token. Tokens are matched whole and only those holding a `%XX`
 * escape are decoded: one linear pass. (A single regex "token containing %XX" restarts at every
 * position of a long token without one — quadratic, minutes for a 500 KB blob.)
 */
const TOKEN = /[^\s"'`<>]+/g;
/** A `%XX` escape. */
const PCT_ESCAPE = /%[0-9A-Fa-f]{2}/;

/**
 * Decode every run of `%XX` escapes on its own (UTF-8 when valid, else byte-wise latin1), so one
 * malformed escape elsewhere cannot switch decoding off. Other text is unchanged.
 */
export function percentDecodeRuns(s: string): string {
  return s.replace(/(?:%[0-9A-Fa-f]{2})+/g, (m) => {
    try {
      return decodeURIComponent(m);
    } catch {
      return m.replace(/%([0-9A-Fa-f]{2})/g, (_, h: string) => String.fromCharCode(parseInt(h, 16)));
    }
  });
}

/**
 * JSON text with every raw DEL (U+007F) written as the escape `\u007f`. `JSON.stringify`
 * escapes the other control characters but not DEL, and bundle text must be free of control
 * bytes (`verifyRun`'s text rule); outside strings JSON has no DEL, so the value is unchanged.
 */
export function escapeDelInJson(json: string): string {
  return json.includes("\u007f") ? json.replace(/\u007f/g, "\\u007f") : json;
}

/** Names of the secret/path shapes, in application order (for documentation and tests). */
export const SHAPE_NAMES: readonly string[] = SHAPES.map((s) => s.name);

/** A sensitive shape found in text: the shape's name and the character offset. */
export interface SensitiveFinding {
  shape: string;
  index: number;
}

/**
 * Detector: every secret or local-path shape in `text` (max `limit` findings).
 * Used by `verifyRun`'s public-safety scan. Pure.
 */
export function findSensitive(text: string, limit = 50): SensitiveFinding[] {
  const out: SensitiveFinding[] = [];
  for (const shape of SHAPES) {
    shape.re.lastIndex = 0;
    for (const m of text.matchAll(shape.re)) {
      out.push({ shape: shape.name, index: m.index ?? 0 });
      if (out.length >= limit) return out;
    }
  }
  return out;
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/** Options of a redactor. */
export interface RedactorOptions {
  /**
   * Absolute target project dir: paths under it become `[target-cwd]/<rel>` instead of being
   * redacted as local paths. Applied after the literal scrub, before the patterns.
   */
  cwd?: string;
}

/** A reusable redactor bound to one set of secret values. */
export interface Redactor {
  /** Redact a string (literal scrub → cwd label → patterns). */
  text(s: string): string;
  /** Redact, then keep the last `maxChars` chars (`…` prefix; `(no output)` when empty). */
  tail(s: string, maxChars?: number): string;
  /**
   * Redact bytes. Valid UTF-8 is redacted as text and re-encoded. Other bytes are redacted
   * byte-for-byte through a latin1 view (every non-matching byte is preserved exactly).
   */
  bytes(u8: Uint8Array): Uint8Array;
  /**
   * Redact a JSON value: every string (keys included) is redacted before serialisation, then the
   * serialised text is redacted again. Returns the pretty JSON text (2-space indent, trailing newline).
   */
  json(value: unknown): string;
  /** Deep copy of `value` with every string redacted (keys included). */
  value<T>(value: T): T;
  /** True when `s` still contains a known secret value (after any transformation). */
  containsSecret(s: string | Uint8Array): boolean;
}

/**
 * Build a redactor for the given secret values. Values shorter than {@link MIN_SECRET_LENGTH}
 * chars (after trimming nothing) are skipped; duplicates are collapsed; longest first so a secret
 * that contains another is scrubbed whole.
 */
export function createRedactor(secrets: readonly (string | undefined | null)[], opts: RedactorOptions = {}): Redactor {
  // A value and its trimmed form (an env-file line may carry a stray newline or spaces).
  const raw = secrets.filter((s): s is string => typeof s === "string");
  const values = [...new Set([...raw, ...raw.map((s) => s.trim())].filter((s) => s.length >= MIN_SECRET_LENGTH))].sort((a, b) => b.length - a.length);
  // JSON-escaped forms too: a secret with quotes/backslashes/controls appears escaped in JSON text.
  const forms = new Set<string>();
  for (const v of values) {
    forms.add(v);
    const esc = JSON.stringify(v).slice(1, -1);
    if (esc !== v) forms.add(esc);
  }
  const literal =
    forms.size === 0
      ? null
      : new RegExp(
          [...forms]
            .sort((a, b) => b.length - a.length)
            .map(escapeRegExp)
            .join("|"),
          "g",
        );
  const secretBytes = values.map((v) => new TextEncoder().encode(v));
  const cwd = opts.cwd && opts.cwd.length > 1 ? opts.cwd.replace(/\/+$/, "") : undefined;
  const cwdRe = cwd ? new RegExp(`${escapeRegExp(cwd)}(?=/|$|[^A-Za-z0-9._-])`, "g") : null;

  const plain = (s: string): string => {
    let out = s;
    if (literal) out = out.replace(literal, REDACTED_SECRET);
    if (cwdRe) out = out.replace(cwdRe, TARGET_CWD);
    for (const shape of SHAPES) out = out.replace(shape.re, shape.replacement);
    // A percent-encoded token (a URL a participant typed) that decodes to a secret value or a
    // secret/local-path shape is replaced whole — the verifier decodes these too.
    if (out.includes("%")) {
      out = out.replace(TOKEN, (tok) => {
        if (!tok.includes("%") || !PCT_ESCAPE.test(tok)) return tok;
        const dec = percentDecodeRuns(tok);
        if (dec === tok) return tok;
        if (literal) literal.lastIndex = 0;
        const hasSecret = literal ? literal.test(dec) : false;
        return hasSecret || findSensitive(dec, 1).length > 0 ? REDACTED_SECRET : tok;
      });
    }
    return out;
  };
  // Embedded PNG payloads (a self-contained report's screenshots) are kept byte-exact: rewriting
  // base64 would corrupt the image. Their decoded bytes are checked by containsSecret instead.
  const text = (s: string): string => mapOutsidePngDataUris(s, plain);

  const deep = (v: unknown): unknown => {
    if (typeof v === "string") return text(v);
    if (Array.isArray(v)) return v.map(deep);
    if (v && typeof v === "object") {
      const o: Record<string, unknown> = {};
      for (const [k, val] of Object.entries(v as Record<string, unknown>)) o[text(k)] = deep(val);
      return o;
    }
    return v;
  };

  const decoder = new TextDecoder("utf-8", { fatal: true });
  const bytes = (u8: Uint8Array): Uint8Array => {
    let asText: string | null = null;
    try {
      asText = decoder.decode(u8);
    } catch {
      asText = null;
    }
    if (asText !== null) return new TextEncoder().encode(text(asText));
    const latin1 = Buffer.from(u8.buffer, u8.byteOffset, u8.byteLength).toString("latin1");
    // Secrets are matched on their UTF-8 byte sequence, viewed as latin1.
    let out = latin1;
    for (const sb of secretBytes) {
      const needle = Buffer.from(sb).toString("latin1");
      out = out.split(needle).join(REDACTED_SECRET);
    }
    for (const shape of SHAPES) out = out.replace(shape.re, shape.replacement);
    return new Uint8Array(Buffer.from(out, "latin1"));
  };

  const hasSecretBytes = (hay: Buffer): boolean => secretBytes.some((sb) => hay.indexOf(Buffer.from(sb)) !== -1);
  const containsSecret = (s: string | Uint8Array): boolean => {
    if (typeof s !== "string") {
      const buf = Buffer.from(s.buffer, s.byteOffset, s.byteLength);
      const chunks = pngNonImageChunks(s);
      // A PNG can only disclose text through its non-IDAT chunks; a chance byte match inside
      // compressed image data is not a disclosure.
      return chunks ? chunks.some((c) => hasSecretBytes(Buffer.from(c))) : hasSecretBytes(buf);
    }
    const { outside, payloads } = splitPngDataUris(s);
    if (hasSecretBytes(Buffer.from(outside.join("\n"), "utf8"))) return true;
    return payloads.some((p) => containsSecret(decodeBase64Payload(p)));
  };

  return {
    text,
    tail: (s, maxChars = DEFAULT_TAIL_CHARS) => tail(text(s), maxChars),
    bytes,
    json: (value) => {
      const once = escapeDelInJson(JSON.stringify(deep(value), null, 2));
      const twice = text(once);
      // The second pass only ever shortens matches inside strings; if it ever broke the JSON,
      // the string-level pass alone (already complete) is the safe answer.
      try {
        JSON.parse(twice);
        return `${twice}\n`;
      } catch {
        return `${once}\n`;
      }
    },
    value: <T>(value: T) => deep(value) as T,
    containsSecret,
  };
}

/**
 * `data:image/png;base64,<payload>` inside text (a self-contained HTML report's screenshots).
 * The payload may be wrapped over lines and must end at a quote or closing parenthesis.
 */
const PNG_DATA_URI = /data:image\/png;base64,([A-Za-z0-9+/\r\n]+={0,2}[\r\n]*)(?=["')])/g;

/** Decode a (possibly line-wrapped) base64 payload. */
export function decodeBase64Payload(p: string): Uint8Array {
  return new Uint8Array(Buffer.from(p.replace(/\s+/g, ""), "base64"));
}

/** Split text into the parts outside PNG data-URI payloads and the base64 payloads themselves. */
export function splitPngDataUris(s: string): { outside: string[]; payloads: string[] } {
  const outside: string[] = [];
  const payloads: string[] = [];
  let last = 0;
  for (const m of s.matchAll(PNG_DATA_URI)) {
    const start = (m.index ?? 0) + m[0].length - m[1]!.length;
    outside.push(s.slice(last, start));
    payloads.push(m[1]!);
    last = start + m[1]!.length;
  }
  outside.push(s.slice(last));
  return { outside, payloads };
}

/** Apply `fn` to every part of `s` outside PNG data-URI payloads; payloads stay byte-exact. */
function mapOutsidePngDataUris(s: string, fn: (part: string) => string): string {
  if (!s.includes("data:image/png;base64,")) return fn(s);
  const { outside, payloads } = splitPngDataUris(s);
  let out = "";
  for (let i = 0; i < outside.length; i++) {
    out += fn(outside[i]!);
    if (i < payloads.length) out += payloads[i]!;
  }
  return out;
}

/**
 * The data of every chunk except IDAT of a structurally walkable PNG (signature, then
 * length/type/data/CRC chunks up to IEND), or null when `bytes` is not such a PNG.
 */
export function pngNonImageChunks(bytes: Uint8Array): Uint8Array[] | null {
  const sig = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];
  if (bytes.byteLength < 8 || sig.some((b, i) => bytes[i] !== b)) return null;
  const out: Uint8Array[] = [];
  let o = 8;
  while (o + 12 <= bytes.byteLength) {
    const len = ((bytes[o]! << 24) >>> 0) + (bytes[o + 1]! << 16) + (bytes[o + 2]! << 8) + bytes[o + 3]!;
    const type = String.fromCharCode(bytes[o + 4]!, bytes[o + 5]!, bytes[o + 6]!, bytes[o + 7]!);
    if (o + 12 + len > bytes.byteLength) return null;
    if (type !== "IDAT") out.push(bytes.subarray(o + 8, o + 8 + len));
    o += 12 + len;
    if (type === "IEND") return o === bytes.byteLength ? out : null;
  }
  return null;
}

/**
 * Redact `text`: literal scrub of every secret value (≥ 4 chars, longest first), then the
 * secret-shape and local-path patterns; when `opts.tailChars` is given, truncate to that tail last.
 */
export function redact(text: string, secrets: readonly string[], opts: RedactorOptions & { tailChars?: number } = {}): string {
  const r = createRedactor(secrets, opts);
  return opts.tailChars === undefined ? r.text(text) : r.tail(text, opts.tailChars);
}

/**
 * Keep the last `maxChars` characters of already-redacted text: `…` prefix when cut,
 * `(no output)` when empty. Never call this before redaction.
 */
export function tail(text: string, maxChars = DEFAULT_TAIL_CHARS): string {
  if (text.length === 0) return "(no output)";
  if (text.length <= maxChars) return text;
  return `…${text.slice(text.length - Math.max(0, maxChars - 1))}`;
}

/** `digestText`: SHA-256 hex of the UTF-8 text, first `n` chars (12 default; 16 for commands). */
export function digestText(text: string, n = 12): string {
  return createHash("sha256").update(text, "utf8").digest("hex").slice(0, n);
}

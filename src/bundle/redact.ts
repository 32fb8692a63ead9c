/**
 * Redaction: the rule that no secret value and no secret shape ever reaches disk or stdout, and
 * that shareable evidence carries no host-local path. Applied to every free-text string humanish
 * writes or prints, in this order:
 *   1. literal scrub of every provided secret VALUE of ≥ 4 chars (longest first; also its
 *      JSON-escaped and escaped-bytes forms) → `[REDACTED_SECRET]`;
 *   2. the target cwd (when given) → `[target-cwd]`;
 *   3. secret-shape patterns → `[REDACTED_SECRET]`; for shareable evidence also local-path shapes →
 *      `[REDACTED_LOCAL_PATH]` / `[REDACTED_RUNTIME_PATH]`;
 *   4. only then, optionally, truncation to a tail — never truncate first.
 * Structure is never scrubbed: JSON keys and strings that are constants of our own schemas
 * (enum and literal values such as `docker` or `live`) are left as they are; only string values
 * are redacted, before serialisation, never the serialised document.
 * The same pattern table is the detector `findSensitive` that `verifyRun` scans with.
 */
import { createHash } from "node:crypto";
import { DEFAULT_TAIL_CHARS, tail } from "../text/tail.ts";
import { encodeOutputString } from "./output-codec.ts";

export { DEFAULT_TAIL_CHARS, tail };

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

/** Characters that may continue a path: stops at whitespace, quotes, brackets and separators. */
const PATH_CHARS = "[^\\s\"'`<>|;,(){}\\[\\]\\\\]";
/**
 * Right after a `\xHH` escape of stored output (a control or invalid byte the product printed):
 * the escape's hex digits are not a word the shape is glued to.
 */
const AFTER_BYTE_ESCAPE = "(?<=\\\\x[0-9a-f]{2})";
/** A shape must not be glued to a preceding word character (e.g. `task-…` is not `sk-…`). */
const WB = `(?:(?<![A-Za-z0-9])|${AFTER_BYTE_ESCAPE})`;
/**
 * A path must start a token: not preceded by a word or path character, so `http://h:80/tmp/x`,
 * `./tmp/x` and `a/home/b` are left alone while `PATH=/home/a/bin` and `"/tmp/x"` are not.
 */
const PB = `(?:(?<![A-Za-z0-9._~/-])|${AFTER_BYTE_ESCAPE})`;

interface Shape {
  name: string;
  re: RegExp;
  replacement: string;
}

/** The shape table. Every regex is global; order matters (longest/most specific first). */
const SHAPES: readonly Shape[] = [
  {
    // The whole block; when its END line never comes (a truncated key), the base64 body lines
    // that follow the header (`\x0d` is a CR of stored output).
    name: "pem-private-key",
    re: /-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----(?:[\s\S]*?-----END [A-Z0-9 ]*PRIVATE KEY-----|(?:(?:\\x0d)?\s*[A-Za-z0-9+/=]{16,})*)/g,
    replacement: REDACTED_SECRET,
  },
  { name: "pem-key-header", re: /BEGIN (?:RSA|OPENSSH|PRIVATE) KEY/gi, replacement: REDACTED_SECRET },
  { name: "anthropic-key", re: new RegExp(`${WB}sk-ant-[A-Za-z0-9_-]{20,}`, "g"), replacement: REDACTED_SECRET },
  {
    name: "openai-key",
    re: new RegExp(`${WB}sk-(?:proj-|svcacct-)?[A-Za-z0-9_-]{20,}`, "g"),
    replacement: REDACTED_SECRET,
  },
  {
    // A key glued to preceding letters (`aaask-proj-…`). Only prefixes distinctive enough to be a
    // key wherever they appear, and only with a body that mixes digits, upper- and lower-case
    // letters as generated keys do, so ordinary hyphenated words that happen to contain such a
    // prefix stay.
    name: "glued-key",
    re: /(?<=[A-Za-z0-9])(?:sk-(?:proj|svcacct|ant)-|(?:sk|rk)_live_|github_pat_|xox[baprs]-|gh[pousr]_|AIza)(?=[A-Za-z0-9_-]*[0-9])(?=[A-Za-z0-9_-]*[A-Z])(?=[A-Za-z0-9_-]*[a-z])[A-Za-z0-9_-]{20,}/g,
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
/** The shapes that are secrets (as opposed to local paths): scrubbed on every stream. */
const SECRET_SHAPES: readonly Shape[] = SHAPES.filter((s) => s.replacement === REDACTED_SECRET);

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
  /**
   * Whether local-path shapes are redacted (default true: evidence that can be shared). The
   * user's own terminal passes false: it shows the user's own paths, but never a secret.
   */
  paths?: boolean;
  /**
   * Strings that are constants of the schemas being written (enum and literal values). A string
   * value exactly equal to one is structure, not free text, and is never scrubbed. Only `has` is
   * asked, so a caller may pass a live view (the writer adds the artifact paths it lists).
   */
  constants?: { has(value: string): boolean };
  /**
   * The lower-case words of humanish's own names (schema words and fixed artifact names, split at
   * punctuation and camelCase). A secret equal to one of these words (`terminal`, `sandbox`) is
   * not looked for in keys and artifact names, which humanish builds from such words and never
   * from values; it is still scrubbed from every free-text value.
   */
  nameWords?: { has(word: string): boolean };
}

/** A reusable redactor bound to one set of secret values. */
export interface Redactor {
  /** Redact a free-text string (literal scrub → cwd label → patterns). */
  text(s: string): string;
  /** Redact, then keep the last `maxChars` chars (`…` prefix; `(no output)` when empty). */
  tail(s: string, maxChars?: number): string;
  /**
   * Redact bytes. Valid UTF-8 is redacted as text and re-encoded. Other bytes are redacted
   * byte-for-byte through a latin1 view (every non-matching byte is preserved exactly).
   */
  bytes(u8: Uint8Array): Uint8Array;
  /**
   * Redact a JSON value and serialise it: string values are redacted (keys and schema
   * constants are structure and stay), then the value is serialised once. Returns pretty JSON
   * (2-space indent, trailing newline).
   */
  json(value: unknown): string;
  /** Deep copy of `value` with every free-text string value redacted (keys and constants kept). */
  value<T>(value: T): T;
  /** True when `s` still contains a known secret value (after any transformation). */
  containsSecret(s: string | Uint8Array): boolean;
  /**
   * True when a free-text string value or key anywhere in `value` still contains a known secret
   * value. Strings and keys equal to a schema constant are structure and are not checked.
   */
  containsSecretIn(value: unknown): boolean;
  /**
   * True when a name humanish built (an artifact path, a JSON key) carries a secret value that
   * is not one of the `nameWords`, or a secret/local-path shape.
   */
  nameContainsSecret(name: string): boolean;
  /**
   * The largest offset `c ≤ desired` at which `s` may be cut into two separately redacted
   * chunks without a secret straddling the cut (see {@link safeCut}). 0 means "hold everything".
   */
  safeCut(s: string, desired: number): number;
}

/**
 * Build a redactor for the given secret values. Values shorter than {@link MIN_SECRET_LENGTH}
 * chars are skipped; duplicates are collapsed; longest first so a secret that contains another
 * is scrubbed whole.
 */
export function createRedactor(secrets: readonly (string | undefined | null)[], opts: RedactorOptions = {}): Redactor {
  // A value and its trimmed form (an env-file line may carry a stray newline or spaces).
  const raw = secrets.filter((s): s is string => typeof s === "string");
  const values = [...new Set([...raw, ...raw.map((s) => s.trim())].filter((s) => s.length >= MIN_SECRET_LENGTH))].sort((a, b) => b.length - a.length);
  // JSON-escaped and escaped-bytes forms too: a secret with quotes, backslashes or controls
  // appears escaped in JSON text and in stored participant output.
  const forms = new Set<string>();
  for (const v of values) {
    forms.add(v);
    const esc = JSON.stringify(v).slice(1, -1);
    if (esc !== v) forms.add(esc);
    const out = encodeOutputString(v);
    if (out !== v) forms.add(out);
  }
  const formList = [...forms].sort((a, b) => b.length - a.length);
  const literal = formList.length === 0 ? null : new RegExp(formList.map(escapeRegExp).join("|"), "g");
  const secretBytes = values.map((v) => new TextEncoder().encode(v));
  const cwd = opts.cwd && opts.cwd.length > 1 ? opts.cwd.replace(/\/+$/, "") : undefined;
  const cwdRe = cwd ? new RegExp(`${escapeRegExp(cwd)}(?=/|$|[^A-Za-z0-9._-])`, "g") : null;
  const shapes = opts.paths === false ? SECRET_SHAPES : SHAPES;
  const constants = opts.constants ?? new Set<string>();
  const nameWords = opts.nameWords ?? new Set<string>();
  const nameSecrets = values.filter((v) => !nameWords.has(v.toLowerCase()));
  const nameContainsSecret = (name: string): boolean => nameSecrets.some((v) => name.includes(v)) || findSensitive(name, 1).length > 0;

  const plain = (s: string): string => {
    let out = s;
    if (literal) out = out.replace(literal, REDACTED_SECRET);
    if (cwdRe) out = out.replace(cwdRe, TARGET_CWD);
    for (const shape of shapes) out = out.replace(shape.re, shape.replacement);
    // A percent-encoded token (a URL a participant typed) that decodes to a secret value or a
    // secret/local-path shape is replaced whole — the verifier decodes these too.
    if (out.includes("%")) {
      out = out.replace(TOKEN, (tok) => {
        if (!tok.includes("%") || !PCT_ESCAPE.test(tok)) return tok;
        const dec = percentDecodeRuns(tok);
        if (dec === tok) return tok;
        if (literal) literal.lastIndex = 0;
        const hasSecret = literal ? literal.test(dec) : false;
        const found =
          opts.paths === false ? findSensitive(dec, 50).some((f) => SECRET_SHAPES.some((x) => x.name === f.shape)) : findSensitive(dec, 1).length > 0;
        return hasSecret || found ? REDACTED_SECRET : tok;
      });
    }
    return out;
  };
  // Embedded PNG payloads (a self-contained report's screenshots) are kept byte-exact: rewriting
  // base64 would corrupt the image. Their decoded bytes are checked by containsSecret instead.
  const text = (s: string): string => mapOutsidePngDataUris(s, plain);

  const deep = (v: unknown): unknown => {
    if (typeof v === "string") return constants.has(v) ? v : text(v);
    if (Array.isArray(v)) return v.map(deep);
    if (v && typeof v === "object") {
      const o: Record<string, unknown> = {};
      for (const [k, val] of Object.entries(v as Record<string, unknown>)) o[k] = deep(val);
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
    for (const shape of shapes) out = out.replace(shape.re, shape.replacement);
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
  const containsSecretIn = (root: unknown): boolean => {
    const stack: unknown[] = [root];
    while (stack.length) {
      const v = stack.pop();
      if (typeof v === "string") {
        if (!constants.has(v) && containsSecret(v)) return true;
      } else if (Array.isArray(v)) stack.push(...v);
      else if (v && typeof v === "object") {
        for (const [k, val] of Object.entries(v as Record<string, unknown>)) {
          // Keys are written as they are: one holding a secret fails the write, unless the
          // secret is only a word of our own names (`terminalEvents` with a secret `terminal`).
          if (!constants.has(k) && nameContainsSecret(k)) return true;
          stack.push(val);
        }
      }
    }
    return false;
  };

  return {
    text,
    tail: (s, maxChars = DEFAULT_TAIL_CHARS) => tail(text(s), maxChars),
    bytes,
    json: (value) => `${escapeDelInJson(JSON.stringify(deep(value), null, 2))}\n`,
    value: <T>(value: T) => deep(value) as T,
    containsSecret,
    containsSecretIn,
    nameContainsSecret,
    safeCut: (s, desired) => safeCut(s, desired, { literals: cwd ? [...formList, cwd] : formList, shapes }),
  };
}

/** `Bearer` with a token that may still be arriving, at the end of the text. */
const OPEN_BEARER = /Bearer\s*[A-Za-z0-9._~+/=-]*$/;
/** A PEM key header that may still be arriving (`-----BEGIN RSA PRIV`), at the end of the text. */
const OPEN_PEM_HEADER = /(?:-----)?BEGIN(?: [A-Z0-9 ]*)?$/i;

/**
 * Where a stream of text may be cut into chunks that are redacted one by one without a secret
 * straddling a cut, so joining the redacted chunks can never rebuild a secret. The rule:
 *   - a cut lies at a whitespace boundary (the char before it is whitespace) — every shape except
 *     bearer tokens and PEM blocks is free of whitespace, so none can span such a cut;
 *   - never inside a literal secret, the cwd or a shape match, and never after the start of a
 *     match that reaches the end of the text (it may continue, e.g. `sk-…{20,}`);
 *   - never after the start of a tail that is a prefix of a literal secret or of the cwd;
 *   - never after an open `Bearer …` or `-----BEGIN …` header at the tail, nor after a
 *     `-----BEGIN ` line whose `-----END …-----` has not arrived.
 * Holding back has no length bound of its own: callers bound it by capping the raw output they
 * keep (the terminal recorder keeps at most 512 KiB), and flush everything at the end of a stream.
 * Returns the cut (0 = emit nothing yet). Pure.
 */
export function safeCut(s: string, desired: number, rules: { literals: readonly string[]; shapes: readonly Shape[] }): number {
  let hold = Math.min(desired, s.length);
  const pem = s.lastIndexOf("-----BEGIN ");
  if (pem !== -1 && !/-----END [^\n]*-----/.test(s.slice(pem))) hold = Math.min(hold, pem);
  for (const re of [OPEN_BEARER, OPEN_PEM_HEADER]) {
    const m = re.exec(s);
    if (m) hold = Math.min(hold, m.index);
  }
  // A tail that may grow into a literal secret.
  for (const lit of rules.literals) {
    for (let k = Math.min(lit.length - 1, s.length); k > 0; k--) {
      if (s.length - k >= hold) break;
      if (lit.startsWith(s.slice(s.length - k))) {
        hold = s.length - k;
        break;
      }
    }
  }
  // Spans that a cut must not enter; a span reaching the end may still be growing.
  const spans: [number, number][] = [];
  for (const lit of rules.literals) {
    for (let i = s.indexOf(lit); i !== -1; i = s.indexOf(lit, i + 1)) spans.push([i, i + lit.length]);
  }
  for (const shape of rules.shapes) {
    shape.re.lastIndex = 0;
    for (const m of s.matchAll(shape.re)) spans.push([m.index ?? 0, (m.index ?? 0) + m[0].length]);
  }
  for (const [a, b] of spans) if (b >= s.length) hold = Math.min(hold, a);
  let cut = hold;
  for (;;) {
    // Back to a whitespace boundary, then out of every span the cut would enter.
    while (cut > 0 && !/\s/.test(s[cut - 1]!)) cut--;
    const inside = spans.find(([a, b]) => a < cut && cut < b);
    if (!inside) return cut;
    cut = inside[0];
  }
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

/** `digestText`: SHA-256 hex of the UTF-8 text, first `n` chars (12 default; 16 for commands). */
export function digestText(text: string, n = 12): string {
  return createHash("sha256").update(text, "utf8").digest("hex").slice(0, n);
}

/**
 * The shape table of redaction: the secret and local-path patterns every redactor scrubs and
 * the detector `findSensitive` that `verifyRun` scans with, their replacements, and the
 * percent-escape decoding both apply to tokens a participant typed. Pure.
 */

/** Replacement for secret values and secret shapes. */
export const REDACTED_SECRET = "[REDACTED_SECRET]";
/** Replacement for host-local paths (`/tmp/…`, `/Users/<name>/…`, `/var/folders/…`). */
export const REDACTED_LOCAL_PATH = "[REDACTED_LOCAL_PATH]";
/** Replacement for home directories (`/home/<name>/…`). */
export const REDACTED_RUNTIME_PATH = "[REDACTED_RUNTIME_PATH]";
/** Label of the target project directory. */
export const TARGET_CWD = "[target-cwd]";

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

/** One pattern of the table: its name, a global regex, and what a match becomes. */
export interface Shape {
  name: string;
  re: RegExp;
  replacement: string;
}

/** The shape table. Every regex is global; order matters (longest/most specific first). */
export const SHAPES: readonly Shape[] = [
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
export const TOKEN = /[^\s"'`<>]+/g;
/** A `%XX` escape. */
export const PCT_ESCAPE = /%[0-9A-Fa-f]{2}/;

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

/** Names of the secret/path shapes, in application order (for documentation and tests). */
export const SHAPE_NAMES: readonly string[] = SHAPES.map((s) => s.name);
/** The shapes that are secrets (as opposed to local paths): scrubbed on every stream. */
export const SECRET_SHAPES: readonly Shape[] = SHAPES.filter((s) => s.replacement === REDACTED_SECRET);

/** A sensitive shape found in text: the shape's name and the character offset. */
export interface SensitiveFinding {
  shape: string;
  index: number;
}

/**
 * The matches of the global pattern `re` in `text`, in order, at most `limit`; null when there is
 * none. Runs `exec` on `re` itself rather than `matchAll`, which clones the pattern on every call:
 * verify and the stream redactor call this for every string or chunk and every shape, tens of
 * thousands of times a bundle, and the clones (or even a callback per call) were megabytes of
 * garbage a trace. No match allocates nothing. Synchronous, so the shared `lastIndex` is never
 * interleaved; it is left at 0.
 */
export function matchesOf(re: RegExp, text: string, limit = Number.POSITIVE_INFINITY): RegExpExecArray[] | null {
  let out: RegExpExecArray[] | null = null;
  re.lastIndex = 0;
  for (let m = re.exec(text); m !== null && (out?.length ?? 0) < limit; m = re.exec(text)) {
    if (m[0].length === 0) re.lastIndex++;
    if (out) out.push(m);
    else out = [m];
  }
  re.lastIndex = 0;
  return out;
}

/**
 * Detector: every secret or local-path shape in `text` (max `limit` findings).
 * Used by `verifyRun`'s public-safety scan. Pure.
 */
export function findSensitive(text: string, limit = 50): SensitiveFinding[] {
  const out: SensitiveFinding[] = [];
  for (const shape of SHAPES) {
    const found = matchesOf(shape.re, text, limit - out.length);
    if (found) for (const m of found) out.push({ shape: shape.name, index: m.index });
    if (out.length >= limit) return out;
  }
  return out;
}

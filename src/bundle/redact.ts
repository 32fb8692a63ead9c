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
 *
 * The parts live beside this file: the shape table and detector (./redact-shapes.ts), PNG
 * payloads (./redact-png.ts), a redactor's compiled rules (./redact-rules.ts), its scrub
 * (./redact-scrub.ts) and its secret check (./redact-detect.ts); {@link createRedactor}
 * assembles them.
 */
import { createHash } from "node:crypto";
import { DEFAULT_TAIL_CHARS, tail } from "../text/tail.ts";
import { containsSecret, containsSecretIn } from "./redact-detect.ts";
import { compileRedactorRules, nameContainsSecret, type RedactorOptions } from "./redact-rules.ts";
import { scrubBytes, scrubText, scrubValue } from "./redact-scrub.ts";
import { matchesOf, type Shape } from "./redact-shapes.ts";

export { decodeBase64Payload, pngNonImageChunks, splitPngDataUris } from "./redact-png.ts";
export { MIN_SECRET_LENGTH, type RedactorOptions } from "./redact-rules.ts";
export {
  findSensitive,
  percentDecodeRuns,
  REDACTED_LOCAL_PATH,
  REDACTED_RUNTIME_PATH,
  REDACTED_SECRET,
  type SensitiveFinding,
  SHAPE_NAMES,
  TARGET_CWD,
} from "./redact-shapes.ts";
export { DEFAULT_TAIL_CHARS, tail };

/**
 * JSON text with every raw DEL (U+007F) written as the escape `\u007f`. `JSON.stringify`
 * escapes the other control characters but not DEL, and bundle text must be free of control
 * bytes (`verifyRun`'s text rule); outside strings JSON has no DEL, so the value is unchanged.
 */
export function escapeDelInJson(json: string): string {
  return json.includes("\u007f") ? json.replace(/\u007f/g, "\\u007f") : json;
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
  const r = compileRedactorRules(secrets, opts);
  const text = (s: string): string => scrubText(r, s);
  return {
    text,
    tail: (s, maxChars = DEFAULT_TAIL_CHARS) => tail(text(s), maxChars),
    bytes: (u8) => scrubBytes(r, u8),
    json: (value) => `${escapeDelInJson(JSON.stringify(scrubValue(r, value), null, 2))}\n`,
    value: <T>(value: T) => scrubValue(r, value) as T,
    containsSecret: (s) => containsSecret(r, s),
    containsSecretIn: (value) => containsSecretIn(r, value),
    nameContainsSecret: (name) => nameContainsSecret(r, name),
    safeCut: (s, desired) => safeCut(s, desired, { literals: r.cwd ? [...r.formList, r.cwd] : r.formList, shapes: r.shapes }),
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
    for (const m of matchesOf(shape.re, s) ?? []) spans.push([m.index, m.index + m[0].length]);
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

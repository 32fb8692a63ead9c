/**
 * The compiled rules of one redactor: the secret values and every form they are looked for in,
 * the cwd label's pattern, the shapes that apply and the names that are structure. Built once
 * per redactor by {@link compileRedactorRules}; the scrub (./redact-scrub.ts) and the detector
 * (./redact-detect.ts) read them. Pure.
 */
import { encodeOutputString } from "./output-codec.ts";
import { findSensitive, SECRET_SHAPES, SHAPES, type Shape } from "./redact-shapes.ts";

/** Secret values shorter than this are not scrubbed literally (they would shred ordinary text). */
export const MIN_SECRET_LENGTH = 4;

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

/** What a redactor knows, compiled from its secret values and {@link RedactorOptions}. */
export interface RedactorRules {
  /** The secret values (and their trimmed forms) of ≥ {@link MIN_SECRET_LENGTH} chars, distinct, longest first. */
  values: readonly string[];
  /** Every form a value appears in text (itself, JSON-escaped, escaped-bytes), distinct, longest first. */
  formList: readonly string[];
  /** One global regex matching any of `formList`, or null when there are no secrets. */
  literal: RegExp | null;
  /** The UTF-8 bytes of each value, in `values` order. */
  secretBytes: readonly Uint8Array[];
  /** The target cwd without trailing slashes (absent for `/` or none). */
  cwd: string | undefined;
  /** The cwd as a whole path prefix, or null without a cwd. */
  cwdRe: RegExp | null;
  /** The shapes that are scrubbed: all of them, or only the secret ones when `paths` is false. */
  shapes: readonly Shape[];
  /** True when local-path shapes are left alone (`paths: false`, the user's own terminal). */
  secretShapesOnly: boolean;
  /** Strings that are structure (schema constants), never scrubbed or checked. */
  constants: { has(value: string): boolean };
  /** The values a name humanish built is checked for: every value that is not a word of our names. */
  nameSecrets: readonly string[];
  /** A strict UTF-8 decoder (throws on invalid bytes). */
  decoder: TextDecoder;
}

/** `s` with every regex metacharacter escaped, to match it literally. */
function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/**
 * The rules of a redactor for `secrets` (non-strings and values shorter than
 * {@link MIN_SECRET_LENGTH} skipped; duplicates collapsed; longest first so a secret that
 * contains another is scrubbed whole) and `opts`.
 */
export function compileRedactorRules(secrets: readonly (string | undefined | null)[], opts: RedactorOptions): RedactorRules {
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
  const cwd = opts.cwd && opts.cwd.length > 1 ? opts.cwd.replace(/\/+$/, "") : undefined;
  const nameWords = opts.nameWords ?? new Set<string>();
  return {
    values,
    formList,
    literal: formList.length === 0 ? null : new RegExp(formList.map(escapeRegExp).join("|"), "g"),
    secretBytes: values.map((v) => new TextEncoder().encode(v)),
    cwd,
    cwdRe: cwd ? new RegExp(`${escapeRegExp(cwd)}(?=/|$|[^A-Za-z0-9._-])`, "g") : null,
    shapes: opts.paths === false ? SECRET_SHAPES : SHAPES,
    secretShapesOnly: opts.paths === false,
    constants: opts.constants ?? new Set<string>(),
    nameSecrets: values.filter((v) => !nameWords.has(v.toLowerCase())),
    decoder: new TextDecoder("utf-8", { fatal: true }),
  };
}

/**
 * True when `name` (an artifact path or JSON key humanish built) carries a secret value that is
 * not one of the name words, or a secret/local-path shape.
 */
export function nameContainsSecret(r: RedactorRules, name: string): boolean {
  return r.nameSecrets.some((v) => name.includes(v)) || findSensitive(name, 1).length > 0;
}

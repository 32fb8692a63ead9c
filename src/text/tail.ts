/**
 * Shortening text for messages and evidence, shared by every layer (pure; no I/O).
 * - `tail` keeps the end of command output (the part that explains a failure).
 * - `clip` keeps the start of an author-written value quoted back in a message.
 */

/** Default tail length for output tails (chars). */
export const DEFAULT_TAIL_CHARS = 2000;

/**
 * Keep the last `maxChars` characters of already-redacted text: `…` prefix when cut,
 * `(no output)` when empty. Never call this before redaction: a cut could split a secret
 * so that the redactor no longer recognises it.
 */
export function tail(text: string, maxChars = DEFAULT_TAIL_CHARS): string {
  if (text.length === 0) return "(no output)";
  if (text.length <= maxChars) return text;
  return `…${text.slice(text.length - Math.max(0, maxChars - 1))}`;
}

/** The first `maxChars` characters of `text` (`…` last when cut), e.g. a key quoted in a message. */
export function clip(text: string, maxChars = 80): string {
  return text.length > maxChars ? `${text.slice(0, Math.max(0, maxChars - 1))}…` : text;
}

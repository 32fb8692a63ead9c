/**
 * The detector of one redactor: whether text, bytes or a JSON value still carry a secret value
 * after any transformation — the check every write makes before its bytes reach disk. A PNG is
 * judged by its non-image chunks and an embedded PNG payload by its decoded bytes. Pure.
 */
import { decodeBase64Payload, pngNonImageChunks, splitPngDataUris } from "./redact-png.ts";
import { nameContainsSecret, type RedactorRules } from "./redact-rules.ts";

/** True when `hay` holds the UTF-8 bytes of any secret value. */
function hasSecretBytes(r: RedactorRules, hay: Buffer): boolean {
  return r.secretBytes.some((sb) => hay.indexOf(Buffer.from(sb)) !== -1);
}

/** `Redactor.containsSecret`: true when `s` (text or bytes) still contains a secret value. */
export function containsSecret(r: RedactorRules, s: string | Uint8Array): boolean {
  if (typeof s !== "string") {
    const buf = Buffer.from(s.buffer, s.byteOffset, s.byteLength);
    const chunks = pngNonImageChunks(s);
    // A PNG can only disclose text through its non-IDAT chunks; a chance byte match inside
    // compressed image data is not a disclosure.
    return chunks ? chunks.some((c) => hasSecretBytes(r, Buffer.from(c))) : hasSecretBytes(r, buf);
  }
  const { outside, payloads } = splitPngDataUris(s);
  if (hasSecretBytes(r, Buffer.from(outside.join("\n"), "utf8"))) return true;
  return payloads.some((p) => containsSecret(r, decodeBase64Payload(p)));
}

/**
 * `Redactor.containsSecretIn`: true when a string value (not a constant) anywhere in `root`
 * contains a secret value, or a key (not a constant) carries one by {@link nameContainsSecret}.
 */
export function containsSecretIn(r: RedactorRules, root: unknown): boolean {
  const stack: unknown[] = [root];
  while (stack.length) {
    const v = stack.pop();
    if (typeof v === "string") {
      if (!r.constants.has(v) && containsSecret(r, v)) return true;
    } else if (Array.isArray(v)) stack.push(...v);
    else if (v && typeof v === "object") {
      for (const [k, val] of Object.entries(v as Record<string, unknown>)) {
        // Keys are written as they are: one holding a secret fails the write, unless the
        // secret is only a word of our own names (`terminalEvents` with a secret `terminal`).
        if (!r.constants.has(k) && nameContainsSecret(r, k)) return true;
        stack.push(val);
      }
    }
  }
  return false;
}

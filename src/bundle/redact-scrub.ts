/**
 * The scrub of one redactor: free text, JSON values and bytes rewritten by its compiled rules
 * (./redact-rules.ts) in the order of ./redact.ts — literal secret forms, the cwd label, the
 * shapes, then percent-encoded tokens that decode to a secret. Pure.
 */
import { mapOutsidePngDataUris } from "./redact-png.ts";
import type { RedactorRules } from "./redact-rules.ts";
import { findSensitive, PCT_ESCAPE, percentDecodeRuns, REDACTED_SECRET, SECRET_SHAPES, TARGET_CWD, TOKEN } from "./redact-shapes.ts";

/** Scrub one stretch of text that holds no PNG payload. */
function scrubPlain(r: RedactorRules, s: string): string {
  const { literal } = r;
  let out = s;
  if (literal) out = out.replace(literal, REDACTED_SECRET);
  if (r.cwdRe) out = out.replace(r.cwdRe, TARGET_CWD);
  for (const shape of r.shapes) out = out.replace(shape.re, shape.replacement);
  // A percent-encoded token (a URL a participant typed) that decodes to a secret value or a
  // secret/local-path shape is replaced whole — the verifier decodes these too.
  if (out.includes("%")) {
    out = out.replace(TOKEN, (tok) => {
      if (!tok.includes("%") || !PCT_ESCAPE.test(tok)) return tok;
      const dec = percentDecodeRuns(tok);
      if (dec === tok) return tok;
      if (literal) literal.lastIndex = 0;
      const hasSecret = literal ? literal.test(dec) : false;
      const found = r.secretShapesOnly ? findSensitive(dec, 50).some((f) => SECRET_SHAPES.some((x) => x.name === f.shape)) : findSensitive(dec, 1).length > 0;
      return hasSecret || found ? REDACTED_SECRET : tok;
    });
  }
  return out;
}

/**
 * `Redactor.text`: `s` scrubbed. Embedded PNG payloads (a self-contained report's screenshots)
 * are kept byte-exact: rewriting base64 would corrupt the image. Their decoded bytes are checked
 * by the detector instead.
 */
export function scrubText(r: RedactorRules, s: string): string {
  return mapOutsidePngDataUris(s, (part) => scrubPlain(r, part));
}

/** `Redactor.value`: a deep copy of `v` with every string value scrubbed unless it is a constant; keys kept. */
export function scrubValue(r: RedactorRules, v: unknown): unknown {
  if (typeof v === "string") return r.constants.has(v) ? v : scrubText(r, v);
  if (Array.isArray(v)) return v.map((x) => scrubValue(r, x));
  if (v && typeof v === "object") {
    const o: Record<string, unknown> = {};
    for (const [k, val] of Object.entries(v as Record<string, unknown>)) o[k] = scrubValue(r, val);
    return o;
  }
  return v;
}

/**
 * `Redactor.bytes`: valid UTF-8 scrubbed as text and re-encoded; other bytes scrubbed through a
 * latin1 view, so every byte that matches nothing is kept exactly.
 */
export function scrubBytes(r: RedactorRules, u8: Uint8Array): Uint8Array {
  let asText: string | null = null;
  try {
    asText = r.decoder.decode(u8);
  } catch {
    asText = null;
  }
  if (asText !== null) return new TextEncoder().encode(scrubText(r, asText));
  const latin1 = Buffer.from(u8.buffer, u8.byteOffset, u8.byteLength).toString("latin1");
  // Secrets are matched on their UTF-8 byte sequence, viewed as latin1.
  let out = latin1;
  for (const sb of r.secretBytes) {
    const needle = Buffer.from(sb).toString("latin1");
    out = out.split(needle).join(REDACTED_SECRET);
  }
  for (const shape of r.shapes) out = out.replace(shape.re, shape.replacement);
  return new Uint8Array(Buffer.from(out, "latin1"));
}

/**
 * PNG payloads in redaction: a self-contained report's `data:image/png;base64,…` screenshots are
 * kept byte-exact by the scrub (rewriting base64 would corrupt the image) and their decoded
 * bytes checked instead, and a PNG discloses text only through its non-image chunks. Pure.
 */

/**
 * `data:image/png;base64,<payload>` inside text (a self-contained HTML report's screenshots).
 * The payload may be wrapped over lines and must end at a quote or closing parenthesis.
 */
const PNG_DATA_URI = /data:image\/png;base64,([A-Za-z0-9+/\r\n]+={0,2}[\r\n]*)(?=["')])/g;

/**
 * Decode a (possibly line-wrapped) base64 payload. The decoder skips the CR and LF a report's
 * wrapped payloads hold (and the pattern above admits no other character), so the payload is
 * decoded as it is: stripping the line breaks first would copy every inlined frame once more.
 */
export function decodeBase64Payload(p: string): Uint8Array {
  return new Uint8Array(Buffer.from(p, "base64"));
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
export function mapOutsidePngDataUris(s: string, fn: (part: string) => string): string {
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

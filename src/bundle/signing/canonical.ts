/**
 * Canonical JSON, the byte encoding every signed bundle document is hashed and signed in:
 * - objects: keys sorted by UTF-16 code unit order (`Array.prototype.sort` on the key strings),
 *   members with an `undefined` value omitted;
 * - arrays: in order;
 * - strings: `JSON.stringify` escaping; numbers: `JSON.stringify` of a finite number;
 *   `true`/`false`/`null` as themselves;
 * - no whitespace anywhere; UTF-8 bytes of the resulting text.
 * Two equal values always give the same bytes, so a verifier that rebuilds a manifest from the
 * files on disk gets exactly the bytes the writer signed.
 * @throws TypeError for a non-finite number, a bigint, a function or a symbol
 */
export function canonicalJson(value: unknown): string {
  if (value === null) return "null";
  switch (typeof value) {
    case "boolean":
      return value ? "true" : "false";
    case "string":
      return JSON.stringify(value);
    case "number":
      if (!Number.isFinite(value)) throw new TypeError("canonical JSON has no encoding for a non-finite number");
      return JSON.stringify(value);
    case "object": {
      if (Array.isArray(value)) return `[${value.map((v) => canonicalJson(v)).join(",")}]`;
      const obj = value as Record<string, unknown>;
      const keys = Object.keys(obj)
        .filter((k) => obj[k] !== undefined)
        .sort();
      return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson(obj[k])}`).join(",")}}`;
    }
    default:
      throw new TypeError(`canonical JSON has no encoding for a ${typeof value}`);
  }
}

/** UTF-8 bytes of {@link canonicalJson}. */
export function canonicalBytes(value: unknown): Uint8Array {
  return new TextEncoder().encode(canonicalJson(value));
}

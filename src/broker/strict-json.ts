/**
 * A strict decoder for the broker's flat JSON request object.
 *
 * JSON.parse cannot be used here: it silently keeps the last of two duplicate keys, accepts
 * floats and exponents, rounds long integers, and allows any nesting. A request is a security
 * boundary, so this decoder accepts exactly one shape — a single object whose values are
 * strings, integers, booleans or null — and rejects everything else.
 */
import { brokerError } from "./errors.ts";

/** Largest request body: 16 KiB. */
export const MAX_REQUEST_BYTES = 16 * 1024;
/** Most decimal digits an integer literal may have (sign not counted). */
export const MAX_INTEGER_DIGITS = 17;

/** One value of a flat request. Integers are bigints so no literal is ever rounded. */
export type FlatScalar = string | bigint | boolean | null;

const fatalUtf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/**
 * Decode `bytes` into a map of its keys to scalar values, in document order.
 *
 * Rejects (`BrokerError("invalid_request", "body")`): more than 16 KiB, invalid UTF-8, a byte
 * order mark, anything but one object at top level, nested objects or arrays, duplicate keys
 * (compared after unescaping), floats, exponents, leading zeros, integers over 17 digits, lone
 * surrogate escapes, raw control characters in strings, and any trailing non-whitespace.
 */
export function decodeFlatObject(bytes: Uint8Array): Map<string, FlatScalar> {
  if (!(bytes instanceof Uint8Array) || bytes.byteLength > MAX_REQUEST_BYTES) throw brokerError("invalid_request", "body");
  let text: string;
  try {
    text = fatalUtf8.decode(bytes);
  } catch {
    throw brokerError("invalid_request", "body");
  }
  const p = new Parser(text);
  const out = p.object();
  p.ws();
  if (p.i !== text.length) p.fail();
  return out;
}

class Parser {
  i = 0;
  constructor(readonly s: string) {}

  fail(): never {
    throw brokerError("invalid_request", "body");
  }

  ws(): void {
    const s = this.s;
    while (this.i < s.length) {
      const c = s.charCodeAt(this.i);
      if (c !== 0x20 && c !== 0x09 && c !== 0x0a && c !== 0x0d) return;
      this.i++;
    }
  }

  expect(ch: string): void {
    if (this.s[this.i] !== ch) this.fail();
    this.i++;
  }

  object(): Map<string, FlatScalar> {
    const out = new Map<string, FlatScalar>();
    this.ws();
    this.expect("{");
    this.ws();
    if (this.s[this.i] === "}") {
      this.i++;
      return out;
    }
    for (;;) {
      this.ws();
      const key = this.string();
      if (out.has(key)) this.fail();
      this.ws();
      this.expect(":");
      this.ws();
      out.set(key, this.scalar());
      this.ws();
      const c = this.s[this.i++];
      if (c === "}") return out;
      if (c !== ",") this.fail();
    }
  }

  scalar(): FlatScalar {
    const c = this.s[this.i];
    if (c === '"') return this.string();
    if (c === "-" || (c !== undefined && c >= "0" && c <= "9")) return this.integer();
    for (const [word, value] of LITERALS) {
      if (this.s.startsWith(word, this.i)) {
        this.i += word.length;
        return value;
      }
    }
    // Objects, arrays and everything else: depth is 1 and only scalars are values.
    return this.fail();
  }

  integer(): bigint {
    const start = this.i;
    if (this.s[this.i] === "-") this.i++;
    const digitsStart = this.i;
    while (this.i < this.s.length && this.s[this.i]! >= "0" && this.s[this.i]! <= "9") this.i++;
    const digits = this.i - digitsStart;
    if (digits === 0 || digits > MAX_INTEGER_DIGITS) this.fail();
    if (digits > 1 && this.s[digitsStart] === "0") this.fail();
    const next = this.s[this.i];
    if (next === "." || next === "e" || next === "E") this.fail();
    return BigInt(this.s.slice(start, this.i));
  }

  string(): string {
    this.expect('"');
    const s = this.s;
    let out = "";
    // Copy runs of plain characters in one slice; only escapes are decoded one by one.
    let run = this.i;
    for (;;) {
      if (this.i >= s.length) this.fail();
      const c = s.charCodeAt(this.i);
      if (c === 0x22) {
        out += s.slice(run, this.i++);
        return out;
      }
      if (c < 0x20) this.fail();
      if (c === 0x5c) {
        out += s.slice(run, this.i++);
        out += this.escape();
        run = this.i;
        continue;
      }
      // A raw surrogate can only come from valid UTF-8 as a pair, so it is copied through.
      this.i++;
    }
  }

  escape(): string {
    const e = this.s[this.i++];
    const simple = e === undefined ? undefined : SIMPLE_ESCAPES[e];
    if (simple !== undefined) return simple;
    if (e !== "u") return this.fail();
    const hi = this.hex4();
    if (hi >= 0xdc00 && hi <= 0xdfff) this.fail();
    if (hi < 0xd800 || hi > 0xdbff) return String.fromCharCode(hi);
    // A high surrogate must be followed by an escaped low surrogate: strict UTF-8 cannot carry a lone one.
    if (this.s[this.i] !== "\\" || this.s[this.i + 1] !== "u") this.fail();
    this.i += 2;
    const lo = this.hex4();
    if (lo < 0xdc00 || lo > 0xdfff) this.fail();
    return String.fromCharCode(hi, lo);
  }

  hex4(): number {
    const h = this.s.slice(this.i, this.i + 4);
    if (!/^[0-9a-fA-F]{4}$/.test(h)) this.fail();
    this.i += 4;
    return Number.parseInt(h, 16);
  }
}

const LITERALS: ReadonlyArray<readonly [string, FlatScalar]> = [
  ["true", true],
  ["false", false],
  ["null", null],
];

const SIMPLE_ESCAPES: Readonly<Record<string, string>> = {
  '"': '"',
  "\\": "\\",
  "/": "/",
  b: "\b",
  f: "\f",
  n: "\n",
  r: "\r",
  t: "\t",
};

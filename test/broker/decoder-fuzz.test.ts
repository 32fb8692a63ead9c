/**
 * Property tests of the strict flat-JSON decoder with a seeded generator: valid documents are
 * decoded to exactly what JSON.parse sees, every single injected violation is refused, and
 * random byte mutations never produce anything but a decode or invalid_request — and a decode
 * only when JSON.parse agrees.
 */
import { describe, expect, test } from "bun:test";
import { decodeFlatObject, decodeRequest, type FlatScalar, isBrokerError } from "../../src/broker/index.ts";
import { rng } from "../support/rng.ts";

type R = () => number;
const pick = <T>(r: R, xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
const int = (r: R, lo: number, hi: number) => lo + Math.floor(r() * (hi - lo + 1));

const CHARS = ["a", "Z", "0", " ", "é", "漢", "\u{1f600}", '"', "\\", "/", "\n", "\t", "\u0001", "\u2028", "\ud7ff", "\ue000"];

/** A JSON string literal for `s`, escaping in one of several legal ways. */
function strLit(r: R, s: string): string {
  let out = '"';
  for (const ch of s) {
    const cp = ch.codePointAt(0)!;
    if (ch === '"' || ch === "\\" || cp < 0x20 || r() < 0.2) {
      if (cp > 0xffff) {
        const u = ch.split("").map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
        out += u.join("");
      } else {
        const h = cp.toString(16).padStart(4, "0");
        out += `\\u${r() < 0.5 ? h : h.toUpperCase()}`;
      }
    } else out += ch;
  }
  return `${out}"`;
}

function randomString(r: R): string {
  return Array.from({ length: int(r, 0, 6) }, () => pick(r, CHARS)).join("");
}

function randomScalar(r: R): { text: string; value: FlatScalar } {
  const k = int(r, 0, 5);
  if (k === 0) {
    const digits = int(r, 1, 17);
    let d = String(int(r, 1, 9));
    while (d.length < digits) d += String(int(r, 0, 9));
    if (r() < 0.1) d = "0";
    const neg = r() < 0.3 ? "-" : "";
    return { text: neg + d, value: BigInt(neg + d) };
  }
  if (k === 1) return { text: "true", value: true };
  if (k === 2) return { text: "false", value: false };
  if (k === 3) return { text: "null", value: null };
  const s = randomString(r);
  return { text: strLit(r, s), value: s };
}

const WS = ["", " ", "\n", "\t", "\r\n  "];

/** A valid flat document with distinct keys: its text and the expected entries. */
function validDoc(r: R): { text: string; entries: [string, FlatScalar][] } {
  const n = int(r, 0, 6);
  const entries: [string, FlatScalar][] = [];
  const seen = new Set<string>();
  const parts: string[] = [];
  while (entries.length < n) {
    const key = randomString(r) + String(entries.length);
    if (seen.has(key)) continue;
    seen.add(key);
    const v = randomScalar(r);
    entries.push([key, v.value]);
    parts.push(`${pick(r, WS)}${strLit(r, key)}${pick(r, WS)}:${pick(r, WS)}${v.text}${pick(r, WS)}`);
  }
  return { text: `${pick(r, WS)}{${parts.join(",") || pick(r, WS)}}${pick(r, WS)}`, entries };
}

const VIOLATIONS: ReadonlyArray<(r: R, doc: string) => string | Uint8Array> = [
  (_r, d) => d.replace(/^(\s*)\{/, '$1{"dup":1,"dup":2,'),
  (_r, d) => d.replace(/^(\s*)\{/, '$1{"f":1.5,'),
  (_r, d) => d.replace(/^(\s*)\{/, '$1{"e":1e3,'),
  (_r, d) => d.replace(/^(\s*)\{/, '$1{"big":123456789012345678,'),
  (_r, d) => d.replace(/^(\s*)\{/, '$1{"lead":007,'),
  (_r, d) => d.replace(/^(\s*)\{/, '$1{"o":{},'),
  (_r, d) => d.replace(/^(\s*)\{/, '$1{"a":[1],'),
  (_r, d) => d.replace(/^(\s*)\{/, '$1{"s":"\\ud800",'),
  (_r, d) => d.replace(/^(\s*)\{/, '$1{"n":NaN,'),
  (_r, d) => d.replace(/^(\s*)\{/, '$1{"c":"\u0002",'),
  (_r, d) => `\ufeff${d}`,
  (r, d) => `${d}${pick(r, ["{}", "x", "1", ",", '""', "\u0000"])}`,
  (_r, d) => `[${d}]`,
  (_r, d) => {
    const b = new TextEncoder().encode(d.replace(/^(\s*)\{/, '$1{"u":"@",'));
    const at = b.indexOf(0x40);
    b[at] = 0xff;
    return b;
  },
];

const bytesOf = (x: string | Uint8Array) => (typeof x === "string" ? new TextEncoder().encode(x) : x);

function decodes(bytes: Uint8Array): Map<string, FlatScalar> | "rejected" {
  try {
    return decodeFlatObject(bytes);
  } catch (e) {
    if (!isBrokerError(e, "invalid_request")) throw e;
    return "rejected";
  }
}

describe("strict flat-JSON decoder properties (seeded)", () => {
  test("valid generated documents decode to their entries, in order, and agree with JSON.parse", () => {
    const r = rng(0xb10c);
    for (let i = 0; i < 5000; i++) {
      const { text, entries } = validDoc(r);
      const got = decodes(bytesOf(text));
      if (got === "rejected") throw new Error(`valid document rejected: ${JSON.stringify(text)}`);
      expect([...got.entries()]).toEqual(entries);
      const parsed = JSON.parse(text) as Record<string, unknown>;
      expect(Object.keys(parsed).length).toBe(entries.length);
      // -0 and 0 are the same integer; JSON.parse keeps the sign, the decoder keeps a bigint.
      for (const [k, v] of entries) expect(typeof v === "bigint" ? parsed[k] === Number(v) : parsed[k] === v).toBe(true);
    }
  });

  test("one injected violation always makes the document rejected", () => {
    const r = rng(0x5eed);
    for (let i = 0; i < 5000; i++) {
      const violation = VIOLATIONS[i % VIOLATIONS.length]!;
      const bad = violation(r, validDoc(r).text);
      expect(decodes(bytesOf(bad))).toBe("rejected");
    }
  });

  test("random byte mutations: never a foreign exception; an accepted mutation is one JSON.parse reads the same way", () => {
    const r = rng(0xfade);
    const seeds = [
      '{"version":1,"operation":"renew","study":"0123456789abcdef0123456789abcdef","capability":"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef","sequence":42}',
      '{"version":1,"operation":"acquire","attempt":"0123456789abcdef0123456789abcdef"}',
      '{"version":1,"operation":"hello"}',
    ];
    const tokens = ['"', "\\", "{", "}", "[", ",", ":", ".", "e", "-", "0", "1", " ", "\\u", "\u00ff", "true", "null"];
    let accepted = 0;
    for (let i = 0; i < 20000; i++) {
      const b = [...new TextEncoder().encode(pick(r, seeds))];
      for (let m = int(r, 1, 3); m > 0; m--) {
        const at = int(r, 0, b.length);
        const kind = int(r, 0, 2);
        if (kind === 0) b[Math.min(at, b.length - 1)] = int(r, 0, 255);
        else if (kind === 1) b.splice(at, 0, ...new TextEncoder().encode(pick(r, tokens)));
        else b.splice(at, 1);
      }
      const bytes = Uint8Array.from(b);
      const got = decodes(bytes);
      try {
        decodeRequest(bytes);
      } catch (e) {
        if (!isBrokerError(e, "invalid_request")) throw e;
      }
      if (got === "rejected") continue;
      accepted++;
      const parsed = JSON.parse(new TextDecoder().decode(bytes)) as Record<string, unknown>;
      expect(Object.keys(parsed).length).toBe(got.size);
      for (const [k, v] of got) {
        if (typeof v === "bigint") expect(BigInt(parsed[k] as number) === v || !Number.isSafeInteger(Number(v))).toBe(true);
        else expect(parsed[k]).toEqual(v);
      }
    }
    expect(accepted).toBeGreaterThan(100);
  });
});

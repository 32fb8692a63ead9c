import { describe, expect, test } from "bun:test";
import {
  type BrokerError,
  decodeFlatObject,
  decodeRequest,
  isBrokerError,
  MAX_REQUEST_BYTES,
  OPERATION_FIELDS,
  validateRequest,
} from "../../src/broker/index.ts";
import { hex, utf8 } from "./support.ts";

const STUDY = hex(7);
const CAP = hex(9, 64);
const ATTEMPT = hex(3);

function rejects(bytes: Uint8Array | string, field?: string): void {
  const b = typeof bytes === "string" ? utf8(bytes) : bytes;
  let err: unknown;
  try {
    decodeRequest(b);
  } catch (e) {
    err = e;
  }
  expect(isBrokerError(err, "invalid_request")).toBe(true);
  expect((err as BrokerError).code).toBe("HUMANISH_BROKER_INVALID_REQUEST");
  if (field !== undefined) expect((err as BrokerError).details?.field).toBe(field);
}

describe("decodeRequest accepts exactly the six operations with their fields", () => {
  test("each operation decodes to its typed request", () => {
    expect(decodeRequest(utf8('{"version":1,"operation":"hello"}'))).toEqual({ operation: "hello" });
    expect(decodeRequest(utf8(`{"operation":"acquire","version":1,"attempt":"${ATTEMPT}"}`))).toEqual({ operation: "acquire", attempt: ATTEMPT });
    expect(decodeRequest(utf8(`{"version":1,"operation":"allocate","study":"${STUDY}","capability":"${CAP}","attempt":"${ATTEMPT}"}`))).toEqual({
      operation: "allocate",
      study: STUDY,
      capability: CAP,
      attempt: ATTEMPT,
    });
    expect(decodeRequest(utf8(`{"version":1,"operation":"renew","study":"${STUDY}","capability":"${CAP}","sequence":9007199254740991}`))).toEqual({
      operation: "renew",
      study: STUDY,
      capability: CAP,
      sequence: 9007199254740991,
    });
    for (const op of ["release", "inspect"] as const)
      expect(decodeRequest(utf8(`{"version":1,"operation":"${op}","study":"${STUDY}","capability":"${CAP}"}`))).toEqual({
        operation: op,
        study: STUDY,
        capability: CAP,
      });
  });

  test("JSON whitespace around tokens and escaped characters in values are accepted", () => {
    expect(decodeRequest(utf8(' \t\r\n{ "version" : 1 , "operation" : "hell\\u006f" } \n'))).toEqual({ operation: "hello" });
  });
});

describe("decodeRequest rejects hostile bodies with invalid_request", () => {
  test("duplicate keys, also when spelled with escapes", () => {
    rejects('{"version":1,"operation":"hello","operation":"hello"}');
    rejects('{"version":1,"operation":"hello","versio\\u006e":1}');
    rejects('{"version":1,"version":1,"operation":"hello"}');
  });

  test("floats, exponents, NaN, Infinity, leading zeros, bare minus", () => {
    for (const v of ["1.0", "1e0", "1E0", "0.5", "NaN", "Infinity", "-Infinity", "01", "+1", "-", "1.", ".1"]) rejects(`{"version":${v},"operation":"hello"}`);
    rejects(`{"version":1,"operation":"renew","study":"${STUDY}","capability":"${CAP}","sequence":2.5}`);
  });

  test("integers over 17 digits and sequences outside 1…2^53−1", () => {
    const body = (seq: string) => `{"version":1,"operation":"renew","study":"${STUDY}","capability":"${CAP}","sequence":${seq}}`;
    rejects(body("100000000000000000"), "body"); // 18 digits: refused by the parser itself
    rejects(body("9007199254740992"), "sequence"); // 2^53
    rejects(body("99999999999999999"), "sequence"); // 17 digits but above 2^53−1
    rejects(body("0"), "sequence");
    rejects(body("-1"), "sequence");
    rejects(body("-0"), "sequence");
    expect(decodeRequest(utf8(body("1")))).toMatchObject({ sequence: 1 });
  });

  test("booleans, strings and null where an integer is required", () => {
    const body = (seq: string) => `{"version":1,"operation":"renew","study":"${STUDY}","capability":"${CAP}","sequence":${seq}}`;
    rejects(body("true"), "sequence");
    rejects(body("false"), "sequence");
    rejects(body('"5"'), "sequence");
    rejects(body("null"), "sequence");
    rejects('{"version":true,"operation":"hello"}', "version");
    rejects('{"version":"1","operation":"hello"}', "version");
    rejects('{"version":2,"operation":"hello"}', "version");
  });

  test("nested objects and arrays (depth is 1)", () => {
    rejects('{"version":1,"operation":"hello","x":{}}');
    rejects('{"version":1,"operation":{"name":"hello"}}');
    rejects('{"version":1,"operation":["hello"]}');
    rejects('[{"version":1,"operation":"hello"}]');
    rejects('"hello"');
    rejects("1");
    rejects("null");
  });

  test("a byte order mark, invalid UTF-8, overlong and surrogate encodings", () => {
    const ok = utf8('{"version":1,"operation":"hello"}');
    rejects(new Uint8Array([0xef, 0xbb, 0xbf, ...ok]));
    const withString = (bytes: number[]) => new Uint8Array([...utf8('{"version":1,"operation":"hello","x":"'), ...bytes, ...utf8('"}')]);
    rejects(withString([0xff]));
    rejects(withString([0xc0, 0xaf])); // overlong "/"
    rejects(withString([0xed, 0xa0, 0x80])); // UTF-8-encoded surrogate
    rejects(withString([0xe2, 0x82])); // truncated sequence
    rejects(withString([0x80])); // lone continuation byte
  });

  test("lone surrogate escapes, bad escapes, raw control characters, unterminated strings", () => {
    const x = (s: string) => `{"version":1,"operation":"hello","x":"${s}"}`;
    rejects(x("\\ud800"));
    rejects(x("\\udc00"));
    rejects(x("\\ud800\\u0041"));
    rejects(x("\\x41"));
    rejects(x("\\u12"));
    rejects(x("a\u0001b"));
    rejects(x("tab\there"));
    rejects('{"version":1,"operation":"hello');
  });

  test("a paired surrogate escape is a valid character (then refused only as an extra key)", () => {
    expect(decodeFlatObject(utf8('{"k":"\\ud83d\\ude00"}')).get("k")).toBe("\u{1f600}");
    rejects('{"version":1,"operation":"hello","x":"\\ud83d\\ude00"}', "body");
  });

  test("trailing data after the object", () => {
    rejects('{"version":1,"operation":"hello"}{}');
    rejects('{"version":1,"operation":"hello"} x');
    rejects('{"version":1,"operation":"hello"}\u0000');
    rejects('{"version":1,"operation":"hello",}');
    rejects('{"version":1,"operation":"hello"');
    rejects("");
    rejects("{}");
  });

  test("oversize bodies: 16 KiB is the limit, padding included", () => {
    const base = '{"version":1,"operation":"hello"}';
    const fits = base + " ".repeat(MAX_REQUEST_BYTES - base.length);
    expect(decodeRequest(utf8(fits))).toEqual({ operation: "hello" });
    rejects(`${fits} `);
  });

  test("wrong hex lengths, uppercase hex, non-hex ids", () => {
    rejects(`{"version":1,"operation":"acquire","attempt":"${hex(3, 31)}"}`, "attempt");
    rejects(`{"version":1,"operation":"acquire","attempt":"${hex(3, 33)}"}`, "attempt");
    rejects(`{"version":1,"operation":"acquire","attempt":"${"A".repeat(32)}"}`, "attempt");
    rejects(`{"version":1,"operation":"acquire","attempt":"${"g".repeat(32)}"}`, "attempt");
    rejects(`{"version":1,"operation":"acquire","attempt":1}`, "attempt");
    rejects(`{"version":1,"operation":"inspect","study":"${STUDY}","capability":"${hex(9, 63)}"}`, "capability");
    rejects(`{"version":1,"operation":"inspect","study":"${STUDY}","capability":"${hex(9, 65)}"}`, "capability");
    rejects(`{"version":1,"operation":"inspect","study":"${STUDY}","capability":"${STUDY}"}`, "capability");
    rejects(`{"version":1,"operation":"inspect","study":"${CAP}","capability":"${CAP}"}`, "study");
  });

  test("unknown operations, missing keys, extra keys (uid, path, limit, cleanup result)", () => {
    rejects('{"version":1,"operation":"HELLO"}', "operation");
    rejects('{"version":1,"operation":"activate"}', "operation");
    rejects('{"version":1}', "operation");
    rejects('{"operation":"hello"}', "version");
    for (const extra of ["uid", "path", "command", "limit", "cleanup", "attempt"]) rejects(`{"version":1,"operation":"hello","${extra}":"x"}`, "body");
    for (const [op, fields] of Object.entries(OPERATION_FIELDS)) {
      const full: Record<string, unknown> = { version: 1, operation: op, study: STUDY, capability: CAP, attempt: ATTEMPT, sequence: 1 };
      const exact = Object.fromEntries(Object.entries(full).filter(([k]) => k === "version" || k === "operation" || (fields as string[]).includes(k)));
      expect(() => decodeRequest(utf8(JSON.stringify(exact)))).not.toThrow();
      for (const f of fields) {
        const missing = { ...exact };
        delete missing[f];
        rejects(JSON.stringify(missing));
      }
      const unused = Object.keys(full).find((k) => !(k in exact));
      if (unused !== undefined) rejects(JSON.stringify({ ...exact, [unused]: full[unused] }), "body");
    }
  });

  test("__proto__ as a key is an ordinary (extra) key, not a prototype change", () => {
    rejects('{"version":1,"operation":"hello","__proto__":"x"}', "body");
    expect(decodeFlatObject(utf8('{"__proto__":"x"}')).get("__proto__")).toBe("x");
  });

  test("non-Uint8Array input", () => {
    expect(() => decodeRequest("{}" as unknown as Uint8Array)).toThrow();
  });
});

describe("validateRequest: typed in-process requests follow the same rules", () => {
  test("well-formed typed requests pass unchanged", () => {
    const req = { operation: "renew", study: STUDY, capability: CAP, sequence: 3 } as const;
    expect(validateRequest(req)).toEqual(req);
    expect(validateRequest({ operation: "hello" })).toEqual({ operation: "hello" });
  });

  test("floats, unsafe integers, booleans, objects, extra keys and a version key are refused", () => {
    const base = { operation: "renew", study: STUDY, capability: CAP };
    for (const sequence of [1.5, 0, 2 ** 53, true, "1", null, {}, Number.NaN]) {
      let err: unknown;
      try {
        validateRequest({ ...base, sequence });
      } catch (e) {
        err = e;
      }
      expect(isBrokerError(err, "invalid_request")).toBe(true);
    }
    for (const bad of [
      { ...base, sequence: 1, uid: 0 },
      { operation: "hello", version: 1 },
      { operation: "acquire", attempt: "A".repeat(32) },
      { operation: "acquire", attempt: { toString: () => ATTEMPT } },
      null,
      [],
      "hello",
    ])
      expect(() => validateRequest(bad)).toThrow();
  });
});

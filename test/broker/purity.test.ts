/**
 * The broker core is pure: time and randomness come in through ports, effects go out as data.
 * This guards the rule at the source level, so an accidental clock read or file access fails here.
 */
import { expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

const DIR = join(import.meta.dir, "../../src/broker");
const ALLOWED_IMPORTS = new Set(["node:crypto", "zod", "../errors.ts"]);
const FORBIDDEN = [
  /\bDate\b/,
  /\bperformance\b/,
  /\bMath\.random\b/,
  /\bsetTimeout\b/,
  /\bsetInterval\b/,
  /\bprocess\./,
  /\bBun\./,
  /\bfetch\(/,
  /\brequire\(/,
  /\bimport\(/,
  /crypto\.getRandomValues/,
  /randomBytes/,
];

test("src/broker imports only node:crypto, zod, the shared error type and itself, and reads no clock or entropy", () => {
  const files = readdirSync(DIR).filter((f) => f.endsWith(".ts"));
  expect(files.length).toBeGreaterThan(5);
  for (const f of files) {
    const src = readFileSync(join(DIR, f), "utf8");
    for (const m of src.matchAll(/\bfrom\s+"([^"]+)"/g)) {
      const spec = m[1]!;
      expect({ file: f, spec, allowed: spec.startsWith("./") || ALLOWED_IMPORTS.has(spec) }).toEqual({ file: f, spec, allowed: true });
    }
    const code = src.replace(/\/\*[\s\S]*?\*\/|\/\/.*$/gm, "");
    for (const re of FORBIDDEN) expect({ file: f, pattern: String(re), found: re.test(code) }).toEqual({ file: f, pattern: String(re), found: false });
  }
});

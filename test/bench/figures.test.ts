/**
 * Every bench can be summarised by bench/all.ts: it prints its `{"figures":[…]}` line through
 * emitFigures, and prints nothing on stdout after it (all.ts reads the last stdout line).
 * A textual check of the sources, so it runs without the engine or Chromium a bench needs.
 */
import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

const BENCH = join(import.meta.dir, "../../bench");
/** Files in bench/ that are not benches (the runner itself, a helper child). */
const NOT_BENCHES = new Set(["all.ts", "gateway-fake-child.ts"]);

describe("bench figures", () => {
  const benches = readdirSync(BENCH).filter((f) => f.endsWith(".ts") && !NOT_BENCHES.has(f));
  test("there are benches to check", () => {
    expect(benches.length).toBeGreaterThan(10);
  });
  for (const name of benches) {
    test(`${name} ends with its figures line`, () => {
      const src = readFileSync(join(BENCH, name), "utf8");
      const emit = src.lastIndexOf("emitFigures(");
      expect(emit).toBeGreaterThan(-1);
      expect(src.lastIndexOf("console.log(")).toBeLessThan(emit);
    });
  }
});

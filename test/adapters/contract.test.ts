/**
 * The published adapter contract cannot drift: `tsc` proves every declared type mutually
 * assignable with the output type of the schema humanish checks the same value against, and
 * type-checks the example adapter against the emitted file; the copy committed beside the
 * example is byte-for-byte what the generator prints.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { CONTRACT_TYPES, printNode, renderContractTypes } from "../../src/adapters/contract.ts";
import * as shapes from "../../src/adapters/shapes.ts";
import * as bundleSchemas from "../../src/bundle/schemas.ts";
import * as adapterSchemas from "../../src/bundle/schemas-adapter.ts";

const ROOT = resolve(import.meta.dir, "../..");
const EXAMPLE = join(ROOT, "labs/example-adapter");
const dir = mkdtempSync(join(tmpdir(), "humanish-contract-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The module (relative to the repo) that exports `<name>Schema`. */
function moduleOf(name: string): string {
  const key = `${name}Schema`;
  if (key in shapes) return "src/adapters/shapes.ts";
  if (key in adapterSchemas) return "src/bundle/schemas-adapter.ts";
  if (key in bundleSchemas) return "src/bundle/schemas.ts";
  throw new Error(`no module exports ${key}`);
}

describe("the adapter contract", () => {
  test("the printer: objects, optional keys, records, unions, literals, arrays", () => {
    expect(
      printNode({
        type: "object",
        properties: { a: { type: "string" }, "b-c": { anyOf: [{ type: "number" }, { type: "null" }] }, d: { type: "array", items: { enum: ["x", "y"] } } },
        required: ["a"],
        additionalProperties: false,
      }),
    ).toBe('{\n  a: string;\n  "b-c"?: number | null;\n  d?: ("x" | "y")[];\n}');
    expect(printNode({ type: "object", additionalProperties: { $ref: "JsonValue" } })).toBe("{\n  [key: string]: JsonValue;\n}");
    expect(printNode({ const: "humanish.adapter-score.v1" })).toBe('"humanish.adapter-score.v1"');
  });

  test("the copy beside the example adapter is what `humanish types` prints", () => {
    expect(readFileSync(join(EXAMPLE, "humanish.d.ts"), "utf8")).toBe(renderContractTypes());
  });

  test("tsc: every declared type equals its schema's output type, and the example adapter type-checks", () => {
    writeFileSync(join(dir, "humanish.d.ts"), renderContractTypes());
    copyFileSync(join(EXAMPLE, "scorer.ts"), join(dir, "scorer.ts"));
    const names = CONTRACT_TYPES.map(([n]) => n);
    const modules = [...new Set(names.map(moduleOf))];
    const lines = [
      'import type { z } from "zod";',
      'import type * as C from "./humanish";',
      ...modules.map((m, i) => `import type * as M${i} from ${JSON.stringify(join(ROOT, m))};`),
      "type Mutual<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;",
      ...names.map((n) => `export const check_${n}: Mutual<C.${n}, z.output<typeof M${modules.indexOf(moduleOf(n))}.${n}Schema>> = true;`),
      // The check can fail: two different types are not mutual.
      "// @ts-expect-error",
      `export const control: Mutual<C.CostLine, z.output<typeof M${modules.indexOf(moduleOf("RunAdapterScore"))}.RunAdapterScoreSchema>> = true;`,
      "",
    ];
    writeFileSync(join(dir, "drift.ts"), lines.join("\n"));
    writeFileSync(
      join(dir, "tsconfig.json"),
      JSON.stringify({
        compilerOptions: {
          target: "ES2023",
          module: "ESNext",
          moduleResolution: "bundler",
          strict: true,
          noUncheckedIndexedAccess: true,
          noEmit: true,
          allowImportingTsExtensions: true,
          resolveJsonModule: true,
          skipLibCheck: true,
          types: [],
          typeRoots: [join(ROOT, "node_modules/@types")],
          baseUrl: ".",
          paths: { zod: [join(ROOT, "node_modules/zod")] },
        },
        files: ["drift.ts", "scorer.ts"],
      }),
    );
    const tsc = Bun.spawnSync([join(ROOT, "node_modules/.bin/tsc"), "-p", join(dir, "tsconfig.json")], { stdout: "pipe", stderr: "pipe" });
    const out = tsc.stdout.toString() + tsc.stderr.toString();
    expect({ exit: tsc.exitCode, out: out.slice(0, 4000) }).toEqual({ exit: 0, out: "" });
  }, 120_000);
});

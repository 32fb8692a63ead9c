/**
 * Bounded lab input: nesting deeper than 64 is refused naming the line:col of the list or
 * mapping that crosses the bound (and depth 64 itself still loads), a lab over 1 MiB is refused
 * by its size before it is read, more than 10,000 values are refused, and aliases cannot expand
 * a small text into a large or deep value (alias bombs, recursive aliases). Hostile inputs the
 * loader used to walk quadratically are refused with the first problem, never a crash; time is
 * measured in bench/lab-load.ts, never here.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, truncateSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { isHumanishError } from "../../src/errors.ts";
import { loadLab, MAX_LAB_BYTES } from "../../src/lab/index.ts";
import { loadStrictYaml, MAX_ALIAS_COUNT } from "../../src/lab/yaml.ts";
import { MAX_LAB_DEPTH, MAX_LAB_VALUES } from "../../src/lab/yaml-scan.ts";
import { MAX_ALIAS_EXPANSION, MAX_LAB_ALIASES } from "../../src/lab/yaml-walk.ts";
import { accept, reject } from "./fixtures.ts";

const HEAD = `schema: humanish.lab.v2
id: bounds
subject: {source: terminal-product, product: {name: jq, publicSurfaces: ["https://jqlang.org/"]}}
actors:
  - type: scripted-terminal
    steps:
      - run: "true"
`;

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), "humanish-lab-bounds-"));
  dirs.push(d);
  return d;
}

/** A lab of exactly `bytes` bytes: HEAD plus a quoted description padded to fit. */
function sized(bytes: number): string {
  return `${HEAD}description: "${"a".repeat(bytes - HEAD.length - 'description: ""\n'.length)}"\n`;
}

/** `[` × n then `]` × n: a flow sequence nested n deep. */
function flow(n: number): string {
  return `${"[".repeat(n)}${"]".repeat(n)}`;
}

/** `k:` lines each indented one more step: a block mapping nested n deep, holding 1. */
function blockMaps(n: number): string {
  return `${Array.from({ length: n }, (_, i) => `${"  ".repeat(i)}k:`).join("\n")} 1\n`;
}

describe("nesting depth", () => {
  test("the bounds are the documented ones", () => {
    expect(MAX_LAB_DEPTH).toBe(64);
    expect(MAX_LAB_BYTES).toBe(1_048_576);
    expect(MAX_ALIAS_COUNT).toBe(100);
  });

  test("depth 64 loads at the YAML level; inside a lab it meets the schema, not the bound", () => {
    // The top-level mapping is depth 1, so `x: <63 lists>` is 64 deep.
    expect(loadStrictYaml(`x: ${flow(63)}\n`).ok).toBe(true);
    expect(loadStrictYaml(blockMaps(64)).ok).toBe(true);
    const msg = reject(`${HEAD}description: ${flow(63)}\n`);
    expect(msg).toMatch(/^t\.yaml:8:14: description expected a string, got a list/);
  });

  test("depth 65 in flow style is refused at the list that crosses the bound", () => {
    const r = loadStrictYaml(`x: ${flow(64)}\n`);
    expect(r.ok).toBe(false);
    if (r.ok) return;
    // `x: ` is 3 characters; the 64th `[` (depth 65 with the top-level mapping) is at column 67.
    expect(r.problem.message).toBe("1:67: a list or mapping nested 65 deep starts here; labs nest at most 64 levels (flatten this value)");
    expect(reject(`${HEAD}description: ${flow(64)}\n`)).toMatch(/^t\.yaml:8:77: a list or mapping nested 65 deep starts here/);
  });

  test("depth 65 in block style is refused at the mapping that crosses the bound", () => {
    const r = loadStrictYaml(blockMaps(65));
    expect(r.ok).toBe(false);
    if (r.ok) return;
    // Line 65 holds the 65th mapping, indented two spaces per level.
    expect(r.problem.message).toMatch(/^65:129: a list or mapping nested 65 deep starts here/);
  });

  test("depth far beyond the bound (100,000) is refused the same way, without overflowing the stack", () => {
    expect(reject(`${HEAD}description: ${flow(100_000)}\n`)).toMatch(/^t\.yaml:8:77: a list or mapping nested 65 deep/);
    expect(reject(`x: ${"{a: ".repeat(50_000)}1${"}".repeat(50_000)}\n`)).toMatch(/^t\.yaml:1:\d+: a list or mapping nested 65 deep/);
  });

  test("brackets inside quoted scalars and comments are not nesting", () => {
    const text = `${HEAD}description: "${"[".repeat(500)}"\ntitle: '${"{".repeat(500)}'\n# ${"[".repeat(500)}\n`;
    expect(accept(text).config.description).toBe("[".repeat(500));
  });
});

describe("size and value count", () => {
  test("a 1 MiB + 1 byte text is refused by its size, naming the bound", () => {
    const text = sized(MAX_LAB_BYTES + 1);
    expect(Buffer.byteLength(text)).toBe(MAX_LAB_BYTES + 1);
    expect(reject(text)).toBe("t.yaml: the lab is 1048577 bytes; a lab may be at most 1048576 bytes (1 MiB)");
  });

  test("size is counted in UTF-8 bytes, not characters", () => {
    // 3 bytes per character: under the bound in characters, over it in bytes.
    const text = `${HEAD}description: "${"€".repeat(400_000)}"\n`;
    expect(text.length).toBeLessThan(MAX_LAB_BYTES);
    expect(reject(text)).toMatch(/^t\.yaml: the lab is \d+ bytes; a lab may be at most 1048576 bytes/);
  });

  test("a file of exactly 1 MiB is read; 1 MiB + 1 byte is refused by its size", async () => {
    const dir = tempDir();
    writeFileSync(join(dir, "ok.yaml"), sized(MAX_LAB_BYTES));
    expect((await loadLab("./ok.yaml", dir)).text.length).toBe(MAX_LAB_BYTES);
    writeFileSync(join(dir, "big.yaml"), sized(MAX_LAB_BYTES + 1));
    const e = await loadLab("./big.yaml", dir).catch((x: unknown) => x);
    expect(isHumanishError(e) && e.code).toBe("HUMANISH_LAB_INVALID");
    expect((e as Error).message).toBe("big.yaml: is 1048577 bytes; a lab may be at most 1048576 bytes (1 MiB)");
  });

  test("a huge sparse file is refused by its size alone (it is never read)", async () => {
    const dir = tempDir();
    const file = join(dir, "huge.yaml");
    writeFileSync(file, "");
    // 64 GiB of holes: reading it would exhaust memory; refusing it costs one stat.
    truncateSync(file, 64 * 1024 ** 3);
    const e = await loadLab("./huge.yaml", dir).catch((x: unknown) => x);
    expect((e as Error).message).toBe(`huge.yaml: is ${64 * 1024 ** 3} bytes; a lab may be at most 1048576 bytes (1 MiB)`);
  });

  test(`more than ${MAX_LAB_VALUES} values are refused where the bound is crossed`, () => {
    const keys = Array.from({ length: MAX_LAB_VALUES }, (_, i) => `  k${i}: 1\n`).join("");
    const msg = reject(`${HEAD}policies:\n${keys}`);
    // The head holds 16 values and `policies` one more; each line below holds two.
    expect(msg).toMatch(/^t\.yaml:\d+:\d+: more than 10000 values \(keys, scalars, lists and mappings\) by here; a lab may hold at most 10000$/);
    const line = Number(/^t\.yaml:(\d+):/.exec(msg)![1]);
    expect(line).toBeGreaterThan(4900);
    expect(line).toBeLessThan(5100);
  });
});

describe("aliases", () => {
  test("an alias or two of a small anchor is fine", () => {
    expect(accept(`${HEAD}title: &t Bounds\ndescription: *t\n`).config.description).toBe("Bounds");
  });

  test("billion laughs is refused at the alias where the expansion crosses the bound", () => {
    const lines = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol","lol"]'];
    for (let i = 1; i < 10; i++) {
      const prev = String.fromCharCode(96 + i);
      lines.push(`${String.fromCharCode(97 + i)}: &${String.fromCharCode(97 + i)} [${Array(10).fill(`*${prev}`).join(",")}]`);
    }
    const msg = reject(`${lines.join("\n")}\n`);
    expect(msg).toMatch(new RegExp(`^t\\.yaml:4:\\d+: aliases expand to more than ${MAX_ALIAS_EXPANSION} values by here \\(an alias bomb\\)`));
  });

  test(`more than ${MAX_LAB_ALIASES} aliases are refused at the first one over`, () => {
    const text = `${HEAD}title: &t x\ndescription: [${Array(MAX_LAB_ALIASES + 1)
      .fill("*t")
      .join(", ")}]\n`;
    const msg = reject(text);
    const col = 15 + 4 * MAX_LAB_ALIASES;
    expect(msg).toBe(`t.yaml:9:${col}: more than ${MAX_LAB_ALIASES} aliases: labs use at most ${MAX_LAB_ALIASES} (write the values out)`);
  });

  test("an alias that expands past the depth bound is refused", () => {
    const msg = reject(`a: &deep ${flow(40)}\nb: ${"[".repeat(30)}*deep${"]".repeat(30)}\n`);
    expect(msg).toMatch(/^t\.yaml:2:\d+: alias `\*deep` expands to a value nested deeper than 64 levels$/);
  });

  test("a recursive alias and an alias with no anchor are refused", () => {
    expect(reject("a: &r [1, *r]\n")).toMatch(/^t\.yaml:1:\d+: alias `\*r` is inside the value it names/);
    expect(reject("a: *nowhere\n")).toMatch(/^t\.yaml:1:\d+: /);
  });
});

describe("hostile messages stay short", () => {
  test("a long unknown key is named clipped, without a suggestion search over it", () => {
    // YAML itself caps implicit keys at 1024 characters.
    const key = "k".repeat(1000);
    const msg = reject(`${HEAD}${key}: 1\n`);
    expect(msg.length).toBeLessThan(600);
    expect(msg).toMatch(/^t\.yaml:8:1: \["k{79}…"\] is not a known key/);
  });

  test("thousands of unknown keys in one mapping: a few named, the rest counted", () => {
    const keys = Array.from({ length: 3000 }, (_, i) => `  x${i}: 1\n`).join("");
    const msg = reject(`${HEAD}scenario:\n${keys}`);
    expect(msg).toMatch(/also unknown here: `x1`, `x2`, `x3`, `x4`, `x5`, and 2994 more\)/);
    expect(msg.length).toBeLessThan(600);
  });
});

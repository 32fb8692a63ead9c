/**
 * The handed YAML cases (test/fixtures/cases/yaml/, verdicts in test/fixtures/cases/README.md) and the
 * whole kind of fault behind each: YAML 1.1 directives, duplicate keys (by their read value),
 * merge keys, extra documents and non-core tags are all rejected with HUMANISH_LAB_INVALID,
 * naming the problem and its line.
 */
import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { parseLab } from "../../src/lab/index.ts";

const CASES = join(import.meta.dir, "../fixtures/cases/yaml");

function rejected(text: string): string {
  const r = parseLab(text, { source: "t.yaml" });
  if (r.ok) throw new Error(`accepted: ${text}`);
  expect(r.error.code).toBe("HUMANISH_LAB_INVALID");
  return r.error.message;
}

describe("handed cases", () => {
  const expected: Record<string, RegExp> = {
    "y1-yaml11-directive.yaml": /^y1-yaml11-directive\.yaml:1:1: YAML directive `%YAML 1\.1` is not allowed/,
    "y3a-duplicate-key.yaml": /^y3a-duplicate-key\.yaml:2:1: duplicate key `name`, first defined at line 1/,
    "y3b-int-vs-string-key-collision.yaml": /^y3b-int-vs-string-key-collision\.yaml:2:1: duplicate key `"1"`, first defined at line 1/,
    "y3c-merge-key.yaml": /^y3c-merge-key\.yaml:4:3: merge key `<<` is not allowed/,
    "y3d-double-merge-yaml11.yaml": /^y3d-double-merge-yaml11\.yaml:1:1: YAML directive/,
    "y3e-two-documents.yaml": /^y3e-two-documents\.yaml:2:1: a second YAML document starts here/,
  };
  const files = readdirSync(CASES)
    .filter((f) => f.endsWith(".yaml"))
    .sort();

  test("every handed file has a verdict here", () => {
    expect(files).toEqual(Object.keys(expected).sort());
  });

  for (const f of files) {
    test(f, () => {
      const r = parseLab(readFileSync(join(CASES, f), "utf8"), { source: f });
      expect(r.ok).toBe(false);
      if (r.ok) return;
      expect(r.error.code).toBe("HUMANISH_LAB_INVALID");
      expect(r.error.message).toMatch(expected[f]!);
    });
  }
});

describe("the whole kind of fault", () => {
  test("%TAG directive", () => {
    expect(rejected("%TAG !e! tag:example.com,2000:\n---\na: 1\n")).toMatch(/^t\.yaml:1:1: YAML directive `%TAG/);
  });
  test("%YAML 1.2 directive is still a directive", () => {
    expect(rejected("%YAML 1.2\n---\nschema: humanish.lab.v2\n")).toMatch(/^t\.yaml:1:1: YAML directive `%YAML 1\.2`/);
  });
  test("a second document after an explicit end marker", () => {
    expect(rejected("a: 1\n...\n---\nb: 2\n")).toMatch(/^t\.yaml:3:1: a second YAML document/);
  });
  test("a second document after a leading ---", () => {
    expect(rejected("---\na: 1\n---\n")).toMatch(/^t\.yaml:3:1: a second YAML document/);
  });
  test("duplicate keys deep inside a sequence item", () => {
    expect(rejected("a:\n  - x: 1\n    y: 2\n    x: 3\n")).toMatch(/^t\.yaml:4:5: duplicate key `x`, first defined at line 2/);
  });
  test('true vs "true", null vs ~, 1 vs 0x1 vs 1.0 collide', () => {
    expect(rejected('true: a\n"true": b\n')).toMatch(/:2:1: duplicate key `"true"`/);
    expect(rejected("~: a\nnull: b\n")).toMatch(/:2:1: duplicate key `null`/);
    expect(rejected("1: a\n0x1: b\n")).toMatch(/:2:1: duplicate key `0x1`.*`1` and `0x1` are the same key/);
    expect(rejected("1: a\n1.0: b\n")).toMatch(/:2:1: duplicate key `1\.0`/);
  });
  test("flow-mapping duplicates", () => {
    expect(rejected("a: {x: 1, x: 2}\n")).toMatch(/:1:11: duplicate key `x`/);
  });
  test("merge keys anywhere, quoted or not, and in flow style", () => {
    expect(rejected("a: &a {x: 1}\nb:\n  c:\n    - <<: *a\n")).toMatch(/:4:7: merge key `<<`/);
    expect(rejected("a: {<<: {x: 1}}\n")).toMatch(/:1:5: merge key `<<`/);
    expect(rejected('a:\n  "<<": {x: 1}\n')).toMatch(/:2:3: merge key `<<`/);
  });
  test("tags outside the core schema", () => {
    expect(rejected("a: !!binary aGVsbG8=\n")).toMatch(/^t\.yaml:1:4: tag `!!binary` is not in the YAML 1\.2 core schema/);
    expect(rejected("a: !!timestamp 2001-12-14\n")).toMatch(/^t\.yaml:1:4: .*!!timestamp/);
    expect(rejected("a: !custom x\n")).toMatch(/^t\.yaml:1:4: .*!custom/);
    expect(rejected("a: !!set {x}\n")).toMatch(/^t\.yaml:1:4: .*!!set/);
    // Core tags are fine where the value fits.
    expect(rejected("a: !!str 1\n")).not.toMatch(/tag/);
  });
  test("complex and alias keys", () => {
    expect(rejected("? [a, b]\n: 1\n")).toMatch(/^t\.yaml:1:3: a complex \(non-scalar\) value is used as a mapping key/);
    expect(rejected("x: &k key\n*k : 1\n")).toMatch(/^t\.yaml:2:1: an alias is used as a mapping key/);
  });
  test("syntax errors carry line:column", () => {
    expect(rejected("a: [1, 2\nb: 3\n")).toMatch(/^t\.yaml:\d+:\d+: YAML syntax error: /);
    expect(rejected("a:\n\tb: 1\n")).toMatch(/^t\.yaml:2:1: YAML syntax error: /);
    expect(rejected('a: "unterminated\n')).toMatch(/^t\.yaml:\d+:\d+: YAML syntax error: Missing closing "quote/);
  });
  test("alias bombs are refused", () => {
    const lines = ['a: &a ["x","x","x","x","x","x","x","x","x","x"]'];
    for (let i = 0; i < 9; i++)
      lines.push(
        `${String.fromCharCode(98 + i)}: &${String.fromCharCode(98 + i)} [*${String.fromCharCode(97 + i)},*${String.fromCharCode(97 + i)},*${String.fromCharCode(97 + i)},*${String.fromCharCode(97 + i)},*${String.fromCharCode(97 + i)},*${String.fromCharCode(97 + i)},*${String.fromCharCode(97 + i)},*${String.fromCharCode(97 + i)},*${String.fromCharCode(97 + i)},*${String.fromCharCode(97 + i)}]`,
      );
    expect(rejected(`${lines.join("\n")}\n`)).toMatch(/^t\.yaml:\d+:\d+: /);
  });
  test("YAML 1.1 booleans, octals and sexagesimals read as 1.2 core (strings), so typed fields refuse them", () => {
    const lab = (v: string) => `schema: humanish.lab.v2
id: x
subject: {source: terminal-product, product: {name: jq, publicSurfaces: ["https://jqlang.org/"]}}
actors: [{type: scripted-terminal, steps: [{run: "true"}]}]
policies: {allowGitHubMutation: ${v}}
`;
    for (const v of ["yes", "no", "on", "off", "y", "n"]) {
      expect(rejected(lab(v))).toMatch(
        new RegExp(`^t\\.yaml:5:33: policies\\.allowGitHubMutation expected a boolean, got the string "${v}"; YAML 1.2 has only true and false as booleans$`),
      );
    }
    expect(parseLab(lab("false")).ok).toBe(true);
  });
  test("empty input and non-mapping top levels", () => {
    expect(rejected("")).toMatch(/^t\.yaml:1:1: the lab is empty/);
    expect(rejected("# only a comment\n")).toMatch(/the lab is empty/);
    expect(rejected("- a\n- b\n")).toMatch(/^t\.yaml:1:1: \(top level\) must be a mapping \(got a list\)/);
    expect(rejected("just a string\n")).toMatch(/must be a mapping \(got string\)/);
  });
  test("a NUL byte is refused before parsing", () => {
    expect(rejected("a: 1\u0000\n")).toMatch(/NUL/);
  });
});

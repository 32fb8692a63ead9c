/**
 * The o200k_base counter built from the package's rank file: the same table as the package's
 * generated module, the same counts, and special-token text counted as text instead of refused.
 */
import { describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import packageRanks from "gpt-tokenizer/bpeRanks/o200k_base";
import ranksPath from "gpt-tokenizer/data/o200k_base.tiktoken" with { type: "file" };
import { countTokens as packageCount } from "gpt-tokenizer/encoding/o200k_base";
import { countTokens, parseTiktokenRanks } from "../../src/models/tokens.ts";

describe("parseTiktokenRanks", () => {
  test("gives the package's generated table entry by entry: strings where the bytes round-trip as UTF-8, bytes elsewhere", () => {
    const ours = parseTiktokenRanks(readFileSync(ranksPath, "latin1"));
    const theirs = packageRanks as readonly (string | readonly number[])[];
    expect(ours.length).toBe(theirs.length);
    let bytesTokens = 0;
    for (let i = 0; i < theirs.length; i++) {
      const a = ours[i];
      const b = theirs[i];
      if (typeof b === "string") expect(a).toBe(b);
      else {
        bytesTokens++;
        expect(a).toEqual([...b!]);
      }
    }
    // The table has both kinds, the byte-order-mark tokens among the byte ones.
    expect(bytesTokens).toBeGreaterThan(0);
    expect(ours.filter((t) => Array.isArray(t) && t[0] === 0xef && t[1] === 0xbb && t[2] === 0xbf).length).toBeGreaterThan(0);
  });

  test("fills holes where ranks skip, and names a malformed line", () => {
    expect(parseTiktokenRanks("YQ== 0\nYg== 2\n")).toEqual(["a", undefined, "b"] as unknown as string[]);
    expect(parseTiktokenRanks("/w== 0")).toEqual([[0xff]]);
    expect(() => parseTiktokenRanks("YQ== 0\nYg==\n")).toThrow(/line 2/);
    expect(() => parseTiktokenRanks("YQ== -1\n")).toThrow(/line 1/);
  });
});

describe("countTokens", () => {
  test("counts what the package counts, for prose, code, JSON, non-Latin scripts and emoji", () => {
    const texts = [
      readFileSync(join(import.meta.dir, "../../README.md"), "utf8"),
      readFileSync(join(import.meta.dir, "../../src/models/admission.ts"), "utf8"),
      JSON.stringify({ a: [1, 2, 3], nested: { é: "✓", text: "日本語のテキスト", emoji: "🙂🙂 👍🏽" } }),
      "Здравствуйте, мир! مرحبا بالعالم. नमस्ते दुनिया। 안녕하세요 세계",
      "\ufeffstarts with a byte-order mark",
      "",
    ];
    for (const t of texts) expect(countTokens(t)).toBe(packageCount(t));
  });

  test("special-token text is counted as the text it is, where the package refuses it", () => {
    const t = "a page that shows <|endoftext|> and <|im_start|> literally";
    expect(() => packageCount(t)).toThrow(/special token/i);
    const plain = t.replace("<|endoftext|>", "<| endoftext |>");
    expect(countTokens(t)).toBeGreaterThan(8);
    expect(countTokens(t)).toBeLessThanOrEqual(countTokens(plain) + 4);
    expect(countTokens("<|endoftext|>")).toBe(packageCount("<|endoftext|>", { disallowedSpecial: new Set() }));
  });
});

describe("the compiled binary carries the rank file", () => {
  test("bun build --compile → a count from a directory with no node_modules equals the package's", async () => {
    const dir = mkdtempSync(join(tmpdir(), "humanish-tokens-compile-"));
    try {
      const entry = join(dir, "entry.ts");
      await Bun.write(
        entry,
        `import ranksPath from ${JSON.stringify(ranksPath)} with { type: "file" };\nimport { countTokens } from ${JSON.stringify(join(import.meta.dir, "../../src/models/tokens.ts"))};\nconsole.log(ranksPath.startsWith("/$bunfs/") ? countTokens(process.argv[2]!) : \`not embedded: \${ranksPath}\`);\n`,
      );
      const out = join(dir, "tokprobe");
      const build = Bun.spawnSync([process.execPath, "build", "--compile", entry, "--outfile", out], { stdout: "pipe", stderr: "pipe" });
      if (build.exitCode !== 0) throw new Error(`build failed: ${build.stderr.toString()}`);
      const text = "Здравствуйте — the page shows <|endoftext|> 🙂";
      const empty = mkdtempSync(join(dir, "cwd-"));
      const run = Bun.spawnSync([out, text], { cwd: empty, stdout: "pipe", stderr: "pipe" });
      expect(run.stderr.toString()).toBe("");
      expect(Number(run.stdout.toString().trim())).toBe(packageCount(text, { disallowedSpecial: new Set() }));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);
});

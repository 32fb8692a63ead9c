/**
 * parseLab never throws for bad input (its public contract): seeded random
 * mutations of every committed lab — byte flips, truncations, line swaps, inserted YAML
 * punctuation — each end in `{ok: true}` or HUMANISH_LAB_INVALID with a located message.
 * And the compiled single binary carries the embedded labs.
 */
import { describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseLab } from "../../src/lab/index.ts";
import { rng } from "../support/rng.ts";
import { COMMITTED_LABS, labText } from "./fixtures.ts";

const PIECES = [
  ":",
  " ",
  "\n",
  "-",
  "[",
  "]",
  "{",
  "}",
  "&a",
  "*a",
  "<<: *a",
  "!!binary ",
  "%YAML 1.1\n",
  "---\n",
  "\t",
  "'",
  '"',
  "#",
  "|",
  ">",
  "?",
  "~",
  "null",
  "1.10",
  "true",
  "\u0000",
  "\uFEFF",
  "é",
  "\u2028",
];

function mutate(text: string, r: () => number): string {
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(r() * xs.length)]!;
  let s = text;
  const n = 1 + Math.floor(r() * 3);
  for (let i = 0; i < n; i++) {
    const at = Math.floor(r() * (s.length + 1));
    switch (Math.floor(r() * 5)) {
      case 0:
        s = s.slice(0, at) + pick(PIECES) + s.slice(at);
        break;
      case 1:
        s = s.slice(0, at) + s.slice(at + 1 + Math.floor(r() * 8));
        break;
      case 2:
        s = s.slice(0, at);
        break;
      case 3: {
        const lines = s.split("\n");
        const a = Math.floor(r() * lines.length),
          b = Math.floor(r() * lines.length);
        [lines[a], lines[b]] = [lines[b]!, lines[a]!];
        s = lines.join("\n");
        break;
      }
      default:
        s = s.slice(0, at) + String.fromCharCode(Math.floor(r() * 0x80)) + s.slice(at + 1);
    }
  }
  return s;
}

describe("parseLab never throws", () => {
  for (const id of COMMITTED_LABS) {
    test(`600 seeded mutations of ${id}`, () => {
      const r = rng(0x5eed ^ id.length);
      const base = labText(id);
      let rejected = 0;
      for (let i = 0; i < 600; i++) {
        const text = mutate(base, r);
        let res: ReturnType<typeof parseLab>;
        try {
          res = parseLab(text, { source: "m.yaml" });
        } catch (e) {
          throw new Error(`parseLab threw on mutation ${i}: ${String(e)}\n${text}`);
        }
        if (!res.ok) {
          rejected++;
          expect(res.error.code).toBe("HUMANISH_LAB_INVALID");
          expect(res.error.message).toMatch(/^m\.yaml(:\d+:\d+)?: \S/);
          expect(res.error.message).not.toContain("could not be validated");
        }
      }
      expect(rejected).toBeGreaterThan(100);
    });
  }
  test("non-string input is refused, not thrown", () => {
    const r = parseLab(42 as unknown as string);
    expect(r.ok).toBe(false);
  });
});

describe("the compiled binary embeds the labs", () => {
  test("bun build --compile → `default` resolves to the jq lab with no files around", async () => {
    const dir = mkdtempSync(join(tmpdir(), "humanish-lab-compile-"));
    try {
      const entry = join(dir, "entry.ts");
      await Bun.write(
        entry,
        `import { loadLab } from ${JSON.stringify(join(import.meta.dir, "../../src/lab/index.ts"))};\nconst l = await loadLab("default", process.argv[2]!);\nconsole.log(l.config.id + " " + l.ref + " " + l.sha256);\n`,
      );
      const out = join(dir, "labprobe");
      const build = Bun.spawnSync([process.execPath, "build", "--compile", entry, "--outfile", out], { stdout: "pipe", stderr: "pipe" });
      if (build.exitCode !== 0) throw new Error(`build failed: ${build.stderr.toString()}`);
      const empty = mkdtempSync(join(dir, "cwd-"));
      const run = Bun.spawnSync([out, empty], { cwd: empty, stdout: "pipe", stderr: "pipe" });
      expect(run.stderr.toString()).toBe("");
      const sha = createHash("sha256").update(labText("jq-first-contact")).digest("hex");
      expect(run.stdout.toString().trim()).toBe(`jq-first-contact embedded:jq-first-contact ${sha}`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);
});

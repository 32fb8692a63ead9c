/**
 * Property tests (seeded, reproducible): redaction never lets a provisioned value through and is
 * idempotent; any single-bit change in any listed artifact fails verify.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createRedactor, findSensitive, RunBundleSchema, verifyRun } from "../../src/bundle/index.ts";
import { rng } from "../support/rng.ts";
import { tempProject, writeLiveBrowser, writeLiveTerminal } from "./helpers.ts";

const NOISE = "abcXYZ019 _-./:=\"'\\\n\t{}[]()<>@%+~é中/tmp/home/Users/sk-ghp_AKIAeyJ";
const SECRET_CHARS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_";

describe("redaction properties", () => {
  test("no provisioned value survives, whatever surrounds it (2,000 seeded cases)", () => {
    const rnd = rng(0xb0d1e5);
    for (let i = 0; i < 2000; i++) {
      const pick = (s: string) => s[Math.floor(rnd() * s.length)]!;
      const len = 4 + Math.floor(rnd() * 36);
      // Secrets always carry a digit so they cannot be a substring of a [REDACTED_…] marker.
      let secret = String(Math.floor(rnd() * 10));
      while (secret.length < len) secret += pick(SECRET_CHARS);
      const noise = () => Array.from({ length: Math.floor(rnd() * 40) }, () => pick(NOISE)).join("");
      let text = noise();
      const copies = 1 + Math.floor(rnd() * 3);
      for (let c = 0; c < copies; c++) text += secret + noise();
      const r = createRedactor([secret, "other-value-77"]);
      const out = r.text(text);
      expect({ i, secret, leaked: out.includes(secret) }).toEqual({ i, secret, leaked: false });
      expect(r.containsSecret(out)).toBe(false);
      // JSON path as well (escaping must not reveal it)
      expect(r.json({ text, nested: [text] }).includes(secret)).toBe(false);
    }
  });

  test("redaction is idempotent and leaves no detectable shape (2,000 seeded cases)", () => {
    const rnd = rng(42);
    const pieces = [
      `sk-proj-${"A".repeat(25)}`,
      "/tmp/x/y",
      "/home/u/.cfg",
      "/Users/me/a b",
      `Bearer ${"t".repeat(30)}`,
      "postgres://u:p@h/db",
      `AKIA${"B".repeat(16)}`,
      "ok text",
      '"quoted"',
      "http://127.0.0.1:8080/tmp/page",
      `e2b_${"c".repeat(20)}`,
      "https://x.e2b.dev/p",
      `eyJ${"a".repeat(20)}.${"b".repeat(20)}.${"c".repeat(10)}`,
    ];
    const r = createRedactor(["s3cr3t-v4lue"]);
    for (let i = 0; i < 2000; i++) {
      const n = 1 + Math.floor(rnd() * 6);
      const text = Array.from({ length: n }, () => pieces[Math.floor(rnd() * pieces.length)]!).join(rnd() < 0.5 ? " " : "\n");
      const once = r.text(text);
      expect(r.text(once)).toBe(once);
      expect(findSensitive(once)).toEqual([]);
    }
  });
});

describe("verify: any single-bit change in any listed artifact fails", () => {
  const p = tempProject();
  afterAll(() => p.cleanup());

  test("150 seeded bit flips across terminal and browser bundles", async () => {
    await writeLiveTerminal(p.cwd, "fz-t");
    await writeLiveBrowser(p.cwd, "fz-b");
    const rnd = rng(7);
    for (let i = 0; i < 150; i++) {
      const dir = join(p.cwd, ".humanish/runs", rnd() < 0.5 ? "fz-t" : "fz-b");
      const arts = RunBundleSchema.parse(JSON.parse(readFileSync(join(dir, "run.json"), "utf8"))).artifacts;
      const a = arts[Math.floor(rnd() * arts.length)]!;
      const path = join(dir, a.path);
      const original = readFileSync(path);
      const mutated = Buffer.from(original);
      const off = Math.floor(rnd() * mutated.length);
      mutated[off] = mutated[off]! ^ (1 << Math.floor(rnd() * 8));
      writeFileSync(path, mutated);
      const v = await verifyRun(dir);
      writeFileSync(path, original);
      expect({ i, path: a.path, off, ok: v.ok }).toEqual({ i, path: a.path, off, ok: false });
    }
    expect((await verifyRun(join(p.cwd, ".humanish/runs/fz-t"))).ok).toBe(true);
    expect((await verifyRun(join(p.cwd, ".humanish/runs/fz-b"))).ok).toBe(true);
  });
});

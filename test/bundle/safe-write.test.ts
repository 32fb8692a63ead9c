/**
 * The one writer of user-named files: a symlink, a FIFO or a directory at the name is refused
 * without being opened (a FIFO would block the open forever), an existing file is replaced only
 * with `force` and then by rename (the old inode is untouched), and a refused write leaves no
 * temp file behind.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { writeUserFileSync } from "../../src/bundle/safe-write.ts";
import { HumanishError } from "../../src/errors.ts";

const dir = mkdtempSync(join(tmpdir(), "humanish-safe-write-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const opts = (force = false) => ({ force, label: "--out x", flag: "--out" });

function codeOf(f: () => void): string | undefined {
  try {
    f();
  } catch (e) {
    if (e instanceof HumanishError) {
      expect(e.next).toBeTruthy();
      return e.code;
    }
    throw e;
  }
  return undefined;
}

describe("writeUserFileSync", () => {
  test("a new file is written whole; an existing one only with force, as a new inode", () => {
    const p = join(dir, "a.html");
    writeUserFileSync(p, "one", opts());
    expect(readFileSync(p, "utf8")).toBe("one");
    expect(codeOf(() => writeUserFileSync(p, "two", opts()))).toBe("HUMANISH_OUTPUT_EXISTS");
    expect(readFileSync(p, "utf8")).toBe("one");
    const before = statSync(p).ino;
    writeUserFileSync(p, "two", opts(true));
    expect(readFileSync(p, "utf8")).toBe("two");
    expect(statSync(p).ino).not.toBe(before);
  });

  test("a symlink at the name is refused even with force, and its target is untouched", () => {
    const victim = join(dir, "victim.txt");
    writeFileSync(victim, "precious");
    const link = join(dir, "link.html");
    symlinkSync(victim, link);
    for (const force of [false, true]) expect(codeOf(() => writeUserFileSync(link, "pwned", opts(force)))).toBe("HUMANISH_OUTPUT_UNSAFE");
    expect(readFileSync(victim, "utf8")).toBe("precious");
    // A dangling symlink too: following it would create a file wherever it points.
    const dangling = join(dir, "dangling.html");
    symlinkSync(join(dir, "nowhere.txt"), dangling);
    expect(codeOf(() => writeUserFileSync(dangling, "x", opts(true)))).toBe("HUMANISH_OUTPUT_UNSAFE");
    expect(readdirSync(dir)).not.toContain("nowhere.txt");
  });

  test("a FIFO is refused at once, without opening it (this test would hang otherwise); a directory too", () => {
    const fifo = join(dir, "pipe.html");
    expect(spawnSync("mkfifo", [fifo]).status).toBe(0);
    expect(codeOf(() => writeUserFileSync(fifo, "x", opts(true)))).toBe("HUMANISH_OUTPUT_UNSAFE");
    const sub = join(dir, "sub");
    mkdirSync(sub);
    expect(codeOf(() => writeUserFileSync(sub, "x", opts(true)))).toBe("HUMANISH_OUTPUT_UNSAFE");
  });

  test("a missing directory is the command's write-failed code; no temp file is left anywhere", () => {
    const code = codeOf(() => writeUserFileSync(join(dir, "missing", "a.html"), "x", { ...opts(), codes: { failed: "HUMANISH_X_WRITE_FAILED" } }));
    expect(code).toBe("HUMANISH_X_WRITE_FAILED");
    expect(readdirSync(dir).filter((n) => n.includes(".tmp-"))).toEqual([]);
  });
});

/**
 * `humanish types`: printing to stdout gives the same bytes as `--out FILE` and `--json`'s
 * `types` (one trailing newline, not two).
 */
import { expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sha256Hex } from "../../src/bytes/sha256.ts";
import { cli } from "../cli/support.ts";

test("stdout, --out and --json carry the same declarations", async () => {
  const dir = mkdtempSync(join(tmpdir(), "humanish-types-"));
  try {
    const printed = await cli(["types", "--cwd", dir]);
    const json = (await cli(["types", "--json", "--cwd", dir])).json<{ types: string; sha256: string }>();
    expect((await cli(["types", "--out", "h.d.ts", "--cwd", dir])).code).toBe(0);
    const file = readFileSync(join(dir, "h.d.ts"), "utf8");
    expect(printed.stdout).toBe(file);
    expect(json.types).toBe(file);
    expect(sha256Hex(printed.stdout)).toBe(json.sha256);
    expect(file.endsWith("}\n")).toBe(true);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

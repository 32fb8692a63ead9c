/**
 * The suite's two phases (scripts/test.ts): a file that watches a humanish command release an
 * orphan must be in the phase that runs alone, or a humanish process of another file releases its
 * orphan first and the file fails only when the two happen to overlap.
 */
import { expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { MACHINE_WIDE_FILES } from "../../scripts/test.ts";

const ROOT = resolve(import.meta.dir, "../..");

/** What a file that waits for an orphan's release contains: the call, or the line a command prints. */
const WATCHES_A_RELEASE = /reconcileOrphans\(|orphaned (container|app server)/;

test("every file that watches an orphan's release runs alone, and every listed file exists", () => {
  const files = [...new Bun.Glob("test/**/*.test.ts").scanSync({ cwd: ROOT })].sort();
  const watching = files.filter(
    (f) => f !== relative(ROOT, join(import.meta.dir, "test-phases.test.ts")) && WATCHES_A_RELEASE.test(readFileSync(join(ROOT, f), "utf8")),
  );
  expect(watching.length).toBeGreaterThanOrEqual(4);
  for (const f of watching) expect(MACHINE_WIDE_FILES).toContain(f);
  for (const f of MACHINE_WIDE_FILES) expect(existsSync(join(ROOT, f))).toBe(true);
});

/**
 * A scorer module for seam tests: `source` written to `scorer.mjs` in a fresh folder and loaded
 * the way `lab run` loads one (imported in the scorer's own child process), so the hooks run
 * exactly as in a real run.
 */

import { afterAll } from "bun:test";
import { mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type LoadedScorer, loadScorerModule } from "../../src/adapters/load.ts";

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** Load `source` (an ES module's text) as a scorer: in its container, or with `unconfined` as an opted-in host process. */
export async function scorerFrom(source: string, ref = "./scorer.mjs", o: { unconfined?: boolean } = {}): Promise<LoadedScorer> {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), "humanish-scorer-")));
  dirs.push(dir);
  const path = join(dir, "scorer.mjs");
  writeFileSync(path, source);
  return loadScorerModule(path, ref, "manifest", o.unconfined ? { confinement: { mode: "unconfined", reason: "a test runs it on the host" } } : {});
}

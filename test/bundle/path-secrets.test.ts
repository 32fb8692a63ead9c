/**
 * Artifact paths are names humanish chooses, never values: a secret that happens to equal a word
 * of one (`terminal`, `sandbox`, `actor`, `report`) must not break the bundle or rename what the
 * listing points at, while the same word in free text is still scrubbed.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { verifyRun } from "../../src/bundle/index.ts";
import { tempProject, writeLiveTerminal } from "./helpers.ts";

const projects: { cleanup: () => void }[] = [];
afterAll(() => {
  for (const p of projects) p.cleanup();
});

describe("secrets equal to words of artifact names", () => {
  for (const secret of ["terminal", "sandbox", "actor", "transcript", "events", "receipts"]) {
    test(`secret ${JSON.stringify(secret)}: every listed artifact exists under its own name and the bundle verifies`, async () => {
      const p = tempProject();
      projects.push(p);
      const { w } = await writeLiveTerminal(p.cwd, "live-1", { secrets: [secret] });
      w.close();
      const runDir = join(p.cwd, ".humanish", "runs", "live-1");
      const run = JSON.parse(readFileSync(join(runDir, "run.json"), "utf8")) as { artifacts: { path: string }[] };
      expect(run.artifacts.length).toBeGreaterThan(0);
      for (const a of run.artifacts) {
        expect({ path: a.path, exists: existsSync(join(runDir, a.path)) }).toEqual({ path: a.path, exists: true });
        expect(a.path).not.toContain("[REDACTED");
      }
      const v = await verifyRun(runDir);
      expect({ ok: v.ok, failed: v.checks.filter((c) => !c.ok).map((c) => c.name) }).toEqual({ ok: true, failed: [] });
    });
  }
});

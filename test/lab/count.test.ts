/**
 * `lab run --count N` through the CLI (dry run: no engine): N seats in the result and the
 * bundle, each a contract-only participant; bad values name `--count`; a lab that names its
 * seats (lanes) refuses the override.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { cli } from "../cli/support.ts";

const cwd = mkdtempSync(join(tmpdir(), "humanish-count-"));
afterAll(() => rmSync(cwd, { recursive: true, force: true }));

describe("lab run --count", () => {
  test("--count 3 runs three contract-only seats; the bundle lists every seat and verifies", async () => {
    const r = await cli(["lab", "run", "jq-first-contact", "--dry-run", "--count", "3", "--json", "--cwd", cwd]);
    expect(r.code).toBe(0);
    const j = r.json<{
      ok: boolean;
      participants: { id: string }[];
      seats: { id: string; state: string }[];
      study: { declaredSeats: number };
      warnings: { code: string }[];
      runId: string;
    }>();
    expect(j.ok).toBe(true);
    expect(j.participants.map((p) => p.id)).toEqual(["p1", "p2", "p3"]);
    expect(j.seats.map((s) => s.state)).toEqual(["completed", "completed", "completed"]);
    expect(j.study.declaredSeats).toBe(3);
    expect(j.warnings.map((w) => w.code)).toContain("HUMANISH_LAB_COUNT_OVERRIDDEN");
    const run = JSON.parse(readFileSync(join(cwd, ".humanish", "runs", j.runId, "run.json"), "utf8"));
    expect(run.study.seats).toHaveLength(3);
    expect(run.tasks).toHaveLength(3 * 4);
    const v = await cli(["verify", "--run", j.runId, "--json", "--cwd", cwd]);
    expect(v.code).toBe(0);
  });
  test("bad values are HUMANISH_LAB_INVALID naming --count", async () => {
    for (const bad of ["0", "17", "2.5", "many"]) {
      const r = await cli(["lab", "run", "jq-first-contact", "--dry-run", "--count", bad, "--json", "--cwd", cwd]);
      expect(r.code).not.toBe(0);
      const j = r.json<{ ok: boolean; error: { code: string; message: string } }>();
      expect(j.error.code).toBe("HUMANISH_LAB_INVALID");
      expect(j.error.message).toContain("--count must be an integer from 1 to 16");
    }
  });
  test("a lab with lanes refuses --count", async () => {
    const text = readFileSync(join(import.meta.dir, "../../labs/jq-first-contact.yaml"), "utf8").replace(
      "  - type: scripted-terminal\n",
      "  - type: scripted-terminal\n    lanes:\n      - {id: ada}\n      - {id: bob}\n",
    );
    writeFileSync(join(cwd, "laned.yaml"), text);
    const r = await cli(["lab", "run", "./laned.yaml", "--dry-run", "--count", "3", "--json", "--cwd", cwd]);
    const j = r.json<{ error: { code: string; message: string } }>();
    expect(j.error.code).toBe("HUMANISH_LAB_INVALID");
    expect(j.error.message).toContain("--count cannot override actors[0].lanes");
    const ok = await cli(["lab", "run", "./laned.yaml", "--dry-run", "--json", "--cwd", cwd]);
    expect(ok.json<{ participants: { id: string }[] }>().participants.map((p) => p.id)).toEqual(["ada", "bob"]);
  });
});

/**
 * The run writer redacts free text, never structure: string values are scrubbed before they
 * are serialised, JSON keys and our schema's own words stay, so a secret value that happens to
 * be `stdout` or `running` cannot break a file; identifiers carrying a secret are refused before
 * anything is written.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createRunWriter } from "../../src/bundle/index.ts";
import { schemaConstants } from "../../src/bundle/schema-constants.ts";
import { RunBundleSchema, TerminalEventSchema } from "../../src/bundle/schemas.ts";
import { isHumanishError } from "../../src/errors.ts";

const dir = mkdtempSync(join(tmpdir(), "humanish-redact-structure-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("structure is never scrubbed", () => {
  test("schemaConstants collects enum members and literals", () => {
    const c = schemaConstants(RunBundleSchema, TerminalEventSchema);
    for (const w of ["humanish.run-bundle.v1", "terminal", "live", "dry-run", "stdout", "stderr", "step_failed", "passed", "chunk", "state"])
      expect(c.has(w)).toBe(true);
    expect(c.has("zq9-canary-7731-secret")).toBe(false);
  });

  test("a secret equal to a schema word leaves the structure intact and is still scrubbed from free text", async () => {
    const w = createRunWriter({ cwd: dir, runId: "structure-words-1", secrets: ["stdout", "running", "chunk", "zq9-canary-7731-secret"], heartbeatMs: 0 });
    await w.appendNdjson(
      "terminal-events.ndjson",
      { at: new Date().toISOString(), stream: "stdout", source: "p1", chunk: "stdout says zq9-canary-7731-secret\n" },
      { kind: "terminal-events" },
    );
    await w.writeStatus({ phase: "participate", detail: "running step with zq9-canary-7731-secret" });
    w.close();
    const line = JSON.parse(readFileSync(join(w.runDir, "terminal-events.ndjson"), "utf8"));
    expect(line.stream).toBe("stdout");
    expect(Object.keys(line)).toEqual(["at", "stream", "source", "chunk"]);
    expect(line.chunk).toBe("[REDACTED_SECRET] says [REDACTED_SECRET]\n");
    const status = JSON.parse(readFileSync(join(w.runDir, "status.json"), "utf8"));
    expect(status.state).toBe("running");
    expect(status.detail).toBe("[REDACTED_SECRET] step with [REDACTED_SECRET]");
    expect(Object.keys(status)).toContain("state");
  });

  test("a run id or lab id carrying a secret value is refused before the run directory exists", () => {
    for (const [runId, lab] of [
      ["zq9-canary-7731-secret", undefined],
      ["structure-ok-2", "lab-zq9-canary-7731-secret"],
    ] as const) {
      let err: unknown;
      try {
        createRunWriter({ cwd: dir, runId, secrets: ["zq9-canary-7731-secret"], heartbeatMs: 0, ...(lab ? { lab } : {}) });
      } catch (e) {
        err = e;
      }
      expect(isHumanishError(err, "HUMANISH_SECRET_IN_IDENTIFIER")).toBe(true);
      expect((err as Error).message).not.toContain("zq9-canary-7731-secret");
      expect(existsSync(join(dir, ".humanish", "runs", runId))).toBe(false);
    }
  });
});

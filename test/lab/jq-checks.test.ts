/**
 * The committed jq lab's hidden checks can fail: run through the real terminal route on Docker
 * with a participant that only looks at `jq --version`, every task must fail (a check that passes
 * without the participant's work would be a test that cannot fail). The full pass case is
 * test/routes/terminal/jq-lab.test.ts.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHash, randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createDockerClient } from "../../src/docker/index.ts";
import { parseLab } from "../../src/lab/index.ts";
import { runTerminalStudy } from "../../src/routes/terminal/index.ts";
import type { StudyResult } from "../../src/routes/types.ts";
import { dockerSocketPath, requireDocker } from "../support/prereq.ts";
import { labObject, toYaml } from "./fixtures.ts";

describe("jq-first-contact: checks fail when the participant does nothing", () => {
  const dir = mkdtempSync(join(tmpdir(), "humanish-lab-jqchecks-"));
  const runId = `test-lab-jqchecks-${randomBytes(4).toString("hex")}`;
  let result: StudyResult;

  beforeAll(async () => {
    await requireDocker();
    const lab = labObject("jq-first-contact");
    lab.actors[0].steps = [{ run: "jq --version", expectExit: 0 }];
    const text = toYaml(lab);
    const parsed = parseLab(text);
    if (!parsed.ok) throw new Error(parsed.error.message);
    result = await runTerminalStudy({
      cwd: dir,
      lab: parsed.config,
      labSource: { ref: "labs/jq-idle.yaml", sha256: createHash("sha256").update(text).digest("hex") },
      labWarnings: [],
      runId,
      mode: "live",
      env: { PATH: process.env.PATH },
      signal: new AbortController().signal,
      progress: () => {},
    });
  }, 600_000);

  afterAll(async () => {
    const docker = createDockerClient({ socketPath: dockerSocketPath() });
    const left = await docker.containerList({ all: true, labels: [`humanish.run=${runId}`] });
    for (const c of left) await docker.containerRemove(c.Id, { force: true }).catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
  });

  test("the participant ran; every hidden check failed; reward 0; 0/1 reached the goal", () => {
    expect(result.error).toBeUndefined();
    // Every step ran as scripted, but the hidden checks decide the goal: not reached.
    expect(result.participants).toEqual([{ id: "p1", status: "incomplete", completionReason: "turn_completed", claimed: "none" }]);
    expect(result.verdict).toStartWith("0/1 reached the goal;");
    expect(result.tasks.map((t) => `${t.id}:${t.status}`)).toEqual([
      "pretty-print:failed",
      "open-order-ids:failed",
      "open-total:failed",
      "orders-per-customer:failed",
    ]);
    expect(result.reward).toBe(0);
  });
});

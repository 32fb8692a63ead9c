/**
 * Export of a real scripted-terminal run: a one-seat study on the real Docker sandbox, then
 * `humanish export --format atif` through the CLI. Each scripted step is one agent step with a
 * `bash` tool call whose observation is the step's exit code and output; the last step is
 * humanish's record of the hidden checks; the spend is a known zero.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { AtifTrajectory } from "../../src/export/atif/schema.ts";
import { validateAtif } from "../../src/export/atif/validate.ts";
import { cli } from "../cli/support.ts";
import { containersOfRun, removeContainers, testRunId, tmpProject } from "../routes/terminal/support.ts";
import { requireDocker } from "../support/prereq.ts";
import { MADE_FILE, scriptedTerminalLab, verifiedTerminalStudy } from "../support/terminal-study.ts";

const LAB = scriptedTerminalLab({
  id: "export-scripted",
  tasks: [MADE_FILE, { id: "made-log", goal: "Create log.txt.", run: "test -e log.txt" }],
  steps: ["ls --version | head -1", "touch done.txt && echo made it"],
});

const project = tmpProject();
const runId = testRunId("export-scripted");

beforeAll(async () => {
  await requireDocker();
  await verifiedTerminalStudy({ dir: project.dir, text: LAB, runId });
}, 300_000);

afterAll(async () => {
  await removeContainers(await containersOfRun(runId));
  project.cleanup();
});

describe("export of a real scripted-terminal run", () => {
  test("one agent step per scripted step (bash call → exit code and output), the checks last, a known zero spend", async () => {
    const r = await cli(["export", "--run", runId, "--format", "atif", "--cwd", project.dir, "--json"]);
    expect(r.code).toBe(0);
    const out = r.json<{ ok: boolean; exported: { path: string; steps: number; toolCalls: number }[] }>();
    expect(out.exported).toHaveLength(1);
    expect(out.exported[0]).toMatchObject({ steps: 4, toolCalls: 2 });
    const t = JSON.parse(readFileSync(join(project.dir, out.exported[0]!.path), "utf8")) as AtifTrajectory;
    expect(validateAtif(t).errors).toEqual([]);
    expect(t.agent).toMatchObject({ name: "humanish-scripted-terminal", extra: { actor_type: "scripted-terminal", protocol: "scripted-steps" } });
    expect(t.agent.model_name).toBeUndefined();
    expect(t.steps.map((s) => s.source)).toEqual(["user", "agent", "agent", "system"]);
    const [, s1, s2, last] = t.steps;
    expect(s1!.tool_calls).toEqual([
      { tool_call_id: "command-001", function_name: "bash", arguments: { command: "ls --version | head -1", cwd: expect.any(String) } },
    ]);
    expect(s1!.observation?.results[0]).toMatchObject({ source_call_id: "command-001", content: expect.stringMatching(/^exit 0\nls \(GNU coreutils\)/) });
    expect(s2!.observation?.results[0]?.content).toBe("exit 0\nmade it\n");
    for (const s of t.steps) expect(Number.isNaN(Date.parse(s.timestamp ?? ""))).toBe(false);
    expect(last!.message).toMatch(/hidden checks: made-file passed, made-log failed$/);
    expect(t.final_metrics).toMatchObject({ total_cost_usd: 0, total_steps: 4 });
    expect(t.final_metrics?.total_prompt_tokens).toBeUndefined();
  });
});

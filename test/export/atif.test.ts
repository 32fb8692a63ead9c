/**
 * `humanish export --format atif` on verified bundles written by the real writer: a Codex
 * terminal seat (its trace the real fold of a `codex exec --json` stream) and a computer-use
 * seat (actions as `computer` tool calls, screenshots as observations naming bundle paths,
 * per-response metrics with `cost_usd` only where the ledger priced the response). Every file
 * passes our validator, carries no secret, and a dry run, a tampered run and a bad --format are
 * refused with their codes.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync, renameSync, symlinkSync, writeFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import type { AtifTrajectory } from "../../src/export/atif/schema.ts";
import { validateAtif } from "../../src/export/atif/validate.ts";
import { tempProject, writeDryRunTerminal, writeLiveTerminal } from "../bundle/helpers.ts";
import { cli } from "../cli/support.ts";
import { SECRET, writeCodexRun, writeComputerUseRun } from "./support.ts";

const project = tempProject();
afterAll(() => project.cleanup());

interface ExportOut {
  ok: boolean;
  schemaVersion: string;
  outDir: string;
  exported: { participantId: string; path: string; steps: number; toolCalls: number; screenshots: number; images: string[] }[];
  error?: { code: string; message: string };
}

async function exportRun(runId: string, ...extra: string[]): Promise<{ code: number; out: ExportOut }> {
  const r = await cli(["export", "--run", runId, "--format", "atif", "--cwd", project.cwd, "--json", ...extra]);
  return { code: r.code, out: r.json<ExportOut>() };
}

function readTrajectory(rel: string): { text: string; t: AtifTrajectory } {
  const text = readFileSync(join(project.cwd, rel), "utf8");
  return { text, t: JSON.parse(text) as AtifTrajectory };
}

describe("export --format atif", () => {
  test("a Codex seat: reasoning, message and one shell call per step, linked results, per-turn usage in final_metrics", async () => {
    const runId = await writeCodexRun(project.cwd);
    const { code, out } = await exportRun(runId);
    expect(code).toBe(0);
    expect(out.ok).toBe(true);
    expect(out.schemaVersion).toBe("ATIF-v1.4");
    expect(out.outDir).toBe(`.humanish/exports/${runId}/atif`);
    expect(out.exported).toEqual([
      { participantId: "p1", path: `.humanish/exports/${runId}/atif/p1.trajectory.json`, steps: 6, toolCalls: 3, screenshots: 0, images: [] },
    ]);
    const { text, t } = readTrajectory(out.exported[0]!.path);
    expect(validateAtif(t).errors).toEqual([]);
    expect(text).not.toContain(SECRET);
    expect(t.schema_version).toBe("ATIF-v1.4");
    expect(t.session_id).toBe(`${runId}/p1`);
    expect(t.agent).toMatchObject({ name: "codex", version: "0.171.0", extra: { actor_type: "codex-exec", requested_model: "gpt-5.1-codex-mini" } });
    expect(t.steps.map((s) => [s.step_id, s.source])).toEqual([
      [1, "user"],
      [2, "agent"],
      [3, "agent"],
      [4, "agent"],
      [5, "agent"],
      [6, "system"],
    ]);
    expect(t.steps[0]!.message).toBe("Tasks:\npretty-print: Pretty-print orders.json into pretty.json.\nopen-total: Write the open total to open-total.txt.");
    const s2 = t.steps[1]!;
    expect(s2.reasoning_content).toBe("I have never used jq; its help first.");
    expect(s2.tool_calls).toEqual([{ tool_call_id: "command-001", function_name: "shell", arguments: { command: "jq --help" } }]);
    expect(s2.observation?.results).toEqual([
      { source_call_id: "command-001", content: "exit 0\nUsage: jq [OPTIONS] FILTER\nOPENAI_API_KEY=[REDACTED_SECRET]" },
    ]);
    expect(t.steps[2]!.message).toBe("The help shows FILTER first; trying `.`.");
    expect(t.steps[2]!.tool_calls?.[0]).toMatchObject({ tool_call_id: "command-002", arguments: { command: "jq . orders.json > pretty.json" } });
    expect(t.steps[3]!.tool_calls?.[0]).toMatchObject({ function_name: "apply_patch", arguments: { summary: "file change: add notes.md" } });
    expect(t.steps[4]!.message).toBe("Done: pretty.json written. The help never says what `.` means.");
    // Codex reports usage per turn, after the fact: no step claims metrics it does not have.
    expect(t.steps.some((s) => s.metrics !== undefined)).toBe(false);
    expect(t.steps[5]!.message).toBe(
      "participant passed (turn_completed): turn completed; hidden checks decide; hidden checks: pretty-print passed, open-total failed",
    );
    expect(t.final_metrics).toMatchObject({
      total_prompt_tokens: 5200,
      total_completion_tokens: 310,
      total_cached_tokens: 4096,
      total_cost_usd: 0.00123,
      total_steps: 6,
    });
  });

  test("a computer-use seat: one agent step per response, actions as computer calls, screenshots as observations, cost only where priced", async () => {
    const runId = await writeComputerUseRun(project.cwd);
    const { code, out } = await exportRun(runId, "--out", "atif-out");
    expect(code).toBe(0);
    expect(out.outDir).toBe("atif-out");
    expect(out.exported[0]).toMatchObject({ participantId: "p1", path: "atif-out/p1.trajectory.json", toolCalls: 2, screenshots: 2 });
    const { t } = readTrajectory("atif-out/p1.trajectory.json");
    expect(validateAtif(t).errors).toEqual([]);
    expect(t.agent).toMatchObject({ name: "humanish-openai-computer-use", model_name: "computer-use-preview" });
    expect(t.steps.map((s) => s.source)).toEqual(["user", "system", "agent", "agent", "system", "system"]);
    const first = t.steps[1]!;
    expect(first.observation?.results).toEqual([{ content: "screenshot: p1/images/p1-turn-00.png" }]);
    const turn1 = t.steps[2]!;
    expect(turn1.model_name).toBe("computer-use-preview");
    expect(turn1.reasoning_content).toBe("The input box is at the top.");
    expect(turn1.tool_calls).toEqual([
      { tool_call_id: "ui_action-005", function_name: "computer", arguments: { type: "click", x: 320, y: 140 } },
      { tool_call_id: "ui_action-006", function_name: "computer", arguments: { type: "type", textLength: 9 } },
    ]);
    expect(turn1.observation?.results).toEqual([
      { source_call_id: "ui_action-005", content: "dispatched: click (320, 140)" },
      { source_call_id: "ui_action-006", content: "dispatched: type 9 chars\nscreenshot: p1/images/p1-turn-01.png" },
    ]);
    expect(turn1.metrics).toEqual({ prompt_tokens: 1800, completion_tokens: 120, cached_tokens: 0, cost_usd: 0.0042, extra: { reasoning_tokens: 40 } });
    expect(turn1.extra).toMatchObject({
      screenshots: ["p1/images/p1-turn-01.png"],
      safety_checks: [{ status: "acknowledged", title: "safety check malicious_instructions" }],
    });
    // The second response's cost is unknown in the ledger: no cost_usd, never a made-up 0.
    expect(t.steps[3]!.metrics).toEqual({ prompt_tokens: 3900, completion_tokens: 60, cached_tokens: 1792, extra: { reasoning_tokens: 0 } });
    expect(t.steps[3]!.message).toBe("The todo is added.");
    expect(t.steps[4]!.message).toBe("stopWhen rule added matched");
    expect(t.final_metrics?.total_cost_usd).toBeUndefined();
    expect(t.final_metrics?.extra).toMatchObject({ cost_unknown: "no_rate_for_model" });
  });

  test("every screenshot reference resolves from the export directory: the images are copied beside the trajectory, byte for byte", async () => {
    const runId = await writeComputerUseRun(project.cwd, "cu-images");
    const { code, out } = await exportRun(runId, "--out", "atif-images");
    expect(code).toBe(0);
    expect(out.exported[0]!.images).toEqual(["atif-images/p1/images/p1-turn-00.png", "atif-images/p1/images/p1-turn-01.png"]);
    const trajectoryPath = join(project.cwd, out.exported[0]!.path);
    const { t } = readTrajectory(out.exported[0]!.path);
    const refs = new Set<string>();
    for (const s of t.steps) {
      for (const r of (s.extra?.screenshots as string[] | undefined) ?? []) refs.add(r);
      for (const res of s.observation?.results ?? []) for (const m of (res.content ?? "").matchAll(/screenshot: (\S+)/g)) refs.add(m[1]!);
    }
    expect(refs.size).toBe(2);
    const runDir = join(project.cwd, ".humanish", "runs", runId);
    for (const ref of refs) {
      expect(ref.startsWith("/")).toBe(false);
      const at = join(dirname(trajectoryPath), ref);
      expect(existsSync(at)).toBe(true);
      // The same bytes as the bundle's (the run's own copy is named screenshots/<file>).
      expect(readFileSync(at)).toEqual(readFileSync(join(runDir, "screenshots", basename(ref))));
    }
    // The export reads on its own: moved elsewhere, every reference still resolves.
    const moved = join(project.cwd, "moved-export");
    renameSync(join(project.cwd, "atif-images"), moved);
    for (const ref of refs) expect(existsSync(join(moved, ref))).toBe(true);
  });

  test("a symlinked image folder in --out is refused before anything is written", async () => {
    const runId = await writeComputerUseRun(project.cwd, "cu-images-link");
    mkdirSync(join(project.cwd, "atif-linked"), { recursive: true });
    mkdirSync(join(project.cwd, "elsewhere-images"), { recursive: true });
    symlinkSync(join(project.cwd, "elsewhere-images"), join(project.cwd, "atif-linked", "p1"));
    const r = await exportRun(runId, "--out", "atif-linked");
    expect([r.code, r.out.error?.code]).toEqual([2, "HUMANISH_EXPORT_TARGET_EXISTS"]);
    expect(existsSync(join(project.cwd, "atif-linked", "p1.trajectory.json"))).toBe(false);
    expect(existsSync(join(project.cwd, "elsewhere-images", "images"))).toBe(false);
  });

  test('output: an existing file is replaced only with --force, a symlink at a target never followed, and --out "" refused', async () => {
    const runId = await writeCodexRun(project.cwd, "codex-export-out");
    expect((await exportRun(runId, "--out", "out-1")).code).toBe(0);
    const target = join(project.cwd, "out-1", "p1.trajectory.json");
    writeFileSync(target, "mine");
    const again = await exportRun(runId, "--out", "out-1");
    expect(again.code).not.toBe(0);
    expect(again.out.error?.code).toBe("HUMANISH_EXPORT_TARGET_EXISTS");
    expect(readFileSync(target, "utf8")).toBe("mine");
    expect((await exportRun(runId, "--out", "out-1", "--force")).code).toBe(0);
    expect(JSON.parse(readFileSync(target, "utf8")).schema_version).toBe("ATIF-v1.4");
    // A symlink at the target name: refused, even with --force, and the victim is never created.
    const victim = join(project.cwd, "victim.json");
    mkdirSync(join(project.cwd, "out-2"));
    symlinkSync(victim, join(project.cwd, "out-2", "p1.trajectory.json"));
    const link = await exportRun(runId, "--out", "out-2", "--force");
    expect(link.out.error?.code).toBe("HUMANISH_EXPORT_TARGET_EXISTS");
    expect(link.out.error?.message).toContain("is a symlink");
    expect(existsSync(victim)).toBe(false);
    expect((await exportRun(runId, "--out", "")).out.error?.code).toBe("HUMANISH_EXPORT_OUT_INVALID");
    // A verified live run whose only seat never started: an error, and no empty directory left behind.
    await writeLiveTerminal(project.cwd, "export-no-trace", { noTrace: true });
    const none = await exportRun("export-no-trace", "--out", "out-3");
    expect(none.out.error?.code).toBe("HUMANISH_EXPORT_NOTHING_TO_EXPORT");
    expect(existsSync(join(project.cwd, "out-3"))).toBe(false);
  });

  test("refused: a dry run, a tampered run (nothing written), a missing or unknown --format", async () => {
    await writeDryRunTerminal(project.cwd, "export-dry-1");
    expect((await exportRun("export-dry-1")).out.error?.code).toBe("HUMANISH_EXPORT_DRY_RUN");
    const runId = await writeCodexRun(project.cwd, "codex-export-tampered");
    const trace = join(project.cwd, ".humanish", "runs", runId, "actor.json");
    writeFileSync(trace, readFileSync(trace, "utf8").replace("jq --help", "jq --halp"));
    const tampered = await exportRun(runId, "--out", "tampered-out");
    expect(tampered.code).not.toBe(0);
    expect(tampered.out.error?.code).toBe("HUMANISH_INVALID_RUN_BUNDLE");
    expect(tampered.out.error?.message).toContain(`run ${runId} does not verify (failed: `);
    expect(() => readFileSync(join(project.cwd, "tampered-out", "p1.trajectory.json"))).toThrow();
    const noFormat = await cli(["export", "--run", runId, "--cwd", project.cwd, "--json"]);
    expect(noFormat.json<ExportOut>().error?.code).toBe("HUMANISH_EXPORT_FORMAT_REQUIRED");
    const badFormat = await cli(["export", "--run", runId, "--format", "otlp", "--cwd", project.cwd, "--json"]);
    expect(badFormat.json<ExportOut>().error).toMatchObject({
      code: "HUMANISH_EXPORT_FORMAT_UNSUPPORTED",
      message: expect.stringContaining("supported: atif"),
    });
  });
});

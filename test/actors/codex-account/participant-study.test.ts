/**
 * `local-agent` (`localAgent: codex`) end to end: the REAL pinned Codex CLI app-server, launched
 * by the restricted launcher with a fake file-backed ChatGPT login and the test-only provider
 * override, talks to the fake Responses server; its `humanish_ui` calls drive real TodoMVC in two
 * real guest desktops through the browser route and the study runner. Each seat's first two
 * calls (an oversized narration, five actions) are refused with nothing dispatched; the rest
 * pass 3/3 hidden checks; the bundle verifies with account-unknown cost and every app-server and
 * guest released by exact id. Numeric spend caps are refused before any run directory exists.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { LabConfig } from "../../../src/lab/index.ts";
import { runBrowserStudy } from "../../../src/routes/browser/index.ts";
import { studyContext } from "../../routes/browser/support.ts";
import { containersOfTestRun, freePort, guestPrereqs, ROOT, TEST_LABEL } from "../../runtime/guest-support.ts";
import { filesUnder as files, todoMvcLab } from "../../support/browser-study.ts";
import { codexUiSession, todoUiCalls } from "../../support/fake-openai/codex-ui.ts";
import { codexWorld } from "./support.ts";

const cwd = mkdtempSync(join(tmpdir(), "humanish-local-agent-"));
symlinkSync(join(ROOT, "node_modules"), join(cwd, "node_modules"));
afterAll(() => rmSync(cwd, { recursive: true, force: true }));

function localAgentLab(port: number, caps = "    maxMinutes: 4"): LabConfig {
  const actor = "    localAgent: codex\n    mission: Use the todo app like a new user.\n    lanes:\n      - {id: ana}\n      - {id: ben, persona: hurried}";
  return todoMvcLab("local-agent", { id: "local-agent-route", port, actor, caps });
}

const json = (path: string) => JSON.parse(readFileSync(path, "utf8"));

describe("local-agent codex on the browser route (real Codex app-server, real guests)", () => {
  test("two seats complete TodoMVC through humanish_ui; refused calls dispatch nothing; the bundle verifies with account-unknown cost", async () => {
    const { docker, testRun } = await guestPrereqs();
    const world = codexWorld(codexUiSession(todoUiCalls({ withRefusals: true })));
    try {
      const config = localAgentLab(freePort());
      const ctx = { ...studyContext(config, `local-agent-${testRun}`, cwd), env: world.env };
      const res = await runBrowserStudy(ctx, { docker, labels: { [TEST_LABEL]: testRun } });
      expect(res.error).toBeUndefined();
      expect(res.verify.ok).toBe(true);
      expect(res.ok).toBe(true);
      // Statuses with their reasons first, so a failing seat says why.
      const run = json(join(res.runDir, "run.json"));
      expect(
        run.participants.map((p: { actorType: string; status: string; reason: string }) => [p.actorType, p.status, p.status === "passed" ? "" : p.reason]),
      ).toEqual([
        ["local-agent", "passed", ""],
        ["local-agent", "passed", ""],
      ]);
      expect(res.tasks.filter((t) => t.passed).length).toBe(6);
      // Each seat: one guest and one app-server, both released by exact id.
      const proofs = run.cleanup.map((c: { id: string; kind: string; outcome: string; participantId: string }) => [c.participantId, c.kind, c.outcome]);
      for (const seat of ["ana", "ben"]) {
        expect(proofs).toContainEqual([seat, "desktop", "released"]);
        expect(proofs).toContainEqual([seat, "app-server", "released"]);
      }
      // No number for an account seat's spend: a null line with its reason.
      const modelLines = run.cost.lines.filter((l: { kind: string }) => l.kind === "model-tokens");
      expect(modelLines.map((l: { usd: number | null; reason: string }) => [l.usd, l.reason])).toEqual([
        [null, "account-unknown"],
        [null, "account-unknown"],
      ]);

      for (const seat of ["ana", "ben"]) {
        const trace = json(join(res.runDir, `seats/${seat}/actor.json`));
        expect(trace).toMatchObject({ actorType: "local-agent", provider: "codex", protocol: "cua-loop", lane: "computer-use" });
        expect(trace.counts).toMatchObject({ turns: 6, refusedCalls: 2, tasksCompleted: 3, tasksTotal: 3 });
        expect(trace.estimatedCost).toMatchObject({ estimatedCostUsd: null, reason: "account-unknown" });
        expect(trace.runtime).toMatchObject({ package: "@openai/codex", observedVersion: "0.171.0", versionStatus: "verified" });
        // The two refused calls dispatched nothing: only the eight actions of the four good calls ran.
        const dispatched = trace.items.filter((i: { kind: string; status: string }) => i.kind === "ui_action" && i.status === "dispatched");
        expect(dispatched.length).toBe(8);
        expect(trace.items.filter((i: { status?: string }) => i.status === "refused/not_dispatched").length).toBe(2);
        // Frames: the start and one after each good call (refused calls re-send the last frame).
        expect(existsSync(join(res.runDir, `screenshots/${seat}/turn-00-start.png`))).toBe(true);
        expect(existsSync(join(res.runDir, `screenshots/${seat}/turn-06.png`))).toBe(true);
        expect(existsSync(join(res.runDir, `screenshots/${seat}/turn-01.png`))).toBe(false);
        // The final answer is recorded (scrubbed); typed text only as a length.
        expect(trace.items.some((i: { title: string; status?: string }) => i.title === "final answer" && i.status === "reached")).toBe(true);
        const actions = trace.items.filter((i: { kind: string }) => i.kind === "ui_action");
        expect(JSON.stringify(actions)).not.toContain("Buy milk");
        expect(actions.filter((i: { action?: { type: string } }) => i.action?.type === "type").map((i: { action: unknown }) => i.action)).toEqual([
          { type: "type", chars: 8 },
          { type: "type", chars: 12 },
        ]);
      }

      // What the model saw: humanish_ui, plus at most the CLI's built-ins that the launcher refuses
      // when called (request_user_input is an asynchronous question; apply_patch a raw tool call).
      const bodies = world.fake.requests.filter((r) => r.path === "/v1/responses").map((r) => r.body ?? {});
      expect(bodies.length).toBe(14);
      for (const b of bodies) {
        const names = ((b.tools ?? []) as { name?: string }[]).map((t) => String(t.name));
        expect(names).toContain("humanish_ui");
        for (const n of names) expect(["humanish_ui", "request_user_input", "apply_patch"]).toContain(n);
      }
      const last = JSON.stringify(bodies.at(-1)?.input ?? []);
      expect(last).toContain("data:image/png;base64,");
      expect(last).toContain("narration is 2100 characters");
      expect(last).toContain("actions must list 1–4 actions (got 5)");

      // The login's tokens never reach the bundle.
      const token = JSON.parse(readFileSync(world.authPath, "utf8")).tokens.access_token as string;
      for (const f of files(res.runDir)) expect(readFileSync(f).includes(token)).toBe(false);
      expect(await containersOfTestRun(docker, testRun)).toEqual([]);
    } finally {
      await world.cleanup();
    }
  }, 300_000);

  test("a dry run writes a contract bundle that verifies, without starting Codex", async () => {
    const lab = localAgentLab(freePort());
    const res = await runBrowserStudy(
      studyContext({ ...lab, scenario: { ...lab.scenario, mode: "dry-run" } } as LabConfig, `local-agent-dry-${Date.now()}`, cwd, "dry-run"),
    );
    expect(res.ok).toBe(true);
    expect(res.verify.ok).toBe(true);
    expect(res.tasks.map((t) => t.status)).toEqual(Array(6).fill("not_run"));
    const lifecycle = readFileSync(join(res.runDir, "run.json"), "utf8");
    expect(lifecycle).toContain("local agent codex");
  }, 30_000);

  test("an API-key Codex login is refused by the readiness check before any run directory exists (no model turn)", async () => {
    const world = codexWorld(codexUiSession([]), "apikey");
    try {
      const runId = `local-agent-apikey-${Date.now()}`;
      await expect(runBrowserStudy({ ...studyContext(localAgentLab(freePort()), runId, cwd), env: world.env })).rejects.toMatchObject({
        code: "HUMANISH_CODEX_UNSUPPORTED_AUTH",
      });
      expect(existsSync(join(cwd, ".humanish/runs", runId))).toBe(false);
      expect(world.fake.requests.filter((r) => r.path === "/v1/responses")).toEqual([]);
    } finally {
      await world.cleanup();
    }
  }, 60_000);

  test("a numeric spend cap is refused before any run directory exists (billing is account-unknown)", async () => {
    const lab = localAgentLab(freePort());
    for (const caps of [{ maxUsd: 1 }, { maxTotalUsd: 0 }]) {
      // Built past the parser (which refuses it too), as a caller assembling a config could.
      const config = { ...lab, scenario: { ...lab.scenario, caps: { ...lab.scenario.caps, ...caps } } } as LabConfig;
      const runId = `local-agent-caps-${Date.now()}`;
      await expect(runBrowserStudy(studyContext(config, runId, cwd))).rejects.toMatchObject({
        code: "HUMANISH_CODEX_CAP_UNENFORCEABLE",
        message: expect.stringContaining(Object.keys(caps)[0]!),
      });
      expect(existsSync(join(cwd, ".humanish/runs", runId))).toBe(false);
    }
  }, 30_000);
});

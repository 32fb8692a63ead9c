/**
 * `openai-computer-use` through the browser route and the study runner: a dry run writes a
 * contract bundle that verifies; a live 2-seat study drives real TodoMVC in two real guests
 * with the real SDK against the fake Responses server (key in the host process only), passes
 * 3/3 hidden checks per seat, prices every request and verifies; an unpriced model under a
 * positive cap and a missing key are refused before any run directory exists.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type LabConfig, loadLab } from "../../../src/lab/index.ts";
import { runBrowserStudy } from "../../../src/routes/browser/index.ts";
import { containersOfTestRun, freePort, guestPrereqs, ROOT, TEST_LABEL } from "../../runtime/guest-support.ts";
import { filesUnder as files, todoMvcLab } from "../../support/browser-study.ts";
import { cuaSession, todoTurns } from "../../support/fake-openai/computer-use.ts";
import { startFakeOpenAI } from "../../support/fake-openai/server.ts";
import { studyContext } from "./support.ts";

const cwd = mkdtempSync(join(tmpdir(), "humanish-browser-cua-"));
symlinkSync(join(ROOT, "node_modules"), join(cwd, "node_modules"));
afterAll(() => rmSync(cwd, { recursive: true, force: true }));
const KEY = "sk-test-cua-route-5f1d2c";

function cuaLab(o: { port: number; model: string; maxUsd: number; seats: string }): LabConfig {
  const actor = `    model: ${o.model}\n    maxOutputTokens: 1024\n    mission: Use the todo app like a new user.\n${o.seats}`;
  return todoMvcLab("openai-computer-use", { id: "cua-route", port: o.port, actor, caps: `    maxUsd: ${o.maxUsd}\n    maxTotalUsd: 4\n    maxMinutes: 3` });
}

describe("openai-computer-use on the browser route", () => {
  test("dry run of the example lab: a contract bundle that verifies, no key needed", async () => {
    const loaded = await loadLab(join(ROOT, "labs/todomvc-computer-use.yaml"), ROOT);
    const res = await runBrowserStudy(studyContext(loaded.config, `cua-dry-${Date.now()}`, cwd, "dry-run"));
    expect(res.ok).toBe(true);
    expect(res.verify.ok).toBe(true);
    expect(res.tasks.map((t) => t.status)).toEqual(["not_run", "not_run", "not_run"]);
  }, 30_000);

  test("two seats on two real guests, each 3/3; requests priced from the ledger; the key never reaches the bundle", async () => {
    const { docker, testRun } = await guestPrereqs();
    const fake = startFakeOpenAI({ scenario: cuaSession({ turns: todoTurns("pointer"), batched: true, byReplay: true }), apiKey: KEY });
    try {
      const config = cuaLab({ port: freePort(), model: "gpt-5.1", maxUsd: 2, seats: "    lanes:\n      - {id: ana}\n      - {id: ben, persona: hurried}" });
      const ctx = { ...studyContext(config, `cua-live-${testRun}`, cwd), env: { PATH: process.env.PATH, OPENAI_API_KEY: KEY, OPENAI_BASE_URL: fake.baseURL } };
      const res = await runBrowserStudy(ctx, { docker, labels: { [TEST_LABEL]: testRun } });
      expect(res.error).toBeUndefined();
      expect(res.ok).toBe(true);
      expect(res.verify.ok).toBe(true);
      expect(res.tasks.filter((t) => t.passed).length).toBe(6);
      // 4 requests per seat (3 acted turns + the final message), none refused.
      expect(fake.requests.filter((r) => r.path === "/v1/responses").length).toBe(8);
      expect(fake.rejectedForCallOutputs).toEqual([]);
      const run = JSON.parse(readFileSync(join(res.runDir, "run.json"), "utf8"));
      expect(run.participants.map((p: { actorType: string; status: string }) => [p.actorType, p.status])).toEqual([
        ["openai-computer-use", "passed"],
        ["openai-computer-use", "passed"],
      ]);
      for (const seat of ["ana", "ben"]) {
        const trace = JSON.parse(readFileSync(join(res.runDir, `seats/${seat}/actor.json`), "utf8"));
        expect(trace.protocol).toBe("cua-loop");
        expect(trace.lane).toBe("computer-use");
        const ledger = JSON.parse(readFileSync(join(res.runDir, `seats/${seat}/model-ledger.json`), "utf8"));
        expect(ledger.requests).toBe(4);
        expect(ledger.usd).toBeGreaterThan(0);
        expect(existsSync(join(res.runDir, `screenshots/${seat}/turn-03.png`))).toBe(true);
      }
      for (const f of files(res.runDir)) expect(readFileSync(f).includes(KEY)).toBe(false);
      expect(await containersOfTestRun(docker, testRun)).toEqual([]);
    } finally {
      await fake.close();
    }
  }, 240_000);

  test("the model says it reached the goal without acting while every hidden check fails: 0/1 reached the goal, its claim kept as a contradiction", async () => {
    const { docker, testRun } = await guestPrereqs();
    // No computer call at all: the first reply is the final message claiming success.
    const fake = startFakeOpenAI({ scenario: cuaSession({ turns: [], batched: true, byReplay: true }), apiKey: KEY });
    try {
      const config = cuaLab({ port: freePort(), model: "gpt-5.1", maxUsd: 2, seats: "    count: 1" });
      const ctx = { ...studyContext(config, `cua-claim-${testRun}`, cwd), env: { PATH: process.env.PATH, OPENAI_API_KEY: KEY, OPENAI_BASE_URL: fake.baseURL } };
      const res = await runBrowserStudy(ctx, { docker, labels: { [TEST_LABEL]: testRun } });
      expect(fake.requests.filter((r) => r.path === "/v1/responses").length).toBe(1);
      expect(res.tasks.map((t) => t.status)).toEqual(["failed", "failed", "failed"]);
      expect(res.verdict).toStartWith("0/1 reached the goal;");
      expect(res.participants).toEqual([{ id: "p1", status: "incomplete", completionReason: "turn_completed", claimed: "passed", contradicted: true }]);
      expect(res.verify.ok).toBe(true);
      const run = JSON.parse(readFileSync(join(res.runDir, "run.json"), "utf8"));
      expect(run.study.goalRule).toBe("checks-only");
      expect(run.participants[0]).toMatchObject({ claimed: "passed", goalCheck: { by: "tasks", reached: false, detail: "0 of 3 hidden check(s) passed" } });
      expect(run.participants[0].reason).toContain("participant believed it succeeded; the checks say it did not");
      expect(run.review.participants).toMatchObject({ total: 1, reachedGoal: 0 });
      const trace = JSON.parse(readFileSync(join(res.runDir, "actors/p1.json"), "utf8"));
      expect([trace.status, trace.completionReason]).toEqual(["incomplete", "turn_completed"]);
      expect(res.verification?.checks.find((c) => c.name === "headline from checks")?.message).toBe(
        "0/1 reached the goal by the hidden checks (rule checks-only); 1 participant believed it succeeded; the checks say it did not: p1",
      );
      expect(await containersOfTestRun(docker, testRun)).toEqual([]);
    } finally {
      await fake.close();
    }
  }, 240_000);

  test("refused before any run directory: an unpriced model under a positive cap (named), a missing key", async () => {
    const unpriced = cuaLab({ port: freePort(), model: "my-own-cua", maxUsd: 1, seats: "    count: 1" });
    const runId = `cua-unpriced-${Date.now()}`;
    const ctx = { ...studyContext(unpriced, runId, cwd), env: { PATH: process.env.PATH, OPENAI_API_KEY: KEY } };
    await expect(runBrowserStudy(ctx)).rejects.toMatchObject({ code: "HUMANISH_CUA_MODEL_UNPRICED", message: expect.stringContaining("my-own-cua") });
    expect(existsSync(join(cwd, ".humanish/runs", runId))).toBe(false);
    const priced = cuaLab({ port: freePort(), model: "gpt-5.1", maxUsd: 1, seats: "    count: 1" });
    await expect(runBrowserStudy(studyContext(priced, `cua-nokey-${Date.now()}`, cwd))).rejects.toMatchObject({ code: "HUMANISH_CUA_KEY_MISSING" });
  }, 30_000);
});

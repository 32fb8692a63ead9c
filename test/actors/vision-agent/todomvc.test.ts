/**
 * `vision-agent` end to end: the browser route and the study runner give the participant a real
 * guest with real TodoMVC; the real `openai` SDK talks to the fake Responses server, which plays
 * a vision model calling `humanish_ui`. An unpriced model runs under a token cap and passes the
 * hidden checks; a model that sends text that is not JSON, an unknown action kind, an off-screen
 * click and another tool gets each call answered with its reason and goes on; an unpriced model
 * under a USD cap is refused before any run directory exists.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { isHumanishError } from "../../../src/errors.ts";
import type { LabConfig } from "../../../src/lab/index.ts";
import { runBrowserStudy } from "../../../src/routes/browser/index.ts";
import { studyContext } from "../../routes/browser/support.ts";
import { containersOfTestRun, freePort, guestPrereqs, ROOT, TEST_LABEL } from "../../runtime/guest-support.ts";
import { filesUnder, todoMvcLab } from "../../support/browser-study.ts";
import { startFakeOpenAI } from "../../support/fake-openai/server.ts";
import { functionOutputs, todoCalls, ui, visionSession } from "../../support/fake-openai/vision.ts";

const cwd = mkdtempSync(join(tmpdir(), "humanish-vision-"));
symlinkSync(join(ROOT, "node_modules"), join(cwd, "node_modules"));
afterAll(() => rmSync(cwd, { recursive: true, force: true }));
const KEY = "sk-test-vision-7c41e9";
/** A model the rate table does not price (any vision model on any compatible endpoint). */
const MODEL = "qwen2.5-vl-72b-instruct";
const ADD_TASK_YAML = `    tasks:
      - id: add-two-todos
        goal: Add two todos, "Buy milk" and "Walk the dog".
        check:
          textIncludes: [Buy milk, Walk the dog, 2 items left]`;

function visionLab(o: { port: number; caps: string; tasks?: string }): LabConfig {
  const actor = `    model: ${MODEL}\n    maxOutputTokens: 1024\n    mission: Use the todo app like a new user.`;
  return todoMvcLab("vision-agent", {
    id: "vision-todomvc",
    port: o.port,
    actor,
    caps: `${o.caps}\n    maxMinutes: 3`,
    ...(o.tasks ? { tasks: o.tasks } : {}),
  });
}

const env = (baseURL: string) => ({ PATH: process.env.PATH, OPENAI_API_KEY: KEY, OPENAI_BASE_URL: baseURL });
const json = (path: string) => JSON.parse(readFileSync(path, "utf8"));

describe("vision-agent on the browser route", () => {
  test("an unpriced model under a token cap adds, completes and clears todos: 3/3 by the hidden checks, tokens counted, cost unknown, the key never in the bundle", async () => {
    const { docker, testRun } = await guestPrereqs();
    const fake = startFakeOpenAI({ scenario: visionSession({ calls: todoCalls(), model: MODEL }), apiKey: KEY });
    try {
      const config = visionLab({ port: freePort(), caps: "    maxTokens: 400000\n    maxTotalTokens: 800000" });
      const res = await runBrowserStudy(
        { ...studyContext(config, `vision-live-${testRun}`, cwd), env: env(fake.baseURL) },
        { docker, labels: { [TEST_LABEL]: testRun } },
      );
      expect(res.error).toBeUndefined();
      expect(res.verify.ok).toBe(true);
      expect(res.tasks.map((t) => [t.id, t.status])).toEqual([
        ["add-two-todos", "passed"],
        ["complete-one", "passed"],
        ["clear-completed", "passed"],
      ]);
      expect(res.verdict).toStartWith("1/1 reached the goal");
      const posts = fake.requests.filter((r) => r.path === "/v1/responses");
      // Four calls and the final message; every request declares the one function tool and sends a screenshot.
      expect(posts.length).toBe(5);
      for (const r of posts) {
        expect(r.body?.tools).toMatchObject([{ type: "function", name: "humanish_ui" }]);
        expect(r.body?.max_output_tokens).toBe(1024);
        expect(JSON.stringify(r.body?.input)).toContain('"type":"input_image"');
      }
      // The last request replays all four answers, each acknowledging every action as completed.
      const outputs = functionOutputs(posts.at(-1)?.body).map((o) => JSON.parse(String(o.output)));
      expect(outputs.map((o) => o.acknowledgements.map((a: { status: string }) => a.status))).toEqual([
        ["completed", "completed", "completed"],
        ["completed", "completed"],
        ["completed"],
        ["completed"],
      ]);
      const run = json(join(res.runDir, "run.json"));
      expect(run.participants[0]).toMatchObject({ actorType: "vision-agent", status: "passed", claimed: "passed" });
      const trace = json(join(res.runDir, "actors/p1.json"));
      expect([trace.actorType, trace.provider, trace.protocol, trace.lane]).toEqual(["vision-agent", "openai-compatible", "cua-loop", "computer-use"]);
      expect(trace.counts).toMatchObject({ requests: 5, refusedCalls: 0, turns: 5 });
      expect(trace.estimatedCost.estimatedCostUsd).toBeNull();
      expect(trace.tokenUsage.total).toBeGreaterThan(0);
      const ledger = json(join(res.runDir, "model-ledger-p1.json"));
      expect(ledger.requests).toBe(5);
      expect(ledger.usd).toBeNull();
      expect(ledger.observedModels).toEqual([MODEL]);
      expect(existsSync(join(res.runDir, "screenshots/p1-turn-04.png"))).toBe(true);
      for (const f of filesUnder(res.runDir)) expect(readFileSync(f).includes(KEY)).toBe(false);
      expect(await containersOfTestRun(docker, testRun)).toEqual([]);
    } finally {
      await fake.close();
    }
  }, 240_000);

  test("text that is not JSON, an unknown action, an off-screen click and another tool are each answered with the reason; the seat goes on, adds the todos and verifies", async () => {
    const { docker, testRun } = await guestPrereqs();
    const calls = [
      { raw: '{"narration": "click", "actions": [' },
      ui("I teleport to the field.", [{ kind: "teleport", x: 10, y: 10 }]),
      ui("I click far right.", [
        { kind: "click", x: 5000, y: 10 },
        { kind: "type", text: "never typed" },
      ]),
      { name: "open_url", args: { url: "http://example.com/" } },
      ...todoCalls().slice(0, 2),
    ];
    const fake = startFakeOpenAI({ scenario: visionSession({ calls, model: MODEL }), apiKey: KEY });
    try {
      const config = visionLab({ port: freePort(), caps: "    maxTokens: 600000", tasks: ADD_TASK_YAML });
      const res = await runBrowserStudy(
        { ...studyContext(config, `vision-refuse-${testRun}`, cwd), env: env(fake.baseURL) },
        { docker, labels: { [TEST_LABEL]: testRun } },
      );
      expect(res.error).toBeUndefined();
      expect(res.verify.ok).toBe(true);
      expect(res.tasks.map((t) => t.status)).toEqual(["passed"]);
      const posts = fake.requests.filter((r) => r.path === "/v1/responses");
      expect(posts.length).toBe(7);
      const outputs = functionOutputs(posts.at(-1)?.body).map((o) => JSON.parse(String(o.output)));
      expect(outputs[0]).toMatchObject({ refused: "the arguments are not JSON" });
      expect(outputs[1].refused).toStartWith("actions[0].kind");
      // The off-screen click is rejected before dispatch and the rest of that call is not dispatched.
      expect(outputs[2].acknowledgements).toEqual([
        { index: 0, status: "rejected" },
        { index: 1, status: "not_dispatched" },
      ]);
      expect(outputs[2].hint).toContain("outside the 1440×950 screenshot");
      expect(outputs[3].refused).toBe('there is no tool "open_url"; the one tool is humanish_ui');
      for (const o of [outputs[0], outputs[1], outputs[3]]) expect(o.hint).toStartWith("Nothing was dispatched.");
      const trace = json(join(res.runDir, "actors/p1.json"));
      expect(trace.counts.refusedCalls).toBe(3);
      const statuses = trace.items.filter((i: { kind: string }) => i.kind === "ui_action").map((i: { status: string }) => i.status);
      expect(statuses.slice(0, 5)).toEqual([
        "refused/not_dispatched",
        "refused/not_dispatched",
        "rejected/not_dispatched",
        "not_dispatched",
        "refused/not_dispatched",
      ]);
      // Nothing of the refused or rejected calls was typed.
      expect(JSON.stringify(trace.items)).not.toContain("never typed");
      expect(await containersOfTestRun(docker, testRun)).toEqual([]);
    } finally {
      await fake.close();
    }
  }, 240_000);

  test("three unreadable calls in a row end the seat as a harness failure; its bundle still verifies", async () => {
    const { docker, testRun } = await guestPrereqs();
    const calls = [{ raw: "not json" }, { raw: "[]" }, ui("", [])];
    const fake = startFakeOpenAI({ scenario: visionSession({ calls, model: MODEL }), apiKey: KEY });
    try {
      const config = visionLab({ port: freePort(), caps: "    maxTokens: 600000", tasks: ADD_TASK_YAML });
      const res = await runBrowserStudy(
        { ...studyContext(config, `vision-unreadable-${testRun}`, cwd), env: env(fake.baseURL) },
        { docker, labels: { [TEST_LABEL]: testRun } },
      );
      expect(fake.requests.filter((r) => r.path === "/v1/responses").length).toBe(3);
      expect(res.participants[0]).toMatchObject({ status: "failed", completionReason: "harness_error" });
      expect(res.verify.ok).toBe(true);
      const run = json(join(res.runDir, "run.json"));
      expect(run.participants[0].reason).toContain("3 humanish_ui calls in a row could not be read");
      expect(await containersOfTestRun(docker, testRun)).toEqual([]);
    } finally {
      await fake.close();
    }
  }, 240_000);

  test("a token cap the first request's worst case would pass: nothing leaves, the seat ends budget_reached by the token limit", async () => {
    const { docker, testRun } = await guestPrereqs();
    const fake = startFakeOpenAI({ scenario: visionSession({ calls: todoCalls(), model: MODEL }), apiKey: KEY });
    try {
      const config = visionLab({ port: freePort(), caps: "    maxTokens: 2000", tasks: ADD_TASK_YAML });
      const res = await runBrowserStudy(
        { ...studyContext(config, `vision-tokens-${testRun}`, cwd), env: env(fake.baseURL) },
        { docker, labels: { [TEST_LABEL]: testRun } },
      );
      expect(fake.requests.filter((r) => r.path === "/v1/responses").length).toBe(0);
      expect(res.verify.ok).toBe(true);
      const trace = json(join(res.runDir, "actors/p1.json"));
      expect([trace.completionReason, trace.stopCause]).toEqual(["budget_reached", "token_limit"]);
      expect(trace.estimatedCost).toMatchObject({ estimatedCostUsd: null, reason: "no_rate_for_model" });
      expect(trace.reason).toContain("would pass scenario.caps.maxTokens (2000 tokens)");
      const ledger = json(join(res.runDir, "model-ledger-p1.json"));
      expect([ledger.requests, ledger.refused]).toEqual([1, 1]);
      expect(await containersOfTestRun(docker, testRun)).toEqual([]);
    } finally {
      await fake.close();
    }
  }, 240_000);

  test("an unpriced model under a positive USD cap is refused before any run directory exists, naming the cap", async () => {
    const config = visionLab({ port: freePort(), caps: "    maxUsd: 1" });
    const runId = `vision-unpriced-${Date.now()}`;
    const err = await runBrowserStudy({ ...studyContext(config, runId, cwd), env: env("http://127.0.0.1:9/v1") }).catch((e) => e);
    expect(isHumanishError(err) && err.code).toBe("HUMANISH_VISION_MODEL_UNPRICED");
    expect((err as Error).message).toContain("scenario.caps.maxUsd");
    expect(existsSync(join(cwd, ".humanish/runs", runId))).toBe(false);
  });
});

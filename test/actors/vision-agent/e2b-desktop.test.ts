/**
 * `vision-agent` on `execution.target: e2b-desktop`, with no code of its own in the lane: the
 * real `@e2b/desktop` SDK against the local E2B-compatible server (each sandbox a real container
 * of the desktop template), the real `openai` SDK against the fake Responses server playing a
 * vision model; TodoMVC served inside the desktop passes 3/3 under a token cap, the desktop is
 * released by exact id and the bundle verifies.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseLab } from "../../../src/lab/index.ts";
import { runBrowserStudy } from "../../../src/routes/browser/index.ts";
import { studyContext } from "../../routes/browser/support.ts";
import { filesUnder, TODO_TASKS_YAML } from "../../support/browser-study.ts";
import { type E2BServer, startE2BServer } from "../../support/e2b-server/index.ts";
import { startFakeOpenAI } from "../../support/fake-openai/server.ts";
import { ui, visionSession } from "../../support/fake-openai/vision.ts";

const KEY = "sk-test-vision-e2b-3b8d";
const MODEL = "qwen2.5-vl-72b-instruct";
const cwd = mkdtempSync(join(tmpdir(), "humanish-vision-e2b-"));
let e2b: E2BServer;

beforeAll(async () => {
  e2b = await startE2BServer();
}, 600_000);

afterAll(async () => {
  await e2b?.close();
  rmSync(cwd, { recursive: true, force: true });
}, 120_000);

/** TodoMVC at 1440×950 on the E2B desktop (the XFCE panel on top), as in the lane's own e2e test. */
const TODO = { newTodo: { x: 719, y: 293 }, firstToggle: { x: 464, y: 356 }, clearCompleted: { x: 918, y: 465 } };
const click = (p: { x: number; y: number }) => ({ kind: "click", x: p.x, y: p.y });

describe("vision-agent on an E2B desktop", () => {
  test("TodoMVC served inside the desktop: 3/3 hidden checks under a token cap, released by exact id, the bundle verifies, no key on disk", async () => {
    const calls = [
      ui("Add the first todo.", [click(TODO.newTodo), { kind: "type", text: "Buy milk" }, { kind: "keypress", keys: ["ENTER"] }]),
      ui("And the second.", [
        { kind: "type", text: "Walk the dog" },
        { kind: "keypress", keys: ["ENTER"] },
      ]),
      ui("Tick Buy milk.", [click(TODO.firstToggle)]),
      ui("Clear it.", [click(TODO.clearCompleted)]),
    ];
    const fake = startFakeOpenAI({ scenario: visionSession({ calls, model: MODEL }), apiKey: KEY });
    const created: string[] = [];
    try {
      const parsed = parseLab(`schema: humanish.lab.v2
id: vision-e2b
subject:
  source: app-url
  appUrl: http://127.0.0.1:4173/
  serve:
    static:
      root: embedded:todomvc-vanillajs
actors:
  - type: vision-agent
    model: ${MODEL}
    maxOutputTokens: 1024
    mission: Use the todo app like a new user.
${TODO_TASKS_YAML}
execution:
  target: e2b-desktop
scenario:
  mode: live
  caps:
    maxTokens: 400000
    maxMinutes: 3
`);
      if (!parsed.ok) throw new Error(parsed.error.message);
      const ctx = {
        ...studyContext(parsed.config, `vision-e2b-${Date.now()}`, cwd),
        env: { PATH: process.env.PATH, OPENAI_API_KEY: KEY, OPENAI_BASE_URL: fake.baseURL, ...e2b.env() },
      };
      const res = await runBrowserStudy(ctx, { onDesktopCreated: (_p, id) => created.push(id) });
      expect(res.error).toBeUndefined();
      expect(res.verify.ok).toBe(true);
      expect(res.tasks.map((t) => t.status)).toEqual(["passed", "passed", "passed"]);
      expect(created.length).toBe(1);
      for (const id of created) expect(e2b.alive()).not.toContain(id);
      const run = JSON.parse(readFileSync(join(res.runDir, "run.json"), "utf8"));
      expect([run.target, run.participants[0].actorType, run.participants[0].status]).toEqual(["e2b-desktop", "vision-agent", "passed"]);
      const trace = JSON.parse(readFileSync(join(res.runDir, "actors/p1.json"), "utf8"));
      expect(trace.ids.sessionId).toBe(created[0]);
      for (const f of filesUnder(res.runDir)) expect(readFileSync(f).includes(KEY)).toBe(false);
    } finally {
      await fake.close();
    }
  }, 300_000);
});

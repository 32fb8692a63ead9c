/**
 * The local-agent participant's pure parts: judging `humanish_ui` calls (bounds, frame, key
 * names), the tool result, the final answer, and the trace projection; then the seat driver over
 * a scripted account session (it calls the tool exactly as the app-server relays a model's
 * calls) and an in-memory desktop that answers with real PNG frames.
 */
import { describe, expect, test } from "bun:test";
import { PNG } from "pngjs";
import { localAgentBrief, MAX_REFUSED_CALLS, runLocalAgentSeat } from "../../../src/actors/codex-account/participant.ts";
import {
  FINAL_ANSWER_SCHEMA,
  frameDataUrl,
  judgeUiCall,
  MAX_NARRATION_CHARS,
  parseFinalAnswer,
  UI_TOOL,
  uiToolResult,
} from "../../../src/actors/codex-account/participant-tool.ts";
import { localAgentCostLine, localAgentTrace } from "../../../src/actors/codex-account/participant-trace.ts";
import type { CodexAccountSession, CodexTurnInput, CodexTurnResult } from "../../../src/actors/codex-account/types.ts";
import type { BrowserAction, BrowserControlExecutor } from "../../../src/browser-control/index.ts";
import { ActorTraceSchema, CostLineSchema } from "../../../src/bundle/schemas.ts";
import { parseLab } from "../../../src/lab/index.ts";
import { makePng } from "../../support/png.ts";

const FRAME = { width: 200, height: 100 };
const click = (x: number, y: number) => ({ kind: "click", x, y });

describe("judging a humanish_ui call", () => {
  test("a well-formed call: actions in order, key names mapped to the guest's table, irrelevant nulls dropped", () => {
    const j = judgeUiCall(
      {
        narration: "I click the field and type.",
        actions: [
          { ...click(10, 20), dx: null },
          { kind: "type", text: "Buy milk" },
          { kind: "keypress", keys: ["Enter"] },
          { kind: "wait", ms: 100 },
        ],
      },
      FRAME,
    );
    expect(j.ok).toBe(true);
    if (!j.ok) return;
    expect(j.actions.map((a) => (a.ok ? a.action : a.reason))).toEqual([
      { kind: "click", x: 10, y: 20 },
      { kind: "type", text: "Buy milk" },
      { kind: "keypress", keys: ["Enter"] },
      { kind: "wait", ms: 100 },
    ]);
    // Labels never carry typed text.
    expect(j.actions.map((a) => a.label)).toEqual(["click (10, 20)", "type 8 chars", "keypress Enter", "wait 100 ms"]);
  });

  test("refused as a whole: oversized narration, no or too many actions, unknown kind or argument, bad fields", () => {
    const cases: [unknown, string][] = [
      [{ narration: "x".repeat(MAX_NARRATION_CHARS + 1), actions: [click(1, 1)] }, `narration is ${MAX_NARRATION_CHARS + 1} characters`],
      [{ narration: "ok", actions: [] }, "actions must list 1–4 actions (got 0)"],
      [{ narration: "ok", actions: Array.from({ length: 5 }, () => click(1, 1)) }, "actions must list 1–4 actions (got 5)"],
      [{ narration: "ok", actions: [{ kind: "speak", text: "hi" }] }, "actions[0]"],
      [{ narration: "ok", actions: [click(1, 1)], command: "rm -rf /" }, 'unknown argument "command"'],
      [{ narration: "ok", actions: [{ kind: "click", x: "10", y: 2 }] }, "actions[0].x"],
      [{ narration: "ok", actions: [{ kind: "type", text: "a", x: 3 }] }, "actions[0]"],
      [{ actions: [click(1, 1)] }, "narration must be a string"],
      ["click 1 1", "must be an object"],
    ];
    for (const [args, why] of cases) {
      const j = judgeUiCall(args, FRAME);
      expect(j.ok).toBe(false);
      if (!j.ok) expect(j.reason).toContain(why);
    }
    expect(MAX_NARRATION_CHARS).toBe(2000);
  });

  test("rejected, not refused: a point off the frame or a key the desktop lacks (the batch stops there)", () => {
    const j = judgeUiCall({ narration: "", actions: [click(5, 5), click(200, 50), { kind: "keypress", keys: ["HYPER"] }] }, FRAME);
    expect(j.ok).toBe(true);
    if (!j.ok) return;
    expect(j.actions.map((a) => a.ok)).toEqual([true, false, false]);
    const off = j.actions[1]!;
    if (!off.ok) expect(off.hint).toContain("outside the 200×100 screenshot");
    const drag = judgeUiCall(
      {
        narration: "",
        actions: [
          {
            kind: "drag",
            path: [
              { x: 1, y: 1 },
              { x: 1, y: 100 },
            ],
          },
        ],
      },
      FRAME,
    );
    expect(drag.ok && drag.actions[0]!.ok).toBe(false);
  });

  test("the declared tool and the final answer schema name exactly what the judge accepts", () => {
    expect(UI_TOOL.name).toBe("humanish_ui");
    const schema = UI_TOOL.inputSchema as {
      required: string[];
      properties: { actions: { maxItems: number; items: { properties: { kind: { enum: string[] } } } } };
    };
    expect(schema.required).toEqual(["narration", "actions"]);
    expect(schema.properties.actions.maxItems).toBe(4);
    expect(schema.properties.actions.items.properties.kind.enum).toEqual([
      "click",
      "double_click",
      "move",
      "scroll",
      "type",
      "keypress",
      "drag",
      "wait",
      "screenshot",
    ]);
    expect((FINAL_ANSWER_SCHEMA as { required: string[] }).required).toEqual(["outcome", "summary", "frictionReports"]);
  });
});

describe("the tool result and the final answer", () => {
  test("the frame passes the PNG gate into a data URL; a broken PNG never reaches the model", () => {
    const png = makePng(40, 30, { alpha: true });
    const ok = frameDataUrl(png);
    if (typeof ok === "string") throw new Error(ok);
    expect(ok.frame).toEqual({ width: 40, height: 30 });
    expect(Buffer.from(ok.url.slice("data:image/png;base64,".length), "base64").equals(Buffer.from(png))).toBe(true);
    const broken = png.slice();
    broken[40] = (broken[40]! + 1) & 0xff;
    expect(frameDataUrl(broken)).toContain("HUMANISH_PNG_");
    const r = uiToolResult({ acks: [{ index: 0, status: "completed" }], hint: undefined, url: ok.url, frame: ok.frame });
    expect(r.success).toBe(true);
    expect(r.contentItems[1]).toEqual({ type: "inputImage", imageUrl: ok.url });
    expect(JSON.parse((r.contentItems[0] as { text: string }).text)).toEqual({
      acknowledgements: [{ index: 0, status: "completed" }],
      frame: { width: 40, height: 30 },
    });
    const refused = uiToolResult({ refused: "narration is too long", hint: "h".repeat(3000), url: ok.url, frame: ok.frame });
    expect(refused.success).toBe(false);
    expect(JSON.parse((refused.contentItems[0] as { text: string }).text).hint.length).toBe(2001);
  });

  test("the final answer: exactly outcome, summary and frictionReports under the closing-account rules", () => {
    expect(parseFinalAnswer(JSON.stringify({ outcome: "reached", summary: "Added two todos.", frictionReports: ["The checkbox is tiny."] }))).toEqual({
      outcome: "reached",
      summary: "Added two todos.",
      frictionReports: ["The checkbox is tiny."],
    });
    expect(parseFinalAnswer("I reached the goal")).toBe("the final answer is not JSON");
    expect(parseFinalAnswer(JSON.stringify({ outcome: "done", summary: "s", frictionReports: [] }))).toContain("outcome must be");
    expect(parseFinalAnswer(JSON.stringify({ outcome: "blocked", summary: "s", frictionReports: [], extra: 1 }))).toContain("must have exactly");
    expect(parseFinalAnswer(JSON.stringify({ outcome: "blocked", summary: " ", frictionReports: [] }))).toContain("summary must be");
  });
});

describe("the lab", () => {
  const lab = (actor: string, scenario = "scenario:\n  mode: live\n") =>
    parseLab(`schema: humanish.lab.v2
id: la
subject:
  source: app-url
  appUrl: http://127.0.0.1:41999/
actors:
  - type: local-agent
${actor}
    mission: Use the todo app.
    tasks:
      - id: add-todo
        goal: Add a todo.
        check:
          textIncludes: [1 item left]
${scenario}`);

  test("local-agent with localAgent codex parses with several seats; the model knobs and USD caps are refused by name", () => {
    const ok = lab("    localAgent: codex\n    count: 3");
    expect(ok.ok).toBe(true);
    if (ok.ok) expect(ok.config.actors[0]).toMatchObject({ type: "local-agent", localAgent: "codex", count: 3 });
    const refusals: [string, string, string][] = [
      ["    localAgent: claude", "", "actors[0].localAgent"],
      ["    localAgent: codex\n    maxOutputTokens: 100", "", "account-unknown"],
      ["    localAgent: codex\n    model: gpt-5", "", "pinned by the qualified Codex account profile"],
      ["    localAgent: codex", "scenario:\n  mode: live\n  caps:\n    maxUsd: 1\n", "scenario.caps.maxUsd"],
      ["    localAgent: codex", "scenario:\n  mode: live\n  caps:\n    maxTotalUsd: 0\n", "scenario.caps.maxTotalUsd"],
      ["    count: 1", "", "actors[0].localAgent"],
    ];
    for (const [actor, scenario, want] of refusals) {
      const r = lab(actor, scenario || undefined);
      expect(r.ok).toBe(false);
      if (!r.ok) expect(r.error.message).toContain(want);
    }
    const minutes = lab("    localAgent: codex", "scenario:\n  mode: live\n  caps:\n    maxMinutes: 3\n");
    expect(minutes.ok).toBe(true);
  });
});

/** A desktop in memory: every observation is a real PNG; the page text follows what was typed. */
function memoryDesktop(): BrowserControlExecutor & { sent: BrowserAction[] } {
  const sent: BrowserAction[] = [];
  return {
    stallRecovery: "fail_closed",
    sent,
    async observe() {
      const typed = sent.filter((a) => a.kind === "type").map((a) => (a.kind === "type" ? a.text : ""));
      return {
        png: makePng(FRAME.width, FRAME.height, { seed: sent.length + 1, alpha: true }),
        stateSignature: `s${sent.length}`,
        url: "http://127.0.0.1:41999/",
        text: typed.join("\n"),
      };
    },
    async execute(a) {
      sent.push(a);
    },
  };
}

const IDENTITY = {
  transport: "codex-app-server-stdio",
  authClass: "chatgpt-file",
  billing: "account-unknown",
  model: "gpt-test",
  effort: "low",
  toolPolicy: "humanish-ui-v1",
  cliVersion: "0.171.0",
} as const;

/** A session that relays scripted tool calls to the seat, then answers `final`. */
function scriptedSession(calls: unknown[], final: string, seen: unknown[] = []): CodexAccountSession {
  return {
    identity: IDENTITY,
    async runTurn(t: CodexTurnInput): Promise<CodexTurnResult> {
      for (const [i, args] of calls.entries()) {
        if (t.signal.aborted)
          return { status: "interrupted", reason: "interrupted", usage: { inputTokens: 10, cachedInputTokens: null, outputTokens: null }, turnId: "t1" };
        try {
          seen.push(await t.onToolCall!({ tool: "humanish_ui", callId: `c${i}`, arguments: args }));
        } catch (e) {
          return { status: "failed", reason: (e as Error).message, usage: { inputTokens: null, cachedInputTokens: null, outputTokens: null }, turnId: "t1" };
        }
        if (t.signal.aborted)
          return { status: "interrupted", reason: "interrupted", usage: { inputTokens: 10, cachedInputTokens: null, outputTokens: null }, turnId: "t1" };
      }
      return { status: "completed", finalText: final, usage: { inputTokens: 1200, cachedInputTokens: 0, outputTokens: 80 }, turnId: "t1" };
    },
    async close() {
      return { outcome: "released", reason: "exited" };
    },
  };
}

const TASK = [{ id: "typed", goal: "Type Buy milk.", check: { textIncludes: ["Buy milk"] } }];

describe("the seat over a scripted session", () => {
  test("refused calls dispatch nothing; the answer is recorded, the hidden check decides; the trace validates with unknown cost", async () => {
    const d = memoryDesktop();
    const seen: unknown[] = [];
    const session = scriptedSession(
      [
        { narration: "n".repeat(2001), actions: [click(5, 5)] },
        { narration: "five", actions: Array.from({ length: 5 }, () => click(5, 5)) },
        { narration: "Typing now.", actions: [click(5, 5), { kind: "type", text: "Buy milk" }] },
      ],
      JSON.stringify({ outcome: "reached", summary: "I typed it.", frictionReports: ["No label on the field."] }),
      seen,
    );
    const out = await runLocalAgentSeat({ session, executor: d, instructions: "brief", origin: "http://127.0.0.1:41999", tasks: TASK, timeoutMs: 20_000 });
    expect(out.status).toBe("passed");
    expect(out.taskFunnel?.completed).toBe(1);
    expect(out.counts).toMatchObject({ turns: 3, refusedCalls: 2, actions: 2, materialActions: 2 });
    expect(d.sent).toEqual([
      { kind: "click", x: 5, y: 5 },
      { kind: "type", text: "Buy milk" },
    ]);
    expect(seen.map((r) => (r as { success: boolean }).success)).toEqual([false, false, true]);
    expect(out.screenshots.map((s) => s.name)).toEqual(["turn-00-start", "turn-03"]);
    expect(out.answer).toEqual({ outcome: "reached", summary: "I typed it.", frictionReports: ["No label on the field."] });
    expect(JSON.stringify(out.items)).not.toContain("Buy milk");
    const trace = ActorTraceSchema.parse(
      localAgentTrace(out, {
        participantId: "p1",
        model: "ignored",
        personaId: "first-time-user",
        promptDigest: "0123456789ab",
        sessionId: "s",
        shotPaths: new Map(out.screenshots.map((s) => [s.name, `screenshots/p1-${s.name}.png`])),
        redact: (t) => t,
      }),
    );
    expect(trace).toMatchObject({ actorType: "local-agent", provider: "codex", protocol: "cua-loop", lane: "computer-use", providerVersion: "gpt-test" });
    expect(trace.estimatedCost).toMatchObject({ estimatedCostUsd: null, reason: "account-unknown" });
    expect(trace.tokenUsage).toEqual({ input: 1200, output: 80, cachedInput: 0, total: 1280, turns: 1 });
    expect(trace.runtime?.observedVersion).toBe("0.171.0");
    expect(trace.items.filter((i) => i.screenshotRef).length).toBe(2);
    expect(CostLineSchema.parse(localAgentCostLine(out, "p1"))).toMatchObject({ usd: null, reason: "account-unknown", ratesAsOf: null });
  });

  test(`${MAX_REFUSED_CALLS} unreadable calls in a row end the seat as a harness failure; a declared success with a failing check does not pass`, async () => {
    const bad = { narration: "x", actions: [] };
    const out = await runLocalAgentSeat({
      session: scriptedSession([bad, bad, bad, bad], "{}"),
      executor: memoryDesktop(),
      instructions: "brief",
      origin: "http://127.0.0.1:41999",
      timeoutMs: 20_000,
    });
    expect(out).toMatchObject({ status: "failed", completionReason: "harness_error", harnessError: { code: "HUMANISH_LOCAL_AGENT_CALLS_REFUSED" } });
    expect(out.counts.refusedCalls).toBe(MAX_REFUSED_CALLS);
    expect(out.usage).toEqual({ inputTokens: 10, cachedInputTokens: null, outputTokens: null });

    const liar = await runLocalAgentSeat({
      session: scriptedSession([{ narration: "", actions: [click(1, 1)] }], JSON.stringify({ outcome: "reached", summary: "Done.", frictionReports: [] })),
      executor: memoryDesktop(),
      instructions: "brief",
      origin: "http://127.0.0.1:41999",
      tasks: TASK,
      timeoutMs: 20_000,
    });
    expect(liar).toMatchObject({ status: "incomplete", completionReason: "turn_completed" });
    expect(liar.reason).toContain("0 of 1 hidden check(s) passed");
  });

  test("a frame whose fast encoding is too large is re-encoded (same pixels) and sent", async () => {
    // A flat 600×400 frame stored without compression: ~720 KB as encoded, a few KB re-encoded.
    const flat = new PNG({ width: 600, height: 400 });
    flat.data.fill(230);
    const raw = new Uint8Array(PNG.sync.write(flat, { colorType: 2, inputColorType: 6, inputHasAlpha: true, deflateLevel: 0 }));
    expect(raw.length).toBeGreaterThan(256 * 1024);
    const seen: unknown[] = [];
    const desk: BrowserControlExecutor = { stallRecovery: "fail_closed", observe: async () => ({ png: raw, stateSignature: "s" }), execute: async () => {} };
    const out = await runLocalAgentSeat({
      session: scriptedSession(
        [{ narration: "", actions: [click(1, 1)] }],
        JSON.stringify({ outcome: "blocked", summary: "Nothing to do.", frictionReports: [] }),
        seen,
      ),
      executor: desk,
      instructions: "brief",
      origin: "http://127.0.0.1:41999",
      timeoutMs: 20_000,
    });
    expect(out.status).toBe("passed");
    expect(out.counts.compactedFrames).toBe(1);
    const url = ((seen[0] as { contentItems: { imageUrl?: string }[] }).contentItems[1]?.imageUrl ?? "").slice("data:image/png;base64,".length);
    const sent = PNG.sync.read(Buffer.from(url, "base64"));
    expect([sent.width, sent.height, url.length < 64 * 1024]).toEqual([600, 400, true]);
    expect(Buffer.compare(sent.data, PNG.sync.read(Buffer.from(raw)).data)).toBe(0);
  });

  test("a frame too large for the session's tool-output bound ends the seat, naming the cause, before the launcher sees it", async () => {
    // Noise does not compress: 400×300 random RGB is ~360 KB however it is encoded.
    const noise = new PNG({ width: 400, height: 300 });
    crypto.getRandomValues(noise.data);
    for (let i = 3; i < noise.data.length; i += 4) noise.data[i] = 255;
    const png = new Uint8Array(PNG.sync.write(noise, { colorType: 2, inputColorType: 6, inputHasAlpha: true }));
    const desk: BrowserControlExecutor = { stallRecovery: "fail_closed", observe: async () => ({ png, stateSignature: "s" }), execute: async () => {} };
    const out = await runLocalAgentSeat({
      session: scriptedSession([{ narration: "", actions: [click(1, 1)] }], "{}"),
      executor: desk,
      instructions: "brief",
      origin: "http://127.0.0.1:41999",
      timeoutMs: 20_000,
    });
    expect(out).toMatchObject({ status: "failed", harnessError: { code: "HUMANISH_LOCAL_AGENT_FRAME_TOO_LARGE" } });
    expect(out.reason).toContain("400×300 frame");
  });

  test("the brief names the tool, its bounds and the final answer, never the hidden checks", () => {
    const b = localAgentBrief({ type: "local-agent", localAgent: "codex", count: 1, mission: "Use the app.", tasks: TASK }, { persona: "hurried" });
    expect(b).toContain("persona: hurried");
    expect(b).toContain("1. Type Buy milk.");
    expect(b).toContain("humanish_ui");
    expect(b).toContain("at most 2000 characters");
    expect(b).not.toContain("textIncludes");
  });
});

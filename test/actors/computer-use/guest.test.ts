/**
 * The computer-use loop end to end: the real `openai` SDK talks to the fake Responses server,
 * the loop drives real Chromium in a real guest container, and the hidden checks read what the
 * real TodoMVC shows. Each scenario gets a fresh guest (released by exact id, asserted).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import {
  type ComputerUseOptions,
  type ComputerUseOutcome,
  computerUseLedger,
  computerUseTrace,
  runComputerUse,
} from "../../../src/actors/computer-use/index.ts";
import { ActorTraceSchema } from "../../../src/bundle/schemas.ts";
import type { DockerClient } from "../../../src/docker/index.ts";
import { createModelClient, resolveEndpoint, SpendBudget } from "../../../src/models/index.ts";
import type { AppServer } from "../../../src/routes/browser/serve.ts";
import { allocateDesktop, type LocalDesktop } from "../../../src/runtime/desktop.ts";
import type { GuestImage } from "../../../src/runtime/guest-image.ts";
import { containersOfTestRun, guestPrereqs, serveTodoMvc, TEST_LABEL } from "../../runtime/guest-support.ts";
import { callOutputs, cuaSession, TODO, TODO_TASKS, thenReply, todoTurns } from "../../support/fake-openai/computer-use.ts";
import { type FakeOpenAI, type FakeScenario, startFakeOpenAI } from "../../support/fake-openai/server.ts";

const KEY = "sk-test-cua-0123456789";
const BRIEF = "You are a first-time user of a todo app. Work through these in order: 1. add two todos; 2. complete one; 3. clear it.";

let docker: DockerClient;
let image: GuestImage;
let testRun: string;
let app: AppServer;
let origin: string;
let shared: LocalDesktop;
const desktops: LocalDesktop[] = [];

async function guest(): Promise<LocalDesktop> {
  const d = await allocateDesktop({
    docker,
    image,
    runId: `test-${testRun}`,
    participantId: `p${desktops.length + 1}`,
    appPort: app.port,
    initialPath: "/",
    width: 1440,
    height: 950,
    labels: { [TEST_LABEL]: testRun },
    onCreated: () => {},
  });
  desktops.push(d);
  return d;
}

async function withFake<T>(scenario: FakeScenario, fn: (fake: FakeOpenAI) => Promise<T>): Promise<T> {
  const fake = startFakeOpenAI({ scenario, apiKey: KEY });
  try {
    return await fn(fake);
  } finally {
    await fake.close();
  }
}

function client(fake: FakeOpenAI) {
  return createModelClient(resolveEndpoint({ OPENAI_BASE_URL: fake.baseURL }), { sourceName: "OPENAI_API_KEY", value: KEY });
}

async function run(fake: FakeOpenAI, desktop: LocalDesktop, extra: Partial<ComputerUseOptions> = {}): Promise<ComputerUseOutcome> {
  return runComputerUse({
    executor: desktop.executor,
    client: client(fake),
    model: "gpt-5.1",
    instructions: BRIEF,
    origin,
    tasks: TODO_TASKS,
    timeoutMs: 90_000,
    ...extra,
  });
}

const inputs = (fake: FakeOpenAI) => fake.requests.filter((r) => r.path === "/v1/responses").map((r) => r.body ?? {});
const statuses = (o: ComputerUseOutcome) => o.items.filter((i) => i.kind === "ui_action").map((i) => i.status);

beforeAll(async () => {
  ({ docker, image, testRun } = await guestPrereqs());
  app = serveTodoMvc();
  origin = `http://127.0.0.1:${app.port}`;
  shared = await guest();
}, 180_000);

afterAll(async () => {
  for (const d of desktops) expect((await d.release()).outcome).toBe("released");
  await app?.close();
  if (docker) expect(await containersOfTestRun(docker, testRun)).toEqual([]);
}, 120_000);

describe("TodoMVC through the loop (real SDK, real guest, real Chromium)", () => {
  test("pointer, batched GA computer tool, full replay: 3/3 hidden checks, evidence without typed text", async () => {
    const d = await guest();
    await withFake(cuaSession({ turns: todoTurns("pointer"), batched: true }), async (fake) => {
      const out = await run(fake, d, { reasoningEffort: "low", maxOutputTokens: 2_000 });
      expect(out.status).toBe("passed");
      expect(out.completionReason).toBe("goal_satisfied");
      expect(out.declaredOutcome).toBe("reached");
      expect(out.taskFunnel?.completed).toBe(3);
      expect(out.counts.turns).toBe(4);
      expect(out.screenshots.map((s) => s.name)).toEqual(["turn-00-start", "turn-01", "turn-02", "turn-03"]);
      // Typed text never reaches the trace: a length only.
      expect(JSON.stringify(out.items)).not.toContain("Buy milk");
      expect(out.items.find((i) => i.kind === "ui_action" && i.action?.type === "type")?.action).toEqual({ type: "type", chars: 8 });
      expect(out.items.filter((i) => i.kind === "reasoning").length).toBe(3);
      // Every request: instructions, GA tool, store false with reasoning replay, never chained.
      const bodies = inputs(fake);
      expect(bodies.length).toBe(4);
      for (const [i, b] of bodies.entries()) {
        expect(b.instructions).toBe(BRIEF);
        expect(b.tools).toEqual([{ type: "computer" }]);
        expect(b.store).toBe(false);
        expect(b.include).toEqual(["reasoning.encrypted_content"]);
        expect(b.previous_response_id).toBeUndefined();
        expect(b.truncation).toBeUndefined();
        expect(b.reasoning).toEqual({ effort: "low", summary: "auto" });
        expect(callOutputs(b).length).toBe(i);
      }
      // Full replay: the last request carries the encrypted reasoning of every earlier reply.
      const last = bodies[3]!.input as Record<string, unknown>[];
      expect(last.filter((x) => x.type === "reasoning" && typeof x.encrypted_content === "string").length).toBe(3);
      expect(fake.rejectedForCallOutputs).toEqual([]);
      // The ledger: four priced requests whose sum is the outcome's spend.
      expect(out.requests.map((r) => r.outcome)).toEqual(["completed", "completed", "completed", "completed"]);
      expect(out.usd).toBeGreaterThan(0);
      expect(out.requests.reduce((a, r) => a + (r.usd ?? 0), 0)).toBeCloseTo(out.usd ?? -1, 6);
      // The trace the bundle keeps validates against the bundle's schema; the ledger prices it.
      const shotPaths = new Map(out.screenshots.map((sh) => [sh.name, `screenshots/p1-${sh.name}.png`]));
      const trace = ActorTraceSchema.parse(
        computerUseTrace(out, {
          participantId: "p1",
          model: "gpt-5.1",
          personaId: "first-time-user",
          promptDigest: "0123456789ab",
          sessionId: "s",
          shotPaths,
          redact: (t) => t,
        }),
      );
      expect(trace.protocol).toBe("cua-loop");
      expect(trace.items.filter((i) => i.screenshotRef).length).toBe(4);
      expect(trace.estimatedCost?.estimatedCostUsd).toBe(out.usd);
      const { ledger, costLines } = computerUseLedger(out, {
        participantId: "p1",
        endpointHost: "127.0.0.1",
        caps: { maxUsd: null, maxTotalUsd: null },
        today: "2026-12-01",
      });
      expect(ledger.usd).toBe(out.usd);
      expect(costLines.map((l) => [l.modelId, l.count, l.usd])).toEqual([["gpt-5.1", 4, out.usd]]);
    });
  }, 120_000);

  test("keyboard, unbatched preview tool (one action per call): 3/3, CUA key names reach the guest", async () => {
    const d = await guest();
    await withFake(cuaSession({ turns: todoTurns("keyboard"), batched: false }), async (fake) => {
      const out = await run(fake, d, { model: "computer-use-preview" });
      expect(out.taskFunnel?.tasks.map((t) => t.completed)).toEqual([true, true, true]);
      expect(out.status).toBe("passed");
      const bodies = inputs(fake);
      expect(bodies.length).toBe(todoTurns("keyboard").flat().length + 1);
      expect(bodies[0]!.tools).toEqual([{ type: "computer_use_preview", display_width: 1440, display_height: 950, environment: "browser" }]);
      expect(bodies[0]!.truncation).toBe("auto");
      expect(statuses(out).every((s) => s === "dispatched")).toBe(true);
      expect(fake.rejectedForCallOutputs).toEqual([]);
    });
  }, 120_000);

  test("store: true chains previous_response_id and sends only the new items", async () => {
    const d = await guest();
    await withFake(cuaSession({ turns: todoTurns("pointer"), batched: true }), async (fake) => {
      const out = await run(fake, d, { store: true });
      expect(out.taskFunnel?.completed).toBe(3);
      const bodies = inputs(fake);
      expect(bodies[0]!.previous_response_id).toBeUndefined();
      expect(bodies[0]!.include).toBeUndefined();
      for (const b of bodies.slice(1)) {
        expect(typeof b.previous_response_id).toBe("string");
        expect((b.input as unknown[]).length).toBe(1);
        expect(callOutputs(b).length).toBe(1);
      }
    });
  }, 120_000);

  test("a model that declares success while the checks fail does not pass", async () => {
    const d = await guest();
    await withFake(cuaSession({ turns: todoTurns("pointer").slice(0, 1), batched: true, final: "Done — I reached the goal." }), async (fake) => {
      const out = await run(fake, d);
      expect(out.declaredOutcome).toBe("reached");
      expect(out.taskFunnel?.completed).toBe(1);
      expect(out.status).toBe("incomplete");
      expect(out.completionReason).toBe("turn_completed");
      expect(out.reason).toContain("1 of 3 hidden check(s) passed");
    });
  }, 120_000);

  test("stopWhen ends the seat and one bounded closing account is asked for, without tools", async () => {
    const d = await guest();
    const base = cuaSession({ turns: todoTurns("pointer"), batched: true });
    const scenario: FakeScenario = (req, h) =>
      req.body?.tool_choice === "none"
        ? {
            kind: "response",
            output: [{ type: "message", text: JSON.stringify({ summary: "Added two todos.", frictionReports: ["The checkbox is small."] }) }],
          }
        : base(req, h);
    await withFake(scenario, async (fake) => {
      const out = await run(fake, d, { stopWhen: { any: [{ id: "two", textIncludes: ["2 items left"] }] }, maxOutputTokens: 4_000 });
      expect(out.reason).toContain("a stopWhen rule matched after turn 1");
      expect(out.counts.turns).toBe(1);
      expect(out.debrief?.status).toBe("completed");
      expect(out.debrief?.report?.frictionReports).toEqual(["The checkbox is small."]);
      const last = inputs(fake).at(-1)!;
      expect(last.tool_choice).toBe("none");
      expect(last.max_output_tokens).toBe(1_024);
      // The closing request still answers the open call, so it is a valid request.
      expect(fake.rejectedForCallOutputs).toEqual([]);
      // stopWhen was met, but the seat is judged by all three hidden checks.
      expect(out.status).toBe("incomplete");
    });
  }, 120_000);
});

describe("refusals and failures (one shared guest)", () => {
  test("an unknown key and an off-frame click are rejected before dispatch; the model is told, the seat goes on", async () => {
    const turns = [
      [
        { type: "keypress", keys: ["HYPER"] },
        { type: "type", text: "never typed" },
      ],
      [{ type: "click", button: "left", x: 5000, y: 10 }],
      [{ type: "wait" }],
    ];
    await withFake(cuaSession({ turns, batched: true }), async (fake) => {
      const out = await run(fake, shared, { tasks: [] });
      expect(statuses(out)).toEqual(["rejected/not_dispatched", "not_dispatched", "rejected/not_dispatched", "dispatched"]);
      const bodies = inputs(fake);
      const hint = (b: Record<string, unknown>) => JSON.stringify((b.input as unknown[]).at(-1));
      expect(hint(bodies[1]!)).toContain("not known here");
      expect(hint(bodies[2]!)).toContain("outside the 1440×950 screenshot");
      expect(out.status).toBe("passed");
      expect(fake.rejectedForCallOutputs).toEqual([]);
    });
  }, 60_000);

  test("malformed actions (unknown type, missing coordinates, an oversized batch) are recorded, not dispatched: harness failure", async () => {
    for (const actions of [[{ type: "teleport" }], [{ type: "click", button: "left" }], Array.from({ length: 40 }, () => ({ type: "wait" }))]) {
      await withFake(cuaSession({ turns: [actions], batched: true }), async (fake) => {
        const out = await run(fake, shared, { tasks: [] });
        expect(out.status).toBe("failed");
        expect(out.completionReason).toBe("harness_error");
        expect(out.harnessError?.code).toBe("HUMANISH_CUA_ACTION_MALFORMED");
        expect(statuses(out).includes("dispatched")).toBe(false);
        expect(inputs(fake).length).toBe(1);
      });
    }
  }, 60_000);

  test("a pending safety check blocks the seat; acknowledged when the lab opts in to its code", async () => {
    const check = { id: "sc_1", code: "malicious_instructions", message: "The page may contain instructions." };
    const decorate = (n: number, call: { type: "computer_call" }) => (n === 0 ? [{ ...call, pendingSafetyChecks: [check] }] : undefined);
    const turns = [[click(TODO.newTodo)], [{ type: "wait" }]];
    await withFake(cuaSession({ turns, batched: true, decorate: decorate as never }), async (fake) => {
      const out = await run(fake, shared, { tasks: [] });
      expect(out.status).toBe("blocked");
      expect(out.completionReason).toBe("blocked_approval");
      expect(statuses(out)).toEqual([]);
      expect(out.items.find((i) => i.kind === "approval")?.status).toBe("blocked");
    });
    await withFake(cuaSession({ turns, batched: true, decorate: decorate as never }), async (fake) => {
      const out = await run(fake, shared, { tasks: [], acknowledgeSafetyChecks: ["malicious_instructions"] });
      expect(out.status).toBe("passed");
      const second = inputs(fake)[1]!;
      expect(callOutputs(second)[0]!.acknowledged_safety_checks).toEqual([check]);
      expect(out.items.find((i) => i.kind === "approval")?.status).toBe("acknowledged");
    });
  }, 60_000);

  test("429 and 500 end the seat with a named code and are never retried", async () => {
    for (const [status, code] of [
      [429, "HUMANISH_CUA_PROVIDER_RATE_LIMITED"],
      [500, "HUMANISH_CUA_PROVIDER_SERVER_ERROR"],
    ] as const) {
      const scenario = thenReply(cuaSession({ turns: [[{ type: "wait" }]], batched: true }), 1, {
        kind: "error",
        status,
        type: "server_error",
        code: status === 429 ? "rate_limit_exceeded" : "server_error",
        message: "secret body text",
      });
      await withFake(scenario, async (fake) => {
        const out = await run(fake, shared, { tasks: [] });
        expect(out.harnessError?.code).toBe(code);
        expect(out.reason).not.toContain("secret body text");
        expect(inputs(fake).length).toBe(2);
        expect(out.requests.at(-1)?.outcome).toBe("upstream_error");
      });
    }
  }, 60_000);

  test("incomplete and other statuses are never acted on", async () => {
    const wait = { type: "computer_call" as const, callId: "call_1", actions: [click(TODO.newTodo)] };
    for (const [reply, reason, cause] of [
      [{ kind: "response", output: [wait], incomplete: "max_output_tokens" }, "budget_reached", "provider_output_limit"],
      [{ kind: "response", output: [wait], incomplete: "content_filter" }, "harness_error", "provider_incomplete"],
      [{ kind: "response", output: [wait], status: "failed" }, "harness_error", "provider_status"],
    ] as const) {
      await withFake(
        () => reply as never,
        async (fake) => {
          const out = await run(fake, shared, { tasks: [] });
          expect(out.completionReason).toBe(reason);
          expect(out.stopCause).toBe(cause);
          expect(statuses(out)).toEqual([]);
        },
      );
    }
  }, 60_000);

  test("a stalled response hits the per-request deadline: named code, no retry", async () => {
    await withFake(
      () => ({ kind: "hang" }),
      async (fake) => {
        const out = await run(fake, shared, { tasks: [], turnTimeoutMs: 1_500 });
        expect(out.harnessError?.code).toBe("HUMANISH_CUA_PROVIDER_TIMEOUT");
        expect(inputs(fake).length).toBe(1);
        // It left and got no answer: its cost is unknown, never 0.
        expect(out.usd).toBeNull();
      },
    );
  }, 60_000);

  test("the seat's maxUsd stops it mid-seat before a request that could pass the cap", async () => {
    await withFake(cuaSession({ turns: Array.from({ length: 10 }, () => [{ type: "wait" }]), batched: true }), async (fake) => {
      const seatBudget = new SpendBudget("scenario.caps.maxUsd", 0.03);
      const out = await run(fake, shared, { tasks: [], seatBudget, maxOutputTokens: 1_000 });
      expect(out.completionReason).toBe("budget_reached");
      expect(out.stopCause).toBe("spend_limit");
      const sent = out.requests.filter((r) => r.outcome === "completed").length;
      expect(sent).toBeGreaterThan(0);
      expect(sent).toBeLessThan(10);
      expect(out.requests.at(-1)?.outcome).toBe("refused_cap");
      expect(inputs(fake).length).toBe(sent);
      expect(seatBudget.knownUsd).toBeLessThanOrEqual(0.03);
    });
  }, 60_000);

  test("typed text never reaches the address bar without the model's own Ctrl+L", async () => {
    const turns = [
      [click({ x: 100, y: 700 }), { type: "type", text: "http://127.0.0.1:9/elsewhere" }, { type: "keypress", keys: ["ENTER"] }],
      [{ type: "wait" }],
    ];
    await withFake(cuaSession({ turns, batched: true }), async (fake) => {
      const out = await run(fake, shared, { tasks: [] });
      expect(out.status).toBe("passed");
      expect(out.observations.every((o) => o.url?.startsWith(origin))).toBe(true);
      // The loop dispatched exactly the model's three actions and nothing of its own.
      expect(out.items.filter((i) => i.kind === "ui_action").map((i) => i.action?.type)).toEqual(["click", "type", "keypress", "wait"]);
    });
  }, 60_000);

  test("the study's maxTotalUsd stops a seat as study_spend_limit", async () => {
    await withFake(cuaSession({ turns: Array.from({ length: 10 }, () => [{ type: "wait" }]), batched: true }), async (fake) => {
      const out = await run(fake, shared, {
        tasks: [],
        seatBudget: new SpendBudget("scenario.caps.maxUsd", 5),
        studyBudget: new SpendBudget("scenario.caps.maxTotalUsd", 0.03),
        maxOutputTokens: 1_000,
      });
      expect(out.completionReason).toBe("budget_reached");
      expect(out.stopCause).toBe("study_spend_limit");
    });
  }, 60_000);

  test("a request missing a call output is never sent (the fake would answer 400)", async () => {
    await withFake(cuaSession({ turns: [[{ type: "wait" }]], batched: true }), async (fake) => {
      // The fake enforces the service's rule: a body with an unanswered call gets a 400.
      const bad = await client(fake)
        .responses.create({
          model: "gpt-5.1",
          input: [{ type: "computer_call", call_id: "c1", actions: [], pending_safety_checks: [], status: "completed", id: "cu_1" }],
        } as never)
        .then(
          () => 200,
          (e: { status?: number }) => e.status,
        );
      expect(bad).toBe(400);
      expect(fake.rejectedForCallOutputs.length).toBe(1);
    });
  }, 30_000);
});

describe("several seats of this participant in one study", () => {
  test("two seats on two guests at once share the study's maxTotalUsd", async () => {
    const [a, b] = await Promise.all([guest(), guest()]);
    const study = new SpendBudget("scenario.caps.maxTotalUsd", 5);
    await withFake(cuaSession({ turns: todoTurns("pointer"), batched: true }), async (fakeA) => {
      await withFake(cuaSession({ turns: todoTurns("keyboard"), batched: true }), async (fakeB) => {
        const [oa, ob] = await Promise.all([run(fakeA, a!, { studyBudget: study }), run(fakeB, b!, { studyBudget: study })]);
        expect([oa.status, ob.status]).toEqual(["passed", "passed"]);
        expect(study.knownUsd).toBeCloseTo((oa.usd ?? 0) + (ob.usd ?? 0), 6);
      });
    });
  }, 120_000);
});

function click(p: { x: number; y: number }) {
  return { type: "click", button: "left", x: p.x, y: p.y };
}

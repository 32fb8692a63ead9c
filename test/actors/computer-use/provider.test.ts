/**
 * The computer-use participant's request through the real `openai` SDK against the fake
 * Responses server: a cost is priced only from the model the response names. A response that
 * names none has an unknown cost (`no_model_reported`), which stops further admissions under a
 * cap — never a price taken from the model that was asked for.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { sendRequest } from "../../../src/actors/computer-use/provider.ts";
import { OpenAI } from "../../../src/models/client.ts";
import { SpendBudget } from "../../../src/models/index.ts";
import { type FakeOpenAI, type FakeReply, startFakeOpenAI } from "../../support/fake-openai/server.ts";

const KEY = "sk-test-cua-provider-5e1b7d";
let next: FakeReply = { kind: "response", output: [{ type: "message", text: "done" }] };
let fake: FakeOpenAI;

beforeAll(() => {
  fake = startFakeOpenAI({ apiKey: KEY, scenario: () => next });
});
afterAll(async () => {
  await fake?.close();
});

function send(budget: SpendBudget, ordinal: number) {
  const client = new OpenAI({ apiKey: KEY, baseURL: fake.baseURL, maxRetries: 0 });
  const body = { model: "gpt-5.1", input: [{ role: "user", content: [{ type: "input_text", text: "look at the page" }] }], max_output_tokens: 200 };
  return sendRequest({ client, body, budgets: [budget], ordinal, timeoutMs: 30_000 });
}

describe("cost from the observed model only", () => {
  test("a response naming its model is priced at that model's rate", async () => {
    next = { kind: "response", model: "gpt-5.1-2025-11-13", output: [{ type: "message", text: "done" }] };
    const r = await send(new SpendBudget("scenario.caps.maxUsd", 1), 1);
    expect(r.kind).toBe("response");
    expect(r.line.model).toBe("gpt-5.1-2025-11-13");
    expect(r.line.usd).toBeGreaterThan(0);
    expect(r.line.costReason).toBeNull();
  });

  test("a response naming no model: cost null, no_model_reported, and the cap admits nothing more", async () => {
    next = { kind: "response", model: null, output: [{ type: "message", text: "done" }] };
    const budget = new SpendBudget("scenario.caps.maxUsd", 1);
    const r = await send(budget, 1);
    expect(r.kind).toBe("response");
    expect(r.line).toMatchObject({ model: null, usd: null, costReason: "no_model_reported", costSource: null, ratesAsOf: null });
    expect(r.line.input).toBeGreaterThan(0);
    expect(budget.spendUnknown).toBe(true);
    const after = await send(budget, 2);
    expect(after).toMatchObject({ kind: "refused", reason: "spend_unknown" });
  });
});

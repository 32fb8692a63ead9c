/**
 * The model gateway end to end on the host: the real `openai` SDK → the gateway's Unix socket →
 * the local fake Responses server. Every scenario checks what the agent got, what the fake saw
 * (or did not see), and the ledger line.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { APIError } from "openai";
import { createModelClient, type Gateway, resolveEndpoint, SpendBudget, startGateway } from "../../src/models/index.ts";
import { ledgerCostLines } from "../../src/models/ledger.ts";
import { type FakeOpenAI, type FakeScenario, startFakeOpenAI } from "../support/fake-openai/server.ts";
import { gate, waitUntil } from "../support/wait.ts";

const REAL_KEY = "sk-test-REALKEY-0123456789abcdef";
let fake: FakeOpenAI | undefined;
let gw: Gateway | undefined;

afterEach(async () => {
  await gw?.close();
  await fake?.close();
  gw = undefined;
  fake = undefined;
});

function setup(scenario: FakeScenario, caps: { seat: number | null; study?: number | null } = { seat: 5 }, firstByteMs?: number) {
  fake = startFakeOpenAI({ apiKey: REAL_KEY, scenario });
  const endpoint = resolveEndpoint({ OPENAI_BASE_URL: fake.baseURL });
  const budgets = [
    new SpendBudget("scenario.caps.maxUsd", caps.seat),
    ...(caps.study !== undefined ? [new SpendBudget("scenario.caps.maxTotalUsd", caps.study)] : []),
  ];
  gw = startGateway({ endpoint, key: { sourceName: "OPENAI_API_KEY", value: REAL_KEY }, budgets, ...(firstByteMs ? { firstByteMs } : {}) });
  const sock = `${gw.socketDir}/${gw.socketName}`;
  // The SDK speaks to the gateway exactly as the sandbox does: base URL /v1, the seat token as key.
  const client = createModelClient(
    { baseURL: "http://gateway.local/v1", host: "gateway.local", source: "OPENAI_BASE_URL" },
    { sourceName: "CODEX_API_KEY", value: gw.token },
    { timeoutMs: 10_000 },
  );
  (client as unknown as { fetch: typeof fetch }).fetch = ((url: string, init: RequestInit) =>
    fetch(url, { ...init, unix: sock } as RequestInit)) as typeof fetch;
  return { client, budgets, sock };
}

const hello: FakeScenario = () => ({ kind: "response", model: "gpt-5.1-codex-mini", output: [{ type: "message", text: "hello there" }] });

describe("model gateway", () => {
  test("JSON: forwards with the real key, meters the reported model and usage", async () => {
    const { client } = setup(hello);
    const r = await client.responses.create({ model: "gpt-5.1-codex-mini", input: "say hello", max_output_tokens: 100 });
    expect(r.output_text).toBe("hello there");
    expect(fake?.requests[0]?.authorization).toBe(`Bearer ${REAL_KEY}`);
    const line = gw?.lines[0];
    expect(line).toMatchObject({ ordinal: 1, model: "gpt-5.1-codex-mini", outcome: "completed", status: 200, stream: false });
    expect(line?.input).toBe(r.usage?.input_tokens ?? -1);
    expect(line?.output).toBe(r.usage?.output_tokens ?? -1);
    expect(line?.usd).toBeGreaterThan(0);
    expect(line?.estimateUsd ?? 0).toBeGreaterThanOrEqual(line?.usd ?? Number.POSITIVE_INFINITY);
  });

  test("SSE: the stream passes through event by event and the final usage is metered", async () => {
    const { client } = setup(hello);
    const stream = await client.responses.create({ model: "gpt-5.1-codex-mini", input: "say hello", stream: true, max_output_tokens: 50 });
    const types: string[] = [];
    for await (const ev of stream) types.push(ev.type);
    expect(types[0]).toBe("response.created");
    expect(types).toContain("response.output_item.done");
    expect(types.at(-1)).toBe("response.completed");
    expect(gw?.lines[0]).toMatchObject({ outcome: "completed", stream: true, model: "gpt-5.1-codex-mini" });
    expect(gw?.lines[0]?.usd).toBeGreaterThan(0);
  });

  test("a wrong token is 401 and nothing reaches the endpoint", async () => {
    const { sock } = setup(hello);
    const res = await fetch("http://gw/v1/responses", {
      method: "POST",
      unix: sock,
      headers: { authorization: `Bearer ${REAL_KEY}` },
      body: "{}",
    } as RequestInit);
    expect(res.status).toBe(401);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe("invalid_api_key");
    expect(fake?.requests.length).toBe(0);
    expect(gw?.lines[0]?.outcome).toBe("unauthorized");
  });

  test("any path but POST /v1/responses is 404 and never forwarded", async () => {
    const { sock } = setup(hello);
    for (const [method, path] of [
      ["GET", "/v1/models"],
      ["POST", "/v1/chat/completions"],
      ["GET", "/v1/responses"],
    ] as const) {
      const res = await fetch(`http://gw${path}`, { method, unix: sock, headers: { authorization: `Bearer ${gw?.token}` } } as RequestInit);
      expect(res.status).toBe(404);
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe("humanish_not_forwarded");
    }
    expect(fake?.requests.length).toBe(0);
    expect(gw?.lines.map((l) => l.outcome)).toEqual(["not_found", "not_found", "not_found"]);
  });

  test("maxUsd 0: no request leaves; the agent gets an OpenAI-shaped insufficient_quota", async () => {
    const { client } = setup(hello, { seat: 0 });
    const err = await client.responses.create({ model: "gpt-5.1-codex-mini", input: "hi" }).catch((e) => e);
    expect(err).toBeInstanceOf(APIError);
    expect((err as APIError).status).toBe(429);
    expect((err as APIError).code).toBe("humanish_spend_limit");
    expect((err as APIError).type).toBe("insufficient_quota");
    expect(fake?.requests.length).toBe(0);
    expect(gw?.lines[0]).toMatchObject({ outcome: "refused_cap", usd: 0 });
    expect(ledgerCostLines(gw?.lines ?? [], "p1", "2026-12-01")[0]).toMatchObject({ usd: 0, count: 0, basis: "no-spend-signal" });
  });

  test("the cap is reached after N requests: the worst case of the next one would pass it", async () => {
    // Each request: ~30 input tokens + 2000 output ceiling on gpt-5.1-codex-mini ≈ 0.004 USD worst case.
    const { client, budgets } = setup(hello, { seat: 0.01 });
    const results: string[] = [];
    for (let i = 0; i < 5; i++) {
      const r = await client.responses.create({ model: "gpt-5.1-codex-mini", input: `hello ${i}`, max_output_tokens: 2000 }).then(
        () => "ok",
        (e: APIError) => e.code ?? "error",
      );
      results.push(r);
    }
    const ok = results.filter((r) => r === "ok").length;
    expect(ok).toBeGreaterThan(0);
    expect(results.slice(ok).every((r) => r === "humanish_spend_limit")).toBe(true);
    expect(fake?.requests.length).toBe(ok);
    expect(budgets[0]?.knownUsd).toBeLessThanOrEqual(0.01);
  });

  test("the study cap (maxTotalUsd) binds too", async () => {
    const { client } = setup(hello, { seat: 10, study: 0 });
    const err = (await client.responses.create({ model: "gpt-5.1-codex-mini", input: "hi" }).catch((e) => e)) as APIError;
    expect(err.code).toBe("humanish_spend_limit");
    expect(err.message).toContain("scenario.caps.maxTotalUsd");
  });

  test("an unpriced model cannot be admitted under a positive cap", async () => {
    const { client } = setup(hello);
    const err = (await client.responses.create({ model: "mystery-model-9", input: "hi" }).catch((e) => e)) as APIError;
    expect(err.code).toBe("humanish_spend_limit");
    expect(err.message).toContain("mystery-model-9");
    expect(fake?.requests.length).toBe(0);
  });

  test("usage missing: the cost is null (never 0) and the cap refuses the next request", async () => {
    const { client } = setup(() => ({ kind: "response", output: [{ type: "message", text: "no usage here" }], usage: null }));
    await client.responses.create({ model: "gpt-5.1-codex-mini", input: "hi", max_output_tokens: 10 });
    expect(gw?.lines[0]).toMatchObject({ outcome: "completed", usd: null, costReason: "no_token_usage" });
    const err = (await client.responses.create({ model: "gpt-5.1-codex-mini", input: "again", max_output_tokens: 10 }).catch((e) => e)) as APIError;
    expect(err.code).toBe("humanish_spend_limit");
    expect(fake?.requests.length).toBe(1);
    const lines = ledgerCostLines(gw?.lines ?? [], "p1", "2026-12-01");
    expect(lines[0]).toMatchObject({ usd: null, reason: "no_token_usage", count: 1 });
  });

  test("401 from the endpoint passes through unchanged, not retried", async () => {
    const { client } = setup(() => ({
      kind: "error",
      status: 401,
      type: "invalid_request_error",
      code: "invalid_api_key",
      message: "Incorrect API key provided.",
    }));
    const err = (await client.responses.create({ model: "gpt-5.1-codex-mini", input: "hi", max_output_tokens: 10 }).catch((e) => e)) as APIError;
    expect(err.status).toBe(401);
    expect(err.code).toBe("invalid_api_key");
    expect(fake?.requests.length).toBe(1);
    expect(gw?.lines[0]).toMatchObject({ outcome: "upstream_error", status: 401, usd: 0 });
  });

  test("500 from the endpoint is surfaced once (maxRetries 0)", async () => {
    const { client } = setup(() => ({ kind: "error", status: 500, type: "server_error", code: "server_error", message: "boom" }));
    const err = (await client.responses.create({ model: "gpt-5.1-codex-mini", input: "hi", max_output_tokens: 10 }).catch((e) => e)) as APIError;
    expect(err.status).toBe(500);
    expect(fake?.requests.length).toBe(1);
  });

  test("a stream cut mid-response: the agent sees the break, the cost is unknown", async () => {
    const { client } = setup(() => ({ kind: "cut" }));
    const stream = await client.responses.create({ model: "gpt-5.1-codex-mini", input: "hi", stream: true, max_output_tokens: 10 });
    const err = await (async () => {
      for await (const _ of stream) {
        // drain
      }
    })().catch((e) => e);
    expect(err).toBeInstanceOf(Error);
    await waitUntil(() => (gw?.lines.length ?? 0) > 0, "the gateway's ledger line of the cut stream");
    expect(gw?.lines[0]).toMatchObject({ outcome: "cut", usd: null, costReason: "no_token_usage" });
  });

  test("response.incomplete (max_output_tokens) is metered as incomplete", async () => {
    const { client } = setup(() => ({ kind: "response", output: [{ type: "message", text: "trunc" }], incomplete: "max_output_tokens" }));
    const stream = await client.responses.create({ model: "gpt-5.1-codex-mini", input: "hi", stream: true, max_output_tokens: 5 });
    const types: string[] = [];
    for await (const ev of stream) types.push(ev.type);
    expect(types.at(-1)).toBe("response.incomplete");
    expect(gw?.lines[0]).toMatchObject({ outcome: "incomplete", detail: "incomplete: max_output_tokens" });
    expect(gw?.lines[0]?.usd).toBeGreaterThan(0);
  });

  test("no first byte: the gateway answers 504 at its deadline and the cost is unknown", async () => {
    const { client } = setup(() => ({ kind: "hang" }), { seat: 5 }, 300);
    const err = (await client.responses.create({ model: "gpt-5.1-codex-mini", input: "hi", max_output_tokens: 10 }).catch((e) => e)) as APIError;
    expect(err.status).toBe(504);
    expect(err.code).toBe("humanish_upstream_timeout");
    expect(gw?.lines[0]).toMatchObject({ outcome: "upstream_timeout", usd: null });
  });

  test("an endpoint that refuses connections: 502, nothing billed, a clear code", async () => {
    const { client } = setup(hello);
    await fake?.close();
    const err = (await client.responses.create({ model: "gpt-5.1-codex-mini", input: "hi", max_output_tokens: 10 }).catch((e) => e)) as APIError;
    expect(err.status).toBe(502);
    expect(err.code).toBe("humanish_upstream_unreachable");
    expect(gw?.lines[0]).toMatchObject({ outcome: "upstream_unreachable", usd: 0 });
    fake = undefined;
  });

  test("a socket path already taken is HUMANISH_MODEL_GATEWAY_LISTEN_FAILED", async () => {
    setup(hello);
    const dir = gw?.socketDir as string;
    expect(() => startGateway({ endpoint: resolveEndpoint({}), key: { sourceName: "OPENAI_API_KEY", value: REAL_KEY }, budgets: [], socketDir: dir })).toThrow(
      expect.objectContaining({ code: "HUMANISH_MODEL_GATEWAY_LISTEN_FAILED" }),
    );
  });

  test("SSE is not buffered: the first event reaches the agent while the endpoint is still streaming", async () => {
    // The endpoint sends its first event, then holds the rest until the agent has read that
    // first event: a gateway that buffered the stream would never deliver it (the test times out).
    const rest = gate();
    const { sock } = setup(() => ({ kind: "response", model: "gpt-5.1-codex-mini", output: [{ type: "message", text: "slow" }], restAfter: rest.promise }));
    const res = await fetch("http://gw/v1/responses", {
      method: "POST",
      unix: sock,
      headers: { authorization: `Bearer ${gw?.token}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "gpt-5.1-codex-mini", input: "hi", stream: true, max_output_tokens: 10 }),
    } as RequestInit);
    const reader = res.body?.getReader();
    const first = await reader?.read();
    expect(new TextDecoder().decode(first?.value)).toStartWith("event: response.created");
    rest.open();
    let text = "";
    for (let r = await reader?.read(); r && !r.done; r = await reader?.read()) text += new TextDecoder().decode(r.value);
    expect(text).toContain("event: response.completed");
  });

  test("a request in flight reserves its worst case: a concurrent one that would pass the cap is refused", async () => {
    // The endpoint holds the first request until the second has been judged: it is in flight then.
    const held = gate();
    const { client } = setup(
      () => ({ kind: "response", model: "gpt-5.1-codex-mini", output: [{ type: "message", text: "ok" }], firstByteAfter: held.promise }),
      {
        seat: 0.003,
      },
    );
    // Worst case each: ~20 input tokens + 1000 output × 2 USD/1M ≈ 0.002 USD; two do not fit in 0.003.
    const a = client.responses.create({ model: "gpt-5.1-codex-mini", input: "first", max_output_tokens: 1000 });
    await waitUntil(() => (fake?.requests.length ?? 0) === 1, "the first request to reach the endpoint through the gateway");
    const b = await client.responses.create({ model: "gpt-5.1-codex-mini", input: "second", max_output_tokens: 1000 }).catch((e) => e);
    expect((b as APIError).code).toBe("humanish_spend_limit");
    held.open();
    await a;
    expect(fake?.requests.length).toBe(1);
    expect(gw?.inFlight).toBe(0);
  });

  test("one study budget shared by two seats' gateways bounds their sum", async () => {
    // Each response reports 500 output tokens: 0.001 USD on gpt-5.1-codex-mini.
    const usage = {
      input_tokens: 0,
      input_tokens_details: { cached_tokens: 0 },
      output_tokens: 500,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: 500,
    };
    fake = startFakeOpenAI({
      apiKey: REAL_KEY,
      scenario: () => ({ kind: "response", model: "gpt-5.1-codex-mini", output: [{ type: "message", text: "ok" }], usage }),
    });
    const endpoint = resolveEndpoint({ OPENAI_BASE_URL: fake.baseURL });
    const study = new SpendBudget("scenario.caps.maxTotalUsd", 0.0031);
    const key = { sourceName: "OPENAI_API_KEY", value: REAL_KEY };
    const a = startGateway({ endpoint, key, budgets: [new SpendBudget("scenario.caps.maxUsd", 1), study] });
    const b = startGateway({ endpoint, key, budgets: [new SpendBudget("scenario.caps.maxUsd", 1), study] });
    try {
      const call = (g: Gateway) =>
        fetch("http://gw/v1/responses", {
          method: "POST",
          unix: `${g.socketDir}/${g.socketName}`,
          headers: { authorization: `Bearer ${g.token}`, "content-type": "application/json" },
          body: JSON.stringify({ model: "gpt-5.1-codex-mini", input: "hi", max_output_tokens: 1000 }),
        } as RequestInit);
      expect((await call(a)).status).toBe(200);
      // Worst case each ≈ 0.002 USD (1000 output tokens): 0 + 0.002 and 0.001 + 0.002 fit in 0.0031; 0.002 + 0.002 does not.
      expect((await call(b)).status).toBe(200);
      const third = await call(a);
      expect(third.status).toBe(429);
      expect(((await third.json()) as { error: { message: string } }).error.message).toContain("scenario.caps.maxTotalUsd");
      expect(fake.requests.length).toBe(2);
    } finally {
      await a.close();
      await b.close();
    }
  });
});

/**
 * The spend cap cannot be walked around, and it lets the budget be spent: through the real
 * gateway socket to a fake upstream that bills what the real service bills — a request whose
 * client went away, a request whose connection was reset after it was read, the stored context a
 * `previous_response_id` continues.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { type Gateway, MIN_OUTPUT_GRANT_TOKENS, resolveEndpoint, SpendBudget, startGateway } from "../../src/models/index.ts";
import { ledgerCostLines } from "../../src/models/ledger.ts";
import { startResetUpstream } from "../support/fake-openai/reset-upstream.ts";
import { type FakeOpenAI, type FakeScenario, startFakeOpenAI } from "../support/fake-openai/server.ts";

const REAL_KEY = "sk-test-REALKEY-0123456789abcdef";
const KEY = { sourceName: "OPENAI_API_KEY", value: REAL_KEY };
const open: { fake?: FakeOpenAI; gateways: Gateway[]; closers: (() => void)[] } = { gateways: [], closers: [] };

afterEach(async () => {
  for (const g of open.gateways) await g.close();
  for (const c of open.closers) c();
  await open.fake?.close();
  open.gateways = [];
  open.closers = [];
  open.fake = undefined;
});

function fakeWith(scenario: FakeScenario): FakeOpenAI {
  open.fake = startFakeOpenAI({ apiKey: REAL_KEY, scenario });
  return open.fake;
}

function gatewayTo(baseURL: string, budgets: SpendBudget[], env: Record<string, string> = {}): Gateway {
  const g = startGateway({ endpoint: resolveEndpoint({ ...env, OPENAI_BASE_URL: baseURL }), key: KEY, budgets });
  open.gateways.push(g);
  return g;
}

/** POSTs `body` to the gateway's socket the way a sandbox does. */
function post(g: Gateway, body: unknown, init: { signal?: AbortSignal; headers?: Record<string, string> } = {}): Promise<Response> {
  return fetch("http://gw/v1/responses", {
    method: "POST",
    unix: `${g.socketDir}/${g.socketName}`,
    headers: { authorization: `Bearer ${g.token}`, "content-type": "application/json", ...init.headers },
    body: JSON.stringify(body),
    ...(init.signal ? { signal: init.signal } : {}),
  } as RequestInit);
}

/** Resolves once `cond` holds (checked every 10 ms); fails the test after `ms`. */
async function until(cond: () => boolean, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error("condition not reached");
    await Bun.sleep(10);
  }
}

async function errorOf(res: Response): Promise<{ code: string; message: string; param: string | null }> {
  return ((await res.json()) as { error: { code: string; message: string; param: string | null } }).error;
}

const reply: FakeScenario = () => ({ kind: "response", model: "gpt-5.1-codex-mini", output: [{ type: "message", text: "ok" }] });

describe("a request that may have left is never settled at 0", () => {
  test("twenty requests the sandbox aborts after sending: one reaches the endpoint (billed), its cost is unknown, the rest are refused", async () => {
    // The endpoint answers only after the client is gone, and bills the request all the same.
    let release = (): void => undefined;
    const held = new Promise<void>((r) => {
      release = r;
    });
    const fake = fakeWith(() => ({ kind: "response", model: "gpt-5.1-codex-mini", output: [{ type: "message", text: "late" }], firstByteAfter: held }));
    const seat = new SpendBudget("scenario.caps.maxUsd", 0.05);
    const g = gatewayTo(fake.baseURL, [seat]);
    // 20 000 output tokens on gpt-5.1-codex-mini: 0.04 USD worst case each.
    const body = { model: "gpt-5.1-codex-mini", input: "count to a million", max_output_tokens: 20_000 };
    const statuses: (number | "aborted")[] = [];
    for (let i = 0; i < 20; i++) {
      const ctl = new AbortController();
      const before = fake.requests.length;
      const sent = post(g, body, { signal: ctl.signal }).then(
        (r) => r.status,
        () => "aborted" as const,
      );
      let answered = false;
      void sent.then(() => {
        answered = true;
      });
      // Abort only once the endpoint holds the request: its bytes have certainly left.
      await until(() => answered || fake.requests.length > before);
      if (!answered) ctl.abort();
      statuses.push(await sent);
    }
    await until(() => g.lines.length === 20);
    release();
    await until(() => fake.billed.length === fake.requests.length);
    expect(fake.requests.length).toBe(1);
    expect(fake.billed.length).toBe(1);
    expect(statuses[0]).toBe("aborted");
    expect(statuses.slice(1).every((s) => s === 429)).toBe(true);
    expect(g.lines[0]).toMatchObject({ outcome: "sandbox_aborted", usd: null, costReason: "no_token_usage" });
    expect(g.lines.slice(1).every((l) => l.outcome === "refused_cap" && (l.detail ?? "").startsWith("spend_unknown"))).toBe(true);
    expect(seat.spendUnknown).toBe(true);
    // The reservation stays at the worst case: what may have been spent is still bounded by it.
    expect(seat.worstCaseUsd).toBeGreaterThanOrEqual(0.04);
    expect(seat.worstCaseUsd).toBeLessThanOrEqual(0.05);
    expect(ledgerCostLines(g.lines, "p1", "2026-12-01")[0]).toMatchObject({ usd: null, basis: "unmeasured", count: 1 });
  });

  test("an upstream that resets the connection after reading the request: unknown cost, no further admission", async () => {
    const upstream = startResetUpstream();
    open.closers.push(() => upstream.close());
    const seat = new SpendBudget("scenario.caps.maxUsd", 0.05);
    const g = gatewayTo(upstream.baseURL, [seat]);
    const codes: string[] = [];
    for (let i = 0; i < 5; i++) {
      const res = await post(g, { model: "gpt-5.1-codex-mini", input: `try ${i}`, max_output_tokens: 20_000 });
      codes.push((await errorOf(res)).code);
    }
    expect(upstream.billed).toBe(1);
    expect(codes).toEqual(["humanish_upstream_broken", "humanish_spend_limit", "humanish_spend_limit", "humanish_spend_limit", "humanish_spend_limit"]);
    expect(g.lines[0]).toMatchObject({ outcome: "upstream_broken", status: 502, usd: null });
    expect(seat.spendUnknown).toBe(true);
  });

  test("a connection refused before any byte: nothing billed, settled at 0, the next request is admitted", async () => {
    const fake = fakeWith(reply);
    const dead = `http://127.0.0.1:${fake.port}/v1`;
    await fake.close();
    open.fake = undefined;
    const seat = new SpendBudget("scenario.caps.maxUsd", 0.05);
    const g = gatewayTo(dead, [seat]);
    for (let i = 0; i < 2; i++)
      expect((await errorOf(await post(g, { model: "gpt-5.1-codex-mini", input: "hi", max_output_tokens: 100 }))).code).toBe("humanish_upstream_unreachable");
    expect(g.lines.map((l) => [l.outcome, l.usd])).toEqual([
      ["upstream_unreachable", 0],
      ["upstream_unreachable", 0],
    ]);
    expect(seat.spendUnknown).toBe(false);
  });
});

describe("only fields the gateway can bound are forwarded", () => {
  test("ten concurrent requests chained on a stored response are refused; the stored context is never billed", async () => {
    const fake = fakeWith(() => ({ kind: "response", model: "gpt-5.1-codex-mini", output: [{ type: "message", text: "x ".repeat(2000) }] }));
    // A stored response made outside the gateway (anything holding the id could chain on it).
    const stored = await fetch(`${fake.baseURL}/responses`, {
      method: "POST",
      headers: { authorization: `Bearer ${REAL_KEY}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "gpt-5.1-codex-mini", input: "long context ".repeat(5000), store: true }),
    });
    const id = ((await stored.json()) as { id: string }).id;
    const billedBefore = fake.billed.length;
    const g = gatewayTo(fake.baseURL, [new SpendBudget("scenario.caps.maxUsd", 0.05)]);
    const answers = await Promise.all(
      Array.from({ length: 10 }, () => post(g, { model: "gpt-5.1-codex-mini", input: "go on", previous_response_id: id, max_output_tokens: 10 })),
    );
    for (const res of answers) {
      expect(res.status).toBe(400);
      expect(await errorOf(res)).toMatchObject({ code: "HUMANISH_MODEL_GATEWAY_FIELD_REFUSED", param: "previous_response_id" });
    }
    expect(fake.billed.length).toBe(billedBefore);
    expect(g.lines.every((l) => l.outcome === "bad_request" && l.usd === 0)).toBe(true);
  });

  test("conversation, prompt, store: true, background, a priority tier, an unknown field, an item reference and a file id are refused, naming the field", async () => {
    const fake = fakeWith(reply);
    const g = gatewayTo(fake.baseURL, [new SpendBudget("scenario.caps.maxUsd", 1)]);
    const base = { model: "gpt-5.1-codex-mini", input: "hi", max_output_tokens: 10 };
    const cases: [Record<string, unknown>, string][] = [
      [{ conversation: "conv_123" }, "conversation"],
      [{ prompt: { id: "pmpt_1" } }, "prompt"],
      [{ store: true }, "store"],
      [{ background: true }, "background"],
      [{ service_tier: "priority" }, "service_tier"],
      [{ some_new_field: 1 }, "some_new_field"],
      [{ input: [{ type: "item_reference", id: "msg_1" }] }, "input[0].type"],
      [{ input: [{ role: "user", content: [{ type: "input_file", file_id: "file-1" }] }] }, "input[0].content[0].file_id"],
    ];
    for (const [extra, field] of cases) {
      const res = await post(g, { ...base, ...extra });
      expect(res.status).toBe(400);
      const err = await errorOf(res);
      expect(err).toMatchObject({ code: "HUMANISH_MODEL_GATEWAY_FIELD_REFUSED", param: field });
      expect(err.message).toContain(`\`${field}\``);
    }
    expect(fake.requests.length).toBe(0);
  });

  test("a request without store is sent with store: false; hosted tools are removed and recorded; client tools pass", async () => {
    const fake = fakeWith(reply);
    const g = gatewayTo(fake.baseURL, [new SpendBudget("scenario.caps.maxUsd", 1)]);
    const tools = [
      { type: "function", name: "exec_command", parameters: { type: "object" } },
      { type: "web_search", external_web_access: false },
      { type: "custom", name: "apply_patch" },
    ];
    expect((await post(g, { model: "gpt-5.1-codex-mini", input: "hi", tools, max_output_tokens: 10 })).status).toBe(200);
    const sent = fake.requests[0]?.body ?? {};
    expect(sent.store).toBe(false);
    expect((sent.tools as { type: string }[]).map((t) => t.type)).toEqual(["function", "custom"]);
    expect(g.lines[0]).toMatchObject({ outcome: "completed", toolsRemovedByGateway: ["web_search"] });
  });
});

describe("the host chooses what the key bills", () => {
  test("OpenAI-Organization, OpenAI-Project, Cookie and arbitrary headers from the sandbox are dropped; the host's org and project are sent", async () => {
    const fake = fakeWith(reply);
    const g = gatewayTo(fake.baseURL, [new SpendBudget("scenario.caps.maxUsd", 1)], { OPENAI_ORG_ID: "org-host", OPENAI_PROJECT_ID: "proj_host" });
    const res = await post(
      g,
      { model: "gpt-5.1-codex-mini", input: "hi", max_output_tokens: 10 },
      {
        headers: {
          "OpenAI-Organization": "org-sandbox",
          "OpenAI-Project": "proj_sandbox",
          Cookie: "session=stolen",
          "X-Anything": "1",
          originator: "codex_exec",
          "x-codex-turn-metadata": "{}",
        },
      },
    );
    expect(res.status).toBe(200);
    const h = fake.requests[0]?.headers ?? {};
    expect(h["openai-organization"]).toBe("org-host");
    expect(h["openai-project"]).toBe("proj_host");
    expect(h.cookie).toBeUndefined();
    expect(h["x-anything"]).toBeUndefined();
    expect(h.authorization).toBe(`Bearer ${REAL_KEY}`);
    // Descriptive client headers still pass.
    expect(h.originator).toBe("codex_exec");
    expect(h["x-codex-turn-metadata"]).toBe("{}");
  });

  test("with no org or project on the host, none is sent whatever the sandbox asks", async () => {
    const fake = fakeWith(reply);
    const g = gatewayTo(fake.baseURL, [new SpendBudget("scenario.caps.maxUsd", 1)]);
    await post(g, { model: "gpt-5.1-codex-mini", input: "hi", max_output_tokens: 10 }, { headers: { "OpenAI-Organization": "org-sandbox" } });
    expect(fake.requests[0]?.headers["openai-organization"]).toBeUndefined();
  });
});

describe("a request without max_output_tokens gets what the budget affords", () => {
  test("maxUsd 1 on gpt-5.1-codex: admitted (not at the 128k ceiling, 1.28 USD), with the grant sent and recorded", async () => {
    const fake = fakeWith(() => ({ kind: "response", model: "gpt-5.1-codex", output: [{ type: "message", text: "ok" }] }));
    const seat = new SpendBudget("scenario.caps.maxUsd", 1);
    const g = gatewayTo(fake.baseURL, [seat]);
    expect((await post(g, { model: "gpt-5.1-codex", input: "hi" })).status).toBe(200);
    const grant = fake.requests[0]?.body?.max_output_tokens as number;
    expect(grant).toBeGreaterThanOrEqual(MIN_OUTPUT_GRANT_TOKENS);
    expect(grant).toBeLessThan(100_000);
    expect(g.lines[0]?.maxOutputTokensSetByGateway).toBe(grant);
    expect(g.lines[0]?.estimateUsd ?? 2).toBeLessThanOrEqual(1);
    // A request that sets its own bound is left as it is.
    expect((await post(g, { model: "gpt-5.1-codex", input: "hi", max_output_tokens: 77 })).status).toBe(200);
    expect(fake.requests[1]?.body?.max_output_tokens).toBe(77);
    expect(g.lines[1]?.maxOutputTokensSetByGateway).toBeUndefined();
  });

  test("a budget that cannot afford the minimum grant refuses before anything leaves", async () => {
    const fake = fakeWith(reply);
    // 4096 output tokens on gpt-5.1-codex cost 0.041 USD: 0.03 cannot afford them.
    const g = gatewayTo(fake.baseURL, [new SpendBudget("scenario.caps.maxUsd", 0.03)]);
    const res = await post(g, { model: "gpt-5.1-codex", input: "hi" });
    expect(res.status).toBe(429);
    expect((await errorOf(res)).code).toBe("humanish_spend_limit");
    expect(g.lines[0]).toMatchObject({ outcome: "refused_cap", maxOutputTokensSetByGateway: MIN_OUTPUT_GRANT_TOKENS });
    expect(fake.requests.length).toBe(0);
  });

  test("four seats under maxTotalUsd 3, their first requests in flight together: all four are admitted", async () => {
    let release = (): void => undefined;
    const held = new Promise<void>((r) => {
      release = r;
    });
    const fake = fakeWith(() => ({ kind: "response", model: "gpt-5.1-codex", output: [{ type: "message", text: "ok" }], firstByteAfter: held }));
    const study = new SpendBudget("scenario.caps.maxTotalUsd", 3);
    const seats = Array.from({ length: 4 }, () => gatewayTo(fake.baseURL, [new SpendBudget("scenario.caps.maxUsd", 3), study]));
    const answers = seats.map((g) => post(g, { model: "gpt-5.1-codex", input: "first turn" }).then((r) => r.status));
    // Every first request is either at the endpoint (held there) or already answered by the gateway.
    await until(() => seats.every((g) => g.lines.length === 1 || g.inFlight === 1));
    release();
    expect(await Promise.all(answers)).toEqual([200, 200, 200, 200]);
    expect(fake.requests.length).toBe(4);
    expect(seats.every((g) => (g.lines[0]?.maxOutputTokensSetByGateway ?? 0) >= MIN_OUTPUT_GRANT_TOKENS)).toBe(true);
    expect(study.knownUsd).toBeLessThanOrEqual(3);
  });
});

/** The pure parts of src/models: endpoint rule, rate table, usage → cost, budgets, admission. */
import { describe, expect, test } from "bun:test";
import { admitAll, grantableUsd } from "../../src/models/gateway/budget.ts";
import {
  admissionEstimate,
  costOf,
  isPriced,
  MAX_IMAGE_TOKENS,
  MIN_OUTPUT_GRANT_TOKENS,
  outputGrant,
  parseUsage,
  RATE_TABLE,
  rateFor,
  resolveEndpoint,
  resolveModelKey,
  SpendBudget,
} from "../../src/models/index.ts";

describe("endpoint", () => {
  test("OPENAI_BASE_URL as the SDK reads it, else the default; only the host is evidence", () => {
    expect(resolveEndpoint({})).toEqual({ baseURL: "https://api.openai.com/v1", host: "api.openai.com", source: "default" });
    expect(resolveEndpoint({ OPENAI_BASE_URL: "http://127.0.0.1:8000/v1/" })).toEqual({
      baseURL: "http://127.0.0.1:8000/v1",
      host: "127.0.0.1:8000",
      source: "OPENAI_BASE_URL",
    });
    expect(resolveEndpoint({ OPENAI_BASE_URL: "  " }).source).toBe("default");
  });
  test("a non-URL, a non-http scheme or embedded credentials are HUMANISH_MODEL_ENDPOINT_INVALID", () => {
    for (const bad of ["not a url", "ftp://x/v1", "https://user:sk-secret@host/v1"]) {
      let err: unknown;
      try {
        resolveEndpoint({ OPENAI_BASE_URL: bad });
      } catch (e) {
        err = e;
      }
      expect(err).toMatchObject({ code: "HUMANISH_MODEL_ENDPOINT_INVALID" });
      expect(String((err as Error).message)).not.toContain("sk-secret");
    }
  });
  test("keys by name: CODEX_API_KEY first, blanks skipped", () => {
    expect(resolveModelKey({ CODEX_API_KEY: " ", OPENAI_API_KEY: "k2" })).toEqual({ sourceName: "OPENAI_API_KEY", value: "k2" });
    expect(resolveModelKey({})).toBeUndefined();
  });
});

describe("rate table", () => {
  test("every entry is dated and sourced; snapshots price as their base model", () => {
    for (const r of Object.values(RATE_TABLE.models)) {
      expect(r.ratesAsOf).toMatch(/^\d{4}-\d{2}-\d{2}$/);
      expect(r.source).toStartWith("https://");
    }
    expect(rateFor("gpt-5.1-codex-2025-11-13")).toBe(RATE_TABLE.models["gpt-5.1-codex"]);
    expect(isPriced("gpt-9-imaginary")).toBe(false);
    expect(isPriced("constructor")).toBe(false);
  });
});

describe("usage → cost", () => {
  const usage = { input_tokens: 1000, input_tokens_details: { cached_tokens: 400 }, output_tokens: 200, output_tokens_details: { reasoning_tokens: 50 } };
  test("cached input at the cached rate, output (reasoning included) at the output rate", () => {
    const u = parseUsage(usage);
    expect(u).toEqual({ input: 1000, cached: 400, cacheWrite: 0, output: 200, reasoning: 50 });
    // 600 × 1.25 + 400 × 0.125 + 200 × 10 per 1M
    expect(costOf("gpt-5.1-codex", u)).toMatchObject({ usd: 0.0028, reason: null, ratesAsOf: "2025-11-20" });
  });
  test("unknown usage or model is null with a reason, never 0", () => {
    expect(parseUsage(undefined)).toBeNull();
    expect(parseUsage({ input_tokens: -1, output_tokens: 3 })).toBeNull();
    expect(costOf("gpt-5.1-codex", null)).toMatchObject({ usd: null, reason: "no_token_usage" });
    expect(costOf(null, parseUsage(usage))).toMatchObject({ usd: null, reason: "no_model_reported" });
    expect(costOf("mystery", parseUsage(usage))).toMatchObject({ usd: null, reason: "no_rate_for_model" });
  });
});

describe("spend budget", () => {
  test("cap 0 admits nothing; in-flight worst cases are reserved; unknown spend stops admissions", () => {
    expect(new SpendBudget("cap", 0).check(0.000001)).toMatchObject({ ok: false, reason: "cap_zero" });
    const b = new SpendBudget("cap", 1);
    const t1 = b.reserve(0.6);
    expect(b.check(0.5)).toMatchObject({ ok: false, reason: "would_exceed" });
    b.settle(t1, 0.1);
    expect(b.check(0.5).ok).toBe(true);
    expect(b.check(null)).toMatchObject({ ok: false, reason: "unpriced" });
    b.settle(b.reserve(0.5), null);
    expect(b.check(0.000001)).toMatchObject({ ok: false, reason: "spend_unknown" });
  });
  test("exactly at the cap is admitted, a micro-dollar over is not", () => {
    const b = new SpendBudget("cap", 0.01);
    expect(b.check(0.01).ok).toBe(true);
    expect(b.check(0.010001).ok).toBe(false);
  });
  test("admitAll: every budget must admit; nothing is reserved on a refusal", () => {
    const seat = new SpendBudget("seat", 10);
    const study = new SpendBudget("study", 0.001);
    expect(admitAll([seat, study], 0.01)).toMatchObject({ ok: false, budget: "study" });
    expect(seat.check(10).ok).toBe(true);
  });
  test("an unknown cost keeps its worst case reserved; the grant per request is what is left over the attached sharers", () => {
    const b = new SpendBudget("study", 3);
    expect(b.grantableUsd()).toBe(3);
    const detach = [b.attach(), b.attach(), b.attach(), b.attach()];
    expect(b.grantableUsd()).toBe(0.75);
    const t = b.reserve(0.75);
    expect(b.grantableUsd()).toBe(0.5625);
    b.settle(t, null);
    expect(b.worstCaseUsd).toBe(0.75);
    expect(b.grantableUsd()).toBe(0);
    for (const d of detach) d();
    expect(new SpendBudget("none", null).grantableUsd()).toBeNull();
    expect(grantableUsd([new SpendBudget("seat", 1), new SpendBudget("study", 0.5), new SpendBudget("none", null)])).toBe(0.5);
  });
});

describe("output grant", () => {
  test("the most output the grant affords after the input, between the minimum and the model's ceiling", () => {
    const body = { model: "gpt-5.1-codex", input: "hi" };
    const g = outputGrant(body, 1) as number;
    // 10 USD per 1M output tokens: 1 USD buys just under 100 000 after the input.
    expect(g).toBeLessThan(100_000);
    expect(g).toBeGreaterThan(99_000);
    expect(admissionEstimate({ ...body, max_output_tokens: g }).usd ?? 2).toBeLessThanOrEqual(1);
    expect(outputGrant(body, 100)).toBe(128_000);
    expect(outputGrant(body, 0.001)).toBe(MIN_OUTPUT_GRANT_TOKENS);
    expect(outputGrant({ model: "computer-use-preview", input: "hi" }, 0.001)).toBe(1_024);
    expect(outputGrant({ ...body, max_output_tokens: 5 }, 1)).toBeUndefined();
    expect(outputGrant(body, null)).toBeUndefined();
    expect(outputGrant({ model: "mystery-9", input: "hi" }, 1)).toBeUndefined();
  });
});

describe("admission estimate", () => {
  test("text: tokens counted, framing and margin added, max_output_tokens as the output bound", () => {
    const e = admissionEstimate({ model: "gpt-5.1-codex-mini", input: "hello world", max_output_tokens: 100 });
    expect(e.inputTokens).toBeGreaterThan(2);
    expect(e.outputTokens).toBe(100);
    expect(e.usd).toBeGreaterThan(0);
  });
  test("no max_output_tokens: the model's output ceiling; an unpriced model: usd null", () => {
    expect(admissionEstimate({ model: "gpt-5.1-codex", input: "x" }).outputTokens).toBe(128_000);
    expect(admissionEstimate({ model: "nope", input: "x" }).usd).toBeNull();
  });
  test("images by size: a PNG's header gives its pixels (tile rule); an unreadable size is the maximum", () => {
    const png = (w: number, h: number) => {
      const b = Buffer.alloc(64);
      Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52]).copy(b);
      b.writeUInt32BE(w, 16);
      b.writeUInt32BE(h, 20);
      return `data:image/png;base64,${b.toString("base64")}`;
    };
    const img = (url: string) =>
      admissionEstimate({ model: "gpt-5.1", input: [{ role: "user", content: [{ type: "input_image", image_url: url }] }] }).imageTokens;
    expect(img(png(512, 512))).toBe(255);
    expect(img(png(1024, 1024))).toBe(765); // 768×768 → 4 tiles
    expect(img(png(1280, 720))).toBe(1105); // shortest side already under 768: 3×2 tiles
    expect(img(png(4096, 8192))).toBe(1105); // → 1024×2048 → 768×1536: 2×3 tiles
    expect(img(png(768, 2048))).toBe(MAX_IMAGE_TOKENS); // 2×4 tiles, the most any image costs
    expect(img("https://example.com/cat.png")).toBe(MAX_IMAGE_TOKENS);
    expect(img("data:image/jpeg;base64,/9j/4AAQ")).toBe(MAX_IMAGE_TOKENS);
    // The base64 text is never counted as text tokens.
    const big = `data:image/png;base64,${Buffer.alloc(1024 * 1024).toString("base64")}`;
    expect(admissionEstimate({ model: "gpt-5.1", input: [{ role: "user", content: [{ type: "input_image", image_url: big }] }] }).inputTokens).toBeLessThan(
      100,
    );
  });
});

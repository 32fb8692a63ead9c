/** doctor --lab rows for a model seat: endpoint host, key by name, price where a cap needs one. */
import { describe, expect, test } from "bun:test";
import { modelReadiness } from "../../src/models/readiness.ts";

const row = (rows: ReturnType<typeof modelReadiness>, name: string) => rows.find((r) => r.name === name);

describe("modelReadiness", () => {
  test("a priced model, a key and a custom endpoint: all ok, the key only by name", () => {
    const rows = modelReadiness({
      model: "gpt-5.1-codex",
      maxUsd: 2,
      runtimeAuth: "openai-egress",
      env: { OPENAI_BASE_URL: "http://10.0.0.5:8000/v1", CODEX_API_KEY: "sk-secret-value" },
    });
    expect(rows.every((r) => r.ok)).toBe(true);
    expect(row(rows, "model endpoint")?.message).toContain("10.0.0.5:8000");
    expect(JSON.stringify(rows)).not.toContain("sk-secret-value");
    expect(row(rows, "model price")?.message).toContain("2025-11-20");
  });
  test("an unpriced model under a positive cap fails, named; under maxUsd 0 it only notes the null cost", () => {
    const bad = modelReadiness({ model: "local-llama", maxUsd: 1, runtimeAuth: "openai-env", env: { OPENAI_API_KEY: "k" } });
    expect(row(bad, "model price")).toMatchObject({ ok: false, required: true });
    expect(row(bad, "model price")?.message).toContain("local-llama");
    const zero = modelReadiness({ model: "local-llama", maxUsd: 0, runtimeAuth: "openai-egress", env: {} });
    expect(row(zero, "model price")).toMatchObject({ ok: true, required: false });
    expect(row(zero, "model price")?.message).toContain("null");
    expect(row(zero, "model key")).toMatchObject({ ok: true, required: false });
  });
  test("a missing key and a broken endpoint are required failures", () => {
    const rows = modelReadiness({ model: "gpt-5.1-codex", maxUsd: 1, runtimeAuth: "openai-egress", env: { OPENAI_BASE_URL: "ftp://x" } });
    expect(row(rows, "model key")).toMatchObject({ ok: false, required: true });
    expect(row(rows, "model endpoint")).toMatchObject({ ok: false, required: true });
  });
});

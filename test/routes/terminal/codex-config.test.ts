/**
 * Lab and preflight rules of a model seat, pure (no engine, no network): runtimeAuth values,
 * where openai-egress is accepted, maxUsd 0, the key by mode, the endpoint rule.
 */
import { describe, expect, test } from "bun:test";
import { parseLab } from "../../../src/lab/index.ts";
import type { TerminalLabConfig } from "../../../src/lab/schema.ts";
import { planTerminalStudy } from "../../../src/terminal-seat/plan.ts";
import { committedLab } from "./support.ts";

const base = committedLab("codex-first-contact").text;

function parse(text: string) {
  return parseLab(text);
}
function plan(text: string, env: Record<string, string | undefined>) {
  const r = parseLab(text);
  if (!r.ok) throw new Error(r.error.message);
  return planTerminalStudy(r.config as TerminalLabConfig, "live", env);
}
function refusal(f: () => unknown): { code?: string; message?: string } {
  try {
    f();
  } catch (e) {
    return e as { code: string; message: string };
  }
  throw new Error("expected a refusal");
}

describe("runtimeAuth in the lab", () => {
  test("an unknown value is HUMANISH_LAB_INVALID naming both accepted values", () => {
    const r = parse(base.replace("\n  runtimeAuth: openai-egress\n", "\n  runtimeAuth: openai-proxy\n"));
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.error.code).toBe("HUMANISH_LAB_INVALID");
      expect(r.error.message).toContain("execution.runtimeAuth");
      expect(r.error.message).toContain("openai-env or openai-egress");
    }
  });
  test("openai-egress is accepted on docker and on e2b-terminal (there the key lives in the sandbox's E2B egress rule)", () => {
    expect(parse(base).ok).toBe(true);
    const e2b = base.replace("  target: docker\n", "  target: e2b-terminal\n").replace(/\n {2}# jq comes[^\n]*\n[^\n]*\n {2}network: bridge\n/, "\n");
    expect(parse(e2b).ok).toBe(true);
    // egressAllow only acts on e2b-terminal.
    const r = parse(base.replace("  target: docker\n", "  target: docker\n  egressAllow: [registry.npmjs.org]\n"));
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.error.message).toContain("execution.egressAllow");
  });
});

describe("live preflight of a model seat", () => {
  test("maxUsd 0 is valid: no price and no key needed, the gateway lets nothing leave", () => {
    const p = plan(base.replace(/ {4}maxUsd: [0-9.]+/, "    maxUsd: 0"), { PATH: "/usr/bin" });
    expect(p.caps.maxUsd).toBe(0);
    expect(p.model).toMatchObject({ runtimeAuth: "openai-egress", endpoint: { host: "api.openai.com" } });
    expect(p.runtimeKey).toBeUndefined();
  });
  test("a positive cap without a key is RUNTIME_AUTH_MISSING naming the mode; the key is never in the message", () => {
    const e = refusal(() => plan(base, { PATH: "/usr/bin" }));
    expect(e.code).toBe("HUMANISH_TERMINAL_LAB_RUNTIME_AUTH_MISSING");
    expect(e.message).toContain("openai-egress");
  });
  test("the endpoint comes from OPENAI_BASE_URL; a bad one is HUMANISH_MODEL_ENDPOINT_INVALID", () => {
    expect(plan(base, { CODEX_API_KEY: "sk-x-123", OPENAI_BASE_URL: "http://10.1.2.3:9000/v1" }).model?.endpoint.host).toBe("10.1.2.3:9000");
    expect(refusal(() => plan(base, { CODEX_API_KEY: "sk-x-123", OPENAI_BASE_URL: "ftp://nope" })).code).toBe("HUMANISH_MODEL_ENDPOINT_INVALID");
  });
  test("an unpriced model under a positive cap is refused with the model named", () => {
    const e = refusal(() =>
      plan(base.replace("    reasoningEffort: low\n", "    reasoningEffort: low\n    model: my-vllm-model\n"), { CODEX_API_KEY: "sk-x-123" }),
    );
    expect(e.code).toBe("HUMANISH_TERMINAL_LAB_UNPRICED_CAP");
    expect(e.message).toContain("my-vllm-model");
  });
});

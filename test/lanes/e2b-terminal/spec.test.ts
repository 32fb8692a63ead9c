/**
 * The pure rules of the E2B terminal lane: sandbox timeout, metadata allowlist, egress policy
 * per runtime-auth mode (and the refusal of an existing rule), the sandbox-time estimate, the
 * Node probe and install script, and the env preflight (E2B_DEBUG refused, key by name).
 */
import { describe, expect, test } from "bun:test";
import { findActor } from "../../../src/actor-registry/registry.ts";
import type { ActorDescriptor } from "../../../src/actor-registry/types.ts";
import { buildCodexExecCommand, npxLauncher } from "../../../src/actors/codex-exec/command.ts";
import { latestOnce } from "../../../src/actors/codex-exec/index.ts";
import type { TerminalLabConfig } from "../../../src/lab/schema.ts";
import { e2bModelLine } from "../../../src/lanes/e2b-terminal/evidence.ts";
import { installScript, parseNodeProbe } from "../../../src/lanes/e2b-terminal/node.ts";
import { resolveE2BAccess } from "../../../src/lanes/e2b-terminal/preflight.ts";
import {
  E2B_RATES,
  E2B_SEAT_MARGIN_MS,
  e2bInstallFailureHint,
  egressPlan,
  sandboxTimeLine,
  seatMetadata,
  seatTimeoutMs,
} from "../../../src/lanes/e2b-terminal/spec.ts";
import { E2B_MAX_CONCURRENCY } from "../../../src/routes/terminal/e2b.ts";
import { NODE_ARTIFACT, NPM_ARTIFACT } from "../../../src/runtime/recipes.ts";
import { planConcurrency } from "../../../src/study/plan.ts";
import { remoteSlots } from "../../../src/study/remote-slots.ts";
import { planTerminalStudy } from "../../../src/terminal-seat/plan.ts";
import { labFromText } from "../../routes/terminal/support.ts";

const KEY = "sk-proj-fakeSPECkey-0123456789abcdef";

describe("seat sandbox", () => {
  test("timeout = maxMinutes + every setup bound the seat may use + checks + margin", () => {
    const scripted = seatTimeoutMs({ maxMinutes: 2, codex: false, installs: 0 });
    const codex = seatTimeoutMs({ maxMinutes: 2, codex: true, installs: 1 });
    expect(scripted).toBe(2 * 60_000 + 120_000 + E2B_SEAT_MARGIN_MS);
    expect(codex - scripted).toBe(300_000 + 60_000 + 600_000);
  });
  test("metadata is exactly run, seat and lab id", () => {
    expect(seatMetadata({ runId: "r1", seatId: "p2", labId: "lab-x" })).toEqual({ "humanish.run": "r1", "humanish.seat": "p2", "humanish.lab": "lab-x" });
    expect(seatMetadata({ runId: "r".repeat(300), seatId: "p", labId: "l" })["humanish.run"]).toHaveLength(200);
  });
});

describe("egress policy", () => {
  const base = { egressAllow: undefined, codex: true, installs: 0, runtimeAuth: "openai-env" as const, key: KEY };
  test("openai-env: unrestricted, the key in no rule", () => {
    const p = egressPlan(base);
    expect(p.policy).toBeUndefined();
    expect(p.description).not.toContain(KEY);
  });
  test("openai-egress: a header rule for api.openai.com, which allowOut contains; the description never holds the key", () => {
    const p = egressPlan({ ...base, runtimeAuth: "openai-egress" });
    expect(p.policy).toEqual({ allowOut: ["api.openai.com"], rules: { "api.openai.com": [{ transform: { headers: { Authorization: `Bearer ${KEY}` } } }] } });
    expect(p.description).not.toContain(KEY);
    expect(p.description).toContain("residual capability");
  });
  test("egressAllow: exactly the listed hosts, deny-all fallback; the model host is never added", () => {
    const p = egressPlan({ ...base, egressAllow: ["registry.npmjs.org", "API.openai.com"], runtimeAuth: "openai-egress" });
    expect(p.policy?.allowOut).toEqual(["registry.npmjs.org", "api.openai.com"]);
    expect(p.policy?.denyOut).toEqual(["0.0.0.0/0"]);
    expect(Object.keys(p.policy?.rules ?? {})).toEqual(["api.openai.com"]);
    // A scripted seat's list is taken as declared too.
    expect(egressPlan({ ...base, codex: false, runtimeAuth: undefined, key: undefined, egressAllow: ["registry.npmjs.org"] }).policy?.allowOut).toEqual([
      "registry.npmjs.org",
    ]);
  });
  test("a Codex seat whose egressAllow lacks its model host is refused, naming the host to add", () => {
    const refused = (o: Partial<Parameters<typeof egressPlan>[0]>) => {
      try {
        egressPlan({ ...base, egressAllow: ["registry.npmjs.org"], ...o });
      } catch (e) {
        return e as { code: string; message: string; next: string };
      }
      throw new Error("expected a refusal");
    };
    const def = refused({});
    expect(def.code).toBe("HUMANISH_TERMINAL_LAB_EGRESS_MODEL_HOST_MISSING");
    expect(def.message).toContain("api.openai.com");
    expect(def.next).toContain("Add api.openai.com to execution.egressAllow");
    // OPENAI_BASE_URL's host is the one to add when the seat reaches the model there.
    const custom = refused({ modelHost: "llm.example.test:8443", egressAllow: ["registry.npmjs.org", "api.openai.com"] });
    expect(custom.next).toContain("Add llm.example.test:8443");
    expect(() => egressPlan({ ...base, modelHost: "llm.example.test:8443", egressAllow: ["llm.example.test"] })).not.toThrow();
    expect(refused({ runtimeAuth: "openai-egress" }).code).toBe("HUMANISH_TERMINAL_LAB_EGRESS_MODEL_HOST_MISSING");
  });
  test("a scripted seat without installs gets no egress; with installs, unrestricted", () => {
    expect(egressPlan({ ...base, codex: false, runtimeAuth: undefined, key: undefined }).policy).toEqual({ denyOut: ["0.0.0.0/0"] });
    expect(egressPlan({ ...base, codex: false, installs: 1, runtimeAuth: undefined, key: undefined }).policy).toBeUndefined();
  });
  test("an existing exact rule for the model host is refused, not overwritten", () => {
    expect(() => egressPlan({ ...base, runtimeAuth: "openai-egress", existingRules: { "API.openai.com": [] } })).toThrow(
      expect.objectContaining({ code: "HUMANISH_TERMINAL_LAB_EGRESS_RULE_CONFLICT" }),
    );
    // A wildcard is not an exact rule for the host.
    expect(() => egressPlan({ ...base, runtimeAuth: "openai-egress", existingRules: { "*.openai.com": [] } })).not.toThrow();
    expect(() => egressPlan({ ...base, runtimeAuth: "openai-egress", key: undefined })).toThrow(
      expect.objectContaining({ code: "HUMANISH_TERMINAL_LAB_RUNTIME_AUTH_MISSING" }),
    );
  });
});

describe("install failure", () => {
  test("the next step names E2B's egress knob (execution.egressAllow), never Docker's execution.network", () => {
    const open = e2bInstallFailureHint(undefined);
    const listed = e2bInstallFailureHint(["registry.npmjs.org"]);
    expect(open).toContain("no execution.egressAllow");
    expect(listed).toContain("add that host to execution.egressAllow");
    expect(listed).toContain("registry.npmjs.org");
    for (const t of [open, listed]) expect(t).not.toContain("execution.network");
  });
});

describe("costs", () => {
  test("sandbox time: an estimate over create → confirmed release at the dated rate", () => {
    const l = sandboxTimeLine({ participantId: "p1", acquiredAt: 0, releasedAt: 60_000, resources: { cpuCount: 2, memoryMB: 1024 }, released: true });
    expect(l).toMatchObject({ kind: "sandbox-minutes", basis: "rate-table", ratesAsOf: E2B_RATES.asOf, count: 1 });
    expect(l.usd).toBeCloseTo(60 * (2 * 0.000014 + 0.0000045), 6);
    expect(l.source).toContain("e2b.dev");
  });
  test("unknown resources or an unconfirmed release are unmeasured, never zero; no sandbox is a known zero", () => {
    expect(sandboxTimeLine({ participantId: "p1", acquiredAt: 0, releasedAt: 1, resources: undefined, released: true })).toMatchObject({
      usd: null,
      basis: "unmeasured",
    });
    expect(sandboxTimeLine({ participantId: "p1", acquiredAt: 0, releasedAt: 1, resources: { cpuCount: 1, memoryMB: 512 }, released: false })).toMatchObject({
      usd: null,
      reason: expect.stringContaining("unconfirmed"),
    });
    expect(sandboxTimeLine({ participantId: "p1", acquiredAt: undefined, releasedAt: 1, resources: undefined, released: false })).toMatchObject({
      usd: 0,
      basis: "no-spend-signal",
    });
  });
  test("Codex turn usage without an observed model is unpriced-token-usage", () => {
    const descriptor = findActor("codex-exec") as ActorDescriptor;
    const usage = { input: 10, cachedInput: 2, output: 5, total: 15, turns: [{ input: 10, cachedInput: 2, output: 5, total: 15 }] };
    const outcome = {
      tokenUsage: usage,
      estimatedCost: { estimatedCostUsd: 0.01, modelId: "gpt-5.1-codex", ratesAsOf: "2026-01-01", source: "table" },
    } as never;
    const line = e2bModelLine({ descriptor, participantId: "p1", outcome, keyedCommandRan: true, requestedModel: "gpt-5.1-codex", today: "2026-12-01" });
    expect(line).toMatchObject({ usd: null, basis: "unpriced-token-usage", count: 1, ratesAsOf: null });
    expect(e2bModelLine({ descriptor, participantId: "p1", outcome, keyedCommandRan: false, requestedModel: undefined, today: "2026-12-01" })).toMatchObject({
      usd: 0,
    });
  });
});

describe("node prerequisite", () => {
  test("the probe reads node ≥ 20 with npm as usable, anything else as needing the pinned install", () => {
    expect(parseNodeProbe("node=v22.23.5\nnpm=yes\n")).toEqual({ kind: "usable", version: "22.23.5" });
    expect(parseNodeProbe("node=v18.19.0\nnpm=yes\n")).toEqual({ kind: "too-old", version: "18.19.0" });
    expect(parseNodeProbe("node=v20.0.0\nnpm=no\n")).toEqual({ kind: "no-npm", version: "20.0.0" });
    expect(parseNodeProbe("node=\nnpm=no\n")).toEqual({ kind: "absent" });
  });
  test("the install script checks both pinned SHA-256s before any extraction", () => {
    const s = installScript(NODE_ARTIFACT, NPM_ARTIFACT);
    expect(s).toContain(NODE_ARTIFACT.sha256);
    expect(s).toContain(NPM_ARTIFACT.sha256);
    expect(s.indexOf("sha256sum -c")).toBeGreaterThan(-1);
    expect(s.indexOf("sha256sum -c")).toBeLessThan(s.indexOf("tar "));
    expect(s.startsWith("set -eu")).toBe(true);
  });
});

describe("env preflight", () => {
  test("E2B_DEBUG is refused; a missing key is named; the connection comes from the E2B_* names", () => {
    expect(() => resolveE2BAccess({ E2B_API_KEY: "k", E2B_DEBUG: "true" })).toThrow(expect.objectContaining({ code: "HUMANISH_E2B_DEBUG_REFUSED" }));
    expect(() => resolveE2BAccess({ E2B_API_KEY: " " })).toThrow(expect.objectContaining({ code: "HUMANISH_TERMINAL_LAB_KEYS_MISSING" }));
    const a = resolveE2BAccess({ E2B_API_KEY: "k", E2B_API_URL: "http://127.0.0.1:1", E2B_SANDBOX_URL: "http://127.0.0.1:2" }, "t1");
    expect(a).toMatchObject({ apiKey: "k", template: "t1", connection: { apiUrl: "http://127.0.0.1:1", sandboxUrl: "http://127.0.0.1:2" } });
  });
});

describe("Codex on a hosted sandbox", () => {
  const key = { sourceName: "CODEX_API_KEY", value: KEY };
  const input = { prompt: "p", workdir: "/home/user/study", home: "/home/user", launcher: npxLauncher("0.171.0") };
  test("openai-env: the real key is the command's CODEX_API_KEY, a retry-free provider at the public API, through npx at the exact version", () => {
    const c = buildCodexExecCommand({ ...input, direct: { auth: "openai-env" }, key });
    expect(c.argv.slice(0, 4)).toEqual(["npx", "-y", "@openai/codex@0.171.0", "exec"]);
    expect(c.env).toEqual({ HOME: "/home/user", CODEX_API_KEY: KEY });
    expect(c.argv).toEqual(
      expect.arrayContaining([
        'model_provider="humanish"',
        'model_providers.humanish.base_url="https://api.openai.com/v1"',
        "model_providers.humanish.request_max_retries=0",
        "model_providers.humanish.stream_max_retries=0",
      ]),
    );
  });
  test("openai-egress: a placeholder key, the system CA bundle, a retry-free provider pinned to the public base URL", () => {
    const c = buildCodexExecCommand({ ...input, direct: { auth: "openai-egress" }, key, extraEnv: { CODEX_CA_CERTIFICATE: "/opt/x.pem" } });
    expect(c.env).toEqual({
      HOME: "/home/user",
      CODEX_API_KEY: "humanish-egress-auth-placeholder",
      CODEX_CA_CERTIFICATE: "/etc/ssl/certs/ca-certificates.crt",
    });
    expect(JSON.stringify(c)).not.toContain(KEY);
    expect(c.argv).toEqual(
      expect.arrayContaining([
        'model_provider="humanish"',
        'model_providers.humanish.base_url="https://api.openai.com/v1"',
        "model_providers.humanish.request_max_retries=0",
      ]),
    );
  });
  test("latest is resolved once for all seats; a failed resolution is not kept", async () => {
    const latest = latestOnce();
    let calls = 0;
    const resolve = async () => {
      calls++;
      await Bun.sleep(5);
      return "0.171.0";
    };
    expect(await Promise.all([latest.resolve(resolve), latest.resolve(resolve), latest.resolve(resolve)])).toEqual(["0.171.0", "0.171.0", "0.171.0"]);
    expect(calls).toBe(1);
    const flaky = latestOnce();
    await expect(flaky.resolve(() => Promise.reject(new Error("registry down")))).rejects.toThrow("registry down");
    expect(await flaky.resolve(resolve)).toBe("0.171.0");
  });
  test("a live e2b study: Codex always needs its key (no gateway refuses for it), and maxUsd must be positive", () => {
    const lab = (caps: string, actor: string) =>
      labFromText(`
schema: humanish.lab.v2
id: e2b-plan
subject: { source: terminal-product, product: { name: jq, publicSurfaces: [https://jqlang.org/] } }
actors:
  - ${actor}
execution: { target: e2b-terminal }
scenario: { mode: live, caps: ${caps} }
`) as TerminalLabConfig;
    const codex = "{ type: codex-exec, mission: use jq, tasks: [{ id: version, goal: Print the jq version., check: { run: 'true' } }] }";
    expect(() => planTerminalStudy(lab("{ maxUsd: 0.5, maxMinutes: 2 }", codex), "live", {})).toThrow(
      expect.objectContaining({ code: "HUMANISH_TERMINAL_LAB_RUNTIME_AUTH_MISSING" }),
    );
    expect(() => planTerminalStudy(lab("{ maxUsd: 0, maxMinutes: 2 }", "{ type: scripted-terminal, steps: [{ run: 'true' }] }"), "live", {})).toThrow(
      expect.objectContaining({ code: "HUMANISH_TERMINAL_LAB_CAPS_INVALID" }),
    );
    const p = planTerminalStudy(lab("{ maxUsd: 0.5, maxMinutes: 2 }", codex), "live", { CODEX_API_KEY: KEY });
    expect(p).toMatchObject({ target: "e2b-terminal", model: { runtimeAuth: "openai-env" }, runtimeKey: { sourceName: "CODEX_API_KEY" } });
  });
});

describe("remote seat slots", () => {
  test("at most `limit` held; a confirmed release frees one; an unconfirmed one stays held", () => {
    const s = remoteSlots(2);
    expect(s.reserve("a").ok).toBe(true);
    expect(s.reserve("b").ok).toBe(true);
    expect(s.reserve("c")).toEqual({ ok: false, code: "capacity_exhausted" });
    expect(s.reserve("a").ok).toBe(true);
    s.confirmAbsent("a");
    expect(s.reserve("c").ok).toBe(true);
    expect(s.usage()).toEqual({ used: 2, perStudy: 2 });
  });
  test("a 16-seat E2B study runs 16 at once (the host's memory is no bound)", () => {
    const p = planConcurrency({ seats: 16, requested: 16, perStudyLimit: E2B_MAX_CONCURRENCY, seatMemoryBytes: 1, availableMemoryBytes: E2B_MAX_CONCURRENCY });
    expect(p).toMatchObject({ concurrency: 16, waves: 1 });
  });
});

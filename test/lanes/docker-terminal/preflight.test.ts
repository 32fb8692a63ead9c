/**
 * Terminal dry runs (contract-only bundles on every target, with no engine, key or network) and
 * live preflight refusals, each before any run directory or sandbox exists.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { defaultTrust, verifyFiles } from "../../../src/bundle/index.ts";
import { readBundleDir } from "../../../src/bundle/verify/disk.ts";
import { verifyRun } from "../../../src/bundle/verify.ts";
import { createDockerClient } from "../../../src/docker/index.ts";
import { isHumanishError } from "../../../src/errors.ts";
import { runTerminalStudy } from "../../../src/routes/terminal/index.ts";
import { committedLab, containersOfRun, labFromText, studyContext, testRunId, tmpProject } from "../../routes/terminal/support.ts";

const project = tmpProject();
afterAll(() => project.cleanup());

/** A Docker client on a socket nobody listens on: any engine call fails. */
const deadDocker = createDockerClient({ socketPath: join(project.dir, "no-engine.sock") });

async function refusal(p: Promise<unknown>): Promise<{ code: string; message: string; next?: string }> {
  try {
    await p;
  } catch (e) {
    if (isHumanishError(e)) return { code: e.code, message: e.message, ...(e.next ? { next: e.next } : {}) };
    throw e;
  }
  throw new Error("expected a refusal");
}

function withTarget(text: string, target: string): string {
  return text.replace(/target: docker/, `target: ${target}`);
}

describe("dry run", () => {
  for (const name of ["jq-first-contact", "codex-first-contact"]) {
    test(`${name}: contract-only bundle that verifies, with no engine and no key`, async () => {
      const lab = committedLab(name);
      const runId = testRunId("dry");
      const ctx = studyContext({ cwd: project.dir, lab: lab.config, text: lab.text, ref: lab.ref, runId, mode: "dry-run", env: {} });
      const r = await runTerminalStudy(ctx, { docker: deadDocker });
      expect(r.ok).toBe(true);
      expect(r.mode).toBe("dry-run");
      expect(r.verify).toEqual({ ok: true, shareSafety: "share_ready" });
      expect(r.reward).toBeNull();
      expect(r.tasks.every((t) => t.status === "not_run")).toBe(true);
      expect(r.verdict.startsWith("contract only, nothing ran: 1 participant(s) planned; tasks: pretty-print · ")).toBe(true);
      expect((await verifyRun(r.runDir)).ok).toBe(true);
      const run = JSON.parse(readFileSync(join(r.runDir, "run.json"), "utf8"));
      expect(run.review.verdict).toBe("contract_proof_only");
      expect(run.cleanup).toEqual([]);
      expect(run.participants[0].status).toBe("contract_proof_only");
      const events = run.lifecycle.map((l: { event: string }) => l.event);
      expect(events).toEqual(
        expect.arrayContaining([
          "terminal-lab.run.created",
          "terminal-lab.subject.declared",
          "terminal-lab.credentials.declared",
          "terminal-lab.caps.declared",
          "terminal-lab.contract.ready",
        ]),
      );
      expect(existsSync(join(r.runDir, "sandbox-receipts.ndjson"))).toBe(false);
    });
  }

  test("codex dry run declares the exact runtime it would install and the model it would pass", async () => {
    const lab = committedLab("codex-first-contact");
    const ctx = studyContext({
      cwd: project.dir,
      lab: lab.config,
      text: lab.text,
      runId: testRunId("dry"),
      mode: "dry-run",
      env: { CODEX_API_KEY: "sk-dryrun-canary-0123456789abcdefghij" },
    });
    const r = await runTerminalStudy(ctx, { docker: deadDocker });
    const text = readFileSync(join(r.runDir, "run.json"), "utf8");
    expect(text).toContain("@openai/codex@0.171.0");
    expect(text).toContain("CODEX_API_KEY or OPENAI_API_KEY (not read in a dry run)");
    expect(text).not.toContain("sk-dryrun-canary");
  });

  test("the dry run records the key channel the lab declares (openai-egress); verify refuses a bundle that records another", async () => {
    const lab = committedLab("codex-first-contact");
    expect(lab.config.execution).toMatchObject({ runtimeAuth: "openai-egress" });
    const ctx = studyContext({
      cwd: project.dir,
      lab: lab.config,
      text: lab.text,
      ref: "embedded:codex-first-contact",
      runId: testRunId("dry"),
      mode: "dry-run",
    });
    const r = await runTerminalStudy(ctx, { docker: deadDocker });
    expect(r.verify).toEqual({ ok: true, shareSafety: "share_ready" });
    const run = JSON.parse(readFileSync(join(r.runDir, "run.json"), "utf8")) as { lifecycle: { event: string; message: string }[] };
    const declared = run.lifecycle.find((l) => l.event === "terminal-lab.credentials.declared")!;
    expect(declared.message).toStartWith("runtime key channel openai-egress via CODEX_API_KEY or OPENAI_API_KEY");
    const files = (await readBundleDir(r.runDir)).files;
    const evidence = async (channel: string) => {
      const edited = files.map((f) =>
        f.path === "run.json"
          ? {
              path: f.path,
              bytes: new TextEncoder().encode(new TextDecoder().decode(f.bytes).replace("runtime key channel openai-egress", `runtime key channel ${channel}`)),
            }
          : f,
      );
      const v = await verifyFiles({ run: ctx.runId, files: edited, trust: defaultTrust() });
      return v.checks.find((c) => c.name === "terminal-product evidence")!;
    };
    expect(await evidence("openai-egress")).toMatchObject({ ok: true, message: "dry run: contract only, exempt; its key channel is the one the lab declares" });
    const wrong = await evidence("openai-env");
    expect(wrong.ok).toBe(false);
    expect(wrong.message).toContain("records key channel openai-env, but lab embedded:codex-first-contact declares execution.runtimeAuth openai-egress");
  });

  test("e2b-terminal target: dry run works", async () => {
    const lab = committedLab("jq-first-contact");
    const text = withTarget(lab.text, "e2b-terminal").replace(/\n {2}network: bridge\n/, "\n");
    const config = labFromText(text);
    const r = await runTerminalStudy(studyContext({ cwd: project.dir, lab: config, text, runId: testRunId("dry"), mode: "dry-run" }), { docker: deadDocker });
    expect(r.ok).toBe(true);
    expect(JSON.parse(readFileSync(join(r.runDir, "run.json"), "utf8")).target).toBe("e2b-terminal");
  });
});

describe("live preflight refuses before anything exists", () => {
  const runsDir = join(project.dir, ".humanish", "runs");
  const live = async (text: string, env: Record<string, string | undefined> = {}, docker = deadDocker) => {
    const runId = testRunId("pre");
    const err = await refusal(runTerminalStudy(studyContext({ cwd: project.dir, lab: labFromText(text), text, runId, mode: "live", env }), { docker }));
    expect(existsSync(join(runsDir, runId))).toBe(false);
    return { err, runId };
  };

  test("codex-exec without CODEX_API_KEY / OPENAI_API_KEY → RUNTIME_AUTH_MISSING", async () => {
    const { err } = await live(committedLab("codex-first-contact").text, { OPENAI_API_KEY: "  ", PATH: "/usr/bin" });
    expect(err.code).toBe("HUMANISH_TERMINAL_LAB_RUNTIME_AUTH_MISSING");
    expect(err.message).toContain("CODEX_API_KEY or OPENAI_API_KEY");
    expect(err.next).toContain("CODEX_API_KEY");
  });

  test("live without caps → CAPS_MISSING (maxUsd unset, or maxMinutes 0)", async () => {
    const base = committedLab("jq-first-contact").text;
    expect((await live(base.replace("    maxUsd: 0\n", ""))).err.code).toBe("HUMANISH_TERMINAL_LAB_CAPS_MISSING");
    expect((await live(base.replace("maxMinutes: 5", "maxMinutes: 0"))).err.code).toBe("HUMANISH_TERMINAL_LAB_CAPS_MISSING");
  });

  test("codex-exec under an unpriced positive cap is refused before the key is used (maxUsd 0 needs no price)", async () => {
    const codex = committedLab("codex-first-contact").text;
    const env = { CODEX_API_KEY: "sk-canary-preflight-0123456789abcdefgh" };
    const unpriced = codex.replace("    reasoningEffort: low\n", "    reasoningEffort: low\n    model: some-unpriced-model\n");
    const { err } = await live(unpriced, env);
    expect(err.code).toBe("HUMANISH_TERMINAL_LAB_UNPRICED_CAP");
    expect(err.message).not.toContain("sk-canary");
  });

  test("e2b-terminal live: maxUsd 0 → CAPS_INVALID (E2B bills sandbox time); no E2B_API_KEY → KEYS_MISSING; nothing spent", async () => {
    const text = withTarget(committedLab("jq-first-contact").text, "e2b-terminal").replace(/\n {2}network: bridge\n/, "\n");
    const { err } = await live(text);
    expect(err.code).toBe("HUMANISH_TERMINAL_LAB_CAPS_INVALID");
    expect(err.message).toContain("E2B bills");
    const { err: keys } = await live(text.replace("    maxUsd: 0\n", "    maxUsd: 0.5\n"));
    expect(keys.code).toBe("HUMANISH_TERMINAL_LAB_KEYS_MISSING");
    expect(keys.message).toContain("E2B_API_KEY");
  });

  test("a Codex seat on e2b-terminal whose egressAllow lacks the model host is refused, naming the host (never added silently)", async () => {
    const text = withTarget(committedLab("codex-first-contact").text, "e2b-terminal")
      .replace(/\n {2}network: bridge\n/, "\n")
      .replace("  target: e2b-terminal\n", "  target: e2b-terminal\n  egressAllow: [registry.npmjs.org]\n");
    // E2B_API_URL points nowhere: the refusal comes before any call to it.
    const env = { CODEX_API_KEY: "sk-canary-egress-0123456789abcdefgh", E2B_API_KEY: "e2b_canary_0123456789", E2B_API_URL: "http://127.0.0.1:9" };
    const { err } = await live(text, env);
    expect(err.code).toBe("HUMANISH_TERMINAL_LAB_EGRESS_MODEL_HOST_MISSING");
    expect(err.next).toContain("Add api.openai.com to execution.egressAllow");
    const viaBase = await live(text.replace("\n  runtimeAuth: openai-egress\n", "\n  runtimeAuth: openai-env\n"), {
      ...env,
      OPENAI_BASE_URL: "https://llm.example.test/v1",
    });
    expect(viaBase.err.code).toBe("HUMANISH_TERMINAL_LAB_EGRESS_MODEL_HOST_MISSING");
    expect(viaBase.err.next).toContain("Add llm.example.test to execution.egressAllow");
  });

  test("an unreachable Docker socket → HUMANISH_DOCKER_UNAVAILABLE", async () => {
    const { err } = await live(committedLab("jq-first-contact").text);
    expect(err.code).toBe("HUMANISH_DOCKER_UNAVAILABLE");
  });

  test("a missing execution.image → HUMANISH_SANDBOX_IMAGE_MISSING, no container", async () => {
    const text = committedLab("jq-first-contact").text.replace("  network: bridge\n", "  network: bridge\n  image: humanish-no-such-image:0\n");
    const { err, runId } = await live(text, {}, createDockerClient());
    expect(err.code).toBe("HUMANISH_SANDBOX_IMAGE_MISSING");
    expect(err.message).toContain("humanish-no-such-image:0");
    expect(await containersOfRun(runId)).toEqual([]);
  });
});

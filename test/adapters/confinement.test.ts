/**
 * A hostile scorer (test/fixtures/adapters/hostile-scorer.mjs) against the real Docker engine:
 * it reads /proc/$PPID/environ, /proc/1/environ and every /proc/<pid>/environ, reads the signing
 * key, tries to edit and re-seal another run's bundle, leaves `sleep` processes holding its
 * stdout, and loops forever in a hook. humanish runs in a process of its own with provider-key
 * canaries in its environment from the start (./hostile-host.ts).
 *
 * Confined (an engine is usable): no canary is reachable, the key is unreadable, the other run
 * is untouched and still verifies, no process the scorer started is left, both of its containers
 * are gone, and humanish returns soon after the hook deadline (which the `sleep 45` would have
 * held for 45 s). Without an engine the scorer does not run at all unless the operator opts in;
 * opted in, it is recorded and reported as unconfined, its whole process group is killed, and —
 * so the README's warning is tested too — it really can read humanish's environment.
 */
import { afterAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { createHash, randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync, realpathSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { loadScorerModule } from "../../src/adapters/load.ts";
import { deriveReview } from "../../src/bundle/derive.ts";
import { verifyRun } from "../../src/bundle/verify.ts";
import { dockerClientFor, isDockerApiError } from "../../src/docker/index.ts";
import { expectCode, tempProject, writeLiveTerminal } from "../bundle/helpers.ts";
import { requireDocker } from "../support/prereq.ts";

setDefaultTimeout(180_000);

const ROOT = resolve(import.meta.dir, "../..");
const FIXTURE = join(ROOT, "test/fixtures/adapters/hostile-scorer.mjs");
const OPENAI_CANARY = `sk-proj-canary${randomBytes(12).toString("hex")}`;
const TOKEN_CANARY = `ghp_canary${randomBytes(12).toString("hex")}`;
const sha = (s: string) => createHash("sha256").update(s).digest("hex");

/** Short deadlines, so the `sleep 45` the scorer leaves would show as a hang far past them. */
const LOAD_MS = 15_000;
const HOOK_MS = 2_000;
/** Generous: container start-ups on a loaded machine, yet well under the 45 s the stray `sleep` would hold. */
const RETURNS_WITHIN_MS = 40_000;

const cleanups: (() => void)[] = [];
afterAll(() => {
  for (const c of cleanups) c();
});

interface HostResult {
  failure: { code: string; message: string } | null;
  data: { names: string[]; digests: string[]; readable: number; keyRead: boolean; resealed: string; ppid: number } | null;
  provenance: {
    confinement?: { mode: string; image?: string; containers?: { id: string; outcome: string }[]; reason?: string; optIn?: string };
  };
  warnings: string[];
  verify: { ok: boolean; adapter: { ok: boolean; message: string } | null };
}

/** A project with a verified victim run, and the hostile scorer in a folder of its own aimed at it. */
async function setup() {
  const p = tempProject();
  cleanups.push(p.cleanup);
  const victim = await writeLiveTerminal(p.cwd, "victim-1");
  const t = victim.input.tasks ?? [];
  await victim.w.finalize({
    ...victim.input,
    review: deriveReview({ mode: "live", outcome: { state: "completed" }, participants: victim.input.participants ?? [], tasks: t }),
  });
  expect((await verifyRun(victim.w.runDir)).ok).toBe(true);
  const scorerDir = join(p.cwd, "labs", "hostile");
  mkdirSync(scorerDir, { recursive: true });
  const scorer = join(scorerDir, "hostile-scorer.mjs");
  writeFileSync(scorer, readFileSync(FIXTURE));
  // `sleep 45.<n>`: 45 s, and an argument no other process on the machine has.
  const marker = `45.${String(randomBytes(3).readUIntBE(0, 3)).padStart(8, "0")}`;
  const keyFile = join(process.env.HUMANISH_CONFIG_DIR!, "signing-key.pem");
  expect(existsSync(keyFile)).toBe(true);
  writeFileSync(
    join(scorerDir, "target.json"),
    JSON.stringify({
      keyFile,
      victimDir: victim.w.runDir,
      victimRunId: "victim-1",
      keysModule: join(ROOT, "src/bundle/signing/keys.ts"),
      sealModule: join(ROOT, "src/bundle/signing/seal.ts"),
      marker,
    }),
  );
  return { project: p.cwd, scorer: realpathSync(scorer), marker, victimDir: victim.w.runDir, victimBytes: readFileSync(join(victim.w.runDir, "run.json")) };
}

/** Run ./hostile-host.ts with the canaries in its environment; its result and wall time. */
async function host(o: { scorer: string; project: string; unconfined: boolean }): Promise<{ r: HostResult; wallMs: number; code: number; err: string }> {
  const started = performance.now();
  const proc = Bun.spawn([process.execPath, join(import.meta.dir, "hostile-host.ts"), JSON.stringify({ ...o, loadMs: LOAD_MS, hookMs: HOOK_MS })], {
    cwd: o.project,
    env: { ...process.env, OPENAI_API_KEY: OPENAI_CANARY, GITHUB_TOKEN: TOKEN_CANARY },
    stdout: "pipe",
    stderr: "pipe",
  });
  // Read to the end: a stray process holding these pipes would keep this waiting, so the wall time shows it.
  const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  const wallMs = performance.now() - started;
  return { r: (out.trim() ? JSON.parse(out) : null) as HostResult, wallMs, code, err };
}

/** Host pids of processes running `sleep <marker>` (container processes show in the host's /proc too). */
function strays(marker: string): number[] {
  const out: number[] = [];
  for (const d of readdirSync("/proc")) {
    if (!/^[0-9]+$/.test(d)) continue;
    try {
      const cmd = readFileSync(`/proc/${d}/cmdline`, "utf8").split("\0");
      if (cmd.includes(marker) && cmd.some((a) => a.endsWith("sleep"))) out.push(Number(d));
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

describe("a hostile scorer", () => {
  test("confined: no secret, no key, no other run, no process left, both containers gone, back soon after the deadline", async () => {
    await requireDocker();
    const s = await setup();
    const { r, wallMs, code, err } = await host({ scorer: s.scorer, project: s.project, unconfined: false });
    expect({ code, err: code === 0 ? "" : err.slice(-2000) }).toEqual({ code: 0, err: "" });

    // The loop in deriveFeedback met its deadline; the score before it came back.
    expect(r.failure).toMatchObject({ code: "HUMANISH_ADAPTER_HOOK_TIMEOUT" });
    expect(wallMs).toBeLessThan(RETURNS_WITHIN_MS);
    const data = r.data!;
    expect(data.readable).toBeGreaterThan(0);
    expect(data.names).not.toContain("OPENAI_API_KEY");
    expect(data.names).not.toContain("GITHUB_TOKEN");
    expect(data.names).not.toContain("HUMANISH_CONFIG_DIR");
    expect(data.digests).not.toContain(sha(OPENAI_CANARY));
    expect(data.digests).not.toContain(sha(TOKEN_CANARY));
    expect(data.keyRead).toBe(false);
    expect(data.resealed).toStartWith("failed");
    expect(readFileSync(join(s.victimDir, "run.json"))).toEqual(s.victimBytes);
    expect((await verifyRun(s.victimDir)).ok).toBe(true);

    expect(strays(s.marker)).toEqual([]);
    const c = r.provenance.confinement!;
    expect(c).toMatchObject({ mode: "container", image: expect.stringMatching(/^humanish-sandbox:/) });
    expect(c.containers?.map((x) => x.outcome)).toEqual(["released", "released"]);
    const docker = dockerClientFor(process.env);
    for (const x of c.containers ?? []) {
      const gone = await docker.containerInspect(x.id).then(
        () => false,
        (e: unknown) => isDockerApiError(e, 404),
      );
      expect(gone).toBe(true);
    }
    expect(r.verify.ok).toBe(true);
    expect(r.verify.adapter?.message).toContain("confined in 2 container(s)");
  });

  test("no engine and no opt-in: refused before the module runs at all", async () => {
    const p = tempProject();
    cleanups.push(p.cleanup);
    const path = join(p.cwd, "scorer.mjs");
    const ran = join(p.cwd, "it-ran");
    writeFileSync(path, `import { writeFileSync } from "node:fs";\nwriteFileSync(${JSON.stringify(ran)}, "x");\nexport const score = () => ({});\n`);
    const e = await expectCode(
      loadScorerModule(path, "./scorer.mjs", "manifest", { env: { DOCKER_HOST: "unix:///nonexistent/docker.sock" } }),
      "HUMANISH_LAB_SCORER_UNCONFINED",
    );
    expect(e.message).toContain("signing key");
    expect(e.next).toContain("HUMANISH_ALLOW_UNCONFINED_SCORER=1");
    expect(existsSync(ran)).toBe(false);
  });

  test("opted in without an engine: recorded and reported as unconfined, its process group killed, back soon after the deadline", async () => {
    const s = await setup();
    const { r, wallMs, code, err } = await host({ scorer: s.scorer, project: s.project, unconfined: true });
    expect({ code, err: code === 0 ? "" : err.slice(-2000) }).toEqual({ code: 0, err: "" });
    expect(r.failure).toMatchObject({ code: "HUMANISH_ADAPTER_HOOK_TIMEOUT" });
    expect(wallMs).toBeLessThan(RETURNS_WITHIN_MS);
    expect(strays(s.marker)).toEqual([]);
    expect(r.provenance.confinement).toMatchObject({
      mode: "unconfined",
      optIn: "HUMANISH_ALLOW_UNCONFINED_SCORER=1",
      reason: expect.stringContaining("no Docker engine is usable"),
    });
    expect(r.warnings).toContain("HUMANISH_ADAPTER_UNCONFINED");
    expect(r.verify.ok).toBe(true);
    expect(r.verify.adapter?.message).toContain("UNCONFINED");
    // What the warning says is true: unconfined, it reads humanish's environment and the key.
    expect(r.data?.digests).toContain(sha(OPENAI_CANARY));
    expect(r.data?.keyRead).toBe(true);
  });
});

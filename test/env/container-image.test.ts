/**
 * The server's container recipe (runtime/env-server/Dockerfile) on the real engine: a fresh
 * binary (built to a temp path, never over dist/) in the slim image, run with each backend,
 * reached on a loopback-published port 8000 — /health, MAX_CONCURRENT_ENVS, the e2b backend's
 * missing-key answer, and the docker backend (socket mounted, socket group added, not root)
 * running a whole episode in a sandbox on the host engine and releasing it on `docker stop`.
 * Everything this test creates carries its own run label and is removed by exact id or tag.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { randomUUID } from "node:crypto";
import { mkdtemp, readFile, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createDockerClient, type DockerClient, tarPack } from "../../src/docker/index.ts";
import { requireDocker, requireImage } from "../support/prereq.ts";
import { OpenEnvMcpClient, OpenEnvWsClient, openEnvHttp } from "./openenv-client.ts";
import { inspectStatus, TEST_RUN_LABEL, testImage } from "./support.ts";

setDefaultTimeout(240_000);

const ROOT = join(import.meta.dir, "../..");
const runLabel = `env-image-${randomUUID()}`;
const tag = `humanish-env-server-test:${runLabel.slice(-12)}`;
let docker: DockerClient;
let socketPath: string;
let tmp: string;
const containers: string[] = [];

beforeAll(async () => {
  socketPath = await requireDocker();
  await requireImage("debian:bookworm-slim");
  docker = createDockerClient({ socketPath });
  tmp = await mkdtemp(join(tmpdir(), "humanish-env-image-"));
  const outfile = join(tmp, "humanish");
  const build = Bun.spawnSync([process.execPath, join(ROOT, "build.ts"), "--outfile", outfile], { cwd: ROOT, stderr: "pipe" });
  if (build.exitCode !== 0) throw new Error(`bun build.ts failed: ${build.stderr.toString()}`);
  const context = tarPack([
    { path: "Dockerfile", data: await readFile(join(ROOT, "runtime/env-server/Dockerfile")) },
    { path: "dist/humanish", data: new Uint8Array(await readFile(outfile)), mode: 0o755 },
  ]);
  await docker.imageBuild(context, { tags: [tag], labels: { [TEST_RUN_LABEL]: runLabel } });
});

afterAll(async () => {
  for (const id of containers) await docker?.containerRemove(id, { force: true }).catch(() => undefined);
  await docker?.imageRemove(tag, { force: true }).catch(() => undefined);
  if (tmp) await rm(tmp, { recursive: true, force: true });
});

/** Runs the image with `cmd` after the entrypoint, port 8000 published on 127.0.0.1; returns its id and base URL. */
async function run(cmd: string[], env: string[], extra: Record<string, unknown> = {}): Promise<{ id: string; url: string }> {
  const id = await start(cmd, env, extra);
  const info = (await docker.containerInspect(id)) as unknown as { NetworkSettings: { Ports: Record<string, { HostPort: string }[] | null> } };
  const port = info.NetworkSettings.Ports["8000/tcp"]?.[0]?.HostPort;
  if (!port) throw new Error("port 8000 was not published");
  return { id, url: `http://127.0.0.1:${port}` };
}

/**
 * Creates and starts the container; returns its id. A container that exits at once has no
 * published port left to read by the time it is inspected, so this does not look for one.
 */
async function start(cmd: string[], env: string[], extra: Record<string, unknown> = {}): Promise<string> {
  const { Id } = await docker.containerCreate({
    Image: tag,
    Cmd: cmd,
    Env: env,
    Labels: { [TEST_RUN_LABEL]: runLabel },
    HostConfig: { PortBindings: { "8000/tcp": [{ HostIp: "127.0.0.1", HostPort: "" }] }, ...extra },
  });
  containers.push(Id);
  await docker.containerStart(Id);
  return Id;
}

/** Polls /health until the server answers (the container needs a moment to start). */
async function healthy(url: string, id: string): Promise<unknown> {
  const deadline = Date.now() + 30_000;
  let last: unknown = null;
  while (Date.now() < deadline) {
    try {
      return await (await fetch(`${url}/health`)).json();
    } catch (e) {
      last = e;
      const state = (await docker.containerInspect(id)).State;
      if (!state.Running) throw new Error(`the server container exited ${state.ExitCode}`);
      await Bun.sleep(200);
    }
  }
  throw new Error(`no /health answer within 30 s: ${String(last)}`);
}

describe("runtime/env-server image", () => {
  test("the image runs the binary as a non-root user on port 8000 with MAX_CONCURRENT_ENVS set", async () => {
    const image = (await docker.imageInspect(tag)) as unknown as { Config: { User: string; ExposedPorts: Record<string, unknown>; Env: string[] } };
    expect(image.Config.User).toBe("humanish");
    expect(Object.keys(image.Config.ExposedPorts)).toEqual(["8000/tcp"]);
    expect(image.Config.Env).toContain("MAX_CONCURRENT_ENVS=4");
  });

  test("e2b backend: /health answers; without E2B_API_KEY a reset says so; MAX_CONCURRENT_ENVS caps the sessions", async () => {
    const { url, id } = await run(["--backend", "e2b"], ["MAX_CONCURRENT_ENVS=1"]);
    expect(await healthy(url, id)).toEqual({ status: "healthy" });
    const reset = await openEnvHttp.reset(url, { setup: "echo hi" });
    expect(reset.body).toMatchObject({ done: true, metadata: { error: { code: "HUMANISH_E2B_KEY_MISSING" } } });
    const a = new OpenEnvMcpClient(url);
    await a.ensureSession();
    const refused = await new OpenEnvMcpClient(url).ensureSession().catch((e) => e);
    expect(refused.data).toMatchObject({ active_sessions: 1, max_sessions: 1 });
    await a.close();
  });

  test("an invalid MAX_CONCURRENT_ENVS stops the container with a usage error naming the variable", async () => {
    const id = await start(["--backend", "e2b"], ["MAX_CONCURRENT_ENVS=lots"]);
    const exit = await docker.containerWait(id);
    expect(exit).toMatchObject({ StatusCode: 1 });
    const logs = await docker.containerLogs(id);
    expect(new TextDecoder().decode(logs.stderr)).toContain("MAX_CONCURRENT_ENVS");
  });

  test("docker backend: the socket mounted and its group added, an episode runs in a sandbox on the host engine; docker stop releases it", async () => {
    const sandboxImage = await testImage();
    const gid = (await stat(socketPath)).gid;
    const { url, id } = await run(["--backend", "docker", "--image", sandboxImage], [], {
      Binds: [`${socketPath}:/var/run/docker.sock`],
      GroupAdd: [String(gid)],
    });
    expect(await healthy(url, id)).toEqual({ status: "healthy" });
    const env = await OpenEnvWsClient.connect(url);
    const reset = await env.reset({ setup: "echo from-the-image > note.txt", verify: "grep -q from-the-image /home/user/note.txt" });
    const sandboxId = reset.metadata.sandbox_id;
    containers.push(sandboxId);
    expect(await inspectStatus(sandboxId)).toBe(200);
    expect(await env.callTool("terminal", { command: "cat note.txt" })).toBe("from-the-image\n[exit code 0]");
    // A second episode left running is released by the server when the container is stopped.
    const second = await env.reset({});
    const running = second.metadata.sandbox_id;
    containers.push(running);
    expect(await inspectStatus(sandboxId)).toBe(404);
    expect(await inspectStatus(running)).toBe(200);
    const stop = await fetch(`http://localhost/v1.41/containers/${id}/stop?t=30`, { method: "POST", unix: socketPath } as RequestInit);
    expect(stop.status).toBe(204);
    expect(await inspectStatus(running)).toBe(404);
    // The shutdown summary (stdout) names every released id.
    const out = await docker.containerLogs(id);
    expect(new TextDecoder().decode(out.stdout)).toContain(`${running}: released`);
    expect(new TextDecoder().decode(out.stderr)).toContain("SIGTERM received");
  });
});

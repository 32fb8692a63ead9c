/**
 * The Docker client against the real engine: exec output demultiplexed exactly
 * (interleaved stdout/stderr plus a binary payload), exit codes 0/1/137, archive round trip, remove of
 * a missing container, 304 on a second start, 409 on a duplicate name. Containers are labelled
 * `humanish.owner=humanish` + a test run label and removed by exact id.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { createDockerClient, type DockerClient, isDockerApiError, runExec, tarPack, tarUnpack } from "../../src/docker/index.ts";
import { requireImage } from "../support/prereq.ts";
import { rejection, testRunId } from "./helpers.ts";

const IMAGE = "debian:bookworm-slim";
const RUN = testRunId("docker-client");
let docker: DockerClient;
let id = "";
const created: string[] = [];
const dec = new TextDecoder();

async function createIdle(name?: string): Promise<string> {
  const r = await docker.containerCreate(
    {
      Image: IMAGE,
      Entrypoint: ["sleep", "infinity"],
      Labels: { "humanish.owner": "humanish", "humanish.run": RUN },
      HostConfig: { Init: true, NetworkMode: "none", CapDrop: ["ALL"], SecurityOpt: ["no-new-privileges"] },
    },
    name ? { name } : {},
  );
  created.push(r.Id);
  return r.Id;
}

beforeAll(async () => {
  await requireImage(IMAGE);
  docker = createDockerClient();
  id = await createIdle();
  expect(await docker.containerStart(id)).toEqual({ alreadyStarted: false });
});

afterAll(async () => {
  for (const c of created) await docker.containerRemove(c, { force: true }).catch(() => {});
});

describe("Docker client against the real engine", () => {
  test("ping and version speak API 1.41+", async () => {
    expect(await docker.ping()).toBe("OK");
    const v = await docker.version();
    const [maj, min] = v.ApiVersion.split(".").map(Number);
    expect(maj! * 1000 + min!).toBeGreaterThanOrEqual(1041);
  });

  test("a second start answers 304 → alreadyStarted", async () => {
    expect(await docker.containerStart(id)).toEqual({ alreadyStarted: true });
  });

  test("interleaved stdout/stderr with a binary payload are demultiplexed exactly", async () => {
    // 64 KiB of every byte value on stdout between text on both streams, ordered by the shell.
    const script = [
      "printf 'out-1\\n'",
      "printf 'err-1\\n' >&2",
      "head -c 65536 /dev/zero | tr '\\000' '\\377' > /tmp/ff",
      'i=0; while [ $i -lt 256 ]; do printf "\\\\$(printf %03o $i)"; i=$((i+1)); done > /tmp/all',
      "cat /tmp/all /tmp/ff /tmp/all",
      "printf 'err-2 caf\\303\\251\\n' >&2",
      "printf 'out-2\\n'",
    ].join("; ");
    const chunks: string[] = [];
    const r = await runExec(docker, id, { Cmd: ["bash", "-c", script] }, { onStdout: () => chunks.push("o"), onStderr: () => chunks.push("e") });
    expect(r.exitCode).toBe(0);
    const all = new Uint8Array(256).map((_, i) => i);
    const ff = new Uint8Array(65536).fill(0xff);
    const want = new Uint8Array([...new TextEncoder().encode("out-1\n"), ...all, ...ff, ...all, ...new TextEncoder().encode("out-2\n")]);
    expect(r.stdout.length).toBe(want.length);
    expect(createHash("sha256").update(r.stdout).digest("hex")).toBe(createHash("sha256").update(want).digest("hex"));
    expect(dec.decode(r.stderr)).toBe("err-1\nerr-2 café\n");
    expect(chunks).toContain("o");
    expect(chunks).toContain("e");
  });

  test("exit codes 0, 1 and 137 (SIGKILL), read after the stream drained", async () => {
    expect((await runExec(docker, id, { Cmd: ["true"] })).exitCode).toBe(0);
    expect((await runExec(docker, id, { Cmd: ["false"] })).exitCode).toBe(1);
    expect((await runExec(docker, id, { Cmd: ["bash", "-c", "echo before; kill -KILL $$; echo after"] })).exitCode).toBe(137);
    const r = await runExec(docker, id, { Cmd: ["bash", "-c", "echo before; kill -KILL $$"] });
    expect(dec.decode(r.stdout)).toBe("before\n");
  });

  test("exec env, working dir and user apply to that exec only", async () => {
    const r = await runExec(docker, id, { Cmd: ["sh", "-c", 'echo "$FOO"; pwd; id -u'], Env: ["FOO=bar baz"], WorkingDir: "/tmp", User: "nobody" });
    expect(dec.decode(r.stdout)).toBe("bar baz\n/tmp\n65534\n");
    const inspect = await docker.containerInspect(id);
    expect(JSON.stringify(inspect)).not.toContain("bar baz");
  });

  test("archive round trip: putArchive then getArchive returns the same bytes and mode", async () => {
    const data = new Uint8Array(70_000).map((_, i) => (i * 31) % 256);
    await docker.putArchive(id, "/tmp", tarPack([{ path: "round.bin", data, mode: 0o640 }]));
    const { tar, stat } = await docker.getArchive(id, "/tmp/round.bin");
    expect(stat?.size).toBe(data.length);
    const entries = tarUnpack(tar);
    expect(entries.length).toBe(1);
    expect(entries[0]!.path).toBe("round.bin");
    expect(entries[0]!.mode).toBe(0o640);
    expect(entries[0]!.data).toEqual(data);
    const sum = await runExec(docker, id, { Cmd: ["sha256sum", "/tmp/round.bin"] });
    expect(dec.decode(sum.stdout).split(" ")[0]).toBe(createHash("sha256").update(data).digest("hex"));
  });

  test("getArchive refuses a path over maxBytes before reading it; a missing path is 404", async () => {
    await docker.putArchive(id, "/tmp", tarPack([{ path: "big.txt", data: "x".repeat(5000) }]));
    expect((await rejection(docker.getArchive(id, "/tmp/big.txt", { maxBytes: 100 }))).code).toBe("HUMANISH_DOCKER_ARCHIVE_TOO_LARGE");
    expect(isDockerApiError(await rejection(docker.getArchive(id, "/tmp/nope.txt")), 404)).toBe(true);
  });

  test("containerLogs demultiplexes the init process output", async () => {
    const c = await docker.containerCreate({
      Image: IMAGE,
      Cmd: ["sh", "-c", "echo to-out; echo to-err >&2"],
      Labels: { "humanish.owner": "humanish", "humanish.run": RUN },
      HostConfig: { NetworkMode: "none", CapDrop: ["ALL"], SecurityOpt: ["no-new-privileges"] },
    });
    created.push(c.Id);
    await docker.containerStart(c.Id);
    expect((await docker.containerWait(c.Id, { timeoutMs: 30_000 })).StatusCode).toBe(0);
    const logs = await docker.containerLogs(c.Id);
    expect(dec.decode(logs.stdout)).toBe("to-out\n");
    expect(dec.decode(logs.stderr)).toBe("to-err\n");
  });

  test("409 on create with a name in use is an error; remove of a missing container answers not-found", async () => {
    const name = `humanish-${RUN}-dup`;
    const first = await createIdle(name);
    const e = await rejection(createIdle(name));
    expect(isDockerApiError(e, 409)).toBe(true);
    expect(await docker.containerRemove(first, { force: true })).toBe("removed");
    expect(await docker.containerRemove(first, { force: true })).toBe("not-found");
    expect(isDockerApiError(await rejection(docker.containerInspect(first)), 404)).toBe(true);
  });

  test("containerList finds this run's containers by label; kill makes an idle container exit 137", async () => {
    const c = await createIdle();
    await docker.containerStart(c);
    const rows = await docker.containerList({ labels: [`humanish.run=${RUN}`, "humanish.owner=humanish"] });
    expect(rows.map((r) => r.Id)).toContain(c);
    expect(rows.every((r) => r.Labels["humanish.run"] === RUN)).toBe(true);
    await docker.containerKill(c);
    expect((await docker.containerWait(c, { timeoutMs: 30_000 })).StatusCode).toBe(137);
  });

  test("exec in a missing container is a 404 DockerApiError", async () => {
    expect(isDockerApiError(await rejection(docker.execCreate("0".repeat(64), { Cmd: ["true"] })), 404)).toBe(true);
  });
});

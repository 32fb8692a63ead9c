/**
 * Engine status codes clients commonly get wrong (cases/README.md docker/), against a fake engine on a
 * Unix socket: 304 on start, 404 on remove (released only after inspect confirms), 409 on create,
 * a 200 image load/build whose progress stream carries `errorDetail`; plus the handed multiplexed
 * logs body served in 3/10/50-byte HTTP chunks, and an unreachable socket.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { createDockerClient, isDockerApiError, resolveDockerSocket } from "../../src/docker/index.ts";
import { createDockerSandboxProvider, releaseContainer } from "../../src/sandbox/index.ts";
import { chunkedResponse, type FakeEngine, startFakeEngine } from "./fake-engine.ts";
import { rejection } from "./helpers.ts";

const ID = "a".repeat(64);
let engine: FakeEngine | undefined;
afterEach(async () => {
  await engine?.stop();
  engine = undefined;
});

const noContent = () => new Response(null, { status: 204 });
const notFound = (what: string) => Response.json({ message: `No such container: ${what}` }, { status: 404 });

describe("status codes against a fake engine", () => {
  test("500 'a disk usage operation is already running' on /system/df is waited out; any other 500 is not", async () => {
    let calls = 0;
    const busy = () => Response.json({ message: "a disk usage operation is already running" }, { status: 500 });
    engine = startFakeEngine({
      "GET /system/df": () => (++calls <= 2 ? busy() : Response.json({ LayersSize: 7, Images: [], Containers: [], Volumes: [], BuildCache: [] })),
    });
    const docker = createDockerClient({ socketPath: engine.socketPath });
    expect((await docker.systemDf()).LayersSize).toBe(7);
    expect(calls).toBe(3);
    await engine.stop();
    engine = startFakeEngine({ "GET /system/df": () => Response.json({ message: "disk on fire" }, { status: 500 }) });
    const err = await rejection(createDockerClient({ socketPath: engine.socketPath }).systemDf());
    expect(isDockerApiError(err) && err.status).toBe(500);
    expect(engine.requests.length).toBe(1);
  });

  test("304 on start = already started (not an error)", async () => {
    engine = startFakeEngine({ "POST /containers/{id}/start": () => new Response(null, { status: 304 }) });
    const docker = createDockerClient({ socketPath: engine.socketPath });
    expect(await docker.containerStart(ID)).toEqual({ alreadyStarted: true });
    expect(engine.requests[0]!.path).toBe(`/containers/${ID}/start`);
  });

  test("404 on remove, then inspect 404 → released (remove-404 alone is not the proof)", async () => {
    engine = startFakeEngine({ "DELETE /containers/{id}": () => notFound(ID), "GET /containers/{id}/json": () => notFound(ID) });
    const docker = createDockerClient({ socketPath: engine.socketPath });
    expect(await docker.containerRemove(ID, { force: true })).toBe("not-found");
    const proof = await releaseContainer(docker, ID);
    expect(proof.outcome).toBe("released");
    expect(proof.reason).toContain("inspect-404");
    expect(engine.requests.map((r) => `${r.method} ${r.path}`)).toEqual([`DELETE /containers/${ID}`, `DELETE /containers/${ID}`, `GET /containers/${ID}/json`]);
  });

  test("404 on remove but inspect still finds it → unconfirmed", async () => {
    engine = startFakeEngine({
      "DELETE /containers/{id}": () => notFound(ID),
      "GET /containers/{id}/json": () => Response.json({ Id: ID, State: { Status: "running", Running: true } }),
    });
    const proof = await releaseContainer(createDockerClient({ socketPath: engine.socketPath }), ID);
    expect(proof.outcome).toBe("unconfirmed");
    expect(proof.reason).toContain("still present");
  });

  test("remove OK but inspect errors (500) → unconfirmed, never throws", async () => {
    engine = startFakeEngine({ "DELETE /containers/{id}": noContent, "GET /containers/{id}/json": () => Response.json({ message: "boom" }, { status: 500 }) });
    const proof = await releaseContainer(createDockerClient({ socketPath: engine.socketPath }), ID);
    expect(proof).toMatchObject({ id: ID, provider: "docker", outcome: "unconfirmed" });
    expect(proof.reason).toContain("HTTP 500: boom");
  });

  test("a remove that never answers hits the outer deadline → unconfirmed", async () => {
    engine = startFakeEngine({
      "DELETE /containers/{id}": () => new Promise<Response>(() => {}),
      "GET /containers/{id}/json": () => Response.json({ Id: ID, State: { Status: "running" } }),
    });
    // The remove never answers: only its deadline can end this await (else the test times out).
    const proof = await releaseContainer(createDockerClient({ socketPath: engine.socketPath }), ID, { removeTimeoutMs: 300, inspectTimeoutMs: 300 });
    expect(proof.outcome).toBe("unconfirmed");
    expect(proof.reason).toContain("remove failed");
  });

  test("409 on create is an error carrying status and engine message; the sandbox provider reports it", async () => {
    const msg = 'Conflict. The container name "/x" is already in use';
    engine = startFakeEngine({ "POST /containers/create": () => Response.json({ message: msg }, { status: 409 }) });
    const docker = createDockerClient({ socketPath: engine.socketPath });
    const e = await rejection(docker.containerCreate({ Image: "img" }, { name: "x" }));
    expect(isDockerApiError(e, 409)).toBe(true);
    expect(e.code).toBe("HUMANISH_DOCKER_API_ERROR");
    expect(e.message).toContain(msg);
    expect(e.next).toBeTruthy();
    const s = await rejection(createDockerSandboxProvider({ docker }).create({ runId: "r1", image: "img" }));
    expect(s.code).toBe("HUMANISH_SANDBOX_CREATE_FAILED");
    expect(s.message).toContain("HTTP 409");
    // Nothing was created, so nothing else was attempted.
    expect(engine.requests.filter((r) => r.method !== "POST")).toEqual([]);
  });

  test("404 on create (no such image) → HUMANISH_SANDBOX_IMAGE_MISSING with a setup next step", async () => {
    engine = startFakeEngine({ "POST /containers/create": () => Response.json({ message: "No such image: humanish-sandbox:x" }, { status: 404 }) });
    const e = await rejection(
      createDockerSandboxProvider({ docker: createDockerClient({ socketPath: engine.socketPath }) }).create({ runId: "r1", image: "humanish-sandbox:x" }),
    );
    expect(e.code).toBe("HUMANISH_SANDBOX_IMAGE_MISSING");
    expect(e.next).toContain("runtime setup");
  });

  test("200 image load whose stream carries errorDetail = failure", async () => {
    engine = startFakeEngine({
      "POST /images/load": () =>
        new Response('{"stream":"Loading layer\\n"}\r\n{"errorDetail":{"message":"unexpected EOF"},"error":"unexpected EOF"}\r\n', {
          status: 200,
          headers: { "content-type": "application/json" },
        }),
    });
    const e = await rejection(createDockerClient({ socketPath: engine.socketPath }).imageLoad(new Uint8Array([1, 2, 3])));
    expect(e.code).toBe("HUMANISH_DOCKER_PROGRESS_ERROR");
    expect(e.message).toContain("unexpected EOF");
  });

  test("200 image load reporting the loaded image succeeds", async () => {
    engine = startFakeEngine({
      "POST /images/load": () =>
        new Response('{"stream":"Loaded image: humanish-guest:abc\\n"}\r\n', { status: 200, headers: { "content-type": "application/json" } }),
    });
    const r = await createDockerClient({ socketPath: engine.socketPath }).imageLoad(new Uint8Array([1]));
    expect(r.loaded).toEqual(["humanish-guest:abc"]);
  });

  test("200 build whose stream carries errorDetail = failure", async () => {
    engine = startFakeEngine({
      "POST /build": () =>
        new Response('{"stream":"Step 1/2 : FROM x"}\n{"errorDetail":{"code":1,"message":"The command \'/bin/sh -c false\' returned a non-zero code: 1"}}\n', {
          status: 200,
          headers: { "content-type": "application/json" },
        }),
    });
    const e = await rejection(createDockerClient({ socketPath: engine.socketPath }).imageBuild(new Uint8Array(1024), { tags: ["t:1"] }));
    expect(e.code).toBe("HUMANISH_DOCKER_PROGRESS_ERROR");
    expect(e.message).toContain("non-zero code: 1");
  });

  test("the handed multiplexed logs body in 3/10/50-byte HTTP chunks demultiplexes byte-exact", async () => {
    const body = new Uint8Array(readFileSync(join(import.meta.dir, "../fixtures/cases/docker/logs-multiplexed-body.bin")));
    for (const size of [3, 10, 50, 1]) {
      engine = startFakeEngine({
        "GET /containers/{id}/logs": () => chunkedResponse(body, size, { "content-type": "application/vnd.docker.multiplexed-stream" }),
      });
      const r = await createDockerClient({ socketPath: engine.socketPath }).containerLogs(ID);
      expect(r.stdout).toEqual(new TextEncoder().encode("hello stdout\ncafé\n"));
      expect(r.stderr).toEqual(new TextEncoder().encode("oops stderr\n"));
      await engine.stop();
      engine = undefined;
    }
  });

  test("an engine error body that is not JSON still yields a DockerApiError with its text", async () => {
    engine = startFakeEngine({ "GET /containers/{id}/json": () => new Response("page not found\n", { status: 404 }) });
    const e = await rejection(createDockerClient({ socketPath: engine.socketPath }).containerInspect(ID));
    expect(isDockerApiError(e, 404)).toBe(true);
    expect((e as unknown as { engineMessage: string }).engineMessage).toBe("page not found");
  });

  test("an unreachable socket → HUMANISH_DOCKER_UNAVAILABLE naming the socket with a next step", async () => {
    const e = await rejection(createDockerClient({ socketPath: "/tmp/humanish-no-such-docker.sock" }).ping());
    expect(e.code).toBe("HUMANISH_DOCKER_UNAVAILABLE");
    expect(e.message).toContain("/tmp/humanish-no-such-docker.sock");
    expect(e.next).toContain("start dockerd");
    expect(e.next).toContain("DOCKER_HOST");
  });

  test("a request that outlives its deadline → HUMANISH_DOCKER_TIMEOUT", async () => {
    engine = startFakeEngine({ "GET /version": () => new Promise<Response>(() => {}) });
    const e = await rejection(createDockerClient({ socketPath: engine.socketPath, timeoutMs: 200 }).version());
    expect(e.code).toBe("HUMANISH_DOCKER_TIMEOUT");
  });

  test("requests use the /v1.41 prefix and label filters for containerList", async () => {
    let seenUrl = "";
    engine = startFakeEngine({
      "GET /containers/json": (r) => {
        seenUrl = r.query.get("filters") ?? "";
        return Response.json([]);
      },
    });
    await createDockerClient({ socketPath: engine.socketPath }).containerList({ labels: ["humanish.run=r1"] });
    expect(JSON.parse(seenUrl)).toEqual({ label: ["humanish.run=r1"] });
    expect(engine.requests[0]!.rawPath).toBe("/v1.41/containers/json");
  });

  test("DOCKER_HOST=unix://… is honoured; other transports are refused with a next step", async () => {
    expect(resolveDockerSocket({})).toBe("/var/run/docker.sock");
    expect(resolveDockerSocket({ DOCKER_HOST: "unix:///run/user/1000/docker.sock" })).toBe("/run/user/1000/docker.sock");
    let refused: unknown;
    try {
      resolveDockerSocket({ DOCKER_HOST: "tcp://10.0.0.1:2375" });
    } catch (e) {
      refused = e;
    }
    expect((refused as { code?: string }).code).toBe("HUMANISH_DOCKER_HOST_UNSUPPORTED");
    engine = startFakeEngine({ "GET /_ping": () => new Response("OK") });
    const saved = process.env.DOCKER_HOST;
    process.env.DOCKER_HOST = `unix://${engine.socketPath}`;
    try {
      const docker = createDockerClient();
      expect(docker.socketPath).toBe(engine.socketPath);
      expect(await docker.ping()).toBe("OK");
      expect(engine.requests.map((r) => r.rawPath)).toEqual(["/_ping"]);
    } finally {
      if (saved === undefined) delete process.env.DOCKER_HOST;
      else process.env.DOCKER_HOST = saved;
    }
  });
});

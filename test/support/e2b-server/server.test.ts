/**
 * The local E2B-compatible server driven by the REAL `e2b` SDK: create (body kept), foreground and
 * background commands (pid, list, disconnect + connect, kill), files, getInfo, setTimeout, kill,
 * every injected fault as the SDK sees it, timeouts that really remove the container, and network
 * updates that really take a running sandbox's network away (and give it back).
 * Every container is checked gone by exact id at the end.
 */
import { afterAll, afterEach, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { randomUUID } from "node:crypto";
import { ALL_TRAFFIC, AuthenticationError, CommandExitError, RateLimitError, Sandbox, SandboxNotFoundError } from "e2b";
import { createDockerClient } from "../../../src/docker/index.ts";
import { hostAddressOn } from "../docker-network.ts";
import { waitUntil } from "../wait.ts";
import { type E2BServer, startE2BServer } from "./index.ts";

setDefaultTimeout(120_000);
const docker = createDockerClient();
const runLabel = `e2b-server-${randomUUID()}`;
let e2b: E2BServer;
const made: string[] = [];

beforeAll(async () => {
  e2b = await startE2BServer({ labels: { "humanish.test-run": runLabel } });
});
afterEach(() => e2b.faults.reset());
afterAll(async () => {
  await e2b?.close();
  // Every container this file made is gone (exact ids), and nothing else carries its label.
  for (const sandboxId of made) expect(await containerExists(e2b.containerIdOf(sandboxId)!)).toBe(false);
  expect(await docker.containerList({ all: true, labels: [`humanish.test-run=${runLabel}`] })).toEqual([]);
});

const conn = () => ({ apiKey: e2b.apiKey, apiUrl: e2b.apiUrl, sandboxUrl: e2b.sandboxUrl });

async function create(opts: Parameters<typeof Sandbox.create>[1] = {}): Promise<Sandbox> {
  const sbx = await Sandbox.create("base", { ...conn(), ...opts });
  made.push(sbx.sandboxId);
  return sbx;
}

async function containerExists(id: string): Promise<boolean> {
  try {
    await docker.containerInspect(id);
    return true;
  } catch {
    return false;
  }
}

describe("real e2b SDK against the local server", () => {
  test("create, commands (foreground, background, disconnect/connect, kill), files, info, timeout, kill", async () => {
    const sbx = await create({ timeoutMs: 90_000, metadata: { run: "r1" }, envs: { SANDBOX_WIDE: "yes" }, lifecycle: { onTimeout: "kill" } });
    expect(e2b.bodies.at(-1)).toMatchObject({
      call: "POST /v2/sandboxes",
      body: { templateID: "base", timeout: 90, metadata: { run: "r1" }, envVars: { SANDBOX_WIDE: "yes" }, autoPause: false },
    });
    const containerId = e2b.containerIdOf(sbx.sandboxId)!;
    expect(await containerExists(containerId)).toBe(true);

    const fg = await sbx.commands.run('echo "out $SANDBOX_WIDE $ONE"; whoami; pwd; echo err >&2', { envs: { ONE: "1" } });
    expect(fg).toMatchObject({ exitCode: 0, stdout: "out yes 1\nuser\n/home/user\n", stderr: "err\n" });
    // Root may chown, chmod and write any file, as in an E2B VM (those capabilities only, never
    // privileged, no-new-privileges kept); the participant user has no capability at all.
    const capEff = async (user: string) => (await sbx.commands.run("grep CapEff /proc/self/status", { user })).stdout.trim();
    expect(await capEff("root")).toBe("CapEff:\t000000000000000b");
    expect(await capEff("user")).toBe("CapEff:\t0000000000000000");
    const host = (await docker.containerInspect(containerId)).HostConfig;
    expect([host.Privileged ?? false, host.CapDrop, host.CapAdd, host.SecurityOpt?.includes("no-new-privileges")]).toEqual([
      false,
      ["ALL"],
      ["CHOWN", "FOWNER", "DAC_OVERRIDE"],
      true,
    ]);
    const failed = await sbx.commands.run("exit 3").catch((e: unknown) => e);
    expect(failed).toBeInstanceOf(CommandExitError);
    expect((failed as CommandExitError).exitCode).toBe(3);

    // Background: the pid is the real one inside the container.
    const bg = await sbx.commands.run("sleep 60", { background: true });
    expect((await sbx.commands.list()).map((p) => p.pid)).toContain(bg.pid);
    expect((await sbx.commands.run(`kill -0 ${bg.pid} && echo alive`)).stdout).toBe("alive\n");
    // A disconnected client leaves the process running; connect attaches again, kill ends it.
    await bg.disconnect();
    expect((await sbx.commands.list()).map((p) => p.pid)).toContain(bg.pid);
    const again = await sbx.commands.connect(bg.pid);
    expect(await again.kill()).toBe(true);
    const ended = await again.wait().catch((e: unknown) => e);
    expect(ended).toBeInstanceOf(CommandExitError);
    expect((await sbx.commands.run(`kill -0 ${bg.pid} 2>/dev/null || echo gone`)).stdout).toBe("gone\n");
    expect(await sbx.commands.kill(bg.pid)).toBe(false);

    await sbx.files.write("/home/user/notes/a.txt", "hello file");
    expect(await sbx.files.read("notes/a.txt")).toBe("hello file");
    expect(await sbx.files.exists("/home/user/notes/a.txt")).toBe(true);
    await sbx.files.remove("/home/user/notes/a.txt");
    expect(await sbx.files.exists("/home/user/notes/a.txt")).toBe(false);

    const info = await sbx.getInfo();
    expect(info).toMatchObject({ sandboxId: sbx.sandboxId, templateId: "base", metadata: { run: "r1" }, state: "running" });
    expect(info.endAt.getTime() - info.startedAt.getTime()).toBe(90_000);
    const listed = await Sandbox.list({ ...conn(), query: { metadata: { run: "r1" } } }).nextItems();
    expect(listed.map((i) => i.sandboxId)).toEqual([sbx.sandboxId]);
    expect(await Sandbox.list({ ...conn(), query: { metadata: { run: "other" } } }).nextItems()).toEqual([]);
    // The new end is 30 s after the moment the server took the call, which lies between these two.
    const before = Date.now();
    await sbx.setTimeout(30_000);
    const later = await sbx.getInfo();
    const after = Date.now();
    expect(later.endAt.getTime()).toBeGreaterThanOrEqual(before + 30_000);
    expect(later.endAt.getTime()).toBeLessThanOrEqual(after + 30_000);

    expect(await sbx.kill()).toBe(true);
    await expect(Sandbox.getInfo(sbx.sandboxId, conn())).rejects.toBeInstanceOf(SandboxNotFoundError);
    expect(await containerExists(containerId)).toBe(false);
    expect(await Sandbox.kill(sbx.sandboxId, conn())).toBe(false);
    expect(e2b.ends.at(-1)).toMatchObject({ sandboxId: sbx.sandboxId, why: "killed", proof: { outcome: "released" } });
  });

  test("faults: kill acknowledged but alive, 404 while alive, hung kill, 401, 429 with Retry-After", async () => {
    const sbx = await create({ timeoutMs: 60_000 });
    e2b.faults.kill = "ack-but-alive";
    expect(await sbx.kill()).toBe(true);
    expect((await Sandbox.getInfo(sbx.sandboxId, conn())).state).toBe("running");
    e2b.faults.kill = "404-but-alive";
    expect(await sbx.kill()).toBe(false);
    expect(e2b.alive()).toContain(sbx.sandboxId);
    e2b.faults.kill = "hang";
    // The kill never answers: only the request timeout can end this await (else the test times out).
    await expect(Sandbox.kill(sbx.sandboxId, { ...conn(), requestTimeoutMs: 500 })).rejects.toThrow();
    e2b.faults.reset();

    e2b.faults.unauthorized = { times: 1, route: "GET /sandboxes/*" };
    await expect(Sandbox.getInfo(sbx.sandboxId, conn())).rejects.toBeInstanceOf(AuthenticationError);
    await expect(Sandbox.getInfo(sbx.sandboxId, { ...conn(), apiKey: "e2b_wrong" })).rejects.toBeInstanceOf(AuthenticationError);

    // One 429 with Retry-After: the SDK waits and retries on its own.
    e2b.faults.rateLimited = { times: 1, retryAfterSeconds: 1, route: "POST /sandboxes/*/timeout" };
    const before = e2b.calls.length;
    await sbx.setTimeout(60_000);
    expect(e2b.calls.slice(before)).toEqual([`POST /sandboxes/${sbx.sandboxId}/timeout`, `POST /sandboxes/${sbx.sandboxId}/timeout`]);
    // More 429s than the caller retries: the SDK surfaces RateLimitError.
    e2b.faults.rateLimited = { times: 5, retryAfterSeconds: 1 };
    await expect(Sandbox.getInfo(sbx.sandboxId, { ...conn(), retries: 0 })).rejects.toBeInstanceOf(RateLimitError);
    e2b.faults.reset();
    expect(await sbx.kill()).toBe(true);
  });

  test("a secure sandbox's envd needs its access token; connect hands it to the SDK", async () => {
    // SDK 2.51 does not send `secure` itself, so the create is a raw call with the field E2B's API takes.
    const res = await fetch(`${e2b.apiUrl}/v2/sandboxes`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-api-key": e2b.apiKey },
      body: JSON.stringify({ templateID: "base", timeout: 60, secure: true }),
    });
    expect(res.status).toBe(201);
    const created = (await res.json()) as { sandboxID: string; envdAccessToken: string };
    made.push(created.sandboxID);
    expect(created.envdAccessToken).toMatch(/^[0-9a-f]{48}$/);
    const bare = await fetch(`${e2b.sandboxUrl}/process.Process/List`, {
      method: "POST",
      headers: { "content-type": "application/json", "e2b-sandbox-id": created.sandboxID },
      body: "{}",
    });
    expect(bare.status).toBe(401);
    const sbx = await Sandbox.connect(created.sandboxID, conn());
    expect((await sbx.commands.run("echo secured")).stdout).toBe("secured\n");
    expect(await sbx.kill()).toBe(true);
  });

  test("a timeout removes the container for real; expire() ends a sandbox mid-command", async () => {
    const short = await create({ timeoutMs: 2_000 });
    const shortContainer = e2b.containerIdOf(short.sandboxId)!;
    await waitUntil(async () => !(await containerExists(shortContainer)), "the expired sandbox's container to be removed", {
      everyMs: 250,
      failAfterMs: 60_000,
    });
    expect(e2b.ends.find((e) => e.sandboxId === short.sandboxId)).toMatchObject({ why: "expired", proof: { outcome: "released" } });
    await expect(short.commands.run("true")).rejects.toThrow();
    await expect(Sandbox.getInfo(short.sandboxId, conn())).rejects.toBeInstanceOf(SandboxNotFoundError);

    const seat = await create({ timeoutMs: 60_000 });
    let started!: () => void;
    const printed = new Promise<void>((resolve) => {
      started = resolve;
    });
    const running = await seat.commands.run("echo started; sleep 60", { background: true, onStdout: () => started() });
    // Mid-command: the process has printed and is sleeping when the sandbox expires.
    await printed;
    await e2b.expire(seat.sandboxId);
    await expect(running.wait()).rejects.toThrow();
    expect(running.stdout).toBe("started\n");
    expect(await containerExists(e2b.containerIdOf(seat.sandboxId)!)).toBe(false);
    expect(await Sandbox.kill(seat.sandboxId, conn())).toBe(false);
  });
});

/** A `node` one-liner that GETs `url` from inside the sandbox and prints `<status> <body>` or `error <code>`. */
const nodeGet = (url: string) =>
  `node -e 'fetch(process.argv[1], { signal: AbortSignal.timeout(3000) }).then(async (r) => console.log(r.status, await r.text()), (e) => console.log("error", e.cause?.code ?? e.name))' ${url}`;

describe("network update (PUT /sandboxes/{id}/network)", () => {
  test("deny-all takes a running sandbox's network away for real, info shows the new config, an empty update gives it back", async () => {
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
    try {
      const sbx = await create({ timeoutMs: 60_000, allowInternetAccess: true });
      const reach = () => sbx.commands.run(nodeGet(`http://${gateway}:${host.port}/probe`));
      expect((await reach()).stdout).toBe("200 host says hi\n");

      await sbx.updateNetwork({ allowInternetAccess: false, denyOut: [ALL_TRAFFIC] });
      expect(e2b.bodies.at(-1)).toEqual({ call: `PUT /sandboxes/${sbx.sandboxId}/network`, body: { denyOut: ["0.0.0.0/0"], allow_internet_access: false } });
      expect((await reach()).stdout).toMatch(/^error /);
      expect(hits).toEqual(["/probe"]);
      const nets = (await docker.containerInspect(e2b.containerIdOf(sbx.sandboxId)!)).NetworkSettings?.Networks ?? {};
      expect(Object.keys(nets)).toEqual([]);
      const info = await sbx.getInfo();
      expect(info.allowInternetAccess).toBe(false);
      expect(info.network).toMatchObject({ denyOut: ["0.0.0.0/0"], allowOut: undefined, rules: undefined });

      // An update replaces the whole config: `{}` clears the deny, and the sandbox is on the bridge again.
      await sbx.updateNetwork({});
      expect((await reach()).stdout).toBe("200 host says hi\n");
      expect(hits).toEqual(["/probe", "/probe"]);
      const back = await sbx.getInfo();
      expect([back.allowInternetAccess, back.network]).toEqual([undefined, undefined]);

      await expect(Sandbox.updateNetwork("nosuchsandbox0000000", { allowInternetAccess: false }, conn())).rejects.toBeInstanceOf(SandboxNotFoundError);
      // `allowInternetAccess: false` alone denies everything too.
      await sbx.updateNetwork({ allowInternetAccess: false });
      expect((await reach()).stdout).toMatch(/^error /);
      expect(hits).toHaveLength(2);
      await expect(Sandbox.updateNetwork(sbx.sandboxId, {}, { ...conn(), apiKey: "e2b_wrong" })).rejects.toBeInstanceOf(AuthenticationError);
      const malformed = await fetch(`${e2b.apiUrl}/sandboxes/${sbx.sandboxId}/network`, {
        method: "PUT",
        headers: { "content-type": "application/json", "x-api-key": e2b.apiKey },
        body: JSON.stringify({ egressProxy: { address: "proxy.test:1080" } }),
      });
      expect([malformed.status, ((await malformed.json()) as { message: string }).message]).toEqual([
        400,
        "network update: egressProxy is not emulated by this server",
      ]);
      // The refused updates changed nothing.
      expect((await reach()).stdout).toMatch(/^error /);
      expect((await sbx.getInfo()).allowInternetAccess).toBe(false);
      expect(await sbx.kill()).toBe(true);
    } finally {
      host.stop(true);
    }
  });
});

describe("egress rules (openai-egress emulation)", () => {
  test("an allowed host reaches its upstream with the rule's header replacing the placeholder; everything else is denied", async () => {
    const seen: { path: string; authorization: string | null }[] = [];
    const upstream = Bun.serve({
      hostname: "127.0.0.1",
      port: 0,
      fetch(req) {
        seen.push({ path: new URL(req.url).pathname, authorization: req.headers.get("authorization") });
        return Response.json({ object: "list", data: [{ id: "fake-model" }] });
      },
    });
    const egress = await startE2BServer({ labels: { "humanish.test-run": runLabel }, upstreams: { "api.openai.com": `http://127.0.0.1:${upstream.port}` } });
    const c = { apiKey: egress.apiKey, apiUrl: egress.apiUrl, sandboxUrl: egress.sandboxUrl };
    try {
      const rule = { transform: { headers: { Authorization: "Bearer sk-host-side-test-key" } } };
      const sbx = await Sandbox.create("base", {
        ...c,
        timeoutMs: 60_000,
        network: { allowOut: ["api.openai.com", "registry.npmjs.org"], denyOut: ["0.0.0.0/0"], rules: { "api.openai.com": [rule] } },
      });
      // A name with no route hangs in the resolver, so a denied fetch is cut by `timeout`.
      const fetchIn = (url: string, on: Sandbox = sbx) =>
        on.commands.run(
          `NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt timeout 3 node -e 'fetch(process.argv[1], { headers: { authorization: "Bearer placeholder" } }).then(async (r) => console.log(r.status, await r.text()), (e) => { console.log("error", e.cause?.code ?? e.name); })' ${url}; echo "exit $?"`,
        );
      const ok = await fetchIn("https://api.openai.com/v1/models");
      expect(ok.stdout).toBe('200 {"object":"list","data":[{"id":"fake-model"}]}\nexit 0\n');
      expect(seen).toEqual([{ path: "/v1/models", authorization: "Bearer sk-host-side-test-key" }]);
      expect(egress.egress).toEqual([
        { sandboxId: sbx.sandboxId, host: "api.openai.com", method: "GET", path: "/v1/models", outcome: "forwarded", status: 200, injected: ["Authorization"] },
      ]);
      // An allowed host without a rule is tunnelled to the real host, its TLS untouched (the
      // sandbox trusts whatever CA the host itself needs for it, when the host names one).
      const hostCa = process.env.NODE_EXTRA_CA_CERTS;
      if (hostCa) await sbx.files.write("/home/user/host-ca.pem", await Bun.file(hostCa).text());
      const ping = await sbx.commands.run(
        `${hostCa ? "NODE_EXTRA_CA_CERTS=/home/user/host-ca.pem " : ""}node -e 'fetch("https://registry.npmjs.org/-/ping", { signal: AbortSignal.timeout(20000) }).then((r) => console.log(r.status), (e) => console.log("error", e.cause?.code ?? e.name))'`,
      );
      expect(ping.stdout).toBe("200\n");
      expect(egress.egress.at(-1)).toMatchObject({ sandboxId: sbx.sandboxId, host: "registry.npmjs.org", outcome: "tunnelled" });
      // Deny-all fallback: a host not in allowOut is unreachable.
      expect((await fetchIn("https://deb.debian.org/")).stdout).not.toContain("200");
      // E2B echoes the network config, transform included: callers must never persist it.
      expect((await sbx.getInfo()).network?.rules?.["api.openai.com"]).toEqual([rule]);

      // A deny-all sandbox that does not allow the host cannot reach it at all.
      const closed = await Sandbox.create("base", { ...c, timeoutMs: 60_000, network: { denyOut: ["0.0.0.0/0"] } });
      expect((await fetchIn("https://api.openai.com/v1/models", closed)).stdout).not.toContain("200");
      expect(seen).toHaveLength(1);
      expect(egress.egress.map((r) => r.host)).toEqual(["api.openai.com", "registry.npmjs.org"]);

      // A network update moves a running unrestricted sandbox onto the proxy with a new rule, then off everything.
      const open = await Sandbox.create("base", { ...c, timeoutMs: 60_000 });
      const later = { transform: { headers: { Authorization: "Bearer sk-host-side-later-key" } } };
      await open.updateNetwork({ allowOut: ["api.openai.com"], denyOut: [ALL_TRAFFIC], rules: { "api.openai.com": [later] } });
      expect((await fetchIn("https://api.openai.com/v1/models", open)).stdout).toBe('200 {"object":"list","data":[{"id":"fake-model"}]}\nexit 0\n');
      expect(seen.at(-1)).toEqual({ path: "/v1/models", authorization: "Bearer sk-host-side-later-key" });
      expect(egress.egress.at(-1)).toMatchObject({ sandboxId: open.sandboxId, outcome: "forwarded", injected: ["Authorization"] });
      expect((await fetchIn("https://deb.debian.org/", open)).stdout).not.toContain("200");
      expect((await open.getInfo()).network).toMatchObject({ allowOut: ["api.openai.com"], denyOut: ["0.0.0.0/0"], rules: { "api.openai.com": [later] } });
      await open.updateNetwork({ allowInternetAccess: false, denyOut: [ALL_TRAFFIC] });
      expect((await fetchIn("https://api.openai.com/v1/models", open)).stdout).not.toContain("200");
      expect(seen).toHaveLength(2);
    } finally {
      await egress.close();
      upstream.stop(true);
    }
  });
});

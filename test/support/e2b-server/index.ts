/**
 * A local E2B-compatible server for tests, backed by real Docker containers: the real `e2b` and
 * `@e2b/desktop` SDKs run unmodified against it (pointed here with `apiUrl` + `sandboxUrl`, or
 * `E2B_API_URL` + `E2B_SANDBOX_URL`; `E2B_DEBUG` must stay off, since it makes the SDK skip kills).
 *
 * Two listeners, like E2B's two hosts: the control plane (./control-plane.ts) and envd — the
 * process service (./envd-process.ts), the files API and filesystem service
 * (./envd-filesystem.ts) — routed per sandbox by the `E2b-Sandbox-Id` header the SDK sends when a
 * `sandboxUrl` is set. Each sandbox is a container made by the project's Docker sandbox provider
 * (./containers.ts), so commands, files, exit codes, kills and timeouts are real. Faults are
 * injected through `faults` (./faults.ts); network rules are emulated for the hosts given in
 * `upstreams` (./egress-proxy.ts).
 *
 * What differs from E2B: a container, not a microVM (no `sudo`: capabilities are dropped and
 * `no-new-privileges` is set, so `user: "root"` runs as uid 0 without capabilities); no pause or
 * resume; no stdin or PTY; no directory watching; no VNC live stream in the desktop image;
 * `PUT /sandboxes/{id}/network` moves the running container between Docker networks (./containers.ts)
 * rather than reprogramming a firewall in place, so every open connection of the sandbox drops
 * and its address changes, and `egressProxy` is refused; `cpuCount`/`memoryMB` in `SandboxInfo` are fixed numbers; files written through the files API
 * belong to the image's default user whoever wrote them; every process's env carries the
 * provider's per-exec kill id (`HUMANISH_EXEC_ID`).
 */
import { randomBytes, randomUUID } from "node:crypto";
import { createDockerClient, type DockerClient } from "../../../src/docker/index.ts";
import { ensureImage } from "../../../src/runtime/images.ts";
import { sandboxRecipe } from "../../../src/runtime/recipes.ts";
import { requireDocker } from "../prereq.ts";
import { type SandboxEnd, SandboxRegistry, type TemplateSpec } from "./containers.ts";
import { type ControlPlaneDeps, controlPlane } from "./control-plane.ts";
import { desktopTemplate } from "./desktop-image.ts";
import { EgressProxy, type EgressRecord } from "./egress-proxy.ts";
import { filesApi, filesystemService } from "./envd-filesystem.ts";
import { processService } from "./envd-process.ts";
import { createFaults, type E2BFaults } from "./faults.ts";

export type { SandboxEnd, TemplateSpec } from "./containers.ts";
export type { EgressRecord } from "./egress-proxy.ts";
export type { E2BFaults, KillFault } from "./faults.ts";

/** Options of {@link startE2BServer}. */
export interface E2BServerOptions {
  /**
   * Template id → Docker image (or a full spec with memory/CPU/process limits). Defaults: `base` →
   * the humanish sandbox image (Debian bookworm, bash, Node, user `user`, home /home/user) and
   * `desktop` → the desktop image (./desktop-image.ts: Xvfb, XFCE, xdotool, scrot, Chromium with
   * its sandbox), each resolved (and built when absent) on the first create that names it. Given
   * templates replace or add to these.
   */
  templates?: Record<string, string | TemplateSpec>;
  /** The API key `X-API-KEY` must carry (default: a fresh random `e2b_…` key). */
  apiKey?: string;
  /** Extra labels on every container (never secret), e.g. a test run's label for cleanup checks. */
  labels?: Record<string, string>;
  /**
   * Host name → upstream base URL, e.g. `{ "api.openai.com": fakeModel.url }`: a sandbox whose
   * network rules allow the host reaches the upstream over HTTPS at `https://<host>/…`, through a
   * host-side proxy that injects the rule's headers and whose test CA the sandbox trusts
   * (./egress-proxy.ts). Other hosts a deny-all sandbox's `allowOut` names are tunnelled to the
   * real host (TLS untouched); everything else is unreachable from it.
   */
  upstreams?: Record<string, string>;
}

/** A running server. Every field is live: arrays and `faults` change as requests arrive. */
export interface E2BServer {
  /** Control-plane base URL (`apiUrl`, `E2B_API_URL`), e.g. `http://127.0.0.1:41234`. */
  apiUrl: string;
  /** envd base URL for every sandbox (`sandboxUrl`, `E2B_SANDBOX_URL`); a different port from `apiUrl`. */
  sandboxUrl: string;
  /** The API key requests must carry. */
  apiKey: string;
  /** `{ E2B_API_URL, E2B_SANDBOX_URL, E2B_API_KEY }` for code that reads the SDK's env variables. */
  env(): Record<string, string>;
  /**
   * Every request, in order, as `"<METHOD> <path>"`: control-plane calls (`POST /v2/sandboxes`,
   * `DELETE /sandboxes/<id>`, …) and envd calls (`POST /process.Process/Start`, `GET /files`, …).
   */
  calls: string[];
  /**
   * JSON bodies of control-plane requests, in order, e.g. `{ call: "POST /v2/sandboxes", body }` or
   * `{ call: "PUT /sandboxes/<id>/network", body }`. Test memory only: they hold rule header values as sent.
   */
  bodies: { call: string; body: unknown }[];
  /** The fault switchboard (see ./faults.ts); `faults.reset()` puts everything back to normal. */
  faults: E2BFaults;
  /** Ids of the sandboxes that are live (their containers exist), oldest first. */
  alive(): string[];
  /** Exact Docker container id of a sandbox this server made (also after it ended), else undefined. */
  containerIdOf(sandboxId: string): string | undefined;
  /** How sandboxes ended, in order: `killed` (DELETE), `expired` (timeout), `server-closed`, each with its release proof. */
  ends: SandboxEnd[];
  /** What the egress proxy saw: requests to upstream hosts and tunnels to other hosts (host, path, outcome, status, names of injected headers — never values). */
  egress: EgressRecord[];
  /** Ends the sandbox now as its timeout would: the container is removed by exact id. Resolves once it is gone. */
  expire(sandboxId: string): Promise<void>;
  /**
   * Removes every container still live (by exact id), answers requests held by the `hang` fault
   * with 503, and stops both listeners. Throws when a container could not be confirmed removed.
   */
  close(): Promise<void>;
}

/** Template id → a memoised resolver of its spec (default images are built on first use only). */
function templateSpecs(given: Record<string, string | TemplateSpec> | undefined, docker: DockerClient): Record<string, () => Promise<TemplateSpec>> {
  const once = (f: () => Promise<TemplateSpec>) => {
    let p: Promise<TemplateSpec> | undefined;
    return () => {
      p ??= f();
      p.catch(() => {
        p = undefined;
      });
      return p;
    };
  };
  const out: Record<string, () => Promise<TemplateSpec>> = {
    base: once(async () => ({ image: (await ensureImage(docker, sandboxRecipe)).tag })),
    desktop: once(() => desktopTemplate(docker)),
  };
  for (const [id, t] of Object.entries(given ?? {})) {
    const spec = typeof t === "string" ? { image: t } : t;
    out[id] = () => Promise.resolve(spec);
  }
  return out;
}

/**
 * Starts the server on two loopback ports. Needs a Docker engine (throws naming what is missing).
 * Example: `const e2b = await startE2BServer(); await Sandbox.create("base", { apiKey: e2b.apiKey,
 * apiUrl: e2b.apiUrl, sandboxUrl: e2b.sandboxUrl })`.
 */
export async function startE2BServer(opts: E2BServerOptions = {}): Promise<E2BServer> {
  await requireDocker();
  const docker = createDockerClient();
  const templates = templateSpecs(opts.templates, docker);
  const serverId = randomUUID();
  const labels = { ...(opts.labels ?? {}), "humanish.e2b-server": serverId };
  const upstreams = Object.fromEntries(Object.entries(opts.upstreams ?? {}).map(([h, u]) => [h.toLowerCase(), u]));
  // Started on first use only: by a deny-all sandbox that allows some host, or by an upstream host.
  const proxy = new EgressProxy(upstreams, labels);
  const registry = new SandboxRegistry(docker, templates, labels, proxy);
  const apiKey = opts.apiKey ?? `e2b_${randomBytes(20).toString("hex")}`;
  const deps: ControlPlaneDeps = { apiKey, registry, faults: createFaults(), calls: [], bodies: [], hung: new Set() };

  const api = Bun.serve({ hostname: "127.0.0.1", port: 0, idleTimeout: 0, fetch: (req) => controlPlane(req, deps) });
  const envd = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    idleTimeout: 0,
    async fetch(req) {
      const url = new URL(req.url);
      deps.calls.push(`${req.method} ${url.pathname}`);
      const id = req.headers.get("e2b-sandbox-id") ?? "";
      const sandbox = registry.get(id);
      // E2B's edge proxy answers 502 for a sandbox that is not running; the SDK reads that as
      // "sandbox gone / timed out".
      if (!sandbox) return Response.json({ code: 502, message: "The sandbox was not found", sandboxId: id }, { status: 502 });
      if (url.pathname === "/health") return new Response(null, { status: 204 });
      if (sandbox.envdAccessToken && req.headers.get("x-access-token") !== sandbox.envdAccessToken) {
        return Response.json({ code: 401, message: "invalid or missing X-Access-Token" }, { status: 401 });
      }
      if (url.pathname === "/files") return filesApi(req, sandbox);
      const rpc = /^\/(process\.Process|filesystem\.Filesystem)\/([A-Za-z]+)$/.exec(url.pathname);
      if (rpc && req.method === "POST") return rpc[1] === "process.Process" ? processService(req, rpc[2]!, sandbox) : filesystemService(req, rpc[2]!, sandbox);
      return Response.json({ code: 404, message: `no route ${req.method} ${url.pathname}` }, { status: 404 });
    },
  });

  const apiUrl = `http://127.0.0.1:${api.port}`;
  const sandboxUrl = `http://127.0.0.1:${envd.port}`;
  return {
    apiUrl,
    sandboxUrl,
    apiKey,
    env: () => ({ E2B_API_URL: apiUrl, E2B_SANDBOX_URL: sandboxUrl, E2B_API_KEY: apiKey }),
    calls: deps.calls,
    bodies: deps.bodies,
    faults: deps.faults,
    alive: () => registry.list().map((r) => r.id),
    containerIdOf: (id) => registry.containerIdOf(id),
    ends: registry.ends,
    egress: proxy.records,
    async expire(id) {
      const proof = await registry.end(id, "expired");
      if (!proof) throw new Error(`expire: sandbox ${id} is not live`);
      if (proof.outcome !== "released") throw new Error(`expire: container of sandbox ${id} not confirmed removed: ${proof.reason}`);
    },
    async close() {
      for (const release of deps.hung) release();
      deps.hung.clear();
      const proofs = await registry.closeAll();
      api.stop(true);
      envd.stop(true);
      await proxy.close();
      const bad = proofs.filter((p) => p.outcome !== "released");
      if (bad.length > 0) throw new Error(`close: containers not confirmed removed: ${bad.map((p) => `${p.id} (${p.reason})`).join(", ")}`);
    },
  };
}

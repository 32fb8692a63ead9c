/**
 * E2B's REST control plane as the `e2b` SDK calls it: create (`POST /v2/sandboxes`), info
 * (`GET /sandboxes/{id}`), kill (`DELETE /sandboxes/{id}`), connect
 * (`POST /v2/sandboxes/{id}/connect`), timeout (`POST /sandboxes/{id}/timeout`), network update
 * (`PUT /sandboxes/{id}/network`, which really moves the container: ./containers.ts) and list
 * (`GET /v2/sandboxes`). Every request needs `X-API-KEY` (401 otherwise); errors are
 * `{ code, message }` with the HTTP status as `code`, which is what the SDK reads.
 */
import { type CreateBody, CreateRefused, type SandboxRecord, type SandboxRegistry } from "./containers.ts";
import { controlPlaneFault, type E2BFaults } from "./faults.ts";
import { readNetworkUpdate } from "./network-update.ts";

/** Version of envd this server's sandboxes claim (the SDK picks its wire features from it). */
export const ENVD_VERSION = "0.5.7";

/** What the control plane needs from the server. */
export interface ControlPlaneDeps {
  apiKey: string;
  registry: SandboxRegistry;
  faults: E2BFaults;
  /** Every request as `"<METHOD> <path>"`, in order. */
  calls: string[];
  /** JSON bodies of the requests that carry one, in order. */
  bodies: { call: string; body: unknown }[];
  /** Resolvers of requests held open by the `hang` kill fault, released at close. */
  hung: Set<() => void>;
}

const error = (status: number, message: string, headers?: Record<string, string>) =>
  Response.json({ code: status, message }, { status, ...(headers ? { headers } : {}) });

/** The `Sandbox` shape create and connect answer with. */
function sandboxCreated(r: SandboxRecord): Record<string, unknown> {
  return {
    sandboxID: r.id,
    templateID: r.templateID,
    clientID: "local",
    envdVersion: ENVD_VERSION,
    envdAccessToken: r.envdAccessToken ?? null,
    trafficAccessToken: null,
    domain: null,
  };
}

/** The `SandboxDetail` shape of `GET /sandboxes/{id}` (and, less the network, of a list item). */
function sandboxDetail(r: SandboxRecord, withNetwork: boolean): Record<string, unknown> {
  return {
    sandboxID: r.id,
    templateID: r.templateID,
    clientID: "local",
    startedAt: r.startedAt.toISOString(),
    endAt: r.endAt.toISOString(),
    state: "running",
    cpuCount: 1,
    memoryMB: 1024,
    diskSizeMB: 2048,
    envdVersion: ENVD_VERSION,
    metadata: r.body.metadata ?? {},
    ...(r.network.allow_internet_access !== undefined ? { allowInternetAccess: r.network.allow_internet_access } : {}),
    // E2B echoes the network config in force back (create's, or the last update's), rules and
    // their header transforms included: a caller that persists or logs this object leaks
    // whatever secret a transform carries.
    ...(withNetwork && r.network.network ? { network: r.network.network } : {}),
    lifecycle: { onTimeout: "kill", autoResume: false },
    domain: null,
  };
}

/** Parses the `metadata` list filter (`k1=v1&k2=v2`, each side URL-encoded once more). */
function metadataFilter(raw: string | null): Record<string, string> {
  if (!raw) return {};
  const out: Record<string, string> = {};
  for (const [k, v] of new URLSearchParams(raw)) out[decodeURIComponent(k)] = decodeURIComponent(v);
  return out;
}

/** Serves one control-plane request. */
export async function controlPlane(req: Request, deps: ControlPlaneDeps): Promise<Response> {
  const url = new URL(req.url);
  const call = `${req.method} ${url.pathname}`;
  deps.calls.push(call);
  let body: unknown;
  if (req.method === "POST" || req.method === "PUT") {
    const text = await req.text();
    body = text ? JSON.parse(text) : undefined;
    deps.bodies.push({ call, body });
  }
  const fault = controlPlaneFault(deps.faults, call);
  if (fault?.status === 401) return error(401, fault.message);
  if (fault?.status === 429) return error(429, fault.message, { "Retry-After": String(fault.retryAfterSeconds) });
  if (req.headers.get("x-api-key") !== deps.apiKey) return error(401, "Invalid API key");

  const { registry } = deps;
  if (call === "POST /v2/sandboxes") {
    const b = (body ?? {}) as CreateBody;
    if (typeof b.templateID !== "string") return error(400, "templateID is required");
    try {
      return Response.json(sandboxCreated(await registry.create(b)), { status: 201 });
    } catch (e) {
      if (e instanceof CreateRefused) return error(e.status, e.message);
      return error(500, `sandbox could not be created: ${(e as Error).message}`);
    }
  }
  if (call === "GET /v2/sandboxes") {
    const want = metadataFilter(url.searchParams.get("metadata"));
    const states = (url.searchParams.get("state") ?? "").split(",").filter(Boolean);
    const items = registry
      .list()
      .filter((r) => Object.entries(want).every(([k, v]) => r.body.metadata?.[k] === v))
      .filter(() => states.length === 0 || states.includes("running"))
      .map((r) => sandboxDetail(r, false));
    return Response.json(items);
  }
  // Template lookup by name (the SDK's `Template.exists`): E2B answers the alias with its id.
  const alias = /^\/templates\/aliases\/([^/]+)$/.exec(url.pathname);
  if (alias && req.method === "GET") {
    const name = decodeURIComponent(alias[1] ?? "");
    return registry.hasTemplate(name) ? Response.json({ templateID: name, public: false }) : error(404, `template alias '${name}' not found`);
  }
  const m = /^\/(v2\/)?sandboxes\/([^/]+)(\/[a-z]+)?$/.exec(url.pathname);
  if (!m) return error(404, `no route ${call}`);
  const [, v2, id, tail] = m as unknown as [string, string | undefined, string, string | undefined];
  const r = registry.get(id);
  if (!v2 && !tail && req.method === "GET") return r ? Response.json(sandboxDetail(r, true)) : error(404, `sandbox ${id} not found`);
  if (!v2 && !tail && req.method === "DELETE") return kill(id, r, deps);
  if (!v2 && tail === "/timeout" && req.method === "POST") {
    const timeout = (body as { timeout?: unknown } | undefined)?.timeout;
    if (typeof timeout !== "number" || !Number.isInteger(timeout) || timeout < 0) return error(400, "timeout must be a whole number of seconds");
    return registry.setTimeout(id, timeout) ? new Response(null, { status: 204 }) : error(404, `sandbox ${id} not found`);
  }
  if (!v2 && tail === "/network" && req.method === "PUT") {
    if (!r) return error(404, `sandbox ${id} not found`);
    const next = readNetworkUpdate(body);
    if (typeof next === "string") return error(400, `network update: ${next}`);
    try {
      return (await registry.updateNetwork(id, next)) ? new Response(null, { status: 204 }) : error(404, `sandbox ${id} not found`);
    } catch (e) {
      return error(500, `network of sandbox ${id} could not be updated: ${(e as Error).message}`);
    }
  }
  if (v2 && tail === "/connect" && req.method === "POST") {
    if (!r) return error(404, `sandbox ${id} not found`);
    const timeout = (body as { timeout?: unknown } | undefined)?.timeout;
    // Connecting never shortens a sandbox's life, as in E2B.
    if (typeof timeout === "number" && Date.now() + timeout * 1000 > r.endAt.getTime()) registry.setTimeout(id, timeout);
    return Response.json(sandboxCreated(r), { status: 200 });
  }
  return error(404, `no route ${call}`);
}

async function kill(id: string, r: SandboxRecord | undefined, deps: ControlPlaneDeps): Promise<Response> {
  const mode = deps.faults.kill;
  if (mode === "hang") {
    return new Promise<Response>((resolve) => {
      const release = () => resolve(error(503, "server closing"));
      deps.hung.add(release);
    });
  }
  if (mode === "404-but-alive") return error(404, `sandbox ${id} not found`);
  if (!r) return error(404, `sandbox ${id} not found`);
  if (mode === "ack-but-alive") return new Response(null, { status: 204 });
  const proof = await deps.registry.end(id, "killed");
  if (proof?.outcome !== "released") return error(500, `sandbox ${id} could not be removed: ${proof?.reason ?? "unknown"}`);
  return new Response(null, { status: 204 });
}

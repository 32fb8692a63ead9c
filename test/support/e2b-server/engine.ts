/**
 * Raw Docker Engine API calls the project's Docker client does not offer (networks: create,
 * inspect, connect, remove), over the same unix socket. Answers are `{ status, body }` with the
 * body parsed from JSON (null when empty); callers decide which statuses are success.
 */
import { resolveDockerSocket } from "../../../src/docker/index.ts";

/** One Engine API request, e.g. `engine("/networks/abc")`. Throws only when the socket cannot be reached. */
export async function engine(path: string, init: RequestInit = {}): Promise<{ status: number; body: unknown }> {
  const res = await fetch(`http://localhost/v1.41${path}`, {
    ...init,
    headers: { "content-type": "application/json" },
    unix: resolveDockerSocket(process.env),
  } as RequestInit);
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
}

/** Connects container `container` (exact id) to network `network` (name or id). Throws with the engine's answer unless it says 200. */
export async function networkConnect(network: string, container: string): Promise<void> {
  const r = await engine(`/networks/${encodeURIComponent(network)}/connect`, { method: "POST", body: JSON.stringify({ Container: container }) });
  if (r.status !== 200) throw new Error(`network connect ${network} ← ${container} failed (${r.status}): ${JSON.stringify(r.body)}`);
}

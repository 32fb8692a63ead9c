/**
 * Release of a Docker container by its exact id, with proof (ARCHITECTURE.md invariant 7).
 *
 * Step 1 removes it (`DELETE /containers/{id}?force=1&v=1`); step 2 inspects it. Only an inspect
 * answering 404 proves it gone → `released`. Anything else (still present, engine error, a step that
 * outlived its outer deadline) → `unconfirmed` with the reason. A 404 on remove alone ("already gone")
 * is never taken as proof by itself. Never throws.
 */
import { type DockerClient, isDockerApiError } from "../docker/index.ts";
import type { ReleaseProof } from "./types.ts";

/** Deadlines of the two release steps, ms. */
export interface ReleaseDeadlines {
  /** Outer deadline of the remove call (default 30000). */
  removeTimeoutMs?: number;
  /** Outer deadline of the confirming inspect (default 10000). */
  inspectTimeoutMs?: number;
}

class StepTimeout extends Error {}

/** Races `p` against an outer deadline, so a call that never settles cannot hang the release. */
async function withDeadline<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new StepTimeout(`${what} did not settle within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([p, deadline]);
  } finally {
    clearTimeout(timer);
  }
}

function describe(e: unknown): string {
  if (isDockerApiError(e)) return `HTTP ${e.status}: ${e.engineMessage}`;
  if (e instanceof Error) return `${(e as { code?: string }).code ?? e.name}: ${e.message}`;
  return String(e);
}

/**
 * Removes container `id` (exact id, never a name or a label match) and confirms with inspect → 404.
 * Returns the proof; never throws.
 */
export async function releaseContainer(docker: DockerClient, id: string, deadlines: ReleaseDeadlines = {}): Promise<ReleaseProof> {
  const at = new Date().toISOString();
  const removeMs = deadlines.removeTimeoutMs ?? 30_000;
  const inspectMs = deadlines.inspectTimeoutMs ?? 10_000;
  let removeNote: string;
  try {
    const r = await withDeadline(docker.containerRemove(id, { force: true, volumes: true, timeoutMs: removeMs }), removeMs + 1000, "remove");
    removeNote = r === "removed" ? "removed" : "remove answered 404 (already gone)";
  } catch (e) {
    removeNote = `remove failed (${describe(e)})`;
  }
  try {
    const info = await withDeadline(docker.containerInspect(id, { timeoutMs: inspectMs }), inspectMs + 1000, "inspect");
    return {
      id,
      provider: "docker",
      outcome: "unconfirmed",
      reason: `${removeNote}; container still present after remove (state ${info.State?.Status ?? "unknown"})`,
      at,
    };
  } catch (e) {
    if (isDockerApiError(e, 404)) return { id, provider: "docker", outcome: "released", reason: `${removeNote}; inspect-404`, at };
    return { id, provider: "docker", outcome: "unconfirmed", reason: `${removeNote}; confirming inspect failed (${describe(e)})`, at };
  }
}

/**
 * Ids of containers carrying `humanish.run=<runId>` and `humanish.owner=humanish` — for finding
 * orphans of a run only; release each by its exact id with `releaseContainer`. Throws `HumanishError`
 * when the engine is unreachable.
 */
export async function findRunContainers(docker: DockerClient, runId: string): Promise<string[]> {
  const rows = await docker.containerList({ all: true, labels: [`humanish.run=${runId}`, "humanish.owner=humanish"] });
  return rows.map((r) => r.Id);
}

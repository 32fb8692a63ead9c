/**
 * Orphan reconciliation (ARCHITECTURE.md invariant 7): the CLI calls
 * {@link reconcileOrphans} at the start of every command. It lists containers labelled
 * `humanish.owner=humanish` that carry a controller label (only to FIND candidates), keeps those
 * whose controlling process is no longer alive (./controller.ts), releases each by its exact id,
 * and records the outcome in that run's directory as `orphan-release.json`
 * (`humanish.orphan-release.v1`, appended per container; in a sealed run a signed appendix of
 * the run's signature, the only form verify accepts) in the project named by the container's
 * `humanish.project` label, else in `cwd`, when that run directory exists;
 * the dead controller's private io directory (`<tmp>/humanish-gd-*`) is removed after a release.
 */
import { existsSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { isAbsolute, join, relative } from "node:path";
import { ORPHAN_RELEASE_FILE, recordOrphanRelease } from "../bundle/index.ts";
import type { DockerClient } from "../docker/index.ts";
import { CONTROLLER_LABEL, isControllerLive, PROJECT_LABEL } from "../sandbox/controller.ts";
import { releaseContainer } from "../sandbox/release.ts";
import type { ReleaseProof } from "../sandbox/types.ts";

/** File written into `.humanish/runs/<runId>/` for each orphan released from that run. */
export { ORPHAN_RELEASE_FILE };

/** One reconciled container. */
export interface OrphanRelease {
  runId: string | null;
  proof: ReleaseProof;
  /** Path of the record written, relative to cwd, or null when the run dir is not in this cwd. */
  recordedIn: string | null;
}

const RUN_ID = /^[a-z0-9][a-z0-9-]{0,127}$/;

/** Appends the proof to the run's orphan-release.json (atomic, redacted) in its own project when known. */
function record(cwd: string, project: string | undefined, runId: string, proof: ReleaseProof): string | null {
  const root = project && isAbsolute(project) && existsSync(join(project, ".humanish", "runs", runId)) ? project : cwd;
  try {
    return recordOrphanRelease(root, runId, proof) ? relative(cwd, join(root, ".humanish", "runs", runId, ORPHAN_RELEASE_FILE)) : null;
  } catch {
    return null;
  }
}

/**
 * Release orphaned humanish containers whose controller is gone. Never throws for a single
 * container (its proof says `unconfirmed`); throws `HUMANISH_DOCKER_UNAVAILABLE` only when the
 * engine cannot be listed — callers that must not fail on a missing engine catch that.
 */
export async function reconcileOrphans(docker: DockerClient, cwd: string): Promise<OrphanRelease[]> {
  const rows = await docker.containerList({ all: true, labels: ["humanish.owner=humanish", CONTROLLER_LABEL] });
  const out: OrphanRelease[] = [];
  for (const row of rows) {
    const controller = row.Labels?.[CONTROLLER_LABEL];
    if (!controller || isControllerLive(controller)) continue;
    const label = row.Labels?.["humanish.run"];
    const runId = label && RUN_ID.test(label) ? label : null;
    // The private io dir the dead controller bind-mounted (mkdtemp `<tmp>/humanish-gd-*`), removed after release.
    let ioDir: string | undefined;
    try {
      const info = await docker.containerInspect(row.Id);
      const src = (info.HostConfig.Binds ?? [])
        .map((b) => b.split(":")[0]!)
        .find((p) => p.startsWith(join(tmpdir(), "humanish-gd-")) && !p.slice(tmpdir().length + 1).includes("/"));
      ioDir = src;
    } catch {
      ioDir = undefined;
    }
    const proof = await releaseContainer(docker, row.Id);
    if (ioDir && proof.outcome === "released") rmSync(ioDir, { recursive: true, force: true });
    const recordedIn = runId ? record(cwd, row.Labels?.[PROJECT_LABEL], runId, { ...proof, reason: `orphan (controller gone): ${proof.reason}` }) : null;
    out.push({ runId, proof, recordedIn });
  }
  return out;
}

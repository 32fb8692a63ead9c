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
 *
 * Two humanish commands may start at once and find the same orphan: each orphan is claimed first
 * (an exclusive claim file per container id, naming the claiming process), so exactly one of them
 * releases and records it; the other leaves it alone.
 */
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { isAbsolute, join, relative } from "node:path";
import { ORPHAN_RELEASE_FILE, recordOrphanRelease } from "../bundle/index.ts";
import { type DockerClient, isDockerApiError } from "../docker/index.ts";
import { CONTROLLER_LABEL, controllerIdentity, isControllerLive, PROJECT_LABEL } from "../sandbox/controller.ts";
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

/** This user's directory of orphan claims (created 0700 on first use). */
export function reconcileClaimDir(): string {
  const uid = typeof process.getuid === "function" ? process.getuid() : 0;
  return join(tmpdir(), `humanish-reconcile-${uid}`);
}

/**
 * Claims container `id` for this process: creates `<dir>/<id>.claim` exclusively with this
 * process's controller identity. A claim left by a process that is gone is taken over. Returns
 * the function that drops the claim, or undefined when a live process holds it (it is releasing
 * that container now). When the claim directory cannot be used at all, returns a no-op drop:
 * releasing an orphan matters more than never releasing it twice. (Two processes taking over the
 * same dead claim at the same instant may both proceed; each then records what it saw.)
 */
function claimOrphan(id: string, dir: string): (() => void) | undefined {
  const file = join(dir, `${id}.claim`);
  const me = controllerIdentity();
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
  } catch {
    return () => {};
  }
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      writeFileSync(file, me, { flag: "wx", mode: 0o600 });
      return () => rmSync(file, { force: true });
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "EEXIST") return () => {};
    }
    let holder: string;
    try {
      holder = readFileSync(file, "utf8");
    } catch {
      continue; // dropped between our create and our read: try once more
    }
    if (isControllerLive(holder)) return undefined;
    rmSync(file, { force: true });
  }
  return undefined;
}

/**
 * Release orphaned humanish containers whose controller is gone. Never throws for a single
 * container (its proof says `unconfirmed`); throws `HUMANISH_DOCKER_UNAVAILABLE` only when the
 * engine cannot be listed — callers that must not fail on a missing engine catch that.
 */
export async function reconcileOrphans(docker: DockerClient, cwd: string, claimDir: string = reconcileClaimDir()): Promise<OrphanRelease[]> {
  const rows = await docker.containerList({ all: true, labels: ["humanish.owner=humanish", CONTROLLER_LABEL] });
  const out: OrphanRelease[] = [];
  for (const row of rows) {
    const controller = row.Labels?.[CONTROLLER_LABEL];
    if (!controller || isControllerLive(controller)) continue;
    const drop = claimOrphan(row.Id, claimDir);
    if (!drop) continue;
    try {
      const released = await releaseClaimed(docker, cwd, row.Id, row.Labels ?? {});
      if (released) out.push(released);
    } finally {
      drop();
    }
  }
  return out;
}

/**
 * Releases and records one claimed orphan. Undefined when it is already gone: another process
 * released (and recorded) it between our listing and our claim.
 */
async function releaseClaimed(docker: DockerClient, cwd: string, id: string, labels: Record<string, string>): Promise<OrphanRelease | undefined> {
  const label = labels["humanish.run"];
  const runId = label && RUN_ID.test(label) ? label : null;
  // The private io dir the dead controller bind-mounted (mkdtemp `<tmp>/humanish-gd-*`), removed after release.
  let ioDir: string | undefined;
  try {
    const info = await docker.containerInspect(id);
    ioDir = (info.HostConfig.Binds ?? [])
      .map((b) => b.split(":")[0]!)
      .find((p) => p.startsWith(join(tmpdir(), "humanish-gd-")) && !p.slice(tmpdir().length + 1).includes("/"));
  } catch (e) {
    if (isDockerApiError(e, 404)) return undefined;
    ioDir = undefined;
  }
  const proof = await releaseContainer(docker, id);
  if (ioDir && proof.outcome === "released") rmSync(ioDir, { recursive: true, force: true });
  const recordedIn = runId ? record(cwd, labels[PROJECT_LABEL], runId, { ...proof, reason: `orphan (controller gone): ${proof.reason}` }) : null;
  return { runId, proof, recordedIn };
}

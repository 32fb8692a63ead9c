/**
 * A one-shot, locked-down container: one command, run once, then removed by its exact id. For
 * running code humanish must not trust with the host (a lab's scorer module) — unlike a
 * participant's sandbox (./docker.ts) it has no idle process and no exec: the command is the
 * container's own process, so killing the container ends every process it started.
 *
 * Hardening: no network (`NetworkMode: none`, networking disabled), all capabilities dropped,
 * `no-new-privileges`, the sandbox seccomp profile, a read-only root file system with a small
 * `/tmp` tmpfs, memory (no swap) / CPU / pids limits, `RLIMIT_FSIZE` on every file it writes, no
 * log driver (whatever it prints is dropped, never stored by the engine), and only the bind
 * mounts the caller names. Labelled `humanish.owner=humanish` and with the controller identity,
 * so an orphan left by a killed humanish is found and released by the next command.
 */
import { type DockerClient, isDockerApiError } from "../docker/index.ts";
import { errorMessage, HumanishError } from "../errors.ts";
import { CONTROLLER_LABEL, controllerIdentity } from "./controller.ts";
import { SANDBOX_SECCOMP_PROFILE } from "./docker.ts";
import { releaseContainer } from "./release.ts";
import type { ReleaseProof } from "./types.ts";

/** What to run and with what. Sizes in bytes. */
export interface OneShotOptions {
  image: string;
  /** argv of the container's process (the image's entrypoint is replaced). */
  cmd: string[];
  /** The process's whole environment (the image's own is replaced too). */
  env: Record<string, string>;
  /** `uid:gid` the process runs as. */
  user: string;
  workdir: string;
  mounts: { hostPath: string; containerPath: string; readOnly: boolean }[];
  memoryBytes: number;
  pidsLimit: number;
  cpus: number;
  /** Size of the `/tmp` tmpfs. */
  tmpBytes: number;
  /** Largest file the process may write (the kernel refuses to grow one past it). */
  fileBytes: number;
  labels?: Record<string, string>;
}

/** A started one-shot container. */
export interface OneShot {
  id: string;
  /** Resolves when the process ended: its exit code, or null when the engine could not say. */
  exited: Promise<number | null>;
  /** SIGKILL the container (every process in it); never throws. */
  kill(): Promise<void>;
  /** Remove it by exact id and prove it gone; never throws. */
  release(): Promise<ReleaseProof>;
}

/**
 * Create and start the container. If the start fails, it is released by its exact id before the
 * error is rethrown.
 * @throws HumanishError `HUMANISH_SANDBOX_IMAGE_MISSING`, `HUMANISH_SANDBOX_CREATE_FAILED`, `HUMANISH_SANDBOX_START_FAILED`, `HUMANISH_DOCKER_UNAVAILABLE`
 */
export async function startOneShot(docker: DockerClient, o: OneShotOptions): Promise<OneShot> {
  let id: string;
  try {
    const created = await docker.containerCreate({
      Image: o.image,
      Entrypoint: o.cmd.slice(0, 1),
      Cmd: o.cmd.slice(1),
      Env: Object.entries(o.env).map(([k, v]) => `${k}=${v}`),
      User: o.user,
      WorkingDir: o.workdir,
      Labels: { ...(o.labels ?? {}), "humanish.owner": "humanish", [CONTROLLER_LABEL]: controllerIdentity() },
      Tty: false,
      OpenStdin: false,
      NetworkDisabled: true,
      HostConfig: {
        Init: true,
        NetworkMode: "none",
        CapDrop: ["ALL"],
        SecurityOpt: ["no-new-privileges", `seccomp=${SANDBOX_SECCOMP_PROFILE}`],
        ReadonlyRootfs: true,
        Tmpfs: { "/tmp": `rw,nosuid,nodev,size=${o.tmpBytes},mode=1777` },
        Memory: o.memoryBytes,
        MemorySwap: o.memoryBytes,
        NanoCpus: Math.round(o.cpus * 1e9),
        PidsLimit: o.pidsLimit,
        Ulimits: [{ Name: "fsize", Soft: o.fileBytes, Hard: o.fileBytes }],
        LogConfig: { Type: "none", Config: {} },
        Binds: o.mounts.map((m) => `${m.hostPath}:${m.containerPath}:${m.readOnly ? "ro" : "rw"}`),
      },
    });
    id = created.Id;
  } catch (e) {
    if (isDockerApiError(e, 404)) {
      throw new HumanishError("HUMANISH_SANDBOX_IMAGE_MISSING", `image ${o.image} is not present in the Docker engine (${e.engineMessage})`, {
        next: "build it with `humanish runtime setup` (or `bash scripts/setup-images.sh`)",
        cause: e,
      });
    }
    if (e instanceof HumanishError && e.code === "HUMANISH_DOCKER_UNAVAILABLE") throw e;
    throw new HumanishError("HUMANISH_SANDBOX_CREATE_FAILED", `a one-shot container from ${o.image} could not be created: ${describe(e)}`, {
      next: "check `docker info` and retry",
      cause: e,
    });
  }
  const release = () => releaseContainer(docker, id);
  try {
    await docker.containerStart(id);
  } catch (e) {
    await release();
    throw new HumanishError("HUMANISH_SANDBOX_START_FAILED", `one-shot container ${id} could not be started: ${describe(e)}`, {
      next: "check `docker info` and the image; retry",
      cause: e,
    });
  }
  // `not-running` answers at once for a process that already ended.
  const exited = docker.containerWait(id, { condition: "not-running" }).then(
    (r) => r.StatusCode,
    () => null,
  );
  return {
    id,
    exited,
    kill: () => docker.containerKill(id, { killSignal: "SIGKILL" }).catch(() => undefined),
    release,
  };
}

function describe(e: unknown): string {
  if (isDockerApiError(e)) return `HTTP ${e.status}: ${e.engineMessage}`;
  return errorMessage(e);
}

/**
 * The container a Docker sandbox is created as: its limits (memory without swap, CPUs, pids, a
 * per-file size bound), the root file capabilities it may keep, and the Engine API create body
 * (no network unless granted, every capability dropped, `no-new-privileges`, our seccomp
 * profile, labels for finding orphans).
 */
import sandboxSeccomp from "../../runtime/seccomp/sandbox.json";
import type { ContainerCreateBody } from "../docker/index.ts";
import { HumanishError } from "../errors.ts";
import { CONTROLLER_LABEL, controllerIdentity } from "./controller.ts";
import { DEFAULT_DISK_BYTES } from "./disk-watch.ts";
import type { SandboxCreateOptions } from "./types.ts";

/**
 * The seccomp profile of every sandbox: Docker's default allow-list less `fallocate` (answered
 * EOPNOTSUPP), so a participant cannot reserve disk faster than the writable-layer watchdog polls.
 */
export const SANDBOX_SECCOMP_PROFILE: string = JSON.stringify(sandboxSeccomp);

/** A sandbox's resolved limits. */
export interface SandboxLimits {
  /** Memory, bytes (swap is not granted on top). */
  memoryBytes: number;
  /** CPUs (fractions allowed). */
  cpus: number;
  pidsLimit: number;
  /** Disk bound, bytes: the per-file size limit and the writable-layer watchdog's bound. */
  diskBytes: number;
}

/** Default memory limit, bytes (1 GiB). */
export const DEFAULT_MEMORY_BYTES = 1024 ** 3;
/** Default CPU limit, CPUs. */
export const DEFAULT_CPUS = 1;
/** Default pids limit. */
export const DEFAULT_PIDS_LIMIT = 256;
/** Default working directory. */
export const DEFAULT_WORKDIR = "/home/user";

/**
 * Checks the run id and image and resolves the limits with their defaults.
 * @throws HumanishError HUMANISH_SANDBOX_CREATE_INVALID without a run id or image, or when a limit
 *   is below its floor (memory ≥ 6 MiB, cpus > 0, pids > 0, disk a whole number ≥ 1 MiB)
 */
export function createLimits(o: SandboxCreateOptions): SandboxLimits {
  if (!o.runId) throw new HumanishError("HUMANISH_SANDBOX_CREATE_INVALID", "create: runId is required", { next: "pass the run id" });
  if (!o.image)
    throw new HumanishError("HUMANISH_SANDBOX_CREATE_INVALID", "create: image is required", {
      next: "pass an image reference, e.g. the sandbox image tag",
    });
  const memory = o.memoryBytes ?? DEFAULT_MEMORY_BYTES;
  const cpus = o.cpus ?? DEFAULT_CPUS;
  const pids = o.pidsLimit ?? DEFAULT_PIDS_LIMIT;
  const disk = o.diskBytes ?? DEFAULT_DISK_BYTES;
  if (!(memory >= 6 * 1024 * 1024) || !(cpus > 0) || !(pids > 0) || !(Number.isSafeInteger(disk) && disk >= 1024 * 1024)) {
    throw new HumanishError(
      "HUMANISH_SANDBOX_CREATE_INVALID",
      `create: limits must be positive (memoryBytes ≥ 6 MiB, cpus > 0, pidsLimit > 0, diskBytes ≥ 1 MiB; got ${memory}, ${cpus}, ${pids}, ${disk})`,
      {
        next: "fix the limits",
      },
    );
  }
  return { memoryBytes: memory, cpus, pidsLimit: pids, diskBytes: disk };
}

/**
 * The capabilities the sandbox's root keeps (undefined for none): only the file ones CHOWN,
 * FOWNER and DAC_OVERRIDE.
 * @throws HumanishError HUMANISH_SANDBOX_CREATE_INVALID for any other capability
 */
export function rootFileCaps(o: SandboxCreateOptions): string[] | undefined {
  const rootCaps = o.rootFileCaps && o.rootFileCaps.length > 0 ? [...o.rootFileCaps] : undefined;
  const notFileCap = rootCaps?.find((c) => c !== "CHOWN" && c !== "FOWNER" && c !== "DAC_OVERRIDE");
  if (notFileCap !== undefined) {
    throw new HumanishError("HUMANISH_SANDBOX_CREATE_INVALID", `create: rootFileCaps may only hold CHOWN, FOWNER, DAC_OVERRIDE (got ${notFileCap})`, {
      next: "give the sandbox's root no other capability",
    });
  }
  return rootCaps;
}

/**
 * The Engine API create body: `sleep infinity` under Docker's init, `env` as `NAME=value` lines
 * (no secret: those go into one exec's env only), root as `0:0` only when `rootCaps` is set.
 */
export function containerCreateBody(o: SandboxCreateOptions, limits: SandboxLimits, env: string[], rootCaps: string[] | undefined): ContainerCreateBody {
  const { memoryBytes: memory, cpus, pidsLimit: pids, diskBytes: disk } = limits;
  return {
    Image: o.image,
    ...(rootCaps ? { User: "0:0" } : {}),
    Entrypoint: ["sleep", "infinity"],
    Cmd: [],
    Env: env,
    WorkingDir: o.workdir ?? DEFAULT_WORKDIR,
    Labels: { ...(o.labels ?? {}), "humanish.run": o.runId, "humanish.owner": "humanish", [CONTROLLER_LABEL]: controllerIdentity() },
    Tty: false,
    OpenStdin: false,
    HostConfig: {
      Init: true,
      NetworkMode: o.dockerNetwork ?? (o.network === "bridge" ? "bridge" : "none"),
      ...(o.extraHosts && o.extraHosts.length > 0 ? { ExtraHosts: o.extraHosts } : {}),
      CapDrop: ["ALL"],
      ...(rootCaps ? { CapAdd: rootCaps } : {}),
      SecurityOpt: ["no-new-privileges", `seccomp=${o.seccompProfile ?? SANDBOX_SECCOMP_PROFILE}`],
      ...(o.shmBytes !== undefined ? { ShmSize: o.shmBytes } : {}),
      Memory: memory,
      MemorySwap: memory,
      NanoCpus: Math.round(cpus * 1e9),
      PidsLimit: pids,
      // The kernel refuses to grow any one file past the bound (no storage driver needed).
      Ulimits: [{ Name: "fsize", Soft: disk, Hard: disk }],
      ...(o.mounts && o.mounts.length > 0 ? { Binds: o.mounts.map((m) => `${m.hostPath}:${m.containerPath}:${m.readOnly ? "ro" : "rw"}`) } : {}),
    },
  };
}

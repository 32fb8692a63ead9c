/**
 * Public API of the sandbox seam and its Docker backend.
 * Routes and the environment server use `SandboxProvider`/`Sandbox` from here.
 */

export { DEFAULT_DISK_BYTES, DEFAULT_DISK_WATCH_MS, type DiskLimitBreach } from "./disk-watch.ts";
export {
  createDockerSandboxProvider,
  DEFAULT_CPUS,
  DEFAULT_MEMORY_BYTES,
  DEFAULT_PIDS_LIMIT,
  DEFAULT_READ_MAX_BYTES,
  DEFAULT_WORKDIR,
  type DockerSandboxProviderOptions,
  EXEC_TOKEN_ENV,
} from "./docker.ts";
export { findRunContainers, type ReleaseDeadlines, releaseContainer } from "./release.ts";
export type { ExecOptions, ExecResult, ReleaseOutcome, ReleaseProof, Sandbox, SandboxCreateOptions, SandboxProvider } from "./types.ts";

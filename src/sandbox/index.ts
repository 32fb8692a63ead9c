/**
 * Public API of the sandbox seam and its Docker backend (issue 2 §6).
 * Routes and the environment server use `SandboxProvider`/`Sandbox` from here.
 */
export type { Sandbox, SandboxProvider, SandboxCreateOptions, ExecOptions, ExecResult, ReleaseOutcome, ReleaseProof } from "./types.ts";
export {
  createDockerSandboxProvider,
  EXEC_TOKEN_ENV,
  DEFAULT_MEMORY_BYTES,
  DEFAULT_CPUS,
  DEFAULT_PIDS_LIMIT,
  DEFAULT_WORKDIR,
  DEFAULT_READ_MAX_BYTES,
  type DockerSandboxProviderOptions,
} from "./docker.ts";
export { releaseContainer, findRunContainers, type ReleaseDeadlines } from "./release.ts";

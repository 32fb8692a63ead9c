/**
 * Where a lab's scorer runs. A scorer is the lab author's code, but it runs on the operator's
 * machine beside the key that signs bundles and a process holding provider keys, so it is kept
 * from both: whenever a Docker engine is usable it runs in a sandbox container of its own
 * (./runner.ts, src/sandbox/oneshot.ts: no network, no home, read-only root file system, the
 * sandbox seccomp profile, every capability dropped, pids and memory limits; it sees a copy of
 * its own folder, its request and its replies file, nothing else of the host).
 *
 * Without a usable engine it could only run as a plain process of the operator, which reads
 * what the operator reads. That is refused unless the operator opts in with
 * {@link UNCONFINED_OPT_IN_ENV}`=1`; the bundle then records the opt-in, and `verify` reports it.
 */
import { type DockerClient, dockerClientFor, isDockerApiError } from "../docker/index.ts";
import { HumanishError, isHumanishError } from "../errors.ts";
import { ensureSandboxImage } from "../runtime/recipes.ts";

/** The variable that lets a scorer run unconfined when no Docker engine is usable (value `1`). */
export const UNCONFINED_OPT_IN_ENV = "HUMANISH_ALLOW_UNCONFINED_SCORER";

/** What an unconfined scorer can read and do, said wherever it runs so. */
export const UNCONFINED_POWERS =
  "it runs as a process of your user: it can read every file you can (your home, the signing key in ~/.config/humanish, other runs' bundles), " +
  "read the environment of humanish and of your other processes through /proc (provider keys included), use the network, " +
  "and start processes that leave its process group";

/** How long the engine check may take before the engine counts as unusable, ms. */
export const ENGINE_CHECK_TIMEOUT_MS = 5000;

/** Where the scorer runs: in a container from `image`, or unconfined (opted in) and why. */
export type Confinement = { mode: "container"; docker: DockerClient; image: string } | { mode: "unconfined"; reason: string };

/** Why the engine cannot hold the scorer, or its client and image. Builds the sandbox image when it is missing, as a live terminal run does. */
async function engineFor(env: Record<string, string | undefined>): Promise<{ docker: DockerClient; image: string } | { reason: string }> {
  try {
    const docker = dockerClientFor(env);
    await docker.ping({ timeoutMs: ENGINE_CHECK_TIMEOUT_MS });
    const built = await ensureSandboxImage(docker, { env });
    return { docker, image: built.tag };
  } catch (e) {
    const why = isDockerApiError(e) ? `HTTP ${e.status}: ${e.engineMessage}` : isHumanishError(e) ? `${e.code}: ${e.message}` : String(e);
    return { reason: `no Docker engine is usable (${why.slice(0, 300)})` };
  }
}

/**
 * Decide where the scorer runs, for the command's environment `env` (process env merged with
 * `--env-file`).
 * @throws HumanishError `HUMANISH_LAB_SCORER_UNCONFINED` when no engine is usable and `env` does not opt in
 */
export async function chooseConfinement(env: Record<string, string | undefined>): Promise<Confinement> {
  const engine = await engineFor(env);
  if ("docker" in engine) return { mode: "container", ...engine };
  if (env[UNCONFINED_OPT_IN_ENV] === "1") return { mode: "unconfined", reason: engine.reason };
  throw new HumanishError(
    "HUMANISH_LAB_SCORER_UNCONFINED",
    `the lab's scorer would run unconfined: ${engine.reason}, so it cannot run in a sandbox container of its own, and unconfined ${UNCONFINED_POWERS}; nothing was run`,
    {
      next: `start Docker (the scorer then runs in a container with no network and no home), or set ${UNCONFINED_OPT_IN_ENV}=1 to run it unconfined anyway (the bundle records that)`,
    },
  );
}

/**
 * Docker terminal lane preflight (live only): the Docker engine answers; the sandbox image is
 * present or built. The pure study plan both terminal lanes share is src/terminal-seat/plan.ts.
 */

import { type DockerClient, dockerClientFor, isDockerApiError } from "../../docker/index.ts";
import { HumanishError } from "../../errors.ts";
import type { TerminalLabConfig } from "../../lab/schema.ts";
import { ensureImage } from "../../runtime/images.ts";
import { nodeFactsOf, sandboxRecipe } from "../../runtime/recipes.ts";

/** What the engine check established. */
export interface EngineReady {
  docker: DockerClient;
  /** Image reference the sandbox is created from. */
  image: string;
  /** True when this preflight built the image. */
  built: boolean;
  /** Node runtime of the image from its labels; null for an image without them (a lab's own). */
  node: { version: string; sha256: string; npmVersion: string | null } | null;
}

/**
 * Engine preflight: the Docker engine answers `/_ping`, and the image exists — `execution.image`
 * must already be present; the humanish sandbox image is built from its embedded recipe when
 * missing. The engine is the one `opts.env` names (the command's env: process env merged with
 * `--env-file`; default process.env). Throws `HUMANISH_DOCKER_HOST_UNSUPPORTED`,
 * `HUMANISH_DOCKER_UNAVAILABLE`, `HUMANISH_SANDBOX_IMAGE_MISSING` or `HUMANISH_IMAGE_BUILD_FAILED`.
 */
export async function checkEngine(
  lab: TerminalLabConfig,
  opts: { docker?: DockerClient; env?: Record<string, string | undefined>; signal?: AbortSignal; onBuild?: (line: string) => void } = {},
): Promise<EngineReady> {
  const env = opts.env ?? process.env;
  const docker = opts.docker ?? dockerClientFor(env);
  await docker.ping();
  if (lab.execution.image) {
    let labels: Record<string, string> | null | undefined;
    try {
      labels = (await docker.imageInspect(lab.execution.image)).Config?.Labels;
    } catch (e) {
      if (isDockerApiError(e, 404)) {
        throw new HumanishError(
          "HUMANISH_SANDBOX_IMAGE_MISSING",
          `execution.image ${lab.execution.image} is not present in the Docker engine; no registry is contacted.`,
          {
            next: `Build or load ${lab.execution.image} first (docker build / docker load), or remove execution.image to use the humanish sandbox image.`,
          },
        );
      }
      throw e;
    }
    return { docker, image: lab.execution.image, built: false, node: nodeFactsOf(labels) };
  }
  const r = await ensureImage(docker, sandboxRecipe, {
    env,
    ...(opts.signal ? { signal: opts.signal } : {}),
    ...(opts.onBuild ? { onProgress: (m) => typeof m.stream === "string" && m.stream.trim() && opts.onBuild?.(m.stream.trim()) } : {}),
  });
  const node = nodeFactsOf((await docker.imageInspect(r.tag)).Config?.Labels);
  return { docker, image: r.tag, built: r.built, node };
}

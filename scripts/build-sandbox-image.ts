/**
 * Builds the sandbox image (`runtime/sandbox/` recipe) through the Engine API with humanish's own
 * client, printing the build output. Prints the tag on the last line. Exit 0 when present/built,
 * 2 on a build failure (message and next step on stderr).
 * Usage: bun scripts/build-sandbox-image.ts [--force]
 */
import { createDockerClient } from "../src/docker/index.ts";
import { HumanishError } from "../src/errors.ts";
import { ensureImage } from "../src/runtime/images.ts";
import { sandboxRecipe } from "../src/runtime/recipes.ts";

const docker = createDockerClient();
try {
  const res = await ensureImage(docker, sandboxRecipe, {
    force: process.argv.includes("--force"),
    onProgress: (m) => {
      if (typeof m.stream === "string") process.stdout.write(m.stream);
      else if (typeof m.status === "string") process.stdout.write(`${m.status}\n`);
    },
  });
  console.log(`${res.built ? "built" : "present"} ${res.tag} ${res.imageId}`);
} catch (e) {
  if (e instanceof HumanishError) {
    console.error(`sandbox image build failed: ${e.message}\ncode: ${e.code}\nnext: ${e.next ?? "-"}`);
    process.exit(2);
  }
  throw e;
}

/**
 * The image of the local server's `desktop` template (runtime/e2b-desktop/Dockerfile): Xvfb, an
 * XFCE session, xdotool, scrot, x11-utils, Chromium, all from Debian, user `user`. Its tag is
 * `humanish-e2b-desktop:<revision>`, the revision a SHA-256 of the recipe, like the other runtime
 * images; `scripts/setup-images.sh` builds it by running this file.
 *
 * Usage: `bun test/support/e2b-server/desktop-image.ts` (prints the tag), or
 * `await ensureDesktopImage()` from a test (builds when absent, minutes on a cold cache).
 */
import desktopDockerfile from "../../../runtime/e2b-desktop/Dockerfile" with { type: "text" };
import seccompProfile from "../../../runtime/seccomp/guest.json";
import { createDockerClient, type DockerClient } from "../../../src/docker/index.ts";
import { type EnsureImageOptions, ensureImage, type ImageRecipe } from "../../../src/runtime/images.ts";
import type { TemplateSpec } from "./containers.ts";

/** Repository part of the desktop image's tag. */
export const DESKTOP_IMAGE_NAME = "humanish-e2b-desktop";

/** The desktop template's recipe. */
export const desktopRecipe: ImageRecipe = { name: DESKTOP_IMAGE_NAME, files: { Dockerfile: desktopDockerfile } };

/**
 * Seccomp profile of desktop sandboxes: the browser guest's (Docker's default plus the
 * user-namespace calls Chromium's sandbox needs), so Chromium runs with its sandbox on.
 */
export const DESKTOP_SECCOMP_PROFILE: string = JSON.stringify(seccompProfile);

/** The desktop image's tag, building it when absent. Throws `HUMANISH_IMAGE_BUILD_FAILED` / `HUMANISH_DOCKER_UNAVAILABLE`. */
export async function ensureDesktopImage(docker: DockerClient = createDockerClient(), opts: EnsureImageOptions = {}): Promise<string> {
  return (await ensureImage(docker, desktopRecipe, opts)).tag;
}

/**
 * The `desktop` template spec for `startE2BServer({ templates: { desktop } })`: 2 GiB, 2 CPUs,
 * room for a browser's processes, 256 MiB of /dev/shm, and the Chromium-sandbox seccomp profile.
 */
export async function desktopTemplate(docker: DockerClient = createDockerClient()): Promise<TemplateSpec> {
  return {
    image: await ensureDesktopImage(docker),
    memoryBytes: 2 * 1024 ** 3,
    cpus: 2,
    pidsLimit: 1024,
    shmBytes: 256 * 1024 ** 2,
    seccompProfile: DESKTOP_SECCOMP_PROFILE,
  };
}

if (import.meta.main) {
  const tag = await ensureDesktopImage(createDockerClient(), {
    onProgress: (m) => {
      if (typeof m.stream === "string") process.stdout.write(m.stream);
    },
  });
  console.log(tag);
}

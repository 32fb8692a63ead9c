/**
 * One npm cache for every Docker sandbox of a test run that installs the Codex CLI.
 *
 * Each Codex study runs the real `npm install --global @openai/codex@<exact>` in its sandbox; the
 * package and its native binary are about 165 MB, so on a slow link the download, not the study,
 * is what a Codex test waits for. The sandboxes these providers create mount one host directory
 * as npm's cache (`npm_config_cache`, `prefer-offline`): the first install of the run downloads,
 * every later one (in this file or another) installs the same verified tarballs from the cache.
 * The install, the probe and the study are otherwise exactly as a user's.
 */
import { chmodSync, mkdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createDockerClient } from "../../src/docker/index.ts";
import { createDockerSandboxProvider } from "../../src/sandbox/index.ts";
import type { SandboxProvider } from "../../src/sandbox/types.ts";
import { dockerSocketPath } from "./prereq.ts";

/** Where the cache sits inside a sandbox. */
const CONTAINER_CACHE = "/var/cache/humanish-test-npm";

/** The host cache directory, made on first use (container root writes it: no capabilities are needed when the owner is root). */
export function testNpmCacheDir(): string {
  const uid = process.getuid?.() ?? 0;
  const dir = join(tmpdir(), `humanish-test-npm-cache-${uid}`);
  mkdirSync(dir, { recursive: true });
  // A non-root runner's directory is foreign to the sandbox's root, which holds no DAC capability.
  if (uid !== 0) chmodSync(dir, 0o777);
  return dir;
}

/** `inner` (default: a Docker provider on the test engine) whose sandboxes share the run's npm cache. */
export function npmCacheProvider(inner?: SandboxProvider): SandboxProvider {
  const base = inner ?? createDockerSandboxProvider({ docker: createDockerClient({ socketPath: dockerSocketPath() }) });
  const hostPath = testNpmCacheDir();
  return {
    provider: base.provider,
    create: (opts) =>
      base.create({
        ...opts,
        env: { ...opts.env, npm_config_cache: CONTAINER_CACHE, npm_config_prefer_offline: "true" },
        mounts: [...(opts.mounts ?? []), { hostPath, containerPath: CONTAINER_CACHE, readOnly: false }],
      }),
  };
}

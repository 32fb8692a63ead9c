/**
 * Prerequisites for tests that need a real Docker engine or a real Chromium.
 *
 * These never skip: a missing prerequisite makes the test fail with a message naming what to
 * install or start (CI must go red, not quietly green). `.ci/run` installs and starts them.
 */
import { existsSync } from "node:fs";
import { resolveDockerSocket } from "../../src/docker/index.ts";

/** The Docker socket path, resolved exactly as humanish does (`DOCKER_HOST=unix://…` or the default). */
export function dockerSocketPath(): string {
  return resolveDockerSocket(process.env);
}

/** Throws unless a Docker engine answers `/_ping` on the socket. Returns the socket path. */
export async function requireDocker(): Promise<string> {
  const socket = dockerSocketPath();
  try {
    const res = await fetch("http://localhost/_ping", { unix: socket } as RequestInit);
    if (res.ok) return socket;
    throw new Error(`status ${res.status}`);
  } catch (e) {
    throw new Error(`This test needs a Docker engine on ${socket} (${(e as Error).message}). Install docker.io and start dockerd (see .ci/run).`);
  }
}

/** Throws unless the image tag exists in the engine. */
export async function requireImage(tag: string): Promise<void> {
  const socket = await requireDocker();
  const res = await fetch(`http://localhost/images/${encodeURIComponent(tag)}/json`, { unix: socket } as RequestInit);
  if (res.status !== 200) {
    throw new Error(`This test needs the image ${tag}; build it with \`bash scripts/setup-images.sh\` (status ${res.status}).`);
  }
}

/** Path of Debian's Chromium; throws naming the package when missing. */
export function requireChromium(): string {
  for (const p of ["/usr/bin/chromium", "/usr/bin/chromium-browser"]) if (existsSync(p)) return p;
  throw new Error("This test needs Chromium: apt-get install -y chromium (see .ci/run).");
}

/** Path of a binary among the given candidates; throws naming the Debian package. */
export function requireBinary(name: string, debianPackage: string): string {
  const path = Bun.which(name);
  if (!path) throw new Error(`This test needs \`${name}\`: apt-get install -y ${debianPackage} (see .ci/run).`);
  return path;
}

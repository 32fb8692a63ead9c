/**
 * Shared setup for tests that run a real guest container: the Docker client, the guest image
 * (built once per guest-binary revision and cached by tag), a static TodoMVC server on a free
 * loopback port, and a per-test-run label so cleanup is by exact id of what we created.
 */
import { randomUUID } from "node:crypto";
import { resolve } from "node:path";
import { createDockerClient, type DockerClient } from "../../src/docker/index.ts";
import { type AppServer, serveStatic } from "../../src/routes/browser/serve.ts";
import { ensureGuestImage, type GuestImage } from "../../src/runtime/guest-image.ts";
import { requireDocker, requireImage } from "../support/prereq.ts";

/** Label put on every container these tests create. */
export const TEST_LABEL = "humanish.test-run";

/** Project root. */
export const ROOT = resolve(import.meta.dir, "../..");
/** The vanilla TodoMVC example shipped by the npm package `todomvc`. */
export const TODOMVC_ROOT = resolve(ROOT, "node_modules/todomvc/examples/vanillajs");

/** A free loopback TCP port (bind 0, read, close). */
export function freePort(): number {
  const s = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  const p = s.port;
  s.stop(true);
  return p;
}

/** Engine + guest image, failing (never skipping) when Docker or the base image is missing. */
export async function guestPrereqs(): Promise<{ docker: DockerClient; image: GuestImage; testRun: string }> {
  const socket = await requireDocker();
  await requireImage("debian:bookworm-slim");
  const docker = createDockerClient({ socketPath: socket });
  const image = await ensureGuestImage(docker, { env: {} });
  return { docker, image, testRun: `t-${randomUUID().slice(0, 8)}` };
}

/** Serve TodoMVC on a free loopback port. */
export function serveTodoMvc(): AppServer {
  return serveStatic(TODOMVC_ROOT, freePort());
}

/** Ids of containers labelled with this test run (to assert nothing is left). */
export async function containersOfTestRun(docker: DockerClient, testRun: string): Promise<string[]> {
  return (await docker.containerList({ all: true, labels: [`${TEST_LABEL}=${testRun}`] })).map((c) => c.Id);
}

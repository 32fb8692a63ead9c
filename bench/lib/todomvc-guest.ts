/**
 * What the guest benches share: the Docker client, the guest image (built on first use, cached
 * by revision) and the TodoMVC app served on a free loopback port the guest reaches.
 */
import { resolve } from "node:path";
import { createDockerClient, type DockerClient } from "../../src/docker/index.ts";
import { serveStatic } from "../../src/routes/browser/serve.ts";
import { ensureGuestImage, type GuestImage } from "../../src/runtime/guest-image.ts";

/** The engine, the guest image and the app `{ port, app }` (stop `app` when the bench ends). */
export async function todomvcGuestSetup(): Promise<{ docker: DockerClient; image: GuestImage; port: number; app: ReturnType<typeof serveStatic> }> {
  const docker = createDockerClient();
  const image = await ensureGuestImage(docker, { env: {} });
  // Ask the kernel for a free port, then serve the app on it (the guest is told the number).
  const portServer = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  const port = portServer.port;
  portServer.stop(true);
  const app = serveStatic(resolve(import.meta.dir, "../../node_modules/todomvc/examples/vanillajs"), port);
  return { docker, image, port, app };
}

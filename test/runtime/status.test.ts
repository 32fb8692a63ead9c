/**
 * `humanish runtime status|setup` functions: status is read-only; `setup --from-archive` with a
 * wrong byte count or digest loads nothing; an invalid HUMANISH_LOCAL_RUNTIME_IMAGE fails.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createDockerClient, tarPack } from "../../src/docker/index.ts";
import { ensureGuestImage, inspectEnvGuestImage, RUNTIME_IMAGE_ENV } from "../../src/runtime/guest-image.ts";
import { runtimeSetup, runtimeStatus } from "../../src/runtime/status.ts";
import { requireDocker } from "../support/prereq.ts";
import { guestPrereqs } from "./guest-support.ts";

const dir = mkdtempSync(join(tmpdir(), "humanish-archive-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function imageIds(_docker: ReturnType<typeof createDockerClient>): Promise<string[]> {
  const res = await fetch("http://localhost/images/json?all=1", { unix: await requireDocker() } as RequestInit);
  return ((await res.json()) as { Id: string }[]).map((i) => i.Id).sort();
}

describe("runtime setup --from-archive", () => {
  test("a wrong byte count or digest is refused and nothing is loaded", async () => {
    const docker = createDockerClient({ socketPath: await requireDocker() });
    const file = join(dir, "runtime.tar");
    const bytes = new Uint8Array(4096).map((_, i) => (i * 31) % 251);
    writeFileSync(file, bytes);
    const sha = createHash("sha256").update(bytes).digest("hex");
    const before = await imageIds(docker);
    const wrongBytes = await runtimeSetup(docker, { env: {}, fromArchive: { file, sha256: sha, bytes: bytes.length + 1 } });
    expect(wrongBytes.ok).toBe(false);
    expect(wrongBytes.error?.code).toBe("HUMANISH_IMAGE_ARCHIVE_MISMATCH");
    expect(wrongBytes.error?.message).toContain("nothing was loaded");
    const wrongDigest = await runtimeSetup(docker, { env: {}, fromArchive: { file, sha256: "0".repeat(64), bytes: bytes.length } });
    expect(wrongDigest.ok).toBe(false);
    expect(wrongDigest.error?.code).toBe("HUMANISH_IMAGE_ARCHIVE_MISMATCH");
    expect(wrongDigest.schema).toBe("humanish.runtime-result.v1");
    expect(await imageIds(docker)).toEqual(before);
  }, 60_000);
});

describe("runtime setup reports the bytes it added", () => {
  test("loading an archive of a small image of our own: addedBytes counts its own layer", async () => {
    const docker = createDockerClient({ socketPath: await requireDocker() });
    const tag = `humanish-status-test:${crypto.randomUUID().slice(0, 8)}`;
    const ctx = tarPack([{ path: "Dockerfile", data: `FROM debian:bookworm-slim\nRUN head -c 300000 /dev/urandom > /added-${tag.split(":")[1]}\n` }]);
    const built = await docker.imageBuild(ctx, { tags: [tag] });
    try {
      const file = join(dir, "small.tar");
      writeFileSync(file, new Uint8Array(await new Response(await docker.imageGet(built.imageId)).arrayBuffer()));
      await docker.imageRemove(built.imageId, { force: true });
      const bytes = Bun.file(file).size;
      const sha = createHash("sha256")
        .update(new Uint8Array(await Bun.file(file).arrayBuffer()))
        .digest("hex");
      const r = await runtimeSetup(docker, { env: {}, fromArchive: { file, sha256: sha, bytes } });
      expect(r.error).toBeUndefined();
      expect(r.addedBytes).toBeGreaterThanOrEqual(300_000);
      expect(r.addedBytes).toBeLessThan(2_000_000);
      expect(r.actions?.at(-1)).toBe(`added ${r.addedBytes} bytes of image layers`);
    } finally {
      await docker.imageRemove(built.imageId, { force: true }).catch(() => undefined);
    }
  }, 120_000);
});

describe("runtime status", () => {
  test("reports engine and both images without building anything", async () => {
    const { docker, image } = await guestPrereqs();
    const before = await imageIds(docker);
    const st = await runtimeStatus(docker, {});
    expect(st.ok).toBe(true);
    expect(st.engine.reachable).toBe(true);
    expect(st.images.guest?.present).toBe(true);
    expect(st.images.guest?.revision).toBe(image.runtimeRevision);
    expect(st.images.guest?.revision).toMatch(/^guest-api1-[0-9a-f]{64}$/);
    expect(st.images.sandbox?.ref).toMatch(/^humanish-sandbox:/);
    expect(await imageIds(docker)).toEqual(before);
  }, 120_000);

  test(`${RUNTIME_IMAGE_ENV}: a missing or foreign image fails and is never pulled; the built guest is accepted`, async () => {
    const { docker, image } = await guestPrereqs();
    await expect(inspectEnvGuestImage(docker, "humanish-no-such-image:0")).rejects.toMatchObject({ code: "HUMANISH_LOCAL_RUNTIME_IMAGE_INVALID" });
    await expect(inspectEnvGuestImage(docker, "debian:bookworm-slim")).rejects.toMatchObject({ code: "HUMANISH_LOCAL_RUNTIME_IMAGE_INVALID" });
    const st = await runtimeStatus(docker, { [RUNTIME_IMAGE_ENV]: "humanish-no-such-image:0" });
    expect(st.ok).toBe(false);
    expect(st.error?.code).toBe("HUMANISH_LOCAL_RUNTIME_IMAGE_INVALID");
    const viaEnv = await ensureGuestImage(docker, { env: { [RUNTIME_IMAGE_ENV]: image.ref } });
    expect(viaEnv).toMatchObject({ origin: "env", runtimeRevision: image.runtimeRevision, imageId: image.imageId });
  }, 120_000);
});

/**
 * Local runtime images: recipe revisions and tags, in-memory build context, builds
 * through the Engine API (labelled with the revision), status, and archive loading that verifies
 * byte count and SHA-256 before anything reaches the engine.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createDockerClient, type DockerClient, tarUnpack } from "../../src/docker/index.ts";
import {
  ensureImage,
  type ImageRecipe,
  imageStatus,
  loadImageArchive,
  REVISION_LABEL,
  recipeContext,
  recipeRevision,
  recipeTag,
} from "../../src/runtime/images.ts";
import { SANDBOX_IMAGE_NAME, sandboxRecipe } from "../../src/runtime/recipes.ts";
import { startFakeEngine } from "../docker/fake-engine.ts";
import { rejection } from "../docker/helpers.ts";
import { requireDocker, requireImage } from "../support/prereq.ts";

const nonce = `${process.pid}-${Date.now()}`;
const tiny: ImageRecipe = {
  name: "humanish-test-tiny",
  files: { Dockerfile: "FROM scratch\nCOPY hello.txt /hello.txt\n", "hello.txt": `hello ${nonce}\n` },
};
const dir = mkdtempSync(join(tmpdir(), "humanish-images-test-"));
let docker: DockerClient;
const createdImages = new Set<string>();

beforeAll(async () => {
  await requireDocker();
  docker = createDockerClient();
});

afterAll(async () => {
  for (const id of createdImages) await docker.imageRemove(id, { force: true }).catch(() => {});
  rmSync(dir, { recursive: true, force: true });
});

describe("recipes and revisions", () => {
  test("revision is 12 hex of a content hash: stable, order-independent, sensitive to any byte", () => {
    const r = recipeRevision(tiny);
    expect(r).toMatch(/^[0-9a-f]{12}$/);
    expect(recipeRevision({ name: tiny.name, files: { "hello.txt": tiny.files["hello.txt"]!, Dockerfile: tiny.files.Dockerfile! } })).toBe(r);
    expect(recipeRevision({ ...tiny, files: { ...tiny.files, "hello.txt": `hello ${nonce}!\n` } })).not.toBe(r);
    expect(recipeRevision({ ...tiny, name: "humanish-test-other" })).not.toBe(r);
    expect(recipeRevision({ ...tiny, files: { ...tiny.files, "hello.txt": new TextEncoder().encode(`hello ${nonce}\n`) } })).toBe(r);
    expect(recipeTag(tiny)).toBe(`humanish-test-tiny:${r}`);
  });

  test("invalid recipes are refused with HUMANISH_IMAGE_RECIPE_INVALID", () => {
    expect(() => recipeRevision({ name: "Bad Name", files: { Dockerfile: "FROM x" } })).toThrow(/not a valid repository name/);
    expect(() => recipeRevision({ name: "ok", files: { "x.txt": "" } })).toThrow(/no Dockerfile/);
  });

  test("the build context is a tar of exactly the recipe files", () => {
    const entries = tarUnpack(recipeContext(tiny));
    expect(entries.map((e) => e.path)).toEqual(["Dockerfile", "hello.txt"]);
    expect(new TextDecoder().decode(entries[1]!.data)).toBe(`hello ${nonce}\n`);
  });

  test("the sandbox recipe embeds runtime/sandbox/Dockerfile byte for byte", () => {
    const onDisk = readFileSync(join(import.meta.dir, "../../runtime/sandbox/Dockerfile"), "utf8");
    expect(sandboxRecipe.files.Dockerfile).toBe(onDisk);
    expect(sandboxRecipe.name).toBe(SANDBOX_IMAGE_NAME);
    expect(onDisk).toMatch(/^FROM debian:bookworm-slim$/m);
    for (const pkg of ["bash", "coreutils", "ca-certificates"]) expect(onDisk).toContain(` ${pkg}`);
    // Node comes from the pinned npm registry tarballs, not from Debian's (too old) nodejs.
    expect(onDisk).not.toMatch(/apt-get install[^\n]* nodejs/);
    expect(onDisk).toContain("COPY node.tgz npm.tgz");
    expect(sandboxRecipe.artifacts?.map((a) => a.path)).toEqual(["node.tgz", "npm.tgz"]);
    expect(onDisk).toMatch(/^USER user$/m);
    expect(onDisk).toMatch(/^WORKDIR \/home\/user$/m);
  });
});

describe("images in the real engine", () => {
  test("ensureImage builds through the Engine API once, labelled with the revision; status reports it", async () => {
    const before = await imageStatus(docker, tiny);
    expect(before).toEqual({ tag: recipeTag(tiny), revision: recipeRevision(tiny), present: false });
    const progress: string[] = [];
    const built = await ensureImage(docker, tiny, { onProgress: (m) => m.stream && progress.push(m.stream) });
    createdImages.add(built.imageId);
    expect(built.built).toBe(true);
    expect(built.imageId).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(progress.join("")).toContain("COPY hello.txt");
    const info = await docker.imageInspect(built.tag);
    expect(info.Config?.Labels?.[REVISION_LABEL]).toBe(built.revision);
    const after = await imageStatus(docker, tiny);
    expect(after).toMatchObject({ present: true, imageId: built.imageId, tag: built.tag });
    expect(after.sizeBytes).toBeGreaterThan(0);
    const again = await ensureImage(docker, tiny);
    expect(again).toEqual({ ...built, built: false });
  });

  test("a failing build step → HUMANISH_IMAGE_BUILD_FAILED with the engine's message", async () => {
    const bad: ImageRecipe = { name: "humanish-test-bad", files: { Dockerfile: `FROM scratch\nCOPY missing-${nonce}.txt /x\n` } };
    const e = await rejection(ensureImage(docker, bad));
    expect(e.code).toBe("HUMANISH_IMAGE_BUILD_FAILED");
    expect(e.message).toContain(`missing-${nonce}.txt`);
    expect(e.next).toBeTruthy();
    expect((await imageStatus(docker, bad)).present).toBe(false);
  });

  test("loadImageArchive verifies bytes and SHA-256 first: mismatches load nothing; the right archive loads", async () => {
    const built = await ensureImage(docker, tiny);
    createdImages.add(built.imageId);
    const file = join(dir, "tiny.tar");
    const bytes = new Uint8Array(await new Response(await docker.imageGet(built.tag)).arrayBuffer());
    writeFileSync(file, bytes);
    const sha256 = createHash("sha256").update(bytes).digest("hex");
    await docker.imageRemove(built.imageId, { force: true });
    expect((await imageStatus(docker, tiny)).present).toBe(false);

    const wrongSha = await rejection(loadImageArchive(docker, file, { sha256: "0".repeat(64), bytes: bytes.length }));
    expect(wrongSha.code).toBe("HUMANISH_IMAGE_ARCHIVE_MISMATCH");
    expect(wrongSha.message).toContain("nothing was loaded");
    const wrongSize = await rejection(loadImageArchive(docker, file, { sha256, bytes: bytes.length + 1 }));
    expect(wrongSize.code).toBe("HUMANISH_IMAGE_ARCHIVE_MISMATCH");
    expect((await imageStatus(docker, tiny)).present).toBe(false);
    expect((await rejection(loadImageArchive(docker, join(dir, "absent.tar"), { sha256, bytes: 1 }))).code).toBe("HUMANISH_IMAGE_ARCHIVE_MISSING");

    const loaded = await loadImageArchive(docker, file, { sha256, bytes: bytes.length });
    expect(loaded.loaded).toContain(built.tag);
    expect(loaded).toMatchObject({ sha256, bytes: bytes.length });
    expect(await imageStatus(docker, tiny)).toMatchObject({ present: true, imageId: built.imageId });
  });

  test("the sandbox image built by scripts/setup-images.sh is present at its revision", async () => {
    await requireImage(recipeTag(sandboxRecipe));
    const s = await imageStatus(docker, sandboxRecipe);
    expect(s.present).toBe(true);
    const info = await docker.imageInspect(s.tag);
    expect(info.Config?.User).toBe("user");
    expect(info.Config?.WorkingDir).toBe("/home/user");
  });
});

describe("loadImageArchive against a fake engine", () => {
  test("a tampered archive sends no request at all; an errorDetail answer is a load failure", async () => {
    const file = join(dir, "fake.tar");
    const content = new TextEncoder().encode("not really an image");
    writeFileSync(file, content);
    const sha256 = createHash("sha256").update(content).digest("hex");
    const engine = startFakeEngine({
      "POST /images/load": () =>
        new Response('{"errorDetail":{"message":"archive/tar: invalid tar header"},"error":"archive/tar: invalid tar header"}\n', {
          status: 200,
          headers: { "content-type": "application/json" },
        }),
    });
    try {
      const fake = createDockerClient({ socketPath: engine.socketPath });
      const tampered = await rejection(loadImageArchive(fake, file, { sha256: sha256.replace(/^./, sha256[0] === "a" ? "b" : "a"), bytes: content.length }));
      expect(tampered.code).toBe("HUMANISH_IMAGE_ARCHIVE_MISMATCH");
      expect(engine.requests.length).toBe(0);
      const failed = await rejection(loadImageArchive(fake, file, { sha256, bytes: content.length }));
      expect(failed.code).toBe("HUMANISH_IMAGE_LOAD_FAILED");
      expect(failed.message).toContain("invalid tar header");
      expect(engine.requests.length).toBe(1);
      expect(engine.requests[0]!.body).toEqual(content);
    } finally {
      await engine.stop();
    }
  });
});

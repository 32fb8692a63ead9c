/**
 * Pinned recipe artifacts: a cached copy is used only while it matches its pin; otherwise
 * `npm pack` fetches it, and bytes that do not match the pin never enter a build context.
 * `npm` here is a stand-in script on PATH (the real one is exercised by building the sandbox
 * image); the pins enter the recipe revision, so a new pin is a new image tag.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { tarUnpack } from "../../src/docker/index.ts";
import { HumanishError } from "../../src/errors.ts";
import { ARTIFACT_CACHE_ENV, fetchArtifact, type RecipeArtifact } from "../../src/runtime/artifacts.ts";
import { fetchRecipeArtifacts, type ImageRecipe, recipeContext, recipeRevision } from "../../src/runtime/images.ts";
import { NODE_ARTIFACT, sandboxRecipe } from "../../src/runtime/recipes.ts";

const root = mkdtempSync(join(tmpdir(), "humanish-artifacts-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const payload = new TextEncoder().encode(`artifact ${crypto.randomUUID()}\n`);
const sha = (b: Uint8Array) => createHash("sha256").update(b).digest("hex");
const pin: RecipeArtifact = { path: "thing.tgz", npmSpec: "humanish-test-thing@1.2.3", sha256: sha(payload), bytes: payload.byteLength };

/** A fake `npm` that packs `bytes` as the tarball and logs its argv. */
function fakeNpm(name: string, bytes: Uint8Array, exit = 0): { env: Record<string, string>; log: string } {
  const bin = join(root, name, "bin");
  mkdirSync(bin, { recursive: true });
  const src = join(root, name, "payload");
  writeFileSync(src, bytes);
  const log = join(root, name, "argv.log");
  // argv: pack <spec> --pack-destination <dir> --silent
  writeFileSync(
    join(bin, "npm"),
    `#!/bin/sh\necho "$@" >> ${log}\n[ ${exit} = 0 ] || { echo "registry said no" >&2; exit ${exit}; }\ncp ${src} "$4/thing-1.2.3.tgz"\n`,
  );
  chmodSync(join(bin, "npm"), 0o755);
  return { env: { PATH: `${bin}:/usr/bin:/bin`, [ARTIFACT_CACHE_ENV]: join(root, name, "cache") }, log };
}

describe("recipe artifacts", () => {
  test("fetched with npm pack, verified, cached; the cached copy is used next time without npm", () => {
    const { env, log } = fakeNpm("ok", payload);
    expect(fetchArtifact(pin, env)).toEqual(payload);
    expect(readFileSync(log, "utf8").trim()).toStartWith("pack humanish-test-thing@1.2.3 --pack-destination ");
    expect(readdirSync(env[ARTIFACT_CACHE_ENV]!)).toEqual([`${pin.sha256}-humanish-test-thing_1.2.3.tgz`]);
    // No npm on PATH at all: the cache answers.
    expect(fetchArtifact(pin, { ...env, PATH: "/nonexistent" })).toEqual(payload);
  });

  test("bytes that are not the pinned ones are refused and never cached", () => {
    const { env } = fakeNpm("tampered", new TextEncoder().encode("something else\n"));
    let err: unknown;
    try {
      fetchArtifact(pin, env);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(HumanishError);
    expect((err as HumanishError).code).toBe("HUMANISH_IMAGE_ARTIFACT_MISMATCH");
    expect((err as HumanishError).message).toContain(pin.sha256);
    expect(existsSync(env[ARTIFACT_CACHE_ENV]!) ? readdirSync(env[ARTIFACT_CACHE_ENV]!) : []).toEqual([]);
  });

  test("a corrupted cached copy is dropped and fetched again", () => {
    const { env, log } = fakeNpm("corrupt", payload);
    mkdirSync(env[ARTIFACT_CACHE_ENV]!, { recursive: true });
    writeFileSync(join(env[ARTIFACT_CACHE_ENV]!, `${pin.sha256}-humanish-test-thing_1.2.3.tgz`), "bit rot");
    expect(fetchArtifact(pin, env)).toEqual(payload);
    expect(existsSync(log)).toBe(true);
  });

  test("npm missing or failing: HUMANISH_IMAGE_ARTIFACT_UNAVAILABLE with a next step", () => {
    const noNpm = (() => {
      try {
        fetchArtifact(pin, { PATH: "/nonexistent", [ARTIFACT_CACHE_ENV]: join(root, "none") });
      } catch (e) {
        return e as HumanishError;
      }
    })();
    expect(noNpm?.code).toBe("HUMANISH_IMAGE_ARTIFACT_UNAVAILABLE");
    expect(noNpm?.next).toContain("npm");
    const { env } = fakeNpm("fails", payload, 3);
    const failed = (() => {
      try {
        fetchArtifact(pin, env);
      } catch (e) {
        return e as HumanishError;
      }
    })();
    expect(failed?.code).toBe("HUMANISH_IMAGE_ARTIFACT_UNAVAILABLE");
    expect(failed?.message).toContain("registry said no");
  });

  test("pins enter the revision and the context; a pin must be exact", () => {
    const base: ImageRecipe = { name: "humanish-test-art", files: { Dockerfile: "FROM scratch\nCOPY thing.tgz /\n" }, artifacts: [pin] };
    const other: ImageRecipe = { ...base, artifacts: [{ ...pin, sha256: "0".repeat(64) }] };
    expect(recipeRevision(base)).not.toBe(recipeRevision(other));
    expect(recipeRevision(base)).not.toBe(recipeRevision({ ...base, artifacts: [] }));
    const { env } = fakeNpm("ctx", payload);
    const entries = tarUnpack(recipeContext(base, fetchRecipeArtifacts(base, env)));
    expect(entries.map((e) => e.path)).toEqual(["Dockerfile", "thing.tgz"]);
    expect(entries[1]!.data).toEqual(payload);
    expect(() => recipeContext(base)).toThrow(/was not fetched/);
    expect(() => recipeRevision({ ...base, artifacts: [{ ...pin, npmSpec: "thing@^1.2.3" }] })).toThrow(/exact npm spec/);
    // The sandbox image's Node is pinned the same way.
    expect(sandboxRecipe.artifacts).toContainEqual(NODE_ARTIFACT);
    expect(sandboxRecipe.labels?.["humanish.node.sha256"]).toBe(NODE_ARTIFACT.sha256);
  });
});

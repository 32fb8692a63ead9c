/**
 * `runtime prune` against the real engine, acting only on images this test builds (tagged
 * `humanish-sandbox:test-old-<random>`): a stale one is removed by exact id and its bytes
 * counted; one a stopped container was created from is kept; the current images are never
 * candidates; `--dry-run` removes nothing; `runtime status` shows what is reclaimable.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { createDockerClient, isDockerApiError, tarPack } from "../../src/docker/index.ts";
import { planPrune, pruneImages } from "../../src/runtime/prune.ts";
import { sandboxImageTag } from "../../src/runtime/recipes.ts";
import { cli } from "../cli/support.ts";
import { requireImage } from "../support/prereq.ts";

const docker = createDockerClient();
const rand = crypto.randomUUID().slice(0, 8);
const OLD = `humanish-sandbox:test-old-${rand}`;
const USED = `humanish-sandbox:test-used-${rand}`;
const FOREIGN = `humanish-prune-test-foreign:${rand}`;
const ids: Record<string, string> = {};
const containers: string[] = [];

afterAll(async () => {
  for (const c of containers) await docker.containerRemove(c, { force: true }).catch(() => undefined);
  for (const id of Object.values(ids)) await docker.imageRemove(id, { force: true }).catch(() => undefined);
});

/** A tiny image of our own with a unique layer (random bytes), so it has bytes of its own. */
async function build(tag: string, extraTags: string[] = []): Promise<string> {
  const ctx = tarPack([
    { path: "Dockerfile", data: `FROM debian:bookworm-slim\nRUN head -c 200000 /dev/urandom > /prune-probe-${rand}-${tag.split(":")[1]}\n` },
  ]);
  const r = await docker.imageBuild(ctx, { tags: [tag, ...extraTags], labels: { "humanish.prune-test": rand } });
  return r.imageId;
}

const mine = (img: { Id: string }) => Object.values(ids).includes(img.Id);

describe("runtime prune (real engine, test images only)", () => {
  test("classifies: stale, in use by a stopped container, current; foreign-tagged images are not ours", async () => {
    await requireImage(sandboxImageTag());
    ids.old = await build(OLD);
    ids.used = await build(USED);
    ids.foreign = await build(`humanish-sandbox:test-foreign-${rand}`, [FOREIGN]);
    const c = await docker.containerCreate({ Image: USED, Cmd: ["true"], Labels: { "humanish.prune-test": rand } });
    containers.push(c.Id);

    const plan = await planPrune(docker, process.env, { select: mine });
    const byTag = new Map(plan.images.map((i) => [i.tags[0], i]));
    expect(byTag.get(OLD)?.state).toBe("stale");
    expect(byTag.get(OLD)?.bytes).toBeGreaterThanOrEqual(200_000);
    expect(byTag.get(USED)?.state).toBe("in-use");
    expect(byTag.get(USED)?.containers).toEqual([c.Id]);
    // Also tagged outside the humanish repositories: not ours to remove.
    expect(plan.images.some((i) => i.id === ids.foreign)).toBe(false);
    expect(plan.reclaimable.count).toBe(1);
    expect(plan.reclaimable.bytes).toBe(byTag.get(OLD)!.bytes);

    const current = await planPrune(docker, process.env);
    expect(current.images.find((i) => i.tags.includes(sandboxImageTag()))?.state).toBe("current");
  }, 120_000);

  test("--dry-run removes nothing; the CLI and status report the reclaimable bytes", async () => {
    const dry = await pruneImages(docker, process.env, { dryRun: true, select: mine });
    expect(dry.removed).toEqual([]);
    expect(dry.freedBytes).toBeGreaterThanOrEqual(200_000);
    expect((await docker.imageInspect(OLD)).Id).toBe(ids.old!);

    const r = await cli(["runtime", "prune", "--dry-run", "--json"]);
    const j = r.json<{ schema: string; ok: boolean; dryRun: boolean; images: { tags: string[]; state: string; bytes: number }[] }>();
    expect(j.schema).toBe("humanish.runtime-prune-result.v1");
    expect(j.dryRun).toBe(true);
    expect(j.images.find((i) => i.tags.includes(OLD))).toMatchObject({ state: "stale" });
    expect(j.images.find((i) => i.tags.includes(USED))).toMatchObject({ state: "in-use" });
    expect((await docker.imageInspect(OLD)).Id).toBe(ids.old!);

    const st = await cli(["runtime", "status", "--json"]);
    const s = st.json<{ reclaimable: { count: number; bytes: number } }>();
    expect(s.reclaimable.count).toBeGreaterThanOrEqual(1);
    expect(s.reclaimable.bytes).toBeGreaterThanOrEqual(200_000);
  }, 60_000);

  test("prune removes the stale image by exact id, keeps the one in use, frees its bytes", async () => {
    const r = await pruneImages(docker, process.env, { select: mine });
    expect(r.removed).toEqual([{ id: ids.old!, tags: [OLD], bytes: expect.any(Number), outcome: "removed" }]);
    expect(r.freedBytes).toBeGreaterThanOrEqual(200_000);
    let gone = false;
    try {
      await docker.imageInspect(ids.old!);
    } catch (e) {
      gone = isDockerApiError(e, 404);
    }
    expect(gone).toBe(true);
    expect((await docker.imageInspect(USED)).Id).toBe(ids.used!);
    expect((await docker.imageInspect(FOREIGN)).Id).toBe(ids.foreign!);
  }, 60_000);
});

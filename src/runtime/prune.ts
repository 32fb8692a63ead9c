/**
 * Stale humanish images (`humanish runtime prune`, result `humanish.runtime-prune-result.v1`).
 * Every build of humanish (a new guest binary, a changed recipe) makes a new
 * `humanish-guest:<rev>` / `humanish-sandbox:<rev>`; the old ones pile up.
 *
 * A humanish image is one whose tags are all in the `humanish-sandbox` / `humanish-guest`
 * repositories (an image someone also tagged elsewhere is not ours to remove). It is stale when
 * it is not the current image of this build (sandbox recipe tag, guest image, or
 * `HUMANISH_LOCAL_RUNTIME_IMAGE`) and no container — running or stopped — was created from it
 * (checked against every container's exact `ImageID`). Stale images are removed by exact id,
 * never by name, and never forced, so an engine-side conflict keeps the image.
 *
 * Bytes: an image's reclaimable bytes are its size minus the bytes it shares with other images
 * (`GET /system/df` `SharedSize`), so layers shared with a kept image are never counted.
 */
import type { DockerClient, ImageSummary } from "../docker/index.ts";
import { errorMessage } from "../errors.ts";
import { GUEST_IMAGE_NAME, guestImageStatus } from "./guest-image.ts";
import { imageStatus } from "./images.ts";
import { SANDBOX_IMAGE_NAME, sandboxRecipe } from "./recipes.ts";

/** Schema id of the prune result. */
export const RUNTIME_PRUNE_RESULT_SCHEMA = "humanish.runtime-prune-result.v1";

/** Repositories whose images humanish owns. */
export const HUMANISH_IMAGE_REPOS: readonly string[] = [SANDBOX_IMAGE_NAME, GUEST_IMAGE_NAME];

/** One humanish image and what prune makes of it. */
export interface PruneImage {
  /** `sha256:…`. */
  id: string;
  tags: string[];
  /** Reclaimable bytes (size minus bytes shared with other images). */
  bytes: number;
  /** `current` (this build's), `in-use` (a container uses it), `stale` (removable). */
  state: "current" | "in-use" | "stale";
  /** For `in-use`: ids of the containers created from it. */
  containers?: string[];
}

/** What a prune would do, before removing anything. */
export interface PrunePlan {
  images: PruneImage[];
  /** Stale images and their reclaimable bytes. */
  reclaimable: { count: number; bytes: number };
}

function repoOf(tag: string): string {
  const at = tag.lastIndexOf(":");
  return at > tag.lastIndexOf("/") ? tag.slice(0, at) : tag;
}

function isHumanishImage(img: Pick<ImageSummary, "RepoTags" | "Labels">): boolean {
  const tags = (img.RepoTags ?? []).filter((t) => t !== "<none>:<none>");
  if (tags.length > 0) return tags.every((t) => HUMANISH_IMAGE_REPOS.includes(repoOf(t)));
  // Untagged: ours only when our recipe label says so.
  const recipe = img.Labels?.["humanish.recipe"];
  return recipe !== undefined && HUMANISH_IMAGE_REPOS.includes(recipe);
}

/** Ids of this build's current images (absent ones are simply not listed). */
async function currentImageIds(docker: DockerClient, env: Record<string, string | undefined>): Promise<Set<string>> {
  const ids = new Set<string>();
  const sb = await imageStatus(docker, sandboxRecipe);
  if (sb.imageId) ids.add(sb.imageId);
  try {
    const g = await guestImageStatus(docker, env);
    if (g.imageId) ids.add(g.imageId);
  } catch {
    // Without knowing the current guest image (e.g. the guest binary cannot be built here),
    // no guest image may be judged stale.
    for (const img of await docker.imageList({ references: [GUEST_IMAGE_NAME] })) ids.add(img.Id);
  }
  return ids;
}

/**
 * Classifies every humanish image. Read-only. `select` narrows the images considered (tests use
 * it to act only on images they created). Throws `HUMANISH_DOCKER_UNAVAILABLE` without an engine.
 */
export async function planPrune(
  docker: DockerClient,
  env: Record<string, string | undefined> = process.env,
  opts: { select?: (img: ImageSummary) => boolean } = {},
): Promise<PrunePlan> {
  // Unfiltered: a reference filter would hide an image's other tags, and those decide whether it is ours.
  const [listed, current, containers, df] = await Promise.all([
    docker.imageList(),
    currentImageIds(docker, env),
    docker.containerList({ all: true }),
    docker.systemDf(),
  ]);
  const byId = new Map<string, ImageSummary>();
  for (const img of listed) if (isHumanishImage(img)) byId.set(img.Id, img);
  const users = new Map<string, string[]>();
  for (const c of containers) users.set(c.ImageID, [...(users.get(c.ImageID) ?? []), c.Id]);
  const shared = new Map(df.Images.map((i) => [i.Id, Math.max(0, i.SharedSize)]));
  const images: PruneImage[] = [];
  for (const img of byId.values()) {
    if (opts.select && !opts.select(img)) continue;
    const bytes = Math.max(0, img.Size - (shared.get(img.Id) ?? 0));
    const tags = (img.RepoTags ?? []).filter((t) => t !== "<none>:<none>");
    const using = users.get(img.Id);
    const state: PruneImage["state"] = current.has(img.Id) ? "current" : using ? "in-use" : "stale";
    images.push({ id: img.Id, tags, bytes, state, ...(using ? { containers: using } : {}) });
  }
  images.sort((a, b) => (a.tags[0] ?? a.id).localeCompare(b.tags[0] ?? b.id));
  const stale = images.filter((i) => i.state === "stale");
  return { images, reclaimable: { count: stale.length, bytes: stale.reduce((n, i) => n + i.bytes, 0) } };
}

/** One removal attempt. */
export interface PruneRemoval {
  id: string;
  tags: string[];
  bytes: number;
  outcome: "removed" | "kept";
  /** Why it was kept (engine conflict, a container appeared meanwhile, …). */
  reason?: string;
}

/** `humanish.runtime-prune-result.v1`. */
export interface PruneResult {
  schema: typeof RUNTIME_PRUNE_RESULT_SCHEMA;
  ok: boolean;
  dryRun: boolean;
  images: PruneImage[];
  removed: PruneRemoval[];
  /** Bytes actually freed (dry run: what would be freed). */
  freedBytes: number;
  message: string;
}

/**
 * Removes the stale images of {@link planPrune} by exact id (never forced); with `dryRun`,
 * removes nothing. Each image's containers are re-checked just before its removal.
 * Throws `HUMANISH_DOCKER_UNAVAILABLE` without an engine; a single failed removal is `kept`.
 */
export async function pruneImages(
  docker: DockerClient,
  env: Record<string, string | undefined> = process.env,
  opts: { dryRun?: boolean; select?: (img: ImageSummary) => boolean } = {},
): Promise<PruneResult> {
  const plan = await planPrune(docker, env, opts.select ? { select: opts.select } : {});
  const stale = plan.images.filter((i) => i.state === "stale");
  const removed: PruneRemoval[] = [];
  if (!opts.dryRun) {
    for (const img of stale) {
      const users = (await docker.containerList({ all: true })).filter((c) => c.ImageID === img.id);
      if (users.length > 0) {
        removed.push({
          id: img.id,
          tags: img.tags,
          bytes: img.bytes,
          outcome: "kept",
          reason: `container ${users[0]!.Id.slice(0, 12)} was created from it meanwhile`,
        });
        continue;
      }
      try {
        await docker.imageRemove(img.id);
        removed.push({ id: img.id, tags: img.tags, bytes: img.bytes, outcome: "removed" });
      } catch (e) {
        removed.push({ id: img.id, tags: img.tags, bytes: img.bytes, outcome: "kept", reason: errorMessage(e) });
      }
    }
  }
  const freedBytes = opts.dryRun ? plan.reclaimable.bytes : removed.filter((r) => r.outcome === "removed").reduce((n, r) => n + r.bytes, 0);
  const kept = removed.filter((r) => r.outcome === "kept").length;
  const message = opts.dryRun
    ? `${stale.length} stale humanish image(s), ${freedBytes} bytes reclaimable; nothing removed (dry run)`
    : `removed ${removed.length - kept} stale humanish image(s), ${freedBytes} bytes freed${kept ? `; ${kept} kept (see removed[].reason)` : ""}`;
  return { schema: RUNTIME_PRUNE_RESULT_SCHEMA, ok: true, dryRun: opts.dryRun === true, images: plan.images, removed, freedBytes, message };
}

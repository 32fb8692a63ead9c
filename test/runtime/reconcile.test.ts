/**
 * SIGKILL of the controller mid-study, then reconciliation (what every humanish command runs
 * first): the orphaned guest is released by its exact id and the outcome recorded in the run's
 * directory. A live controller's guest is never touched.
 */
import { afterAll, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { isDockerApiError } from "../../src/docker/index.ts";
import { recipeTag } from "../../src/runtime/images.ts";
import { sandboxRecipe } from "../../src/runtime/recipes.ts";
import { ORPHAN_RELEASE_FILE, reconcileOrphans } from "../../src/runtime/reconcile.ts";
import { CONTROLLER_LABEL, controllerIdentity, isControllerLive, PROJECT_LABEL } from "../../src/sandbox/controller.ts";
import { requireImage } from "../support/prereq.ts";
import { containersOfTestRun, guestPrereqs, serveTodoMvc } from "./guest-support.ts";

const cwd = mkdtempSync(join(tmpdir(), "humanish-reconcile-"));
const cleanupIds: string[] = [];
let dockerRef: Awaited<ReturnType<typeof guestPrereqs>>["docker"] | undefined;

afterAll(async () => {
  if (dockerRef) for (const id of cleanupIds) await dockerRef.containerRemove(id, { force: true }).catch(() => undefined);
  rmSync(cwd, { recursive: true, force: true });
});

test("controller identity: this process is live, a dead pid or another start time is not", () => {
  expect(isControllerLive(controllerIdentity())).toBe(true);
  const [host, pid, ticks] = controllerIdentity().split(":");
  expect(isControllerLive(`${host}:${pid}:${Number(ticks) + 1}`)).toBe(false);
  expect(isControllerLive(`${host}:4194303:1`)).toBe(false);
  expect(isControllerLive("garbage")).toBe(false);
});

test("SIGKILL mid-study → reconcileOrphans releases the guest by exact id and records it", async () => {
  const { docker, testRun } = await guestPrereqs();
  dockerRef = docker;
  const app = serveTodoMvc();
  const runId = `sigkill-${testRun}`;
  const child = Bun.spawn([process.execPath, join(import.meta.dir, "controller-child.ts"), cwd, runId, String(app.port), testRun], {
    stdout: "pipe",
    stderr: "inherit",
  });
  let id = "";
  let participating = false;
  const reader = (child.stdout as ReadableStream<Uint8Array>).getReader();
  const deadline = Date.now() + 120_000;
  let buf = "";
  while (!(id && participating) && Date.now() < deadline) {
    const { value, done } = await reader.read();
    if (done) break;
    buf += new TextDecoder().decode(value);
    id = /DESKTOP ([0-9a-f]{64})/.exec(buf)?.[1] ?? id;
    participating ||= buf.includes("PARTICIPATING");
  }
  if (id) cleanupIds.push(id);
  expect(id).toMatch(/^[0-9a-f]{64}$/);
  expect(participating).toBe(true);
  child.kill("SIGKILL");
  await child.exited;
  await app.close();
  // The orphan is still there: nobody released it.
  const info = await docker.containerInspect(id);
  expect(info.State.Running).toBe(true);
  const ioDir = (info.HostConfig.Binds ?? [])[0]!.split(":")[0]!;
  expect(existsSync(ioDir)).toBe(true);
  expect(existsSync(join(cwd, ".humanish", "runs", runId, "sandbox-receipts.ndjson"))).toBe(true);

  const released = await reconcileOrphans(docker, cwd);
  const mine = released.find((r) => r.proof.id === id);
  expect(mine?.proof.outcome).toBe("released");
  expect(mine?.runId).toBe(runId);
  expect(mine?.recordedIn).toBe(join(".humanish", "runs", runId, ORPHAN_RELEASE_FILE));
  const rec = JSON.parse(readFileSync(join(cwd, mine!.recordedIn!), "utf8"));
  expect(rec.schema).toBe("humanish.orphan-release.v1");
  expect(rec.releases.map((r: { id: string; outcome: string }) => [r.id, r.outcome])).toEqual([[id, "released"]]);
  let gone = false;
  try {
    await docker.containerInspect(id);
  } catch (e) {
    gone = isDockerApiError(e, 404);
  }
  expect(gone).toBe(true);
  expect(await containersOfTestRun(docker, testRun)).toEqual([]);
  expect(existsSync(ioDir)).toBe(false);
  // A second pass finds nothing of ours.
  expect((await reconcileOrphans(docker, cwd)).filter((r) => r.proof.id === id)).toEqual([]);
}, 180_000);

/** A pid above Linux's pid_max: a controller that cannot be alive. */
const DEAD_CONTROLLER = `${hostname()}:4194303:1`;

/** Creates and starts a sandbox-image container labelled as an orphan of run `runId` in `project`. */
async function plantOrphan(docker: Awaited<ReturnType<typeof guestPrereqs>>["docker"], project: string, runId: string, testRun: string): Promise<string> {
  const image = recipeTag(sandboxRecipe);
  await requireImage(image);
  mkdirSync(join(project, ".humanish", "runs", runId), { recursive: true });
  const { Id } = await docker.containerCreate({
    Image: image,
    Cmd: ["sleep", "600"],
    Labels: {
      "humanish.owner": "humanish",
      "humanish.run": runId,
      [CONTROLLER_LABEL]: DEAD_CONTROLLER,
      [PROJECT_LABEL]: project,
      "humanish.test-run": testRun,
    },
  });
  cleanupIds.push(Id);
  await docker.containerStart(Id);
  return Id;
}

test("two reconcilers at once: the orphan is released and recorded exactly once", async () => {
  const { docker, testRun } = await guestPrereqs();
  dockerRef = docker;
  const project = mkdtempSync(join(tmpdir(), "humanish-reconcile-race-"));
  const claims = mkdtempSync(join(tmpdir(), "humanish-reconcile-claims-"));
  try {
    const runId = `race-${testRun}`;
    const id = await plantOrphan(docker, project, runId, testRun);
    // Both list the orphan before either releases it: without a claim both released it, and the
    // loser recorded a second attempt (unconfirmed while the winner's removal was in progress).
    const [a, b] = await Promise.all([reconcileOrphans(docker, project, claims), reconcileOrphans(docker, project, claims)]);
    const mine = [...a, ...b].filter((r) => r.proof.id === id);
    expect(mine.map((r) => r.proof.outcome)).toEqual(["released"]);
    const rec = JSON.parse(readFileSync(join(project, ".humanish", "runs", runId, ORPHAN_RELEASE_FILE), "utf8"));
    expect(rec.releases.map((r: { id: string; outcome: string }) => [r.id, r.outcome])).toEqual([[id, "released"]]);
    expect(await containersOfTestRun(docker, testRun)).toEqual([]);
    // Claims are dropped once the release is done.
    expect(readdirSync(claims)).toEqual([]);
  } finally {
    rmSync(project, { recursive: true, force: true });
    rmSync(claims, { recursive: true, force: true });
  }
}, 60_000);

test("a claim held by a live process is left alone; a claim left by a dead one is taken over", async () => {
  const { docker, testRun } = await guestPrereqs();
  dockerRef = docker;
  const project = mkdtempSync(join(tmpdir(), "humanish-reconcile-claim-"));
  const claims = mkdtempSync(join(tmpdir(), "humanish-reconcile-claims-"));
  try {
    const runId = `claim-${testRun}`;
    const id = await plantOrphan(docker, project, runId, testRun);
    // This very process is a live claimant (another reconciler mid-release, as far as the claim says).
    writeFileSync(join(claims, `${id}.claim`), controllerIdentity());
    expect((await reconcileOrphans(docker, project, claims)).filter((r) => r.proof.id === id)).toEqual([]);
    expect((await docker.containerInspect(id)).State.Running).toBe(true);
    // The claimant died mid-release: the next reconciler takes the claim over and releases.
    writeFileSync(join(claims, `${id}.claim`), DEAD_CONTROLLER);
    const released = (await reconcileOrphans(docker, project, claims)).filter((r) => r.proof.id === id);
    expect(released.map((r) => r.proof.outcome)).toEqual(["released"]);
    expect(await containersOfTestRun(docker, testRun)).toEqual([]);
    expect(readdirSync(claims)).toEqual([]);
  } finally {
    rmSync(project, { recursive: true, force: true });
    rmSync(claims, { recursive: true, force: true });
  }
}, 60_000);

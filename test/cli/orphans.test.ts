/**
 * Orphan release through the CLI: a controller SIGKILLed while it owns a sandbox leaves an
 * orphan; the next `humanish` command that creates resources (here `runtime prune --dry-run`),
 * from any directory, releases it by exact id and records the outcome in the run's own
 * directory (found through the container's project label). Read-only commands leave it alone.
 */
import { afterAll, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createDockerClient, isDockerApiError } from "../../src/docker/index.ts";
import { sandboxImageTag } from "../../src/runtime/recipes.ts";
import { requireImage } from "../support/prereq.ts";
import { cli } from "./support.ts";

const project = mkdtempSync(join(tmpdir(), "humanish-orphan-project-"));
const elsewhere = mkdtempSync(join(tmpdir(), "humanish-orphan-elsewhere-"));
const docker = createDockerClient();
let orphan = "";

afterAll(async () => {
  if (orphan) await docker.containerRemove(orphan, { force: true }).catch(() => undefined);
  rmSync(project, { recursive: true, force: true });
  rmSync(elsewhere, { recursive: true, force: true });
});

test("SIGKILLed controller → the next command releases its sandbox by exact id and records it in the run", async () => {
  await requireImage(sandboxImageTag());
  const runId = `orphan-cli-${Date.now().toString(36)}`;
  const child = Bun.spawn([process.execPath, join(import.meta.dir, "fixtures", "sandbox-controller.ts"), project, runId, runId], {
    stdout: "pipe",
    stderr: "inherit",
  });
  const reader = (child.stdout as ReadableStream<Uint8Array>).getReader();
  let buf = "";
  const deadline = Date.now() + 60_000;
  while (!/SANDBOX [0-9a-f]{64}/.test(buf) && Date.now() < deadline) {
    const { value, done } = await reader.read();
    if (done) break;
    buf += new TextDecoder().decode(value);
  }
  orphan = /SANDBOX ([0-9a-f]{64})/.exec(buf)?.[1] ?? "";
  expect(orphan).toMatch(/^[0-9a-f]{64}$/);
  child.kill("SIGKILL");
  await child.exited;
  expect((await docker.containerInspect(orphan)).State.Running).toBe(true);

  // A read-only command never touches the engine, so the orphan is still there.
  const readOnly = await cli(["lab", "list", "--cwd", elsewhere]);
  expect(readOnly.code).toBe(0);
  expect(readOnly.stderr).not.toContain("orphaned container");
  expect((await docker.containerInspect(orphan)).State.Running).toBe(true);

  // A sweeping command (its cwd is not the project: the project label says where to record).
  const r = await cli(["runtime", "prune", "--dry-run"]);
  expect(r.code).toBe(0);
  expect(r.stderr).toContain(`orphaned container ${orphan.slice(0, 12)} of run ${runId}`);
  expect(r.stderr).toContain("released");
  let gone = false;
  try {
    await docker.containerInspect(orphan);
  } catch (e) {
    gone = isDockerApiError(e, 404);
  }
  expect(gone).toBe(true);
  const file = join(project, ".humanish", "runs", runId, "orphan-release.json");
  expect(existsSync(file)).toBe(true);
  const rec = JSON.parse(readFileSync(file, "utf8"));
  expect(rec.releases).toHaveLength(1);
  expect(rec.releases[0]).toMatchObject({ id: orphan, provider: "docker", outcome: "released" });
  // The next command finds nothing more to do.
  const again = await cli(["runtime", "prune", "--dry-run"]);
  expect(again.stderr).not.toContain(orphan.slice(0, 12));
}, 120_000);

/**
 * The disk walk digests binary PNGs instead of holding them: the verdict of `verifyRun` (facts
 * of each screenshot, computed as it was read) is the verdict of the in-memory core given every
 * file's bytes, on an intact bundle and on tampered ones, and a changed screenshot byte fails.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { defaultTrust, verifyFiles, verifyRun } from "../../src/bundle/index.ts";
import { readBundleDir } from "../../src/bundle/verify/disk.ts";
import { tempProject, writeStudyRun } from "../report/fixtures.ts";
import { loadFiles } from "./memory.ts";

const proj = tempProject("humanish-verify-digested-");
afterAll(() => proj.cleanup());

/** Both verdicts of the bundle at `dir`: through the walk, and from every file's bytes in memory. */
async function bothWays(dir: string, run: string) {
  const trust = defaultTrust();
  const disk = await verifyRun(dir, { trust });
  const memory = await verifyFiles({ run, files: await loadFiles(dir), trust });
  return { disk, memory };
}

describe("verify holds facts of screenshots, not their bytes", () => {
  test("the walk holds no binary PNG and digests every screenshot; the verdict equals the in-memory one", async () => {
    const dir = await writeStudyRun(proj.cwd, { runId: "digest-ok" });
    const walked = await readBundleDir(dir);
    const shots = JSON.parse(readFileSync(join(dir, "run.json"), "utf8")).artifacts.filter((a: { kind: string }) => a.kind === "screenshot");
    expect(shots.length).toBeGreaterThan(3);
    expect(walked.files.some((f) => f.path.endsWith(".png"))).toBe(false);
    expect(walked.digested.map((d) => d.path).sort()).toEqual(shots.map((a: { path: string }) => a.path).sort());
    for (const d of walked.digested) expect(d.admission.ok).toBe(true);
    const { disk, memory } = await bothWays(dir, "digest-ok");
    expect(disk.ok).toBe(true);
    expect(disk).toEqual(memory);
  });

  test("one changed byte of a screenshot fails closed, with the same checks and messages as in memory", async () => {
    const dir = await writeStudyRun(proj.cwd, { runId: "digest-flip" });
    const walked = await readBundleDir(dir);
    const target = join(dir, walked.digested[1]!.path);
    const bytes = readFileSync(target);
    bytes[bytes.length - 20]! ^= 0x01;
    writeFileSync(target, bytes);
    const { disk, memory } = await bothWays(dir, "digest-flip");
    expect(disk.ok).toBe(false);
    const failed = disk.checks.filter((c) => !c.ok).map((c) => c.name);
    expect(failed).toContain("artifacts intact");
    expect(failed).toContain("bundle signature");
    expect(failed).toContain("screenshots admitted");
    expect(disk).toEqual(memory);
  });

  test("a screenshot's bytes under a text artifact's path fail the artifact schema, as in memory", async () => {
    const dir = await writeStudyRun(proj.cwd, { runId: "digest-kind" });
    const run = JSON.parse(readFileSync(join(dir, "run.json"), "utf8"));
    const shot = run.artifacts.find((a: { kind: string }) => a.kind === "screenshot");
    shot.kind = "events";
    writeFileSync(join(dir, "run.json"), `${JSON.stringify(run, null, 2)}\n`);
    const { disk, memory } = await bothWays(dir, "digest-kind");
    expect(disk.checks.find((c) => c.name === "artifact schemas")?.message).toContain(`${shot.path}: events artifact is not UTF-8 text`);
    expect(disk).toEqual(memory);
  });

  test("an unlisted PNG is found, scanned by name and reported as unlisted and unscanned, as in memory", async () => {
    const dir = await writeStudyRun(proj.cwd, { runId: "digest-extra" });
    const walked = await readBundleDir(dir);
    writeFileSync(join(dir, "extra-sk-proj-abcdefghijklmnopqrstuvwxyz012345.png"), readFileSync(join(dir, walked.digested[0]!.path)));
    const { disk, memory } = await bothWays(dir, "digest-extra");
    expect(disk.checks.find((c) => c.name === "no unlisted files")?.ok).toBe(false);
    expect(disk.shareSafety.status).toBe("blocked");
    expect(disk).toEqual(memory);
  });
});

/**
 * The compiled single binary runs the embedded todomvc lab from an empty directory: it serves
 * the TodoMVC files embedded at build time (read through Bun.file from the executable), so
 * `humanish lab run todomvc-first-run --live --json` exits 0 with 3/3 tasks, the served bytes hash
 * to the npm package's, and no container is left. The binary is built into a temp dir with the
 * project's build script; the guest image built from source is reused through
 * HUMANISH_LOCAL_RUNTIME_IMAGE so this test builds no image.
 */
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadEmbeddedApp } from "../../../src/routes/browser/embedded-app.ts";
import { PROJECT_LABEL } from "../../../src/sandbox/controller.ts";
import { guestPrereqs, ROOT } from "../../runtime/guest-support.ts";

const buildDir = mkdtempSync(join(tmpdir(), "humanish-bin-build-"));
const project = mkdtempSync(join(tmpdir(), "humanish-bin-empty-"));
afterAll(() => {
  rmSync(buildDir, { recursive: true, force: true });
  rmSync(project, { recursive: true, force: true });
});

test("compiled binary: lab run todomvc-first-run --live --json from an empty directory exits 0 with the embedded app", async () => {
  const { docker, image } = await guestPrereqs();
  const bin = join(buildDir, "humanish");
  const build = Bun.spawnSync([process.execPath, "build.ts", "--outfile", bin], { cwd: ROOT, stdout: "pipe", stderr: "pipe" });
  expect(build.stderr.toString()).toContain(`built ${bin}`);
  expect(build.exitCode).toBe(0);

  expect(readdirSync(project)).toEqual([]);
  const proc = Bun.spawn([bin, "lab", "run", "todomvc-first-run", "--live", "--json"], {
    cwd: project,
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: process.env.HOME ?? project, HUMANISH_LOCAL_RUNTIME_IMAGE: image.ref },
    stdout: "pipe",
    stderr: "pipe",
  });
  const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  const leftover = await docker.containerList({ all: true, labels: [`${PROJECT_LABEL}=${project}`] });
  expect(leftover.map((c) => c.Id)).toEqual([]);
  expect({ code, err: code === 0 ? "" : err.slice(-2000) }).toEqual({ code: 0, err: "" });

  const res = JSON.parse(out);
  expect(res).toMatchObject({ ok: true, route: "browser", mode: "live", reward: 1, verify: { ok: true }, labRef: "embedded:todomvc-first-run" });
  expect(res.verdict).toBe("1/1 reached the goal; tasks: add-two-todos 1/1 · complete-one 1/1 · clear-completed 1/1");

  // The binary served the bytes of the npm package: the same per-file and whole-app SHA-256.
  const app = await loadEmbeddedApp("todomvc-vanillajs");
  const served = JSON.parse(readFileSync(join(project, res.runDir, "served-app.json"), "utf8"));
  expect(served).toMatchObject({ source: "embedded", name: "todomvc-vanillajs", package: "todomvc@0.1.1", sha256: app.sha256 });
  expect(served.files).toEqual(app.files.map((f) => ({ path: f.path, bytes: f.bytes.byteLength, sha256: f.sha256 })));
}, 300_000);

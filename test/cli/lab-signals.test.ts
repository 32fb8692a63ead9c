/**
 * A burst of signals during a real scripted terminal study, through the CLI in a child process:
 * SIGINT, SIGINT, SIGTERM 200 ms apart while the participant runs. The first signal decides
 * (exit 130); the later ones only announce that cleanup is under way — none of them may skip
 * the release, `run.json` or verification.
 */
import { afterAll, expect, test } from "bun:test";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { verifyRun } from "../../src/bundle/verify.ts";
import { containersOfRun, REPO, removeContainers, testRunId, tmpProject } from "../routes/terminal/support.ts";
import { requireDocker } from "../support/prereq.ts";
import { scriptedTerminalLab } from "../support/terminal-study.ts";

const project = tmpProject();
const runIds: string[] = [];
afterAll(async () => {
  for (const id of runIds) await removeContainers(await containersOfRun(id));
  project.cleanup();
});

const LAB = scriptedTerminalLab({ id: "signal-burst", steps: ["echo participant-started; while true; do sleep 1; echo tick; done"] });

function phase(runDir: string): string | undefined {
  try {
    return JSON.parse(readFileSync(join(runDir, "status.json"), "utf8")).phase;
  } catch {
    return undefined;
  }
}

test("SIGINT, SIGINT, SIGTERM 200 ms apart: exit 130 after cleanup, the bundle written, sealed and verified", async () => {
  await requireDocker();
  const runId = testRunId("signal-burst");
  runIds.push(runId);
  const lab = join(project.dir, "signal-burst.yaml");
  writeFileSync(lab, LAB);
  const child = Bun.spawn([process.execPath, join(REPO, "src/cli/main.ts"), "lab", "run", lab, "--cwd", project.dir, "--run-id", runId], {
    cwd: project.dir,
    env: {
      PATH: process.env.PATH ?? "/usr/bin:/bin",
      HOME: process.env.HOME ?? "/root",
      ...(process.env.DOCKER_HOST ? { DOCKER_HOST: process.env.DOCKER_HOST } : {}),
    },
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  const runDir = join(project.dir, ".humanish", "runs", runId);
  const end = Date.now() + 120_000;
  while (!(phase(runDir) === "participate" && existsSync(join(runDir, "sandbox-receipts.ndjson")))) {
    if (Date.now() > end || child.exitCode !== null) throw new Error(`the participant never started (exit ${child.exitCode})`);
    await Bun.sleep(100);
  }
  await Bun.sleep(1_000);
  for (const sig of ["SIGINT", "SIGINT", "SIGTERM"] as const) {
    child.kill(sig);
    await Bun.sleep(200);
  }
  const code = await child.exited;
  const stderr = await new Response(child.stderr).text();
  expect({ code, stderr: stderr.includes("cleanup is running") }).toEqual({ code: 130, stderr: true });
  expect(await containersOfRun(runId)).toEqual([]);
  const run = JSON.parse(readFileSync(join(runDir, "run.json"), "utf8"));
  expect(run.outcome).toEqual({ state: "interrupted", interrupted: "SIGINT" });
  expect(run.cleanup).toEqual([expect.objectContaining({ outcome: "released" })]);
  expect(JSON.parse(readFileSync(join(runDir, "status.json"), "utf8")).state).not.toBe("running");
  expect((await verifyRun(runDir)).checks.filter((c) => !c.ok)).toEqual([]);
}, 180_000);

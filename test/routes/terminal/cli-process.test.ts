/**
 * The terminal route driven through the real CLI in a child process:
 * - SIGINT mid-run → exit 130 after cleanup; SIGTERM → 143; no container with the run's label;
 *   the partial bundle says it was interrupted and verifies;
 * - a canary runtime key appears in 0 bytes of the run directory, stdout and stderr, even when
 *   the participant prints it whole, split across output chunks, and in its own step text.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { verifyRun } from "../../../src/bundle/verify.ts";
import { requireDocker } from "../../support/prereq.ts";
import { scriptedTerminalLab } from "../../support/terminal-study.ts";
import { containersOfRun, listFiles, REPO, removeContainers, testRunId, tmpProject } from "./support.ts";

const BUN = process.execPath;
const CLI = join(REPO, "src/cli/main.ts");
const project = tmpProject();
const runIds: string[] = [];
afterAll(async () => {
  for (const id of runIds) await removeContainers(await containersOfRun(id));
  project.cleanup();
});

function writeLab(name: string, steps: string[], maxMinutes = 5): string {
  const path = join(project.dir, `${name}.yaml`);
  writeFileSync(path, scriptedTerminalLab({ id: name, steps, maxMinutes }));
  return path;
}

function spawnCli(args: string[], env: Record<string, string> = {}) {
  return Bun.spawn([BUN, CLI, ...args], {
    cwd: project.dir,
    env: {
      PATH: process.env.PATH ?? "/usr/bin:/bin",
      HOME: process.env.HOME ?? "/root",
      ...(process.env.DOCKER_HOST ? { DOCKER_HOST: process.env.DOCKER_HOST } : {}),
      ...env,
    },
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
}

async function waitFor(pred: () => boolean, ms: number, what: string): Promise<void> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (pred()) return;
    await Bun.sleep(100);
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** What the events stream (appended as output arrives) holds so far, "" before it exists. */
function recordedOutput(runDir: string): string {
  for (const f of [join(runDir, "terminal-events.ndjson"), join(runDir, "seats", "p1", "terminal-events.ndjson")]) {
    try {
      return readFileSync(f, "utf8");
    } catch {
      // not this layout, or not yet written
    }
  }
  return "";
}

function statusPhase(runDir: string): string | undefined {
  try {
    return JSON.parse(readFileSync(join(runDir, "status.json"), "utf8")).phase;
  } catch {
    return undefined;
  }
}

for (const sig of ["SIGINT", "SIGTERM"] as const) {
  describe(`${sig} mid-run`, () => {
    test(`exits ${sig === "SIGINT" ? 130 : 143} after cleanup and leaves no container with the run label`, async () => {
      await requireDocker();
      const runId = testRunId(sig.toLowerCase());
      runIds.push(runId);
      const lab = writeLab(`signal-${sig.toLowerCase()}`, ["echo participant-started; while true; do sleep 1; echo tick; done"]);
      const child = spawnCli(["lab", "run", lab, "--json", "--cwd", project.dir, "--run-id", runId]);
      const runDir = join(project.dir, ".humanish", "runs", runId);
      await waitFor(() => statusPhase(runDir) === "participate" && existsSync(join(runDir, "sandbox-receipts.ndjson")), 120_000, "the participant to start");
      // Its first line is recorded: it is inside its endless step when the signal comes.
      await waitFor(() => recordedOutput(runDir).includes("participant-started"), 120_000, "the participant's first line in the events stream");
      expect(await containersOfRun(runId)).toHaveLength(1);
      child.kill(sig);
      const code = await child.exited;
      const stdout = await new Response(child.stdout).text();
      expect(code).toBe(sig === "SIGINT" ? 130 : 143);
      expect(await containersOfRun(runId)).toEqual([]);
      const result = JSON.parse(stdout);
      expect(result.interrupted).toBe(sig);
      expect(result.ok).toBe(false);
      const run = JSON.parse(readFileSync(join(runDir, "run.json"), "utf8"));
      expect(run.outcome).toEqual({ state: "interrupted", interrupted: sig });
      expect(run.cleanup).toEqual([expect.objectContaining({ outcome: "released" })]);
      expect(run.participants[0]).toMatchObject({ status: "incomplete", completionReason: "interrupted", deadlineFired: "interrupted" });
      expect(run.tasks[0].status).toBe("not_run");
      expect(readFileSync(join(runDir, "terminal-transcript.txt"), "utf8")).toContain("participant-started");
      const v = await verifyRun(runDir);
      expect(v.checks.filter((c) => !c.ok)).toEqual([]);
    }, 180_000);
  });
}

describe("canary runtime key", () => {
  test("appears in 0 bytes of the run directory, stdout and stderr", async () => {
    await requireDocker();
    // No secret shape matches this value: only the literal scrub of provisioned values can catch it.
    const canary = "canary7f3a9c1e5b2d4068humanish";
    const [a, b] = [canary.slice(0, 13), canary.slice(13)];
    const runId = testRunId("canary");
    runIds.push(runId);
    const lab = writeLab("canary-probe", [
      `echo whole=${canary}`,
      `printf 'split=${a}'; sleep 0.5; printf '${b}\\n'`,
      `echo err=${canary} >&2; touch done.txt`,
    ]);
    for (const json of [false, true]) {
      const id = json ? `${runId}-json` : runId;
      runIds.push(id);
      const child = spawnCli(["lab", "run", lab, "--cwd", project.dir, "--run-id", id, ...(json ? ["--json"] : [])], { CODEX_API_KEY: canary });
      const code = await child.exited;
      const stdout = await new Response(child.stdout).text();
      const stderr = await new Response(child.stderr).text();
      expect(code).toBe(0);
      expect(stdout).not.toContain(canary);
      expect(stderr).not.toContain(canary);
      expect(stdout.length).toBeGreaterThan(0);
      if (!json) expect(stderr).toContain("participate"); // the live progress line was drawn
      const runDir = join(project.dir, ".humanish", "runs", id);
      let redactions = 0;
      for (const f of listFiles(runDir)) {
        const bytes = readFileSync(join(runDir, f));
        expect(bytes.includes(Buffer.from(canary)), f).toBe(false);
        expect(bytes.includes(Buffer.from(a + b)), f).toBe(false);
        redactions += bytes.toString("utf8").split("[REDACTED_SECRET]").length - 1;
      }
      // The participant did print it (whole, split, on stderr): it was scrubbed, not absent.
      const transcript = readFileSync(join(runDir, "terminal-transcript.txt"), "utf8");
      expect(transcript).toContain("whole=[REDACTED_SECRET]");
      expect(transcript).toContain("split=[REDACTED_SECRET]");
      expect(transcript).toContain("err=[REDACTED_SECRET]");
      expect(readFileSync(join(runDir, "terminal-events.ndjson"), "utf8")).toContain("split=[REDACTED_SECRET]");
      expect(redactions).toBeGreaterThan(5);
      expect(readFileSync(join(project.dir, ".humanish", "runs", "latest.json")).includes(Buffer.from(canary))).toBe(false);
    }
  }, 240_000);
});

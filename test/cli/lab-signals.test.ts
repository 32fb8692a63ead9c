/**
 * A burst of signals during a real scripted terminal study, through the CLI in a child process:
 * SIGINT while the participant runs, then SIGINT and SIGTERM while the cleanup is still under way.
 * The first signal decides (exit 130); the later ones only announce that cleanup is under way —
 * none of them may skip the release, `run.json` or verification.
 *
 * "While the cleanup is under way" is made certain, not likely: the child talks to the engine
 * through a pass-through proxy that holds the sandbox's removal until both later signals have
 * been taken by the child, so however fast the machine, they land mid-cleanup.
 */
import { afterAll, expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { verifyRun } from "../../src/bundle/verify.ts";
import { containersOfRun, REPO, removeContainers, testRunId, tmpProject } from "../routes/terminal/support.ts";
import { startEngineProxy } from "../support/engine-proxy.ts";
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

/** The signal's bit in a `/proc` pending-signal mask. */
const SIGNAL_BIT = { SIGINT: 1n << 1n, SIGTERM: 1n << 14n } as const;

/**
 * Resolves once `sig`, sent to `pid`, has been taken by one of its threads (no longer pending in
 * `/proc/<pid>/status` ShdPnd nor in any thread's SigPnd): from then on the process's own handler
 * has it and the default action can no longer apply.
 */
async function taken(pid: number, sig: keyof typeof SIGNAL_BIT): Promise<void> {
  const read = (path: string) => {
    try {
      return readFileSync(path, "utf8");
    } catch {
      // A thread (or the process) that has ended has nothing pending; its exit code tells the rest.
      return "";
    }
  };
  const pending = () => {
    let threads: string[] = [];
    try {
      threads = readdirSync(`/proc/${pid}/task`);
    } catch {
      return false;
    }
    const masks = [read(`/proc/${pid}/status`), ...threads.map((t) => read(`/proc/${pid}/task/${t}/status`))];
    return masks.some((text) => [...text.matchAll(/^(?:ShdPnd|SigPnd):\s*([0-9a-f]+)$/gm)].some((m) => (BigInt(`0x${m[1]}`) & SIGNAL_BIT[sig]) !== 0n));
  };
  while (pending()) await Bun.sleep(5);
}

/** Reads `stream` as text into `into.text` as it arrives; resolves at its end. */
async function collect(stream: ReadableStream<Uint8Array>, into: { text: string; changed: () => void }): Promise<void> {
  const dec = new TextDecoder();
  for await (const chunk of stream) {
    into.text += dec.decode(chunk, { stream: true });
    into.changed();
  }
}

test("SIGINT, then SIGINT and SIGTERM during cleanup: exit 130 after cleanup, the bundle written, sealed and verified", async () => {
  await requireDocker();
  const proxy = await startEngineProxy();
  const runId = testRunId("signal-burst");
  runIds.push(runId);
  const lab = join(project.dir, "signal-burst.yaml");
  writeFileSync(lab, LAB);
  const child = Bun.spawn([process.execPath, join(REPO, "src/cli/main.ts"), "lab", "run", lab, "--cwd", project.dir, "--run-id", runId], {
    cwd: project.dir,
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: process.env.HOME ?? "/root", DOCKER_HOST: proxy.dockerHost },
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  let wake = () => {};
  const stderr = { text: "", changed: () => wake() };
  const stderrDone = collect(child.stderr, stderr);
  const stderrShows = async (s: string) => {
    while (!stderr.text.includes(s)) {
      if (child.exitCode !== null) throw new Error(`the CLI exited (${child.exitCode}) before printing ${JSON.stringify(s)}:\n${stderr.text}`);
      await new Promise<void>((r) => {
        wake = r;
        void child.exited.then(() => r());
      });
    }
  };
  try {
    const runDir = join(project.dir, ".humanish", "runs", runId);
    const end = Date.now() + 120_000;
    while (!(phase(runDir) === "participate" && existsSync(join(runDir, "sandbox-receipts.ndjson")))) {
      if (Date.now() > end || child.exitCode !== null) throw new Error(`the participant never started (exit ${child.exitCode}):\n${stderr.text}`);
      await Bun.sleep(100);
    }
    const [sandboxId] = await containersOfRun(runId);
    if (!sandboxId) throw new Error("the participant runs but its sandbox is not listed");

    const removal = proxy.hold(new RegExp(`^DELETE /[^ ]*containers/${sandboxId}[?/ ]`));
    child.kill("SIGINT");
    // The release has reached the engine and is held there: cleanup is under way and cannot end.
    await removal.held;
    child.kill("SIGINT");
    await stderrShows("cleanup is running");
    child.kill("SIGTERM");
    await taken(child.pid, "SIGTERM");
    removal.release();

    const code = await child.exited;
    await stderrDone;
    expect({ code, announced: stderr.text.split("cleanup is running").length - 1 }).toEqual({ code: 130, announced: 1 });
    expect(await containersOfRun(runId)).toEqual([]);
    const run = JSON.parse(readFileSync(join(runDir, "run.json"), "utf8"));
    expect(run.outcome).toEqual({ state: "interrupted", interrupted: "SIGINT" });
    expect(run.cleanup).toEqual([expect.objectContaining({ id: sandboxId, outcome: "released" })]);
    expect(JSON.parse(readFileSync(join(runDir, "status.json"), "utf8")).state).not.toBe("running");
    expect((await verifyRun(runDir)).checks.filter((c) => !c.ok)).toEqual([]);
  } finally {
    if (child.exitCode === null) child.kill("SIGKILL");
    await proxy.close();
  }
}, 180_000);

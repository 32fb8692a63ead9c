/**
 * SIGINT/SIGTERM through the real CLI in a child process, for the commands that trap them:
 * `analyze` (the request in flight is aborted, the attempt is stored with its diagnostics, the
 * bundle still verifies) and `export`; each exits 130/143 with `HUMANISH_INTERRUPTED`.
 *
 * No sleeps decide anything: the analyze test signals once the fake model server has received
 * the request (it never answers); the export test stops the child (SIGSTOP) once the kernel
 * shows its SIGINT handler installed, confirms the handler is still there while it is stopped,
 * and only then queues the signal and lets it run.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { verifyRun } from "../../src/bundle/index.ts";
import { FAKE_KEY } from "../analysis/support.ts";
import { writeComputerUseRun } from "../export/support.ts";
import { tempProject, writeStudyRun } from "../report/fixtures.ts";
import { startFakeOpenAI } from "../support/fake-openai/server.ts";

const REPO = join(import.meta.dir, "../..");
const fake = startFakeOpenAI({ apiKey: FAKE_KEY, scenario: () => ({ kind: "hang" }) });
const projects: { cleanup: () => void }[] = [];
afterAll(() => {
  fake.close();
  for (const p of projects) p.cleanup();
});

function project(): string {
  const p = tempProject("humanish-signals-");
  projects.push(p);
  return p.cwd;
}

function spawnCli(args: string[]) {
  return Bun.spawn([process.execPath, join(REPO, "src/cli/main.ts"), ...args], {
    env: {
      PATH: process.env.PATH ?? "/usr/bin:/bin",
      HOME: process.env.HOME ?? "/root",
      // The test's signing key (test/support/signing-env.ts), so the child trusts the bundles written here.
      ...(process.env.HUMANISH_CONFIG_DIR ? { HUMANISH_CONFIG_DIR: process.env.HUMANISH_CONFIG_DIR } : {}),
      OPENAI_BASE_URL: fake.baseURL,
      OPENAI_API_KEY: FAKE_KEY,
    },
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
}

/** Waits (polling state, never a fixed delay) until `ready()` holds or the child exits. */
async function until(ready: () => boolean, child: { exitCode: number | null }, what: string): Promise<void> {
  const end = Date.now() + 60_000;
  while (!ready()) {
    if (child.exitCode !== null) throw new Error(`the CLI exited (${child.exitCode}) before ${what}`);
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(2);
  }
}

/** Whether the kernel shows a SIGINT handler installed in `pid` (bit 2 of SigCgt). */
function catchesSigint(pid: number): boolean {
  try {
    const mask = /SigCgt:\s*([0-9a-f]+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1];
    return mask !== undefined && (BigInt(`0x${mask}`) & 2n) !== 0n;
  } catch {
    return false;
  }
}

describe("analyze", () => {
  for (const [sig, code] of [
    ["SIGINT", 130],
    ["SIGTERM", 143],
  ] as const) {
    test(`${sig} while the request is in flight: exit ${code}, HUMANISH_INTERRUPTED, the attempt kept with diagnostics, the bundle verifies`, async () => {
      const cwd = project();
      const runDir = await writeStudyRun(cwd);
      const before = fake.requests.length;
      const child = spawnCli(["analyze", "--cwd", cwd, "--max-cost", "5", "--json"]);
      await until(
        () => fake.requests.slice(before).some((r) => r.method === "POST" && r.path === "/v1/responses"),
        child,
        "the request reached the model server",
      );
      child.kill(sig);
      expect(await child.exited).toBe(code);
      const out = JSON.parse(await new Response(child.stdout).text()) as { ok: boolean; interrupted: string; error: { code: string }; attempt: string | null };
      expect([out.ok, out.interrupted, out.error.code]).toEqual([false, sig, "HUMANISH_INTERRUPTED"]);
      expect(out.attempt).toBe("0001");
      expect(existsSync(join(runDir, "analysis", "0001", "diagnostics.json"))).toBe(true);
      expect((await verifyRun(runDir)).ok).toBe(true);
    }, 120_000);
  }
});

describe("export", () => {
  test("SIGINT while it runs: exit 130 with HUMANISH_INTERRUPTED, never 0", async () => {
    const cwd = project();
    const runId = await writeComputerUseRun(cwd);
    // The export is short; a run that ends before it is caught with its handler installed is
    // not a sample (it proves nothing either way), so it is tried again.
    for (let attempt = 0; attempt < 20; attempt++) {
      const child = spawnCli(["export", "--run", runId, "--format", "atif", "--out", `out-${attempt}`, "--cwd", cwd, "--json"]);
      await until(() => catchesSigint(child.pid) || child.exitCode !== null, { exitCode: null }, "the SIGINT handler");
      if (child.exitCode !== null) continue;
      child.kill("SIGSTOP");
      if (!catchesSigint(child.pid)) {
        child.kill("SIGCONT");
        await child.exited;
        continue;
      }
      child.kill("SIGINT");
      child.kill("SIGCONT");
      expect(await child.exited).toBe(130);
      const out = JSON.parse(await new Response(child.stdout).text()) as { ok: boolean; interrupted: string; error: { code: string } };
      expect([out.ok, out.interrupted, out.error.code]).toEqual([false, "SIGINT", "HUMANISH_INTERRUPTED"]);
      return;
    }
    throw new Error("in 20 tries the export never ran long enough to be signalled with its handler installed");
  }, 120_000);
});

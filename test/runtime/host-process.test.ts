/**
 * Host processes owned like containers: a browser lab's `serve.command` leads its own process
 * group, its pid + start time are recorded before it is waited on, and when its controller dies
 * the next sweeping command ends that exact group and records the outcome in the run.
 *
 * Unit part: own → release of a real process group (a child that forked a grandchild), a reused
 * pid is never signalled, a live controller's record is left alone. CLI part: a real
 * `humanish lab run` of a browser lab whose serve.command holds a port is SIGKILLed once the app
 * answers; the next sweeping command frees the port and records the release in the run.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { appAnswers } from "../../src/routes/browser/serve.ts";
import { ownHostProcess, processGroupMembers, reconcileHostProcesses, releaseHostProcess } from "../../src/runtime/host-process.ts";
import { processStartTicks } from "../../src/sandbox/controller.ts";
import { cli } from "../cli/support.ts";
import { waitUntil } from "../support/wait.ts";

const dirs: string[] = [];
const tmp = (p: string) => {
  const d = mkdtempSync(join(tmpdir(), p));
  dirs.push(d);
  return d;
};
const groups: number[] = [];
afterAll(() => {
  for (const g of groups) {
    try {
      process.kill(-g, "SIGKILL");
    } catch {
      /* gone */
    }
  }
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function spawnGroup(script: string): number {
  const child = spawn("/bin/sh", ["-c", script], { detached: true, stdio: "ignore" });
  child.unref();
  groups.push(child.pid!);
  return child.pid!;
}

async function freePort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((r) => srv.listen(0, "127.0.0.1", r));
  const port = (srv.address() as { port: number }).port;
  await new Promise<void>((r) => srv.close(() => r()));
  return port;
}

describe("owner records and release (real processes)", () => {
  test("a recorded group (leader + forked grandchild) is ended as a whole and proven gone", async () => {
    const dir = tmp("humanish-owned-");
    const pid = spawnGroup("sleep 60 & sleep 60; wait");
    await waitUntil(() => processGroupMembers(pid).length >= 2, "the leader and its forked child in the group");
    const owned = ownHostProcess(pid, { runId: "r-unit", port: 1234 }, dir);
    expect(owned.id).toBe(`host-process:${pid}:${processStartTicks(pid)}`);
    const record = JSON.parse(readFileSync(join(dir, `${pid}-${processStartTicks(pid)}.json`), "utf8"));
    expect(record).toMatchObject({ schema: "humanish.host-process.v1", pid, runId: "r-unit", port: 1234, kind: "app-server" });
    const proof = await releaseHostProcess(owned.record, 1_000);
    expect(proof).toMatchObject({ id: owned.id, provider: "host", kind: "app-server", outcome: "released" });
    expect(processGroupMembers(pid)).toEqual([]);
    owned.disown();
    expect(readdirSync(dir)).toEqual([]);
  });

  test("a leader whose start time no longer matches (pid reused) is never signalled", async () => {
    const pid = spawnGroup("sleep 60");
    const proof = await releaseHostProcess({ id: `host-process:${pid}:1`, pid, startTicks: "1" });
    expect(proof.outcome).toBe("released");
    expect(proof.reason).toContain("pid reused");
    expect(processGroupMembers(pid).length).toBeGreaterThan(0);
  });

  test("the sweep skips a live controller's record and ends a dead controller's, recording it in the run", async () => {
    const dir = tmp("humanish-owned-");
    const project = tmp("humanish-owned-project-");
    mkdirSync(join(project, ".humanish", "runs", "r-sweep"), { recursive: true });
    const mine = spawnGroup("sleep 60");
    const orphan = spawnGroup("sleep 60");
    ownHostProcess(mine, { runId: "r-sweep", project }, dir);
    const o = ownHostProcess(orphan, { runId: "r-sweep", project }, dir);
    // Make the orphan's controller a process that is gone: a pid with a start time that never was.
    const file = join(dir, `${orphan}-${o.record.startTicks}.json`);
    writeFileSync(file, JSON.stringify({ ...o.record, controller: `${o.record.controller.split(":")[0]}:${process.pid}:1` }));
    const released = await reconcileHostProcesses(project, dir);
    expect(released.map((r) => r.proof.id)).toEqual([o.id]);
    expect(released[0]!.proof.outcome).toBe("released");
    expect(processGroupMembers(orphan)).toEqual([]);
    expect(processGroupMembers(mine).length).toBeGreaterThan(0);
    expect(existsSync(file)).toBe(false);
    const rec = JSON.parse(readFileSync(join(project, ".humanish", "runs", "r-sweep", "orphan-release.json"), "utf8"));
    expect(rec.releases).toHaveLength(1);
    expect(rec.releases[0]).toMatchObject({ id: o.id, provider: "host", kind: "app-server", outcome: "released" });
  });
});

describe("serve.command of a SIGKILLed controller (real CLI)", () => {
  test("SIGKILL mid-run → the next sweeping command frees the port and records the release", async () => {
    const project = tmp("humanish-serve-orphan-");
    const port = await freePort();
    const runId = `serve-orphan-${Date.now().toString(36)}`;
    mkdirSync(join(project, "app"), { recursive: true });
    writeFileSync(join(project, "app", "index.html"), "<!doctype html><title>held</title><p>held port</p>\n");
    writeFileSync(
      join(project, "lab.yaml"),
      [
        "schema: humanish.lab.v2",
        "id: serve-orphan",
        "title: serve orphan",
        "description: A browser lab whose app server is a host process; its controller is killed mid-run.",
        "subject:",
        "  source: app-url",
        `  appUrl: http://127.0.0.1:${port}/`,
        "  serve:",
        // A shell that forks the server, so the group has more than its leader.
        `    command: cd app && exec ${process.execPath} -e 'Bun.serve({hostname:"127.0.0.1",port:Number(process.env.PORT),fetch:()=>new Response(Bun.file("index.html"))}); setInterval(()=>{},1e6)'`,
        "actors:",
        "  - type: scripted-browser",
        "    tasks:",
        "      - id: sees-page",
        "        goal: See the page.",
        "        check:",
        "          textIncludes: [held port]",
        "    steps:",
        "      - open: /",
        "      - waitForText: held port",
        "execution:",
        "  target: local",
        "scenario:",
        "  mode: live",
        "  caps:",
        "    maxUsd: 0",
        "    maxMinutes: 2",
        "",
      ].join("\n"),
    );
    const child = Bun.spawn(
      [process.execPath, join(import.meta.dir, "../../src/cli/main.ts"), "lab", "run", "lab.yaml", "--run-id", runId, "--cwd", project, "--json"],
      {
        stdout: "ignore",
        stderr: "ignore",
      },
    );
    const deadline = Date.now() + 60_000;
    while (!(await appAnswers(`http://127.0.0.1:${port}/`, 500)) && Date.now() < deadline) await Bun.sleep(100);
    expect(await appAnswers(`http://127.0.0.1:${port}/`)).toBe(true);
    child.kill("SIGKILL");
    await child.exited;
    // The controller is gone; its app server is not.
    await Bun.sleep(200);
    expect(await appAnswers(`http://127.0.0.1:${port}/`)).toBe(true);
    // Read-only commands leave it alone…
    await cli(["runs", "--cwd", project]);
    expect(await appAnswers(`http://127.0.0.1:${port}/`)).toBe(true);
    // …a sweeping command ends it.
    const r = await cli(["runtime", "prune", "--dry-run"]);
    expect(r.stderr).toMatch(new RegExp(`orphaned app server host-process:[0-9]+:[0-9]+ of run ${runId} \\(its controller is gone\\): released`));
    expect(await appAnswers(`http://127.0.0.1:${port}/`, 1_000)).toBe(false);
    const srv = createServer();
    await new Promise<void>((resolve, reject) => {
      srv.once("error", reject);
      srv.listen(port, "127.0.0.1", resolve);
    });
    await new Promise<void>((r) => srv.close(() => r()));
    const rec = JSON.parse(readFileSync(join(project, ".humanish", "runs", runId, "orphan-release.json"), "utf8"));
    const host = rec.releases.filter((x: { provider: string }) => x.provider === "host");
    expect(host).toHaveLength(1);
    expect(host[0]).toMatchObject({ kind: "app-server", outcome: "released" });
    expect(host[0].reason).toContain("orphan (controller gone)");
  }, 120_000);
});

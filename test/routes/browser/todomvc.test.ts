/**
 * The committed lab `labs/todomvc-first-run.yaml` end to end against a real Docker engine and
 * real Chromium, run from an empty project directory (the embedded lab serving its embedded
 * TodoMVC, with the app's provenance recorded): 3/3 tasks, `verify` passes, the screenshots are
 * admitted frames of the app, no container is left; a corrupted screenshot then fails `verify`. Plus the 2-participant preset
 * split (desktop + mobile) and the dry run.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { verifyRun } from "../../../src/bundle/index.ts";
import { type LabConfig, loadLab, parseLab } from "../../../src/lab/index.ts";
import { admitPng } from "../../../src/png/index.ts";
import { loadEmbeddedApp } from "../../../src/routes/browser/embedded-app.ts";
import { runBrowserStudy } from "../../../src/routes/browser/index.ts";
import { containersOfTestRun, freePort, guestPrereqs, ROOT, TEST_LABEL } from "../../runtime/guest-support.ts";
import { scriptedBrowserLab, studyContext } from "./support.ts";

// A project with the npm package (for labs with a project-relative static root) and an EMPTY
// project (the committed todomvc lab serves its embedded copy of the app, as the binary does).
const cwd = mkdtempSync(join(tmpdir(), "humanish-browser-route-"));
symlinkSync(join(ROOT, "node_modules"), join(cwd, "node_modules"));
const emptyCwd = mkdtempSync(join(tmpdir(), "humanish-browser-empty-"));
afterAll(() => {
  rmSync(cwd, { recursive: true, force: true });
  rmSync(emptyCwd, { recursive: true, force: true });
});

const ctxFor = (config: LabConfig, runId: string, mode: "live" | "dry-run" = "live", dir = cwd) => studyContext(config, runId, dir, mode);
const TODOMVC_STATIC = "node_modules/todomvc/examples/vanillajs";

describe("browser route", () => {
  test("todomvc-first-run from an empty project (embedded lab, embedded app): 3/3 tasks, verify passes, screenshots show the app, nothing left", async () => {
    const { docker, testRun } = await guestPrereqs();
    expect(readdirSync(emptyCwd)).toEqual([]);
    const loaded = await loadLab("todomvc-first-run", emptyCwd);
    expect(loaded.ref).toBe("embedded:todomvc-first-run");
    const runId = `todomvc-${testRun}`;
    const created: string[] = [];
    const res = await runBrowserStudy(
      { ...ctxFor(loaded.config, runId, "live", emptyCwd), labSource: { ref: loaded.ref, sha256: loaded.sha256 } },
      { docker, labels: { [TEST_LABEL]: testRun }, onDesktopCreated: (_p, id) => created.push(id) },
    );
    expect(res.error).toBeUndefined();
    expect(res.ok).toBe(true);
    expect(res.verdict).toBe("1/1 reached the goal; tasks: add-two-todos 1/1 · complete-one 1/1 · clear-completed 1/1");
    expect(res.reward).toBe(1);
    expect(res.verify.ok).toBe(true);
    expect(created).toHaveLength(1);
    expect(await containersOfTestRun(docker, testRun)).toEqual([]);

    const run = JSON.parse(readFileSync(join(res.runDir, "run.json"), "utf8"));
    expect(run.cleanup).toEqual([expect.objectContaining({ id: created[0], kind: "desktop", outcome: "released" })]);
    // Provenance of the served app: name, package and the SHA-256 over its files, in the lifecycle and served-app.json.
    const app = await loadEmbeddedApp("todomvc-vanillajs");
    const served = JSON.parse(readFileSync(join(res.runDir, "served-app.json"), "utf8"));
    expect(served).toMatchObject({
      schema: "humanish.served-app.v1",
      source: "embedded",
      name: "todomvc-vanillajs",
      package: "todomvc@0.1.1",
      dir: "examples/vanillajs",
      sha256: app.sha256,
      bytes: app.bytes,
    });
    expect(served.files).toEqual(app.files.map((f) => ({ path: f.path, bytes: f.bytes.byteLength, sha256: f.sha256 })));
    const ev = run.lifecycle.find((e: { event: string }) => e.event === "browser-lab.subject.embedded");
    expect(ev?.message).toContain(`embedded app todomvc-vanillajs from todomvc@0.1.1`);
    expect(ev?.message).toContain(app.sha256);
    expect(run.participants[0].desktopGeometry).toMatchObject({
      preset: "desktop",
      screen: { requested: { width: 1440, height: 950 }, verified: { width: 1440, height: 950 } },
    });
    const trace = JSON.parse(readFileSync(join(res.runDir, "actors/p1.json"), "utf8"));
    expect(trace.lane).toBe("scripted-browser");
    const kinds = trace.items.map((i: { kind: string }) => i.kind);
    expect(kinds.filter((k: string) => k === "ui_action").length).toBeGreaterThan(10);
    expect(JSON.stringify(trace)).not.toContain("Walk the dog"); // typed text is recorded as a length only
    const shots = readdirSync(join(res.runDir, "screenshots")).sort();
    expect(shots).toEqual(["p1-01-empty-list.png", "p1-02-two-todos.png", "p1-03-one-completed.png", "p1-04-cleared.png", "p1-05-final.png"]);
    for (const s of shots) expect(admitPng(readFileSync(join(res.runDir, "screenshots", s))).ok).toBe(true);

    // One corrupted byte in a screenshot's checksum: verify fails, naming the screenshot gate.
    const p = join(res.runDir, "screenshots", shots[0]!);
    const bytes = readFileSync(p);
    bytes[bytes.length - 5] = bytes[bytes.length - 5]! ^ 0xff;
    writeFileSync(p, bytes);
    const v = await verifyRun(res.runDir);
    expect(v.ok).toBe(false);
    expect(v.checks.find((c) => c.name === "screenshots admitted")?.ok).toBe(false);
  }, 240_000);

  test("two studies of the embedded lab at once, with something else on the lab's port on the host: both 1/1, each app on its own host port", async () => {
    const { docker, testRun } = await guestPrereqs();
    const loaded = await loadLab("todomvc-first-run", emptyCwd);
    const subject = loaded.config.subject;
    if (subject.source !== "app-url") throw new Error("todomvc-first-run is an app-url lab");
    const port = Number(new URL(subject.appUrl).port);
    // Whatever holds the lab's port on the host (this server, or another program already there) is
    // not what the guests study: they reach each study's own app through their forwarders.
    let squatter: ReturnType<typeof Bun.serve> | undefined;
    try {
      squatter = Bun.serve({ hostname: "127.0.0.1", port, fetch: () => new Response("not the app") });
    } catch {
      squatter = undefined;
    }
    const dirs = [0, 1].map((i) => mkdtempSync(join(tmpdir(), `humanish-browser-twin-${i}-`)));
    try {
      const results = await Promise.all(
        dirs.map((dir, i) =>
          runBrowserStudy(
            { ...ctxFor(loaded.config, `twin-${i}-${testRun}`, "live", dir), labSource: { ref: loaded.ref, sha256: loaded.sha256 } },
            { docker, labels: { [TEST_LABEL]: testRun } },
          ),
        ),
      );
      for (const res of results) {
        expect(res.error).toBeUndefined();
        expect(res.verdict).toBe("1/1 reached the goal; tasks: add-two-todos 1/1 · complete-one 1/1 · clear-completed 1/1");
        expect(res.verify.ok).toBe(true);
      }
      const hostPorts = results.map((res) => {
        const run = JSON.parse(readFileSync(join(res.runDir, "run.json"), "utf8"));
        const served = run.lifecycle.find((e: { event: string }) => e.event === "browser-lab.subject.served")?.message ?? "";
        return Number(/served on host port (\d+)/.exec(served)?.[1]);
      });
      expect(hostPorts.every((p) => Number.isInteger(p) && p !== port)).toBe(true);
      expect(hostPorts[0]).not.toBe(hostPorts[1]);
      expect(await containersOfTestRun(docker, testRun)).toEqual([]);
    } finally {
      squatter?.stop(true);
      for (const d of dirs) rmSync(d, { recursive: true, force: true });
    }
  }, 240_000);

  test("count 2 runs desktop + mobile, each on its own guest, with the floored mobile geometry recorded", async () => {
    const { docker, testRun } = await guestPrereqs();
    const port = freePort();
    const config = scriptedBrowserLab({
      port,
      id: "two-devices",
      root: TODOMVC_STATIC,
      actorBody: `    count: 2
    tasks:
      - id: add-todo
        goal: Add a todo.
        check:
          textIncludes: [Buy milk, 1 item left]
      - id: on-root
        goal: Stay on the app.
        check:
          urlPathEquals: /
    steps:
      - waitForText: Double-click to edit a todo
      - type: Buy milk
      - press: Enter
      - waitForText: 1 item left
      - screenshot: added`,
    });
    const created: string[] = [];
    const res = await runBrowserStudy(ctxFor(config, `two-${testRun}`), {
      docker,
      labels: { [TEST_LABEL]: testRun },
      onDesktopCreated: (_p, id) => created.push(id),
    });
    expect(res.error).toBeUndefined();
    expect(res.verdict).toBe("2/2 reached the goal; tasks: add-todo 2/2 · on-root 2/2");
    expect(res.participants.map((p) => p.id)).toEqual(["p1", "p2"]);
    expect(new Set(created).size).toBe(2);
    const run = JSON.parse(readFileSync(join(res.runDir, "run.json"), "utf8"));
    expect(run.participants.map((p: { desktopGeometry: { preset: string } }) => p.desktopGeometry.preset)).toEqual(["desktop", "mobile"]);
    expect(run.participants[1].desktopGeometry.screen).toMatchObject({ requested: { width: 414, height: 896 }, verified: { width: 500, height: 896 } });
    expect(run.participants[1].desktopGeometry.warnings[0]).toContain("floored");
    expect(admitPng(readFileSync(join(res.runDir, "screenshots", "p2", "01-added.png")))).toMatchObject({ ok: true, width: 500, height: 896 });
    expect(await containersOfTestRun(docker, testRun)).toEqual([]);
  }, 240_000);

  test("SIGINT mid-study: the participant stops, the desktop is released, the bundle says interrupted and verifies", async () => {
    const { docker, testRun } = await guestPrereqs();
    const port = freePort();
    const config = scriptedBrowserLab({
      port,
      id: "interrupt-probe",
      root: TODOMVC_STATIC,
      actorBody: `    steps:
      - waitForText: Double-click to edit a todo
      - wait: {ms: 30000}
      - wait: {ms: 30000}
      - wait: {ms: 30000}
      - wait: {ms: 30000}`,
    });
    // Two minutes of waiting, more than the test's timeout: only the abort can end the study in time.
    const ac = new AbortController();
    const ctx = {
      ...ctxFor(config, `int-${testRun}`),
      signal: ac.signal,
      progress: (e: { phase: string; detail?: string }) => {
        if (e.phase === "participate" && e.detail?.startsWith("step 2/")) setTimeout(() => ac.abort("SIGINT"), 500);
      },
    };
    const res = await runBrowserStudy(ctx, { docker, labels: { [TEST_LABEL]: testRun } });
    expect(res.interrupted).toBe("SIGINT");
    expect(res.ok).toBe(false);
    expect(res.verify.ok).toBe(true);
    const run = JSON.parse(readFileSync(join(res.runDir, "run.json"), "utf8"));
    expect(run.outcome.state).toBe("interrupted");
    expect(run.cleanup.map((c: { outcome: string }) => c.outcome)).toEqual(["released"]);
    expect(await containersOfTestRun(docker, testRun)).toEqual([]);
  }, 120_000);

  test("dry run: a contract-only bundle that verifies, with no engine work", async () => {
    const loaded = await loadLab(join(ROOT, "labs/todomvc-first-run.yaml"), ROOT);
    const res = await runBrowserStudy(ctxFor(loaded.config, `dry-${Date.now()}`, "dry-run"));
    expect(res.ok).toBe(true);
    expect(res.verify.ok).toBe(true);
    expect(res.tasks.every((t) => t.status === "not_run")).toBe(true);
  }, 30_000);

  test("refusals before anything starts: non-local target, non-scripted actor, non-loopback URL", async () => {
    const base = (extra: string, subject = "  appUrl: http://127.0.0.1:41999/\n") => `schema: humanish.lab.v2
id: refuse
subject:
  source: app-url
${subject}actors:
  - type: ${extra}
    mission: Use the app.
    tasks:
      - {id: home, goal: Open the home page., check: {urlIncludes: /}}
scenario:
  mode: live
`;
    const cu = parseLab(base("openai-computer-use"));
    if (!cu.ok) throw new Error(cu.error.message);
    // A computer-use seat runs here now; without a key it is refused before any run directory.
    await expect(runBrowserStudy(ctxFor(cu.config, `r1-${Date.now()}`))).rejects.toMatchObject({ code: "HUMANISH_CUA_KEY_MISSING" });
  });
});

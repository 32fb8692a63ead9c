/**
 * Many browser seats through the study runner against the real engine and real Chromium: a
 * 3-seat TodoMVC study (lanes with devices, concurrency from the plan) verifies with one row per
 * seat and the funnel over seats; SIGINT mid-study stops every seat, releases every guest by
 * exact id, and the bundle names each seat's state.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runBrowserStudy } from "../../../src/routes/browser/index.ts";
import { containersOfTestRun, freePort, guestPrereqs, ROOT, TEST_LABEL } from "../../runtime/guest-support.ts";
import { scriptedBrowserLab, studyContext } from "./support.ts";

const cwd = mkdtempSync(join(tmpdir(), "humanish-browser-seats-"));
symlinkSync(join(ROOT, "node_modules"), join(cwd, "node_modules"));
afterAll(() => rmSync(cwd, { recursive: true, force: true }));
const TODOMVC_STATIC = "node_modules/todomvc/examples/vanillajs";

describe("browser seats", () => {
  test("3 seats (lanes: two desktops, one tablet) run in parallel, each on its own guest; verify checks each seat and the totals", async () => {
    const { docker, testRun } = await guestPrereqs();
    const config = scriptedBrowserLab({
      port: freePort(),
      id: "three-seats",
      root: TODOMVC_STATIC,
      actorBody: `    lanes:
      - {id: alice}
      - {id: bob, persona: hurried}
      - {id: tab, device: tablet}
    tasks:
      - id: add-todo
        goal: Add a todo.
        check:
          textIncludes: [Buy milk, 1 item left]
    steps:
      - waitForText: Double-click to edit a todo
      - type: Buy milk
      - press: Enter
      - waitForText: 1 item left
      - screenshot: added`,
    });
    const created = new Map<string, string>();
    const running = new Set<string>();
    let peak = 0;
    const ctx = {
      ...studyContext(config, `seats3-${testRun}`, cwd),
      progress: (e: { participant: string; phase: string }) => {
        if (e.phase === "participate") running.add(e.participant);
        if (e.phase === "teardown") running.delete(e.participant);
        peak = Math.max(peak, running.size);
      },
    };
    const res = await runBrowserStudy(ctx, { docker, labels: { [TEST_LABEL]: testRun }, onDesktopCreated: (p, id) => created.set(p, id) });
    expect(res.error).toBeUndefined();
    expect(res.ok).toBe(true);
    expect(res.verdict).toBe("3/3 reached the goal; tasks: add-todo 3/3");
    expect(res.seats?.map((s) => [s.id, s.state, s.release])).toEqual([
      ["alice", "completed", "released"],
      ["bob", "completed", "released"],
      ["tab", "completed", "released"],
    ]);
    expect(res.study).toMatchObject({ declaredSeats: 3, concurrency: 3, waves: 1 });
    expect(peak).toBeGreaterThan(1);
    expect(new Set(created.values()).size).toBe(3);
    const run = JSON.parse(readFileSync(join(res.runDir, "run.json"), "utf8"));
    expect(run.study.seats.map((s: { folder: string }) => s.folder)).toEqual(["seats/alice/", "seats/bob/", "seats/tab/"]);
    expect(run.participants.map((p: { device: string }) => p.device)).toEqual(["desktop", "desktop", "tablet"]);
    expect(run.participants[1].persona).toBe("hurried");
    expect(run.artifacts.map((a: { path: string }) => a.path)).toEqual(
      expect.arrayContaining(["seats/alice/actor.json", "screenshots/alice/01-added.png", "seats/tab/actor.json", "screenshots/tab/01-added.png"]),
    );
    expect(res.verification?.checks.find((c) => c.name === "study seats")?.message).toMatch(/^3\/3 seat\(s\): 3 completed/);
    expect(await containersOfTestRun(docker, testRun)).toEqual([]);
  }, 240_000);

  test("SIGINT mid-study: every running seat stops and is released, the rest never start; 0 containers left; the bundle says which seats were interrupted", async () => {
    const { docker, testRun } = await guestPrereqs();
    const config = scriptedBrowserLab({
      port: freePort(),
      id: "seats-interrupt",
      root: TODOMVC_STATIC,
      actorBody: `    count: 3
    steps:
      - waitForText: Double-click to edit a todo
      - wait: {ms: 30000}`,
    });
    const ac = new AbortController();
    const created: string[] = [];
    const ctx = {
      ...studyContext(config, `seatsint-${testRun}`, cwd),
      signal: ac.signal,
      env: { ...process.env, HUMANISH_MAX_CONCURRENCY: "2" },
      // The signal waits for p1 itself to be in its long wait (not whichever seat gets there first),
      // so p1's phase at the signal is known on any machine.
      progress: (e: { participant: string; phase: string; detail?: string }) => {
        if (e.participant === "p1" && e.phase === "participate" && e.detail?.startsWith("step 2/")) setTimeout(() => ac.abort("SIGINT"), 300);
      },
    };
    const res = await runBrowserStudy(ctx, { docker, labels: { [TEST_LABEL]: testRun }, onDesktopCreated: (_p, id) => created.push(id) });
    expect(res.interrupted).toBe("SIGINT");
    expect(res.verification?.checks.filter((c) => !c.ok)).toEqual([]);
    // p2 may still be starting its guest when the signal lands; p3 waits for a slot and never starts.
    expect(res.seats?.map((s) => [s.id, s.state])).toEqual([
      ["p1", "interrupted"],
      ["p2", "interrupted"],
      ["p3", "interrupted"],
    ]);
    expect(res.seats?.[0]?.phase).toBe("participate");
    expect(res.seats?.[2]?.phase).toBe("not_started");
    const run = JSON.parse(readFileSync(join(res.runDir, "run.json"), "utf8"));
    expect(run.outcome.state).toBe("interrupted");
    expect(run.cleanup.map((c: { id: string; outcome: string }) => [c.id, c.outcome]).sort()).toEqual(created.map((id) => [id, "released"]).sort());
    expect(run.study.totals).toMatchObject({ seats: 3, interrupted: 3, heldSlots: 0 });
    expect(await containersOfTestRun(docker, testRun)).toEqual([]);
  }, 180_000);

  test("SIGINT while the seats are still creating their guests: every guest created is released, the bundle verifies", async () => {
    const { docker, testRun } = await guestPrereqs();
    const config = scriptedBrowserLab({
      port: freePort(),
      id: "seats-early-interrupt",
      root: TODOMVC_STATIC,
      actorBody: `    count: 2
    steps:
      - waitForText: Double-click to edit a todo`,
    });
    const ac = new AbortController();
    const created: string[] = [];
    const res = await runBrowserStudy(
      { ...studyContext(config, `seatsearly-${testRun}`, cwd), signal: ac.signal },
      { docker, labels: { [TEST_LABEL]: testRun }, onDesktopCreated: (_p, id) => (created.push(id), ac.abort("SIGTERM")) },
    );
    expect(res.interrupted).toBe("SIGTERM");
    expect(res.verification?.checks.filter((c) => !c.ok)).toEqual([]);
    const run = JSON.parse(readFileSync(join(res.runDir, "run.json"), "utf8"));
    expect(run.cleanup.map((c: { id: string; outcome: string }) => [c.id, c.outcome]).sort()).toEqual(created.map((id) => [id, "released"]).sort());
    expect(await containersOfTestRun(docker, testRun)).toEqual([]);
  }, 120_000);
});

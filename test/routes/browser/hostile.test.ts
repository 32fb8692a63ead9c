/**
 * A demanding newcomer's browser labs against a real Docker guest and real Chromium:
 * - `open` of a path with dot segments reaches the page Chromium resolves it to (it used to wait
 *   10 s for the literal string and fail the step); `openTarget` keeps every path on the origin;
 * - all steps run but a hidden check fails: the participant is `incomplete` and its trace says
 *   the same, so the bundle verifies (it used to fail `verify` with "trace status passed !=
 *   participant status incomplete");
 * - a `waitForText` that never appears ends at its deadline with `step_failed`, and the frame the
 *   participant was looking at is kept as evidence (it used to keep no screenshot at all);
 * - once the page opens a second tab (which is what the screen shows), observations carry no page
 *   text or URL, so a hidden check cannot pass on text the participant could not see (the owner
 *   tab's text used to be reported under the other tab's frame);
 * - hidden checks count only observations on the app origin: a participant that typed
 *   `file:///etc/passwd` into the address bar used to pass a check on the guest's passwd text;
 * - `serve.command` on a port where something else already answers is refused before the command
 *   starts (it used to be "ready" at once, studying the other app); a command that never gets
 *   ready names serve.command in its `next`.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { evaluateCheck, openTarget } from "../../../src/actors/scripted-browser/index.ts";
import { HumanishError } from "../../../src/errors.ts";
import type { LabConfig } from "../../../src/lab/index.ts";
import { admitPng } from "../../../src/png/index.ts";
import { runBrowserStudy } from "../../../src/routes/browser/index.ts";
import { startApp } from "../../../src/routes/browser/serve.ts";
import { containersOfTestRun, freePort, guestPrereqs, TEST_LABEL } from "../../runtime/guest-support.ts";
import { scriptedBrowserLab, studyContext } from "./support.ts";

const cwd = mkdtempSync(join(tmpdir(), "humanish-browser-hostile-"));
mkdirSync(join(cwd, "site/sub"), { recursive: true });
writeFileSync(join(cwd, "site/index.html"), "<!doctype html><html><head><title>Home</title></head><body><h1>Plain home page</h1></body></html>");
// A click anywhere on the big button marks the page, then opens a second tab that takes the screen.
writeFileSync(
  join(cwd, "site/tab.html"),
  `<!doctype html><html><body><h1>Tab opener</h1><button style="position:absolute;left:0;top:150px;width:800px;height:400px" onclick="document.body.append('clicked-marker'); window.open('/index.html', '_blank')">open</button></body></html>`,
);
writeFileSync(join(cwd, "site/sub/page.html"), "<!doctype html><html><body><h1>Sub page</h1></body></html>");
afterAll(() => rmSync(cwd, { recursive: true, force: true }));

const ctxFor = (config: LabConfig, runId: string) => studyContext(config, runId, cwd);
const lab = (port: number, id: string, body: string) => scriptedBrowserLab({ port, id, root: "site", actorBody: body });

describe("openTarget", () => {
  test("resolves dot segments and percent-encodes, and never leaves the origin", () => {
    const o = "http://127.0.0.1:4173";
    expect(openTarget(o, "/")).toBe("http://127.0.0.1:4173/");
    expect(openTarget(o, "/sub/../index.html")).toBe("http://127.0.0.1:4173/index.html");
    expect(openTarget(o, "/../../etc/passwd")).toBe("http://127.0.0.1:4173/etc/passwd");
    expect(openTarget(o, "/%2e%2e/x")).toBe("http://127.0.0.1:4173/x");
    expect(openTarget(o, "/café?q=é#/active")).toBe("http://127.0.0.1:4173/caf%C3%A9?q=%C3%A9#/active");
    // Appended, not resolved: a backslash or `@` stays in the path on the same origin.
    expect(openTarget(o, "/\\evil.example")).toBe("http://127.0.0.1:4173//evil.example");
    expect(openTarget(o, "/@evil.example")).toBe("http://127.0.0.1:4173/@evil.example");
    expect(openTarget(o, "/x")!.startsWith(`${o}/`)).toBe(true);
  });
});

describe("browser route, hostile labs", () => {
  test("open with dot segments reaches the page; a failed check after all steps ran still verifies", async () => {
    const { docker, testRun } = await guestPrereqs();
    const config = lab(
      freePort(),
      "dots",
      `    tasks:
      - id: impossible
        goal: See text the app never shows.
        check:
          textIncludes: [text the app never shows]
    steps:
      - open: /sub/../sub/page.html
      - screenshot: sub`,
    );
    const res = await runBrowserStudy(ctxFor(config, `dots-${testRun}`), { docker, labels: { [TEST_LABEL]: testRun } });
    expect(res.error).toBeUndefined();
    expect(res.verify.ok).toBe(true);
    expect(res.ok).toBe(true);
    expect(res.participants).toEqual([{ id: "p1", status: "incomplete", completionReason: "turn_completed", claimed: "none" }]);
    const run = JSON.parse(readFileSync(join(res.runDir, "run.json"), "utf8"));
    expect(run.participants[0]).toMatchObject({ status: "incomplete", completionReason: "turn_completed", reason: "all steps ran but a hidden check failed" });
    const trace = JSON.parse(readFileSync(join(res.runDir, "actors/p1.json"), "utf8"));
    expect(trace).toMatchObject({ status: "incomplete", completionReason: "turn_completed", reason: "all 2 steps ran" });
    expect(readdirSync(join(res.runDir, "screenshots")).sort()).toEqual(["p1-01-sub.png", "p1-02-final.png"]);
    expect(await containersOfTestRun(docker, testRun)).toEqual([]);
  }, 120_000);

  test("a waitForText that never appears ends at its deadline with step_failed and keeps the last frame", async () => {
    const { docker, testRun } = await guestPrereqs();
    const config = lab(
      freePort(),
      "never",
      `    tasks:
      - id: home
        goal: Open the home page.
        check:
          textIncludes: [Plain home page]
    steps:
      - open: /
      - waitForText: a sentence that never appears`,
    );
    // The text never appears: only the step's own deadline can end it (else the test times out).
    const res = await runBrowserStudy(ctxFor(config, `never-${testRun}`), { docker, labels: { [TEST_LABEL]: testRun } });
    expect(res.verify.ok).toBe(true);
    expect(res.tasks).toEqual([expect.objectContaining({ id: "home", passed: true })]);
    const trace = JSON.parse(readFileSync(join(res.runDir, "actors/p1.json"), "utf8"));
    // On a starved host the same timeout is a harness condition, never a finding: which one it
    // is follows from the pressure the seat measured (its notice), not from this test's timing.
    const starved = trace.items.some((i: { kind: string; status?: string }) => i.kind === "notice" && i.status === "host_starved");
    if (starved) {
      expect(res.participants).toEqual([{ id: "p1", status: "failed", completionReason: "harness_error", claimed: "none" }]);
      expect(res.error?.code).toBe("HUMANISH_HOST_STARVED");
      expect(trace.reason).toStartWith("step 2 (waitForText): the text did not appear within 10000 ms, while the host was starved (");
    } else {
      expect(res.error).toBeUndefined();
      expect(res.participants).toEqual([{ id: "p1", status: "incomplete", completionReason: "step_failed", claimed: "none" }]);
      expect(trace.reason).toBe("step 2 (waitForText): the text did not appear within 10000 ms");
    }
    const shots = readdirSync(join(res.runDir, "screenshots"));
    expect(shots).toEqual(["p1-01-final.png"]);
    expect(admitPng(readFileSync(join(res.runDir, "screenshots", shots[0]!))).ok).toBe(true);
    expect(trace.items.at(-1)).toMatchObject({ kind: "screenshot", title: "final frame" });
    expect(await containersOfTestRun(docker, testRun)).toEqual([]);
  }, 120_000);
});

describe("browser route, second tab", () => {
  test("after a second tab opens, observations carry no text of the hidden owner tab", async () => {
    const { docker, testRun } = await guestPrereqs();
    const config = lab(
      freePort(),
      "tabs",
      `    tasks:
      - id: before-click
        goal: See the opener page.
        check:
          textIncludes: [Tab opener]
      - id: hidden-marker
        goal: See text written on the page that is hidden behind the new tab.
        check:
          textIncludes: [clicked-marker]
    steps:
      - open: /tab.html
      - click: {x: 300, y: 400}
      - wait: {ms: 500}
      - screenshot: after-click`,
    );
    const res = await runBrowserStudy(ctxFor(config, `tabs-${testRun}`), { docker, labels: { [TEST_LABEL]: testRun } });
    expect(res.error).toBeUndefined();
    expect(res.verify.ok).toBe(true);
    expect(res.tasks.map((t) => [t.id, t.passed])).toEqual([
      ["before-click", true],
      ["hidden-marker", false],
    ]);
    expect(await containersOfTestRun(docker, testRun)).toEqual([]);
  }, 180_000);
});

describe("evaluateCheck", () => {
  test("with an origin, only observations on that origin count", () => {
    const at = "2026-01-01T00:00:00.000Z";
    const obs = [
      { at, stateSignature: "a", url: "file:///etc/passwd", text: "root:x:0:0" },
      { at, stateSignature: "b", url: "chrome://version/", text: "root:x:0:0 Chromium" },
      { at, stateSignature: "c", url: "http://127.0.0.1:5000/", text: "root:x:0:0 other port" },
      { at, stateSignature: "d", text: "root:x:0:0 no url" },
      { at, stateSignature: "e", url: "http://127.0.0.1:4173/x", text: "the app" },
    ];
    expect(evaluateCheck({ textIncludes: ["root:x:0"] }, obs)).toBe(0);
    expect(evaluateCheck({ textIncludes: ["root:x:0"] }, obs, "http://127.0.0.1:4173")).toBe(-1);
    expect(evaluateCheck({ textIncludes: ["the app"], urlPathEquals: "/x" }, obs, "http://127.0.0.1:4173")).toBe(4);
    expect(evaluateCheck({ textExcludes: ["the app"] }, obs, "http://127.0.0.1:4173")).toBe(-1);
  });

  test("live: text of file:///etc/passwd reached through the address bar does not pass a check", async () => {
    const { docker, testRun } = await guestPrereqs();
    const config = lab(
      freePort(),
      "fileurl",
      `    tasks:
      - id: passwd
        goal: Read a file that is not the app.
        check:
          textIncludes: ["root:x:0"]
    steps:
      - open: /
      - press: [ctrl, l]
      - type: "file:///etc/passwd"
      - press: Enter
      - wait: {ms: 800}
      - screenshot: file`,
    );
    const res = await runBrowserStudy(ctxFor(config, `file-${testRun}`), { docker, labels: { [TEST_LABEL]: testRun } });
    expect(res.error).toBeUndefined();
    expect(res.verify.ok).toBe(true);
    expect(res.tasks).toEqual([expect.objectContaining({ id: "passwd", passed: false })]);
    expect(await containersOfTestRun(docker, testRun)).toEqual([]);
  }, 180_000);
});

describe("startApp with serve.command", () => {
  test("refuses a port where something else already answers, before running the command", async () => {
    const other = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response("some other app") });
    const marker = join(cwd, "command-ran");
    try {
      const appUrl = `http://127.0.0.1:${other.port}/`;
      const err = await startApp({ appUrl, serve: { command: `touch ${marker}; sleep 30`, readyTimeoutMs: 2_000 }, cwd }).then(
        async (app) => {
          await app.close();
          return undefined;
        },
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(HumanishError);
      expect((err as HumanishError).code).toBe("HUMANISH_BROWSER_SERVE_FAILED");
      expect((err as HumanishError).message).toContain(`something already answers at ${appUrl}`);
      expect(readdirSync(cwd)).not.toContain("command-ran");
      expect(await (await fetch(appUrl)).text()).toBe("some other app");
    } finally {
      other.stop(true);
    }
  });

  test("a command that never gets ready: APP_UNREACHABLE naming serve.command and the timeout", async () => {
    const port = freePort();
    const err = await startApp({ appUrl: `http://127.0.0.1:${port}/`, serve: { command: "sleep 30", readyTimeoutMs: 1_000 }, cwd }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect((err as HumanishError).code).toBe("HUMANISH_BROWSER_APP_UNREACHABLE");
    expect((err as HumanishError).message).toContain("serve.command was not ready within readyTimeoutMs (1000 ms)");
    expect((err as HumanishError).next).toContain(`serve.command listen on 127.0.0.1:$PORT (PORT=${port})`);
  });
});
